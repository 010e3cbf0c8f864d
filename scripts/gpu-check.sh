#!/usr/bin/env bash
# The GPU proof (issue 20) in one device run. Two halves:
#
#   bash scripts/gpu-check.sh              # here: build the CUDA device, pack .gpu-carry/
#   bash scripts/gpu-check.sh --on-device  # on the GPU machine, with .gpu-carry carried
#
# The GPU machine has nvcc, CMake and PyTorch with its cuDNN/cuBLAS wheels but none of our
# Debian libraries and no TensorFlow, so the first half packs the test programs,
# savedmodel-cli, the models (scripts/gpu/make_models.py: Keras MLP, CNN, MobileNetV2, a small
# transformer encoder, a U-Net (Conv2DTranspose, UpSampling2D; also mixed precision), ResNet50
# and a BERT-base-sized encoder, the last two also as Keras
# mixed-precision models; each with an input and TensorFlow's output) and every shared library
# they load that is not glibc into one xz archive (about 53 MB of the 64 MiB a device run
# carries). The second half runs on the GPU machine, in about two minutes (H200):
#   - the GPU tests of kiln_exec_tests (placement on gpu:0, results within 1e-4 of the CPU, 16
#     threads on one function give the serial results) and the kernel-table checks;
#   - the op tester (kiln_op_tests): every case of every op that has a GPU kernel runs on the
#     GPU too and is compared with the CPU (beside the model checks: it is CPU-bound);
#   - each model with `savedmodel-cli run --device gpu`, against TensorFlow's output and kiln's
#     CPU result, and its placement (`show --placement`);
#   - `bench --device gpu` at batch 1 and a large batch per model, next to PyTorch on the same
#     GPU (scripts/gpu/torch_bench.py: eager, host-to-host, and torch.compile for the large
#     batches), every row again with inputs and results in GPU memory (--device_io, as
#     PyTorch's eager rows are timed), the batch-1 rows again as CUDA graphs (--cuda_graphs),
#     and Nsight Compute's time of every kernel of one steady call of the mixed-precision
#     encoder and ResNet50;
# and writes report.md, report.json, gpu-check.log, op-tester.log and the kernel times' CSVs to
# $OUT (the device tool's folder). Each step has a time limit, so one hung kernel cannot spend
# the run.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CARRY="$ROOT/.gpu-carry"

if [[ "${1:-}" != "--on-device" ]]; then
  set -e
  bash "$ROOT/scripts/install-deps.sh"
  KILN_TARGETS="kiln_exec_tests kiln_op_tests savedmodel-cli" bash "$ROOT/scripts/build.sh"
  bash "$ROOT/scripts/setup-oracles.sh"
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
  "${KILN_ORACLE_VENV:-$ROOT/.venv-oracle}/bin/python" "$ROOT/scripts/gpu/make_models.py" \
    "$STAGE/models"
  cp "$ROOT"/scripts/gpu/*.py "$STAGE/"
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
step() {  # [T=seconds] step NAME COMMAND...: runs it (killed after T s), logs it, records pass/fail
  local name="$1"
  shift
  echo "== $name :: $*" | tee -a "$LOG"
  local t0=$SECONDS
  if timeout "${T:-120}" "$@" >> "$LOG" 2>&1; then RESULT[$name]="pass"; else RESULT[$name]="FAIL"; fi
  echo "   ${RESULT[$name]} ($((SECONDS - t0)) s)" | tee -a "$LOG"
}
nvidia-smi -L 2>&1 | tee -a "$LOG"
B="$WORK/bin"
# KILN_GPU_ONLY_PROFILE=1: only the kernel times below (a diagnosis run, no proof).
if [[ -z "${KILN_GPU_ONLY_PROFILE:-}" ]]; then
  step "exec: gpu and cuda-table tests" "$B/kiln_exec_tests" -tc='gpu:*,cuda table:*' -s
  # The op tester is CPU-bound (every case runs on the CPU as the reference): it runs beside the
  # model checks, and the timings start only once it is done.
  OPLOG="$OUT/op-tester.log"
  ( t0=$SECONDS; if timeout 420 "$B/kiln_op_tests" > "$OPLOG" 2>&1; then r=pass; else r=FAIL; fi
    echo "   $r ($((SECONDS - t0)) s)" >> "$OPLOG" ) &
  OPS_PID=$!
  MODELS="keras_mlp keras_cnn mobilenet_v2 encoder unet unet_fp16 resnet50 resnet50_fp16 bert
    bert_fp16"
  for m in $MODELS; do
    M="$WORK/models/$m"
    for dev in cpu gpu; do
      mkdir -p "$WORK/out/$m/$dev"
      step "$m: run --device $dev" "$B/savedmodel-cli" run --dir "$M" --tag_set serve \
        --signature_def serving_default --inputs "x=$WORK/models/${m}_x.npy" --device "$dev" \
        --outdir "$WORK/out/$m/$dev" --overwrite
    done
    # float16 models (Keras mixed precision) are compared at float16's precision.
    tol=1e-3
    [[ "$m" == *_fp16 ]] && tol=2e-2
    step "$m: gpu vs TensorFlow and cpu" python3 - "$WORK/models/${m}_y.npy" \
      "$WORK/out/$m/cpu/y.npy" "$WORK/out/$m/gpu/y.npy" "$tol" <<'PY'
import sys
import numpy as np
tf, cpu, gpu = (np.load(p).astype(np.float64) for p in sys.argv[1:4])
tol = float(sys.argv[4])
def rel(a, b):
    return float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b))))
print("gpu vs tf", rel(gpu, tf), "gpu vs cpu", rel(gpu, cpu), "cpu vs tf", rel(cpu, tf))
assert rel(gpu, tf) <= tol and rel(gpu, cpu) <= tol
PY
    step "$m: show --placement" "$B/savedmodel-cli" show --dir "$M" --placement --device gpu
  done
  echo "== op tester on gpu:0 vs the CPU (beside the models) :: $B/kiln_op_tests" >> "$LOG"
  wait "$OPS_PID"
  tail -n 40 "$OPLOG" >> "$LOG"
  BENCH="keras_mlp:1 keras_mlp:4096 keras_cnn:1 keras_cnn:1024 mobilenet_v2:1 mobilenet_v2:64
    encoder:1 encoder:32 resnet50:1 resnet50:64 resnet50_fp16:1 resnet50_fp16:64 bert:1 bert:32
    bert_fp16:1 bert_fp16:32"
  for row in $BENCH; do
    m="${row%%:*}" b="${row##*:}"
    step "bench kiln gpu $m batch $b" "$B/savedmodel-cli" bench --dir "$WORK/models/$m" \
      --device gpu --batch "$b" --runs 30 --warmup 3 --json
  done
  # Inputs and results kept in GPU memory (--device_io: no copies to or from the host, each
  # call waiting for the GPU), as PyTorch eager and torch.compile are timed: the batched goals.
  for row in $BENCH; do
    m="${row%%:*}" b="${row##*:}"
    step "bench kiln resident $m batch $b" "$B/savedmodel-cli" bench --dir "$WORK/models/$m" \
      --device gpu --device_io --batch "$b" --runs 30 --warmup 3 --json
  done
  # The same calls replayed as one CUDA graph each (--cuda_graphs; the exec tests above check
  # replays against the steps): the per-call overhead at batch 1.
  for row in keras_mlp:1 keras_cnn:1 encoder:1 mobilenet_v2:1 resnet50:1 resnet50_fp16:1 \
    bert_fp16:1 resnet50_fp16:64; do
    m="${row%%:*}" b="${row##*:}"
    step "bench kiln graph $m batch $b" "$B/savedmodel-cli" bench --dir "$WORK/models/$m" \
      --device gpu --cuda_graphs --batch "$b" --runs 100 --warmup 3 --json
  done
  # --precision: float32 models in half precision (against TensorFlow's float32 output, at
  # half precision's tolerance) and with TF32 products, timed beside the float32 rows above.
  for m in resnet50 bert; do
    for p in fp16 tf32; do
      mkdir -p "$WORK/out/$m/$p"
      step "$m: run --precision $p" "$B/savedmodel-cli" run --dir "$WORK/models/$m" --tag_set serve \
        --signature_def serving_default --inputs "x=$WORK/models/${m}_x.npy" --device gpu \
        --precision "$p" --outdir "$WORK/out/$m/$p" --overwrite
      step "$m --precision $p: vs TensorFlow" python3 "$WORK/close_to.py" "$WORK/out/$m/$p/y.npy" \
        "$WORK/models/${m}_y.npy" "$([[ $p == fp16 ]] && echo 5e-2 || echo 1e-2)"
    done
  done
  for row in resnet50:64 bert:32 resnet50:1; do
    m="${row%%:*}" b="${row##*:}"
    for p in fp16 tf32; do
      step "bench kiln $p $m batch $b" "$B/savedmodel-cli" bench --dir "$WORK/models/$m" \
        --device gpu --precision "$p" --batch "$b" --runs 30 --warmup 3 --json
    done
  done
  # A new process's first result with a compiled GPU plan (compile records cuDNN's measured
  # algorithms for the batch its input has, so neither load nor first call measures), against
  # the same without the plan: run's wall time from start to exit, output checked against
  # TensorFlow. The goal: ResNet50 at most 1.5 s.
  for m in resnet50 resnet50_fp16 unet; do
    P="$WORK/models/${m}_planned"
    rm -rf "$P" && cp -r "$WORK/models/$m" "$P"
    step "compile $m --device gpu" "$B/savedmodel-cli" compile --dir "$P" --device gpu \
      --tune_batch 2
    for plan in ignore require; do
      mkdir -p "$WORK/out/$m/plan-$plan"
      T=60 step "first result $m plan $plan" bash -c 's=$(date +%s%N)
        "$0" run --dir "$1" --tag_set serve --signature_def serving_default --inputs "x=$2" \
          --device gpu --plan "$3" --outdir "$4" --overwrite > /dev/null || exit 1
        echo "{\"first_result_ms\": $((($(date +%s%N) - s) / 1000000))}"
        python3 "$5" "$4/y.npy" "$6" "$7"' "$B/savedmodel-cli" "$P" "$WORK/models/${m}_x.npy" \
        "$plan" "$WORK/out/$m/plan-$plan" "$WORK/close_to.py" "$WORK/models/${m}_y.npy" \
        "$([[ $m == *_fp16 ]] && echo 2e-2 || echo 1e-3)"
    done
  done
fi
# Where a model's GPU time goes: Nsight Compute times every kernel of one steady call (bench
# opens the profiler's span for its timed calls only: no first-call algorithm search) of each
# model:batch in KILN_GPU_PROFILE (by default the mixed-precision encoder at batch 32 and
# ResNet50 at batch 64, 17.1 ms on the H100 of run 9 against 9.2 ms on an H200); the log
# gets the kernels by total time, $OUT each CSV. Skipped where ncu is missing.
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
if [[ -n "$NCU" ]]; then
  for row in ${KILN_GPU_PROFILE:-bert_fp16:32 resnet50_fp16:64}; do
    m="${row%%:*}" b="${row##*:}"
    [[ -n "${KILN_GPU_ONLY_PROFILE:-}" ]] && step "bench kiln gpu $m batch $b" \
      "$B/savedmodel-cli" bench --dir "$WORK/models/$m" --device gpu --batch "$b" --runs 30 \
      --warmup 3 --json
    T=150 step "kernel times: $m batch $b (ncu)" "$NCU" --clock-control none \
      --profile-from-start off --metrics gpu__time_duration.sum --print-units base --csv \
      --log-file "$OUT/ncu-$m-$b.csv" "$B/savedmodel-cli" bench --dir "$WORK/models/$m" \
      --device gpu --batch "$b" --runs 1 --warmup 2
    python3 - "$OUT/ncu-$m-$b.csv" <<'PY' >> "$LOG" 2>&1
import csv, sys
from collections import defaultdict
total, count = defaultdict(float), defaultdict(int)
with open(sys.argv[1]) as f:
    lines = [l for l in f if l.startswith('"')]
for row in csv.DictReader(lines):
    name = row["Kernel Name"][:90]
    total[name] += float(row["Metric Value"].replace(",", "")) / 1000.0  # ns
    count[name] += 1
print("kernel times (us, one call):", round(sum(total.values()), 1), "in", sum(count.values()),
      "kernels")
for name, us in sorted(total.items(), key=lambda kv: -kv[1])[:25]:
    print(f"{us:10.1f} us {count[name]:5d}x  {name}")
PY
  done
fi
if [[ -z "${KILN_GPU_ONLY_PROFILE:-}" ]]; then
  T=180 step "bench torch eager" python3 "$WORK/torch_bench.py" $BENCH
  T="${KILN_GPU_COMPILE_S:-120}" step "bench torch.compile (large batches)" \
    python3 "$WORK/torch_bench.py" resnet50_fp16:64 bert_fp16:32 resnet50:64 bert:32 \
    keras_mlp:4096 --compile
fi

python3 - "$LOG" "$REPORT" "$JSON" <<'PY'
import json, re, sys
log, report, out = sys.argv[1:]
steps, rows, kiln, first, graph, resident, cold, precision = [], [], {}, {}, {}, {}, {}, {}
current = None
for line in open(log):
    m = re.match(r"== (.*?) :: ", line)
    if m:
        current = m.group(1)
    m = re.match(r"   (pass|FAIL) \((\d+) s\)", line)
    if m:
        steps.append((current, m.group(1), int(m.group(2))))
    if line.startswith("{") and current:
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if "engine" in d:
            rows.append(d)
        elif current.startswith("first result"):
            _, _, model, _, plan = current.split()
            cold[(model, plan)] = d["first_result_ms"]
        elif current.startswith("bench kiln fp16") or current.startswith("bench kiln tf32"):
            _, _, prec, model, _, batch = current.split()
            precision[(model, int(batch), prec)] = d["p50_us"]
        elif current.startswith("bench kiln resident"):
            _, _, _, model, _, batch = current.split()
            resident[(model, int(batch))] = d["p50_us"]
        elif current.startswith("bench kiln graph"):
            _, _, _, model, _, batch = current.split()
            graph[(model, int(batch))] = (d["p50_us"], d.get("device_graph"))
        elif current.startswith("bench kiln gpu"):
            _, _, _, model, _, batch = current.split()
            kiln[(model, int(batch))] = d["p50_us"]
            first[(model, int(batch))] = (d.get("load_ms"), d.get("first_call_ms"),
                                          d.get("device_steps"), d.get("copies"))
torch = {}
for r in rows:
    torch.setdefault((r["model"], r["batch"]), {})[r["engine"]] = r["p50_us"]
with open(report, "w") as f:
    f.write("# kiln GPU check\n\n| step | result | s |\n| --- | --- | --- |\n")
    for name, res, sec in steps:
        f.write(f"| {name} | {res} | {sec} |\n")
    f.write("\n| model | batch | kiln gpu p50 us | torch eager p50 us | torch.compile p50 us |"
            " torch host-to-host p50 us | eager/kiln | compile/kiln | host/kiln |\n"
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
    for key in sorted(set(kiln) | set(torch)):
        k = kiln.get(key)
        t = torch.get(key, {})
        e, c, h = t.get("torch-eager"), t.get("torch-compile"), t.get("torch-host")
        ratio = lambda v: f"{v / k:.2f}" if v and k else ""
        f.write(f"| {key[0]} | {key[1]} | {k or ''} | {e or ''} | {c or ''} | {h or ''} |"
                f" {ratio(e)} | {ratio(c)} | {ratio(h)} |\n")
    f.write("\n| model | batch | kiln gpu, data on the GPU (--device_io) p50 us |"
            " torch eager p50 us | torch.compile p50 us | eager/kiln | compile/kiln |\n"
            "| --- | --- | --- | --- | --- | --- | --- |\n")
    for key in sorted(resident):
        k = resident[key]
        t = torch.get(key, {})
        e, c = t.get("torch-eager"), t.get("torch-compile")
        ratio = lambda v: f"{v / k:.2f}" if v and k else ""
        f.write(f"| {key[0]} | {key[1]} | {k} | {e or ''} | {c or ''} | {ratio(e)} |"
                f" {ratio(c)} |\n")
    f.write("\n| model | batch | load ms | first call ms | steps per device | copies per call |\n"
            "| --- | --- | --- | --- | --- | --- |\n")
    for key in sorted(first):
        load, call, dev, copies = first[key]
        f.write(f"| {key[0]} | {key[1]} | {load} | {call} | {dev} | {copies} |\n")
    f.write("\n| model | batch | kiln gpu p50 us | with --cuda_graphs p50 us | steps/graph |"
            " CUDA graph |\n| --- | --- | --- | --- | --- | --- |\n")
    for key in sorted(graph):
        p50, note = graph[key]
        k = kiln.get(key)
        f.write(f"| {key[0]} | {key[1]} | {k or ''} | {p50} |"
                f" {f'{k / p50:.2f}' if k and p50 else ''} | {note} |\n")
    f.write("\n| model | batch | kiln gpu float32 p50 us | --precision tf32 p50 us |"
            " --precision fp16 p50 us |\n| --- | --- | --- | --- | --- |\n")
    for key in sorted({(m, b) for m, b, _ in precision}):
        f.write(f"| {key[0]} | {key[1]} | {kiln.get(key, '')} |"
                f" {precision.get(key + ('tf32',), '')} | {precision.get(key + ('fp16',), '')} |\n")
    f.write("\n| model | new process to first GPU result, no plan (ms) |"
            " with a compiled GPU plan (ms) |\n| --- | --- | --- |\n")
    for model in sorted({m for m, _ in cold}):
        f.write(f"| {model} | {cold.get((model, 'ignore'), '')} |"
                f" {cold.get((model, 'require'), '')} |\n")
json.dump({"steps": steps, "kiln_gpu_p50_us": {f"{m}:{b}": v for (m, b), v in kiln.items()},
           "kiln_graph_p50_us": {f"{m}:{b}": v[0] for (m, b), v in graph.items()},
           "kiln_resident_p50_us": {f"{m}:{b}": v for (m, b), v in resident.items()},
           "first_result_ms": {f"{m}:{p}": v for (m, p), v in cold.items()},
           "torch": rows}, open(out, "w"), indent=1)
PY
cat "$REPORT"
grep -q "| FAIL |" "$REPORT" && exit 1
exit 0
