#!/usr/bin/env bash
# The whole test suite, in the order a newcomer meets the project:
#  1. the format check (fails fast on an unformatted file);
#  2. the README's main job (scripts/demo.sh, in its own build-demo/ with only the op families
#     the demo uses), then the release build of everything in build/ and its tests (ctest
#     refuses to pass when it finds no tests); the two directories are separate, so the order of
#     the two README commands never matters;
#     then the op tester and the engine tests again with the ISA capped at AVX2;
#  3. real TensorFlow as the oracle (tests/tf, with the venv scripts/setup-oracles.sh makes);
#  4. the model server with real clients (tests/server: requests, tensorflow-serving-api,
#     tritonclient; servers started and stopped by the tests on loopback ports), and with
#     KServe's own SDK and a schemathesis fuzz of the V2 REST API (tests/kserve);
#  5. the deploy/ manifests (yamllint and a schema check);
#  6. the C++ suite again, built by Clang with AddressSanitizer + UndefinedBehaviorSanitizer
#     (and libFuzzer coverage; not the samples and benchmarks, which no test runs from that
#     build), then a short run of every fuzz target on its seed corpus;
#  7. clang-tidy on the libraries, from the Clang build's compile database.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
JOBS="${KILN_JOBS:-$(nproc)}"
step() { echo; echo "==== $* ($(date +%T))"; }

bash "$ROOT/scripts/install-deps.sh"

step "format check"
bash "$ROOT/scripts/lint.sh" format

step "README order: the main job first (scripts/demo.sh), then everything and its tests"
bash "$ROOT/scripts/demo.sh"
# The demo's build has only some op families: a bundle that needs another is refused at load,
# naming the op and the families the build has.
DEMO_CLI="${KILN_DEMO_BUILD_DIR:-$ROOT/build-demo}/tools/savedmodel-cli"
FIXTURES="${KILN_FIXTURES_DIR:-$ROOT/../shared/fixtures/tf-written}"
if refused="$("$DEMO_CLI" run --dir "$FIXTURES/SimpleWhileLoop" --tag_set serve \
      --signature_def serving_default --input_exprs 'x=1' 2>&1)" ||
    ! grep -q "Greater .*this build has only the op families" <<<"$refused"; then
  echo "test.sh: the demo's build should refuse SimpleWhileLoop (Greater), naming its op families;" \
    "it printed: $refused" >&2
  exit 1
fi
# Unity batches as the demo's (ccache serves the ones the demo's build compiled).
KILN_BUILD_DIR="$ROOT/build" KILN_UNITY_BUILD=ON bash "$ROOT/scripts/build.sh"
ctest --test-dir "$ROOT/build" --output-on-failure --no-tests=error -j"$JOBS"

step "the op tester and the engine tests again, capped at AVX2 as on a CPU without AVX-512 (docs/design.md, Numerics)"
KILN_MAX_CPU_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2 ctest --test-dir "$ROOT/build" \
  --output-on-failure --no-tests=error -j"$JOBS" -R '^kiln_(op|exec)_tests:'
# and the op tester once more on the baseline copies of our vector loops (SSE2; oneDNN SSE4.1)
KILN_MAX_CPU_ISA=baseline ctest --test-dir "$ROOT/build" \
  --output-on-failure --no-tests=error -j"$JOBS" -R '^kiln_op_tests:'

step "TensorFlow oracle tests (tests/tf, docs/tf-compat.md)"
bash "$ROOT/scripts/setup-oracles.sh"
VENV="${KILN_ORACLE_VENV:-$ROOT/.venv-oracle}"
# TF_ENABLE_ONEDNN_OPTS=0: TensorFlow's Eigen kernels, what TF runs on CPUs without
# AVX512_VNNI/BF16/AMX, so the oracle is the same on every machine.
TF_ENABLE_ONEDNN_OPTS=0 KILN_BUILD_DIR="$ROOT/build" "$VENV/bin/python" -m pytest "$ROOT/tests/tf" \
  -q -p no:cacheprovider

step "model server with real clients (tests/server, docs/server.md)"
KILN_BUILD_DIR="$ROOT/build" "$VENV/bin/python" -m pytest "$ROOT/tests/server" -q -p no:cacheprovider
step "KServe's own tools: the kserve SDK's clients and a schemathesis fuzz of the V2 REST API (tests/kserve)"
KILN_BUILD_DIR="$ROOT/build" "${KILN_KSERVE_VENV:-$ROOT/.venv-kserve}/bin/python" -m pytest \
  "$ROOT/tests/kserve" -q -p no:cacheprovider

step "the installed package: docs/getting-started.md verbatim (CMake and pkg-config), tests/consumer, the installed samples"
KILN_BUILD_DIR="$ROOT/build" bash "$ROOT/scripts/check-install.sh"
step "deploy/ manifests (yamllint + schema check)"
bash "$ROOT/scripts/check-deploy.sh"

step "Clang + ASan + UBSan build and tests, libFuzzer targets"
KILN_BUILD_DIR="$ROOT/build-clang-asan" KILN_COMPILER=clang KILN_BUILD_TYPE=Debug \
  KILN_SANITIZE=ON bash "$ROOT/scripts/build.sh" -DKILN_FUZZ=ON -DKILN_SHARED_LIBS=ON \
  -DKILN_BUILD_SAMPLES=OFF -DKILN_BUILD_BENCH=OFF
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$ROOT/build-clang-asan" --output-on-failure --no-tests=error -j"$JOBS"

step "fuzz smoke: every target on its seed corpus (long runs: docs/fuzzing.md)"
KILN_FUZZ_SECONDS="${KILN_FUZZ_SECONDS:-8}" bash "$ROOT/scripts/fuzz.sh" "$ROOT/build-clang-asan"

step "clang-tidy"
bash "$ROOT/scripts/lint.sh" tidy "$ROOT/build-clang-asan"
step "all checks passed"
