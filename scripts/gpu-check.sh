#!/usr/bin/env bash
# The GPU proof (issue 20) in one device run. Two halves:
#
#   bash scripts/gpu-check.sh              # here: build the CUDA device, pack .gpu-carry/
#   bash scripts/gpu-check.sh --on-device  # on the GPU machine, with .gpu-carry carried
#
# The GPU machine has nvcc, CMake and PyTorch with its cuDNN/cuBLAS wheels but none of our
# Debian libraries, so the first half packs the test programs, savedmodel-cli, a model made
# here and every shared library they load that is not glibc into one xz archive (well under
# the 64 MiB a device run carries). The second half runs, against the CPU on the same machine:
#   - the GPU tests of kiln_exec_tests (placement on gpu:0, results within 1e-4 of the CPU, 16
#     threads on one function give the serial results) and the kernel-table checks;
#   - the op tester (kiln_op_tests): every case of every op that has a GPU kernel runs on the
#     GPU too and is compared with the CPU;
#   - the MLP sample's bundle with `savedmodel-cli run --device gpu` against `--device cpu`, and
#     `bench --device gpu` next to `bench --device cpu`;
# and writes report.md and report.json to $OUT (the device tool's output folder).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CARRY="$ROOT/.gpu-carry"

if [[ "${1:-}" != "--on-device" ]]; then
  set -e
  bash "$ROOT/scripts/install-deps.sh"
  KILN_TARGETS="kiln_exec_tests kiln_op_tests savedmodel-cli mlp_export" \
    bash "$ROOT/scripts/build.sh"
  BIN="${KILN_BUILD_DIR:-$ROOT/build}"
  [[ -d "$BIN/libexec/CMakeFiles/kiln_exec_cuda.dir" ]] ||
    { echo "gpu-check: the build has no CUDA device (no nvcc?)" >&2; exit 1; }
  STAGE="$(mktemp -d)"
  trap 'rm -rf "$STAGE"' EXIT
  mkdir -p "$STAGE/bin" "$STAGE/lib" "$STAGE/models"
  for p in tests/kiln_exec_tests tests/kiln_op_tests tools/savedmodel-cli; do
    cp "$BIN/$p" "$STAGE/bin/"
  done
  strip --strip-unneeded "$STAGE"/bin/* 2>/dev/null || true
  # Every library the programs load, except glibc's own (the machine's loader must match them).
  for b in "$STAGE"/bin/*; do
    ldd "$b" | awk '/=> \//{print $3}'
  done | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libcuda.so*) ;;
      *) cp -L "$lib" "$STAGE/lib/" ;;
    esac
  done
  "$BIN/samples/mlp_export" "$STAGE/models/mlp" "$STAGE/models/mlp_io" >/dev/null
  rm -rf "$CARRY" && mkdir -p "$CARRY"
  tar -C "$STAGE" -cf - . | xz -T0 -6 > "$CARRY/kiln-gpu.tar.xz"
  du -h "$CARRY/kiln-gpu.tar.xz"
  echo "gpu-check: packed. On the GPU machine (device run, carry .gpu-carry):"
  echo "  bash scripts/gpu-check.sh --on-device"
  exit 0
fi

# ---- on the GPU machine ---------------------------------------------------------------------
OUT="${OUT:-$ROOT/.gpu-out}"
mkdir -p "$OUT"
WORK=/tmp/kiln-gpu
rm -rf "$WORK" && mkdir -p "$WORK"
tar -C "$WORK" -xJf "$CARRY/kiln-gpu.tar.xz"
# cuBLASLt (and later cuDNN) from PyTorch's nvidia wheels: kiln loads them at run time.
NV_DIRS=$(python3 - <<'PY' 2>/dev/null
import glob, os, site
dirs = set()
for sp in site.getsitepackages():
    for f in glob.glob(os.path.join(sp, "nvidia", "**", "lib*.so*"), recursive=True):
        dirs.add(os.path.dirname(f))
print(":".join(sorted(dirs)))
PY
)
export LD_LIBRARY_PATH="$WORK/lib:${NV_DIRS}:${LD_LIBRARY_PATH:-}"
REPORT="$OUT/report.md"
JSON="$OUT/report.json"
LOG="$OUT/gpu-check.log"
: > "$LOG"
declare -A RESULT
step() {  # step NAME COMMAND...: runs it, logs it, records pass/fail
  local name="$1"
  shift
  echo "== $name: $*" | tee -a "$LOG"
  local t0=$SECONDS
  if "$@" >> "$LOG" 2>&1; then RESULT[$name]="pass"; else RESULT[$name]="FAIL"; fi
  echo "   ${RESULT[$name]} ($((SECONDS - t0)) s)" | tee -a "$LOG"
}
nvidia-smi -L 2>&1 | tee -a "$LOG"
B="$WORK/bin"
step "exec: gpu and cuda-table tests" "$B/kiln_exec_tests" -tc='gpu:*,cuda table:*' -s
step "op tester on gpu:0 vs the CPU" "$B/kiln_op_tests"
M="$WORK/models/mlp"
mkdir -p "$WORK/cpu" "$WORK/gpu"
python3 -c "import numpy as np; np.save('$WORK/x.npy', np.linspace(-1, 1, 4 * 784, dtype=np.float32).reshape(4, 784))"
for dev in cpu gpu; do
  step "mlp: run --device $dev" "$B/savedmodel-cli" run --dir "$M" --tag_set serve \
    --signature_def serving_default --inputs "x=$WORK/x.npy" --device "$dev" --outdir "$WORK/$dev" \
    --overwrite
done
step "mlp: gpu within 1e-4 of cpu" python3 - "$WORK/cpu" "$WORK/gpu" <<'PY'
import glob, os, sys
import numpy as np
cpu, gpu = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(cpu, "*.npy")))
assert files, "no outputs"
for f in files:
    a, b = np.load(f), np.load(os.path.join(gpu, os.path.basename(f)))
    err = float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(a))))
    print(os.path.basename(f), a.shape, "max rel err", err)
    assert err <= 1e-4, err
PY
for dev in cpu gpu; do
  step "mlp: bench --device $dev --batch 256" "$B/savedmodel-cli" bench --dir "$M" \
    --device "$dev" --batch 256 --runs 200 --json
done
step "mlp: show --placement --device gpu" "$B/savedmodel-cli" show --dir "$M" --placement --device gpu

{
  echo "# kiln GPU check"
  echo
  echo "$(nvidia-smi -L 2>/dev/null | head -1)"
  echo
  echo "| step | result |"
  echo "| --- | --- |"
  for k in "${!RESULT[@]}"; do echo "| $k | ${RESULT[$k]} |"; done | sort
  echo
  echo "Bench lines (JSON, one per device):"
  echo '```'
  grep -h '^{' "$LOG" || true
  echo '```'
} > "$REPORT"
{
  echo "{"
  first=1
  for k in "${!RESULT[@]}"; do
    [[ $first == 1 ]] || echo ","
    first=0
    printf '  "%s": "%s"' "$k" "${RESULT[$k]}"
  done
  echo
  echo "}"
} > "$JSON"
cat "$REPORT"
for k in "${!RESULT[@]}"; do [[ "${RESULT[$k]}" == pass ]] || exit 1; done
exit 0
