#!/usr/bin/env bash
# The main job: set up, build, export the DemoModule and the MLP, show the bundle, and run it
# from separate programs that link only the runtime (kiln::exec). It builds only the demo's
# programs, in build/ with the same options as the test command, so either command reuses what
# the other built.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
bash "$ROOT/scripts/install-deps.sh"
# Only what the demo runs (the test command builds the rest, tests and benchmarks included).
KILN_TARGETS="demo_module_export demo_module_load mlp_export mlp_load savedmodel-cli" \
  bash "$ROOT/scripts/build.sh"
BIN="${KILN_BUILD_DIR:-$ROOT/build}"
OUT="${KILN_OUT_DIR:-$ROOT/out}"
mkdir -p "$OUT"

echo "== 1. author and export the DemoModule (samples/demo_module_export.cc)"
"$BIN/samples/demo_module_export" "$OUT/demo_module"
echo
echo "== 2. savedmodel-cli show --dir $OUT/demo_module --all"
"$BIN/tools/savedmodel-cli" show --dir "$OUT/demo_module" --all
echo
echo "== 3. load and run it in a program that never saw its source (samples/demo_module_load.cc)"
"$BIN/samples/demo_module_load" "$OUT/demo_module"
echo
echo "== 4. savedmodel-cli run --dir $OUT/demo_module --signature_def serving_default --input_exprs 'a=5.0'"
"$BIN/tools/savedmodel-cli" run --dir "$OUT/demo_module" --tag_set serve \
  --signature_def serving_default --input_exprs 'a=5.0'
echo
echo "== 5. the MLP: export, then load and compare with the eager outputs"
"$BIN/samples/mlp_export" "$OUT/mlp" "$OUT/mlp_io"
"$BIN/samples/mlp_load" "$OUT/mlp" "$OUT/mlp_io"
