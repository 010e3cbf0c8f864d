"""Issue 22's "threads that never hurt": kiln's default thread setting against --threads 1, on a
quiet machine and beside one busy process per core (other work on a shared server), in one run.

    .venv-oracle/bin/python bench/peers/under_load.py [--workloads a,b] [--rounds 3]
        [--round-seconds 1] [--runs R] [--busy-only]

For each workload, rounds alternate `savedmodel-cli bench --threads 0` (the default: all the
cores the process may use) and `--threads 1`, first on the quiet machine, then with the busy
processes running. It prints the mean time per call of each and the ratio default / 1 thread:
the goal is a ratio <= 1 (plus noise) beside the busy processes. The workloads are
bench/peers/workloads.py's (built into $KILN_BENCH_DIR like run_peers.py's). The header names
the CPU and the ISA the kernels ran (set KILN_MAX_CPU_ISA=avx2 for the AVX2 row).
"""
import argparse
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import engines  # noqa: E402
import run_peers  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_WORKLOADS = "mlp_b1,mlp_b256,cnn_b1,cnn_b64,seed_conv,mobilenet_v2"


def _spin(stop):
    x = 0
    while not stop.is_set():
        for _ in range(100000):
            x += 1


class Busy:
    """One busy-looping process per core while inside the `with` block."""

    def __init__(self, n):
        self.n, self.procs = n, []
        self.stop = multiprocessing.Event()

    def __enter__(self):
        self.procs = [multiprocessing.Process(target=_spin, args=(self.stop,), daemon=True)
                      for _ in range(self.n)]
        for p in self.procs:
            p.start()
        time.sleep(0.5)  # let them take the cores
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()


def measure(args, b, threads):
    """The median over the rounds of the mean time per call (us) at each thread setting, rounds
    alternating. The mean, not the median call: beside busy processes most calls run whole in
    one time slice and the cost shows in the calls that wait for a descheduled thread."""
    mean = {t: [] for t in threads}
    runs = args.runs
    if not runs:  # about --round-seconds of calls, from a short calibration run
        cal = engines.kiln_bench(args.kiln_cli, b["model"], b["signature"], b["inputs"], 1, 10, 2)
        runs = int(min(100000, max(5, args.round_seconds * 1e6 / max(cal["mean_us"], 0.01))))
    isa = ""
    for _ in range(args.rounds):
        for t in threads:
            r = engines.kiln_bench(args.kiln_cli, b["model"], b["signature"], b["inputs"], t,
                                   runs, max(3, runs // 10))
            mean[t].append(r["mean_us"])
            isa = r.get("cpu_isa", isa)
    return {t: statistics.median(v) for t, v in mean.items()}, isa, runs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workloads", default=DEFAULT_WORKLOADS)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, help="timed calls per bench process (default: about "
                                              "--round-seconds of calls)")
    ap.add_argument("--round-seconds", type=float, default=1.0)
    ap.add_argument("--busy-only", action="store_true", help="skip the quiet-machine rows")
    ap.add_argument("--cache", default=os.environ.get("KILN_BENCH_DIR",
                                                      str(ROOT / "bench" / ".cache")))
    ap.add_argument("--build", default=os.environ.get("KILN_BUILD_DIR", str(ROOT / "build")))
    args = ap.parse_args(argv)
    args.kiln_cli = str(Path(args.build) / "tools" / "savedmodel-cli")
    import workloads as wl
    by_name = {w.name: w for w in wl.WORKLOADS}
    names = args.workloads.split(",")
    unknown = set(names) - set(by_name)
    if unknown:
        sys.exit(f"under_load: unknown workloads {sorted(unknown)}")
    built = run_peers.prepare(args, names)
    cores = len(os.sched_getaffinity(0))
    machine = run_peers.machine()
    rows, isa = [], ""
    for name in names:
        b = built[name]
        if "error" in b:
            rows.append((name, None, None, b["error"]))
            continue
        b = {**b, "signature": by_name[name].signature}
        print(f"under_load: {name}", file=sys.stderr, flush=True)
        quiet = None
        if not args.busy_only:
            quiet, isa, _ = measure(args, b, (0, 1))
        with Busy(cores):
            busy, isa, runs = measure(args, b, (0, 1))
        print(f"under_load: {name}: {runs} calls per round", file=sys.stderr, flush=True)
        rows.append((name, quiet, busy, ""))
    print(f"CPU: {machine['cpu']}, {cores} cores; kernels' ISA: {isa}; "
          f"{args.rounds} rounds of ~{args.round_seconds} s each, mean time per call (median of the "
          "rounds)")
    print()
    print("| workload | quiet: default | quiet: 1 thread | busy: default | busy: 1 thread "
          "| busy: default / 1 thread |")
    print("|---|---:|---:|---:|---:|---:|")

    def us(v):
        return f"{v:,.1f} us" if v is not None else "n/a"

    for name, quiet, busy, error in rows:
        if error:
            print(f"| {name} | {error[:80]} | | | | |")
            continue
        q0, q1 = (quiet[0], quiet[1]) if quiet else (None, None)
        print(f"| {name} | {us(q0)} | {us(q1)} | {us(busy[0])} | {us(busy[1])} "
              f"| {busy[0] / busy[1]:.2f} |")


if __name__ == "__main__":
    main()
