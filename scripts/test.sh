#!/usr/bin/env bash
# The whole test suite: set up, build, run every test; check the release build against real
# TensorFlow (tests/tf, with the oracles scripts/setup-oracles.sh installs); then the C++ suite
# under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
bash "$ROOT/scripts/install-deps.sh"
JOBS="${KILN_JOBS:-$(nproc)}"

echo "== release build + tests"
KILN_BUILD_DIR="$ROOT/build" bash "$ROOT/scripts/build.sh"
ctest --test-dir "$ROOT/build" --output-on-failure -j"$JOBS"

echo "== TensorFlow oracle tests (tests/tf, docs/tf-compat.md)"
bash "$ROOT/scripts/setup-oracles.sh"
KILN_BUILD_DIR="$ROOT/build" "$ROOT/.venv-oracle/bin/python" -m pytest "$ROOT/tests/tf" -q \
  -p no:cacheprovider

echo "== ASan + UBSan build + tests"
KILN_BUILD_DIR="$ROOT/build-asan" KILN_BUILD_TYPE=Debug bash "$ROOT/scripts/build.sh" \
  -DKILN_SANITIZE=ON -DKILN_BUILD_SAMPLES=OFF
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$ROOT/build-asan" --output-on-failure -j"$JOBS"
