"""Issue 8's peer benchmark: each workload's SavedModel on kiln (`savedmodel-cli bench`),
TensorFlow (tf.saved_model.load + the signature) and ONNX Runtime (the tf2onnx conversion of the
same SavedModel), at 1 thread and at all cores, alternating rounds (kiln, TF, ORT, kiln, ...)
so the machine's noise is shared; then the ratio table and issue 8's goals.

    .venv-oracle/bin/python bench/peers/run_peers.py [--smoke] [--json] [--update-docs]
        [--workloads a,b] [--threads 1,2] [--rounds 3] [--round-seconds 1] [--runs R]

Bundles, ONNX files and inputs are built once into $KILN_BENCH_DIR (default bench/.cache/).
Our binaries come from $KILN_BUILD_DIR (default build/). See docs/benchmarks.md.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# The harness imports neither TensorFlow nor numpy: its children inherit its RSS high-water mark
# in getrusage's ru_maxrss, which `savedmodel-cli bench` reports as its peak RSS. Building the
# workloads happens in a subprocess (workloads.py prepare).
import engines  # noqa: E402
import report  # noqa: E402
import workloads as wl  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def _percentile(times, q):
    """numpy's default (linear) percentile."""
    xs = sorted(times)
    pos = (len(xs) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _runs_for(call_us, args):
    """Runs per round so one engine's round takes about --round-seconds."""
    if args.runs:
        return args.runs
    return int(min(100000, max(3, args.round_seconds * 1e6 / max(call_us, 0.01))))


def measure(workload, model, onnx, inputs, threads, args):
    """{engine: figures or {"error": why}} for one workload at one thread setting."""
    res = {e: {} for e in report.ENGINES}
    rounds = {e: [] for e in report.ENGINES}
    peers = {}
    if onnx is None:
        res["ort"] = {"error": "ONNX Runtime does not run training graphs"}
    try:
        peers["tf"] = engines.PeerWorker("tf", threads, model, workload.signature, inputs)
        if onnx is not None:
            peers["ort"] = engines.PeerWorker("ort", threads, onnx, workload.signature, inputs)
        # Imports overlap (both workers start together); loads run one at a time.
        for e, p in list(peers.items()):
            try:
                res[e].update(p.request(op="load"))
            except RuntimeError as err:
                res[e] = {"error": str(err).splitlines()[-1][:300]}
                peers.pop(e).close()
        runs = {}
        for e, p in peers.items():  # calibration
            t = p.request(op="run", runs=3, warmup=1)["times_us"]
            runs[e] = _runs_for(statistics.median(t), args)
        try:
            cal = engines.kiln_bench(args.kiln_cli, model, workload.signature, inputs, threads,
                                     3, 1)
            runs["kiln"] = _runs_for(cal["p50_us"], args)
        except RuntimeError as err:
            res["kiln"] = {"error": str(err)[:300]}
        warmup = max(1, min(10, args.runs or 10))
        for r in range(args.rounds):
            for e in report.ENGINES:
                if "error" in res[e] or e not in runs:
                    continue
                try:
                    if e == "kiln":
                        out = engines.kiln_bench(args.kiln_cli, model, workload.signature,
                                                 inputs, threads, runs[e], warmup)
                        rounds[e].append(out)
                    else:
                        out = peers[e].request(op="run", runs=runs[e], warmup=warmup)
                        t = out["times_us"]
                        rounds[e].append({"p50_us": _percentile(t, 50),
                                          "p90_us": _percentile(t, 90),
                                          "peak_rss_kb": out["peak_rss_kb"]})
                except RuntimeError as err:
                    res[e] = {"error": str(err)[:300]}
    finally:
        for p in peers.values():
            p.close()

    for e in report.ENGINES:
        if "error" in res[e] or not rounds[e]:
            res[e].setdefault("error", "not measured")
            # Paths inside the cache say nothing to a reader of the table.
            res[e]["error"] = res[e]["error"].replace(str(Path(args.cache)) + "/", "")
            continue
        rs = rounds[e]
        res[e].update({
            "p50_us": statistics.median(r["p50_us"] for r in rs),
            "p90_us": statistics.median(r["p90_us"] for r in rs),
            "peak_rss_kb": max(r["peak_rss_kb"] for r in rs),
            "rounds": len(rs), "runs_per_round": runs[e],
        })
        if e == "kiln":
            res[e]["cpu_isa"] = rs[-1].get("cpu_isa")
            res[e]["load_ms"] = statistics.median(r["load_ms"] for r in rs)
            res[e]["first_call_ms"] = statistics.median(r["first_call_ms"] for r in rs)
            res[e]["rss_after_load_kb"] = statistics.median(r["rss_after_load_kb"] for r in rs)
    return res


def machine():
    from importlib import metadata
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(),
            **{d: metadata.version(d) for d in ("tensorflow-cpu", "onnxruntime", "numpy")}}


def prepare(args, names):
    """Builds the workloads' bundles, ONNX files and inputs in a subprocess (see the import note
    above); {workload: {"model", "meta", "onnx", "inputs"} or {"error"}}."""
    proc = subprocess.run([sys.executable, str(Path(__file__).parent / "workloads.py"), "prepare",
                           "--cache", args.cache, "--build", args.build] + names,
                          stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"run_peers: building the workloads failed (exit {proc.returncode})")
    return json.loads(proc.stdout)


def run(args):
    cores = os.cpu_count() or 1
    threads = sorted({int(t) for t in args.threads.split(",")} if args.threads
                     else {1} if args.smoke else {1, cores})
    chosen = wl.SMOKE_WORKLOADS if args.smoke else wl.WORKLOADS
    if args.workloads:
        names = args.workloads.split(",")
        unknown = set(names) - {w.name for w in wl.WORKLOADS}
        if unknown:
            sys.exit(f"run_peers: unknown workloads {sorted(unknown)}")
        chosen = [w for w in wl.WORKLOADS if w.name in names]
    t_start = time.monotonic()
    out = {"date": datetime.date.today().isoformat(), "machine": machine(),
           "command": args.command, "rows": [], "goals": [], "sgemm": {},
           "loadavg_start": round(os.getloadavg()[0], 1)}
    built = prepare(args, [w.name for w in chosen])
    for w in chosen:
        log(f"run_peers: measuring {w.name}")
        row = {"name": w.name, "note": w.note, "results": {}}
        out["rows"].append(row)
        b = built[w.name]
        if "error" in b:
            row["results"] = {str(t): {e: {"error": b["error"][:300]} for e in report.ENGINES}
                              for t in threads}
            continue
        row["meta"] = b["meta"]
        for t in threads:
            row["results"][str(t)] = measure(w, b["model"], b["onnx"], b["inputs"], t, args)
            isa = row["results"][str(t)]["kiln"].get("cpu_isa")
            if isa:
                out["machine"]["kiln_isa"] = isa
    if not args.smoke or args.sgemm:
        n = 256 if args.smoke else 2048
        out["sgemm_n"] = n
        for t in threads:
            try:
                out["sgemm"][str(t)] = engines.best_sgemm_gflops(t, n)
            except RuntimeError as e:
                log(f"run_peers: sgemm at {t} thread(s) failed: {e}")
    by_name = {w.name: w for w in chosen}
    for row in out["rows"]:
        w = by_name[row["name"]]
        for goal in w.goals:
            for t, res in row["results"].items():
                measured, met = report.check_goal(goal, w, row.get("meta", {}), res,
                                                  out["sgemm"].get(t))
                out["goals"].append({"goal": goal, "workload": w.name, "threads": t,
                                     "measured": measured, "met": met})
    out["seconds"] = round(time.monotonic() - t_start, 1)
    out["loadavg_end"] = round(os.getloadavg()[0], 1)
    return out


def docs_section(run_out):
    m = run_out["machine"]
    load = ""
    if "loadavg_start" in run_out:
        # Other work on a shared machine shows in the figures; say how busy it was.
        load = (f" (1-minute load average {run_out['loadavg_start']} at the start, "
                f"{run_out['loadavg_end']} at the end)")
    return (f"Measured {run_out['date']} with `{run_out['command']}` ({run_out['seconds']} s) on "
            f"{m['cpu']}, {m['cores']} cores{load}; TensorFlow {m['tensorflow-cpu']}, ONNX "
            f"Runtime {m['onnxruntime']}, numpy {m['numpy']}. Latencies are medians over the "
            f"rounds of "
            f"each round's p50 (p90); load + first call and peak RSS are per process (TensorFlow "
            f"and ONNX Runtime figures include the Python interpreter and the framework).\n\n"
            + "Workloads:\n\n" + "".join(
                f"- `{r['name']}`: {r['note']}\n" for r in run_out["rows"]) + "\n"
            + report.markdown(run_out))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true",
                    help="one tiny model, a few runs, all three engines (the test command's "
                         "check); exits 1 when an engine gives no figures")
    ap.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    ap.add_argument("--update-docs", action="store_true",
                    help="rewrite the run_peers section of docs/benchmarks.md")
    ap.add_argument("--workloads", help="comma-separated workload names (default: all)")
    ap.add_argument("--threads", help="comma-separated thread counts (default: 1 and all cores)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--round-seconds", type=float, default=1.0,
                    help="about how long one engine's round runs (sets the runs per round)")
    ap.add_argument("--runs", type=int, help="fixed runs per round (no calibration)")
    ap.add_argument("--sgemm", action="store_true", help="measure sgemm in --smoke too")
    ap.add_argument("--cache", default=os.environ.get("KILN_BENCH_DIR",
                                                      str(ROOT / "bench" / ".cache")))
    ap.add_argument("--build", default=os.environ.get("KILN_BUILD_DIR", str(ROOT / "build")))
    ap.add_argument("--kiln-cli", help="savedmodel-cli to run (default: BUILD/tools/...)")
    ap.add_argument("--from-json", help="print (and with --update-docs, write) the tables of a "
                                        "run saved earlier (every run saves CACHE/last_run.json)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.rounds = min(args.rounds, 2)
        args.runs = args.runs or 200
    args.kiln_cli = args.kiln_cli or str(Path(args.build) / "tools" / "savedmodel-cli")
    args.command = "bench/peers/run_peers.py " + " ".join(argv if argv is not None
                                                          else sys.argv[1:])
    if args.from_json:
        with open(args.from_json) as f:
            out = json.load(f)
    else:
        out = run(args)
        with open(Path(args.cache) / "last_run.json", "w") as f:
            json.dump(out, f, indent=1)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(report.markdown(out), end="")
    if args.update_docs:
        report.update_docs(str(ROOT / "docs" / "benchmarks.md"), out, docs_section(out))
        log("run_peers: docs/benchmarks.md updated")
    if args.smoke:
        missing = [f"{row['name']} {t} {e}: {res[e]['error']}" for row in out["rows"]
                   for t, res in row["results"].items() for e in report.ENGINES
                   if "error" in res[e]]
        if missing:
            log("run_peers: smoke run incomplete:\n  " + "\n  ".join(missing))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
