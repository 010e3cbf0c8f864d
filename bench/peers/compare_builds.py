"""Two kiln builds side by side, in one run: for each workload of run_peers (workloads.py), the
`savedmodel-cli bench` of build A and of build B alternate (ABAB..., 5 rounds each) and the
median p50s are compared. For changes meant to keep the speed (a refactor): every ratio should
sit within the machine's noise.

    .venv-oracle/bin/python bench/peers/compare_builds.py --before OLD/savedmodel-cli \
        [--after build/tools/savedmodel-cli] [--threads 1,2] [--workloads a,b]

The bundles and inputs are run_peers' (bench/.cache; built with TensorFlow when missing).
"""
import argparse
import statistics
import sys
from pathlib import Path

import engines
import workloads

ROOT = Path(__file__).resolve().parents[2]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the reference build's savedmodel-cli")
    ap.add_argument("--after", default=str(ROOT / "build" / "tools" / "savedmodel-cli"))
    ap.add_argument("--threads", default="1")
    ap.add_argument("--workloads", help="comma-separated names (default: all but training)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cache", default=str(ROOT / "bench" / ".cache"))
    ap.add_argument("--build", default=str(ROOT / "build"))
    args = ap.parse_args(argv)
    wanted = set(args.workloads.split(",")) if args.workloads else None
    quiet = lambda *a: None  # noqa: E731
    print("| workload | threads | before p50 | after p50 | after/before |")
    print("|---|---|---|---|---|")
    for threads in (int(t) for t in args.threads.split(",")):
        for w in workloads.WORKLOADS:
            if (wanted and w.name not in wanted) or (not wanted and "train" in w.name):
                continue
            model, _ = workloads.bundle(args.cache, args.build, w.bundle, log=quiet)
            inputs = workloads.inputs(args.cache, w, model, log=quiet)
            cal = engines.kiln_bench(args.after, model, w.signature, inputs, threads, 3, 1)
            runs = max(3, min(2000, int(0.6e6 / max(cal["p50_us"], 1.0))))
            p50 = {"before": [], "after": []}
            for _ in range(args.rounds):
                for k in ("before", "after"):
                    out = engines.kiln_bench(getattr(args, k), model, w.signature, inputs,
                                             threads, runs, 3)
                    p50[k].append(out["p50_us"])
            b, a = statistics.median(p50["before"]), statistics.median(p50["after"])
            print(f"| {w.name} | {threads} | {b:.1f} us | {a:.1f} us | {a / b:.3f} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
