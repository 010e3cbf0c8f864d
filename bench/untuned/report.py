"""Tables from bench/untuned/run.py's results.jsonl / loadtime.jsonl (the last entry per
(model, batch) wins): python bench/untuned/report.py"""
import json, os, statistics, sys
from pathlib import Path
H = Path(os.environ.get("UNTUNED_CACHE",
                        Path(__file__).resolve().parents[1] / ".cache" / "untuned"))
def rows(f):
    d = {}
    if (H / f).exists():
        for l in (H / f).read_text().splitlines():
            r = json.loads(l); d[(r["model"], r["batch"])] = r
    return d
def ms(us): return "n/a" if us is None else (f"{us/1000:.3f}" if us < 10000 else f"{us/1000:.1f}")
def ratio(a, b): return "n/a" if a is None or b is None else f"{a/b:.2f}"
lat = rows("results.jsonl")
print("| model | batch | kiln p50 ms | TF p50 ms | ORT p50 ms | TF/kiln | ORT/kiln | load avg |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
slow = []
for (m, b), r in lat.items():
    k, t, o = r.get("kiln_p50_us"), r.get("tf_p50_us"), r.get("ort_p50_us")
    print(f"| {m} | {b} | {ms(k)} | {ms(t)} | {ms(o)} | {ratio(t,k)} | {ratio(o,k)} | {r['loadavg']:.1f} |")
    for peer, v in (("TF", t), ("ORT", o)):
        if k and v and v < k: slow.append((v / k, m, b, peer, k, v))
    for e in ("kiln", "tf", "ort"):
        if f"{e}_error" in r: print(f"|  ↳ {e} error: {r[e+'_error'][:150]} |||||||")
    if "error" in r: print(f"| ↳ error: {r['error'][:200]} |||||||")
print("\nROWS WHERE KILN IS SLOWER (peer/kiln < 1):")
for s in sorted(slow): print(f"- {s[1]} b{s[2]}: {s[3]}/kiln = {s[0]:.2f} (kiln {ms(s[4])} ms, {s[3]} {ms(s[5])} ms)")
lt = rows("loadtime.jsonl")
if lt:
    print("\n| model | batch | kiln process wall ms | kiln load+first ms (in-process) | TF process wall ms | TF import ms | TF load+first ms (in-process) | TF/kiln (wall) | TF/kiln (load+first) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (m, b), r in lt.items():
        kw = statistics.median(x["wall_ms"] for x in r["kiln"]); kl = statistics.median(x["load_ms"] + x["first_call_ms"] for x in r["kiln"])
        tw = statistics.median(x["wall_ms"] for x in r["tf"]); ti = statistics.median(x["import_ms"] for x in r["tf"])
        tl = statistics.median(x["load_ms"] + x["first_call_ms"] for x in r["tf"])
        print(f"| {m} | {b} | {kw:.0f} | {kl:.0f} | {tw:.0f} | {ti:.0f} | {tl:.0f} | {tw/kw:.1f} | {tl/kl:.1f} |")
