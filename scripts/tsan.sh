#!/usr/bin/env bash
# ThreadSanitizer build (Clang) of the executor and the server, and their tests: the C++
# suites of libexec and libserve (concurrent Signature::Run, bundle reads, the batcher, the
# repository's hot reload) and tests/server against a TSan-built savedmodel-server (hundreds
# of concurrent requests, reloads, batching, shutdown). Any report fails the run.
#   bash scripts/tsan.sh            (build-clang-tsan/; docs/server.md says how long it takes)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${KILN_TSAN_BUILD_DIR:-$ROOT/build-clang-tsan}"
JOBS="${KILN_JOBS:-$(nproc)}"
LAUNCHER=()
if command -v ccache >/dev/null; then LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
cmake -S "$ROOT" -B "$BUILD" --log-level=WARNING -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "${LAUNCHER[@]}" \
  -DKILN_BUILD_TESTS=ON -DKILN_BUILD_SAMPLES=ON -DKILN_BUILD_BENCH=OFF -DKILN_TSAN=ON \
  -DKILN_WERROR=ON
cmake --build "$BUILD" -j"$JOBS" --target kiln_exec_tests kiln_serve_tests savedmodel-server \
  savedmodel-cli mlp_export -- --no-print-directory
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$ROOT/tests/tsan.supp"
ctest --test-dir "$BUILD" --output-on-failure --no-tests=error -j"$JOBS" -R "kiln_(exec|serve)_tests"
VENV="${KILN_ORACLE_VENV:-$ROOT/.venv-oracle}"
KILN_BUILD_DIR="$BUILD" "$VENV/bin/python" -m pytest "$ROOT/tests/server" -q -p no:cacheprovider
echo "tsan: clean"
