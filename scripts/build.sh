#!/usr/bin/env bash
# Configures and builds into build/ (or $KILN_BUILD_DIR). Extra args go to cmake configure.
# Compiler output goes to <build>/build.log; it is printed only when the build fails.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
JOBS="${KILN_JOBS:-$(nproc)}"
mkdir -p "$BUILD"
echo "building in $BUILD (log: $BUILD/build.log)"
if ! { cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE="${KILN_BUILD_TYPE:-Release}" "$@" &&
       cmake --build "$BUILD" -j"$JOBS"; } >"$BUILD/build.log" 2>&1; then
  grep -E "error|Error" -A5 "$BUILD/build.log" | head -80 || true
  tail -20 "$BUILD/build.log"
  echo "build failed; full log in $BUILD/build.log" >&2
  exit 1
fi
