"""Before/after for an engine change: the same workloads on two builds of savedmodel-cli,
alternating rounds (before, after, before, ...) so both share the machine's noise, then the
median per-call time of each and the ratio. For refactors that must not change speed.

    .venv-oracle/bin/python bench/compare_builds.py --before OLD_BUILD --after build \
        [--workloads mlp_b1,cnn_b1,...] [--threads 1] [--rounds 5] [--runs 200]

Workload bundles and inputs come from bench/peers (built into $KILN_BENCH_DIR, default
bench/.cache/, by run_peers.py; this script builds what is missing the same way).
"""
import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))
import engines  # noqa: E402
import workloads as wl  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = "mlp_b1,mlp_b256,cnn_b1,cnn_b64,seed_conv,mobilenet_v2,lstm_text_b1,wide_deep_b64"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="build dir of the old savedmodel-cli")
    ap.add_argument("--after", default=str(ROOT / "build"), help="build dir of the new one")
    ap.add_argument("--workloads", default=DEFAULT)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    cache = Path(os.environ.get("KILN_BENCH_DIR", ROOT / "bench" / ".cache"))
    clis = {"before": Path(args.before) / "tools" / "savedmodel-cli",
            "after": Path(args.after) / "tools" / "savedmodel-cli"}
    by_name = {w.name: w for w in wl.WORKLOADS}
    print(f"threads {args.threads}, {args.rounds} alternating rounds of {args.runs} calls; "
          "p50 per call in microseconds (median over rounds)")
    print(f"{'workload':<16} {'before':>10} {'after':>10} {'after/before':>13}")
    for name in args.workloads.split(","):
        w = by_name[name]
        bundle_dir, _ = wl.bundle(cache, Path(args.after), w.bundle, log=lambda m: None)
        feed = wl.inputs(cache, w, bundle_dir, log=lambda m: None)
        p50 = {"before": [], "after": []}
        for _ in range(args.rounds):
            for which in ("before", "after"):
                out = engines.kiln_bench(clis[which], bundle_dir, w.signature, feed, args.threads,
                                         args.runs, 10)
                p50[which].append(out["p50_us"])
        b, a = statistics.median(p50["before"]), statistics.median(p50["after"])
        print(f"{name:<16} {b:>10.1f} {a:>10.1f} {a / b:>13.3f}", flush=True)


if __name__ == "__main__":
    main()
