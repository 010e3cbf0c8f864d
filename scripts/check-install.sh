#!/usr/bin/env bash
# Installs the build to a scratch prefix and builds tests/consumer, a project of a user's own,
# against it with find_package(kiln); runs it on a TensorFlow-written bundle. The check that
# the installed package config finds every dependency its targets link.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cmake --install "$BUILD" --prefix "$WORK/prefix" > "$WORK/install.log"
cmake -S "$ROOT/tests/consumer" -B "$WORK/consumer" -DCMAKE_PREFIX_PATH="$WORK/prefix" \
  -DCMAKE_BUILD_TYPE=Release > "$WORK/configure.log" 2>&1 || { cat "$WORK/configure.log"; exit 1; }
cmake --build "$WORK/consumer" -j"${KILN_JOBS:-$(nproc)}" > "$WORK/build.log" 2>&1 ||
  { tail -40 "$WORK/build.log"; exit 1; }
FIXTURES="${KILN_FIXTURES_DIR:-$ROOT/../shared/fixtures/tf-written}"
got="$("$WORK/consumer/run_bundle" "$FIXTURES/half_plus_two_v2" serving_default x 1 2 5)"
want=$'y 2.5\ny 3\ny 4.5'
if [[ "$got" != "$want" ]]; then
  echo "check-install: run_bundle printed:"; echo "$got"; echo "expected:"; echo "$want"; exit 1
fi
echo "check-install: an out-of-tree project found kiln with find_package, linked kiln::exec" \
  "and ran half_plus_two_v2"
