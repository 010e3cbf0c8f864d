"""kiln against TensorFlow and ONNX Runtime on models nobody tuned for (bench/untuned/models.py),
one thread, the engines interleaved round by round (bench/peers/engines.py):
  python bench/untuned/run.py latency [--models a,b] [--batches 1,8] [--rounds 3] [--round-seconds 1.0]
  python bench/untuned/run.py loadtime --models a,b [--reps 3]
Results are appended as JSON lines to bench/.cache/untuned/results.jsonl / loadtime.jsonl;
bench/untuned/report.py prints the tables. KILN_BUILD_DIR (default build/) names the build."""
import argparse, json, os, statistics, subprocess, sys, time
from pathlib import Path
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "bench" / "peers"))
import engines
CLI = os.environ.get("KILN_CLI", str(Path(os.environ.get("KILN_BUILD_DIR", ROOT / "build"))
                                      / "tools" / "savedmodel-cli"))
PY = sys.executable
CACHE = Path(os.environ.get("UNTUNED_CACHE", ROOT / "bench" / ".cache" / "untuned"))

def pct(xs, q):
    xs = sorted(xs); pos = (len(xs) - 1) * q / 100; lo = int(pos); hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

def kiln(model, inputs, runs, warmup):
    return engines.kiln_bench(CLI, model, "serving_default", inputs, 1, runs, warmup)

def nruns(us, secs):
    return int(min(20000, max(3, secs * 1e6 / max(us, 1))))

def latency(name, batch, b, args):
    model, onnx, inputs = b["model"], b["onnx"], b["inputs"][str(batch)]
    res = {"model": name, "batch": batch, "loadavg": os.getloadavg()[0]}
    peers = {"tf": engines.PeerWorker("tf", 1, model, "serving_default", inputs)}
    if onnx:
        peers["ort"] = engines.PeerWorker("ort", 1, onnx, "serving_default", inputs)
    else:
        res["ort_error"] = "tf2onnx conversion failed"
    runs, p50s = {}, {"kiln": [], "tf": [], "ort": []}
    try:
        for e, p in list(peers.items()):
            try:
                p.request(op="load")
                t = p.request(op="run", runs=3, warmup=1)["times_us"]
                runs[e] = nruns(statistics.median(t), args.round_seconds)
            except RuntimeError as err:
                res[f"{e}_error"] = str(err)[-300:]; peers.pop(e).close()
        try:
            cal = kiln(model, inputs, 3, 1); runs["kiln"] = nruns(cal["p50_us"], args.round_seconds)
        except RuntimeError as err:
            res["kiln_error"] = str(err)[-300:]
        for r in range(args.rounds):
            for e in ("kiln", "tf", "ort"):
                if e not in runs: continue
                w = max(1, min(5, runs[e] // 3))
                if e == "kiln":
                    p50s[e].append(kiln(model, inputs, runs[e], w)["p50_us"])
                else:
                    t = peers[e].request(op="run", runs=runs[e], warmup=w)["times_us"]
                    p50s[e].append(pct(t, 50))
    finally:
        for p in peers.values(): p.close()
    for e, v in p50s.items():
        if v:
            res[f"{e}_p50_us"] = statistics.median(v); res[f"{e}_rounds"] = v; res[f"{e}_runs"] = runs[e]
    return res

TF_ONESHOT = r'''
import sys, time, json, os
t0 = time.perf_counter()
import numpy as np, tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(1); tf.config.threading.set_inter_op_parallelism_threads(1)
t1 = time.perf_counter()
feed = {k: tf.constant(np.load(v)) for k, v in json.loads(sys.argv[2]).items()}
t2 = time.perf_counter()
fn = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
t3 = time.perf_counter()
fn(**feed)
t4 = time.perf_counter()
print(json.dumps({"import_ms": (t1-t0)*1e3, "load_ms": (t3-t2)*1e3, "first_call_ms": (t4-t3)*1e3}))
'''

def loadtime(name, batch, b, reps):
    model, inputs = b["model"], b["inputs"][str(batch)]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "OMP_NUM_THREADS": "1"}
    out = {"model": name, "batch": batch, "kiln": [], "tf": []}
    arg = ";".join(f"{k}={v}" for k, v in sorted(inputs.items()))
    for _ in range(reps):
        t0 = time.perf_counter()
        p = subprocess.run([CLI, "bench", "--dir", model, "--threads", "1", "--runs", "1", "--warmup", "0",
                            "--json", "--inputs", arg], capture_output=True, text=True, check=True)
        wall = (time.perf_counter() - t0) * 1e3; j = json.loads(p.stdout)
        out["kiln"].append({"wall_ms": wall, "load_ms": j["load_ms"], "first_call_ms": j["first_call_ms"]})
        t0 = time.perf_counter()
        p = subprocess.run([PY, "-c", TF_ONESHOT, model, json.dumps(inputs)], capture_output=True, text=True,
                           env=env, check=True)
        wall = (time.perf_counter() - t0) * 1e3; j = json.loads(p.stdout.strip().splitlines()[-1])
        out["tf"].append({"wall_ms": wall, **j})
    return out

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["latency", "loadtime"])
    ap.add_argument("--models"); ap.add_argument("--batches")
    ap.add_argument("--rounds", type=int, default=3); ap.add_argument("--round-seconds", type=float, default=1.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out")
    a = ap.parse_args()
    built = json.loads((CACHE / "built.json").read_text())
    names = a.models.split(",") if a.models else list(built)
    for n in names:
        b = built[n]
        if "error" in b: print(f"{n}: build error {b['error']}", file=sys.stderr); continue
        batches = [int(x) for x in a.batches.split(",")] if a.batches else [int(x) for x in b["inputs"]]
        if a.cmd == "loadtime": batches = batches[:1]
        for bs in batches:
            t0 = time.time()
            try:
                r = latency(n, bs, b, a) if a.cmd == "latency" else loadtime(n, bs, b, a.reps)
            except Exception as e:
                r = {"model": n, "batch": bs, "error": f"{type(e).__name__}: {e}"[-400:]}
            r["seconds"] = round(time.time() - t0, 1)
            print(json.dumps(r), flush=True)
            with open(a.out or CACHE / ("results.jsonl" if a.cmd == "latency" else "loadtime.jsonl"), "a") as f:
                f.write(json.dumps(r) + "\n")
