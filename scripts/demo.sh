#!/usr/bin/env bash
# The main job: set up, build, export the DemoModule and the MLP, show the bundle, and run it
# from separate programs that link only the runtime (kiln::exec).
#
# It builds only what the demo runs, in build-demo/: its four programs and savedmodel-cli, with
# only the op families its two models use (KILN_OP_FAMILIES, cmake/KilnOpFamilies.cmake), which
# takes minutes where the whole toolkit takes most of an hour on two cores. The test command and
# `bash scripts/build.sh` build everything, every op family, in build/: use those tools for your
# own models. The two build directories are separate, so the README's commands run in either
# order; ccache (where present) shares the objects they have in common.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
bash "$ROOT/scripts/install-deps.sh"
BIN="${KILN_DEMO_BUILD_DIR:-$ROOT/build-demo}"
# The families beside those every build keeps (cmake/KilnOpFamilies.cmake): variables, the print
# op, the MLP's matrix product, bias, ReLU and softmax. The demo runs on the CPU, so it leaves
# the CUDA device out (nvcc would add minutes); build/ has it wherever nvcc is. The libraries
# whose files parse the same large headers compile as unity builds (KILN_UNITY_BUILD).
KILN_BUILD_DIR="$BIN" KILN_OP_FAMILIES="Resource;String;MatMul;Nn" \
  KILN_TARGETS="demo_module_export demo_module_load mlp_export mlp_load savedmodel-cli" \
  bash "$ROOT/scripts/build.sh" -DKILN_WITH_CUDA=OFF -DKILN_UNITY_BUILD=ON
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
