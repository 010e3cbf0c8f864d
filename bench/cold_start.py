#!/usr/bin/env python3
"""Issue 12's cold-start figures: loading the seed's MNIST CNN and the MLP from a serving plan
(`savedmodel-cli compile`) and without one, next to ONNX Runtime's session creation on the
tf2onnx conversion of the same bundle and TensorFlow's load, all in one run, rounds
interleaved (kiln without plan, kiln with plan, ORT, TF, ...) so the machine's noise is shared.

    .venv-oracle/bin/python bench/cold_start.py [--workloads cnn_b1,mlp_b1] [--rounds 9]

Per workload (medians over the rounds; one new process per kiln round):
- kiln `bench --threads 1 --runs 1 --json`: load_ms and first_call_ms, with the plan ignored,
  with the plan required, and with the plan and --skip_checksums;
- kiln new process -> loaded -> first call -> exit (`savedmodel-cli run --inputs`), wall time
  from fork to exit, with and without the plan, and the same with the protobuf-free runtime
  (`kiln-run`, runtime/), which reads only the plan; kiln-run's own timing of its
  PlanModel::Load (which restores only the variables the signature captures);
- ONNX Runtime: InferenceSession(path) + the first run, and TensorFlow: tf.saved_model.load +
  the signature's first call, each timed inside bench/peers' worker process for the engine
  (its "load" command) after its imports: a new Python process costs far more than either.
Bundles, ONNX files and inputs come from bench/peers (built once into $KILN_BENCH_DIR).
Prints Markdown rows.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "peers"))
ROOT = HERE.parent

def kiln_bench(cli, model, plan, extra=()):
    out = subprocess.run([cli, "bench", "--dir", model, "--threads", "1", "--runs", "1",
                          "--warmup", "0", "--json", "--plan", plan, *extra], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def wall_ms(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - t0) * 1e3


def kiln_wall_ms(cli, model, signature, inputs, plan):
    arg = ";".join(f"{k}={v}" for k, v in sorted(inputs.items()))
    return wall_ms([cli, "run", "--dir", model, "--tag_set", "serve", "--signature_def",
                    signature, "--inputs", arg, "--plan", plan])


def kiln_run_ms(kiln_run, model, signature, inputs, threads=1):
    """(wall ms of the whole process, its in-process PlanModel::Load ms)."""
    arg = ";".join(f"{k}={v}" for k, v in sorted(inputs.items()))
    t0 = time.perf_counter()
    proc = subprocess.run([kiln_run, "--dir", model, "--signature_def", signature, "--inputs", arg,
                           "--num_threads", str(threads), "--timings"], check=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = (time.perf_counter() - t0) * 1e3
    timings = dict(line.split() for line in proc.stderr.splitlines())
    return wall, float(timings["load_ms"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default="cnn_b1,mlp_b1")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--no-peers", action="store_true", help="kiln only")
    a = ap.parse_args()
    build = Path(os.environ.get("KILN_BUILD_DIR", ROOT / "build"))
    cache = Path(os.environ.get("KILN_BENCH_DIR", ROOT / "bench" / ".cache"))
    cli = str(build / "tools" / "savedmodel-cli")
    kiln_run = str(build / "runtime" / "kiln-run")
    names = a.workloads.split(",")
    subprocess.run([sys.executable, str(HERE / "peers" / "workloads.py"), "prepare", "--cache",
                    str(cache), "--build", str(build), *names], check=True)
    import engines
    import workloads as wl
    by_name = {w.name: w for w in wl.WORKLOADS}
    print("| workload | kiln load, no plan | kiln load, plan | kiln load, plan, "
          "--skip_checksums | kiln-run load (PlanModel) | kiln first call (plan) | kiln new "
          "process→first call, no plan / plan / kiln-run | ORT session + first run | TF load + "
          "first call |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        w = by_name[name]
        model, _ = wl.bundle(cache, build, w.bundle)
        planned = cache / f"{w.bundle}.planned"
        shutil.rmtree(planned, ignore_errors=True)
        shutil.copytree(model, planned, copy_function=os.link)
        subprocess.run([cli, "compile", "--dir", planned], check=True, stdout=subprocess.DEVNULL)
        files = {k: str(v) for k, v in wl.inputs(cache, w, model).items()}
        peers = []
        if not a.no_peers:
            onnx = wl.onnx_model(cache, model, w.signature)
            peers = [("ort", engines.PeerWorker("ort", 1, onnx, w.signature, files)),
                     ("tf", engines.PeerWorker("tf", 1, planned, w.signature, files))]
        rows = {k: [] for k in ("noplan", "plan", "plan_skip", "first", "wall_noplan",
                                "wall_plan", "wall_min", "min_load", "ort", "ort_first", "tf", "tf_first")}
        for _ in range(a.rounds):
            rows["noplan"].append(kiln_bench(cli, planned, "ignore")["load_ms"])
            b = kiln_bench(cli, planned, "require")
            assert b["plan_functions"] > 0
            rows["plan"].append(b["load_ms"])
            rows["first"].append(b["first_call_ms"])
            rows["plan_skip"].append(
                kiln_bench(cli, planned, "require", ["--skip_checksums"])["load_ms"])
            rows["wall_noplan"].append(kiln_wall_ms(cli, planned, w.signature, files, "ignore"))
            rows["wall_plan"].append(kiln_wall_ms(cli, planned, w.signature, files, "require"))
            wall, load = kiln_run_ms(kiln_run, planned, w.signature, files)
            rows["wall_min"].append(wall)
            rows["min_load"].append(load)
            for engine, worker in peers:
                r = worker.request(op="load")
                rows[engine].append(r["load_ms"])
                rows[engine + "_first"].append(r["first_call_ms"])
        for _, worker in peers:
            worker.close()
        med = {k: statistics.median(v) if v else float("nan") for k, v in rows.items()}
        peer = ("n/a", "n/a") if a.no_peers else (
            f"{med['ort']:.2f} + {med['ort_first']:.2f} ms",
            f"{med['tf']:.1f} + {med['tf_first']:.1f} ms")
        print(f"| {name} | {med['noplan']:.2f} ms | {med['plan']:.2f} ms | "
              f"{med['plan_skip']:.2f} ms | {med['min_load']:.2f} ms | {med['first']:.2f} ms | "
              f"{med['wall_noplan']:.1f} / "
              f"{med['wall_plan']:.1f} / {med['wall_min']:.1f} ms | {peer[0]} | {peer[1]} |")
    print(f"\n{a.rounds} rounds, medians, 1 thread; load = SavedModel::Load "
          "(InferenceSession for ORT, tf.saved_model.load for TF).")


if __name__ == "__main__":
    main()
