#!/usr/bin/env bash
# Configures and builds the project. Every option is passed on every run, so a build directory
# never keeps a configuration that another command left in its cache.
#   KILN_BUILD_DIR   build directory (default: build/)
#   KILN_BUILD_TYPE  Release (default) or Debug
#   KILN_COMPILER    gcc (default) or clang
#   KILN_SANITIZE    ON to build with AddressSanitizer + UndefinedBehaviorSanitizer
#   KILN_WERROR      ON (default) to fail on compiler warnings; OFF for untested compilers
#   KILN_JOBS        parallel jobs (default: all cores)
#   KILN_TARGETS     build only these targets (space-separated; default: everything). The
#                    configuration is the same either way, so a later full build reuses them.
#   KILN_OP_FAMILIES build only these op families (cmake/KilnOpFamilies.cmake; default: all)
#   KILN_UNITY_BUILD ON to compile the loader, libtrace, modules and the CLI as unity builds
#                    (fewer, larger compiles: faster cold builds, slower edit-and-rebuild)
# Extra arguments go to cmake's configure step. Compiler output, warnings included, is shown.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
JOBS="${KILN_JOBS:-$(nproc)}"
case "${KILN_COMPILER:-gcc}" in
  gcc) CC_=gcc CXX_=g++ ;;
  clang) CC_=clang CXX_=clang++ ;;
  *) echo "build.sh: KILN_COMPILER must be gcc or clang, got '${KILN_COMPILER}'" >&2; exit 2 ;;
esac
LAUNCHER=()
# ccache hashes paths under the checkout relative to it (CCACHE_BASEDIR) and leaves the build
# directory out of the hash (CCACHE_NOHASHDIR), so another clone of the project on the same
# machine (a CI checkout, a clean-clone check) reuses what this one compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
if command -v ccache >/dev/null; then LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache); fi
echo "== building in $BUILD (${KILN_COMPILER:-gcc}, ${KILN_BUILD_TYPE:-Release}, sanitizers ${KILN_SANITIZE:-OFF})"
cmake -S "$ROOT" -B "$BUILD" --log-level=WARNING \
  -DCMAKE_BUILD_TYPE="${KILN_BUILD_TYPE:-Release}" \
  -DCMAKE_C_COMPILER="$CC_" -DCMAKE_CXX_COMPILER="$CXX_" "${LAUNCHER[@]}" \
  -DKILN_BUILD_TESTS=ON -DKILN_BUILD_SAMPLES=ON -DKILN_BUILD_BENCH=ON \
  -DKILN_SANITIZE="${KILN_SANITIZE:-OFF}" -DKILN_WERROR="${KILN_WERROR:-ON}" \
  -DKILN_OP_FAMILIES="${KILN_OP_FAMILIES:-}" -DKILN_UNITY_BUILD="${KILN_UNITY_BUILD:-OFF}" "$@"
TARGET_ARGS=()
for t in ${KILN_TARGETS:-}; do TARGET_ARGS+=(--target "$t"); done
cmake --build "$BUILD" -j"$JOBS" "${TARGET_ARGS[@]}" -- --no-print-directory
