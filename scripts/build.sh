#!/usr/bin/env bash
# Configures and builds into build/ (or $KILN_BUILD_DIR). Extra args go to cmake configure.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
JOBS="${KILN_JOBS:-$(nproc)}"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE="${KILN_BUILD_TYPE:-Release}" "$@" >/dev/null
cmake --build "$BUILD" -j"$JOBS"
