"""The peer benchmark's tables: the Markdown ratio table, the goals of issue 8 with whether
each is met, and the section of docs/benchmarks.md that --update-docs rewrites."""
import re

ENGINES = ["kiln", "tf", "ort"]
TITLES = {"kiln": "kiln", "tf": "TensorFlow", "ort": "ONNX Runtime"}

# Issue 8's goals (and issue 11's train step): id -> (text, how it is checked). A ratio is peer time / our time (> 1: we
# are faster).
GOALS = {
    "latency_1us": "kiln p50 <= 1 us",
    "ort_1.5": "ONNX Runtime / kiln >= 1.5",
    "ort_1.2": "ONNX Runtime / kiln >= 1.2",
    "ort_1.0": "ONNX Runtime / kiln >= 1.0",
    "tf_1.2": "TensorFlow / kiln >= 1.2",
    "tf_1.0": "TensorFlow / kiln >= 1.0",
    "sgemm_85": "kiln GFLOP/s >= 85 % of the best sgemm",
    "cnn_load_10ms": "kiln load + first call <= 10 ms",
    "cnn_rss": "kiln peak RSS <= weights + largest activation set + 8 MB",
}


def ratio(results, peer):
    ours, theirs = results.get("kiln", {}), results.get(peer, {})
    if "p50_us" not in ours or "p50_us" not in theirs or ours["p50_us"] <= 0:
        return None
    return theirs["p50_us"] / ours["p50_us"]


def check_goal(goal, workload, meta, results, sgemm):
    """(measured text, True/False, or None when it cannot be judged (n/a))."""
    ours = results.get("kiln", {})
    if goal.startswith(("ort_", "tf_")):
        peer, want = goal.split("_")
        r = ratio(results, peer)
        return (None, None) if r is None else (f"{r:.2f}x", r >= float(want))
    if "p50_us" not in ours:
        return None, None
    if goal == "latency_1us":
        return f"{ours['p50_us']:.2f} us", ours["p50_us"] <= 1.0
    if goal == "sgemm_85":
        if not sgemm or "flops_per_example" not in meta:
            return None, None
        gflops = meta["flops_per_example"] * workload.batch / (ours["p50_us"] * 1e3)
        return f"{gflops:.1f} of {sgemm:.1f} GFLOP/s", gflops >= 0.85 * sgemm
    if goal == "cnn_load_10ms":
        ms = ours["load_ms"] + ours["first_call_ms"]
        return f"{ms:.1f} ms", ms <= 10.0
    if goal == "cnn_rss":
        limit = (meta["weights_bytes"] + meta["activation_bytes_per_example"] * workload.batch
                 + 8 * 2**20)
        peak = ours["peak_rss_kb"] * 1024
        return f"{peak / 2**20:.1f} MB of {limit / 2**20:.1f} MB", peak <= limit
    raise KeyError(goal)


def _us(v):
    if v >= 1e6:
        return f"{v / 1e6:.2f} s"
    if v >= 1e3:
        return f"{v / 1e3:.2f} ms"
    return f"{v:.2f} us"


def _cell(r):
    if "p50_us" in r:
        return f"{_us(r['p50_us'])} ({_us(r['p90_us'])})"
    return "n/a"


def _ratio_cell(r):
    return "n/a" if r is None else f"{r:.2f}x"


def _mb(kb):
    return f"{kb / 1024:.0f}"


def markdown(run):
    """The ratio table, the goals table and the notes, as Markdown."""
    lines = []
    w = lines.append
    isa = run.get("machine", {}).get("kiln_isa")
    if isa:
        # The ISA kiln's kernels ran (savedmodel-cli bench's cpu_isa): AVX2 and AVX-512 rows
        # of the same CPU differ, so every table says which it is.
        w(f"kiln's kernels ran: {isa}")
        w("")
    w("| workload | threads | kiln p50 (p90) | TensorFlow p50 (p90) | ONNX Runtime p50 (p90) "
      "| TF / kiln | ORT / kiln | load + first call ms (kiln / TF / ORT) "
      "| peak RSS MB (kiln / TF / ORT) |")
    w("|---|---|---|---|---|---|---|---|---|")
    notes = {}  # (workload, engine, why) -> thread settings
    for row in run["rows"]:
        for threads, res in row["results"].items():
            loads = " / ".join(
                f"{res[e]['load_ms'] + res[e]['first_call_ms']:.1f}" if "load_ms" in res[e]
                else "n/a" for e in ENGINES)
            rss = " / ".join(_mb(res[e]["peak_rss_kb"]) if "peak_rss_kb" in res[e] else "n/a"
                             for e in ENGINES)
            w(f"| {row['name']} | {threads} | {_cell(res['kiln'])} | {_cell(res['tf'])} | "
              f"{_cell(res['ort'])} | {_ratio_cell(ratio(res, 'tf'))} | "
              f"{_ratio_cell(ratio(res, 'ort'))} | {loads} | {rss} |")
            for e in ENGINES:
                if "error" in res[e]:
                    notes.setdefault((row["name"], TITLES[e], res[e]["error"]), []).append(threads)
    if run["goals"]:
        w("")
        w("| goal (issue 8) | workload | threads | measured | met |")
        w("|---|---|---|---|---|")
        for g in run["goals"]:
            met = {True: "yes", False: "**no**", None: "n/a"}[g["met"]]
            w(f"| {GOALS[g['goal']]} | {g['workload']} | {g['threads']} | "
              f"{g['measured'] or 'n/a'} | {met} |")
    if run.get("sgemm"):
        w("")
        w("Best float32 GEMM here (numpy's BLAS, n = {n}): ".format(n=run["sgemm_n"]) +
          ", ".join(f"{v:.1f} GFLOP/s at {t} thread(s)" for t, v in run["sgemm"].items()) + ".")
    if notes:
        w("")
        w("Not measured (n/a):")
        w("")
        for (name, engine, why), threads in notes.items():
            w(f"- {name}, {engine} ({' and '.join(threads)} thread(s)): {why}")
    return "\n".join(lines) + "\n"


BEGIN = "<!-- run_peers: begin (bench/peers/run_peers.py --update-docs rewrites this part) -->"
END = "<!-- run_peers: end -->"

DOC_HEADER = """# Benchmarks

Figures measured on this project's machine, with the command that produced them. Ratios are
peer time / kiln time (above 1: kiln is faster); every engine runs the same SavedModel on the
same inputs, alternating rounds so the machine's noise is shared.
"""


def update_docs(path, run, section):
    """Rewrites the run_peers section of docs/benchmarks.md (creating the file if needed) and
    leaves everything else in it alone."""
    import os
    text = open(path).read() if os.path.exists(path) else DOC_HEADER
    block = f"{BEGIN}\n{section.rstrip()}\n{END}"
    if BEGIN in text and END in text:
        text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, text,
                      flags=re.S)
    else:
        text = text.rstrip() + "\n\n## Peers: kiln, TensorFlow and ONNX Runtime (issue 8)\n\n" \
            + block + "\n"
    with open(path, "w") as f:
        f.write(text)
