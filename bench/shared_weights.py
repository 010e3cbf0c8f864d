#!/usr/bin/env python3
"""Memory and load time of processes serving one bundle (issue 12, zero-copy weights).

    python3 bench/shared_weights.py --dir BUNDLE [--cli build/tools/savedmodel-cli]
        [--rounds 7] [--procs 8] [--extra=--skip_checksums] [--inputs x=x.npy]

0. With --inputs: a new process that loads the bundle and makes one call
   (`savedmodel-cli run --inputs ...`), `--rounds` times: median wall time (fork to exit) and
   median max RSS (wait4's ru_maxrss); with --kiln-run PATH too, the same for the protobuf-free
   runtime (`kiln-run --inputs ...`, which needs a compiled bundle).
1. One process at a time (`savedmodel-cli bench --threads 1 --json`, `--rounds` times): the
   median load_ms, first_call_ms, rss_after_load_kb and peak_rss_kb.
2. One process, then `--procs` processes at once, each loading the bundle and calling its
   signature in a loop (`bench --min_seconds`); once all have loaded, every process's
   /proc/PID/smaps_rollup is read: Rss, Pss (shared pages divided among the processes that map
   them, so the sum over processes is what they cost together), Private_* and Shared_*, and the
   Rss of the mapping of the variables data file.

Standard library only; Linux only. Figures are printed as Markdown rows.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def bench_once(cli, bundle, extra):
    out = subprocess.run([cli, "bench", "--dir", bundle, "--threads", "1", "--runs", "20",
                          "--json", *extra], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def run_once(cli, bundle, inputs, extra, kiln_run=None):
    skip = [e for e in extra if e == "--skip_checksums"]
    if kiln_run:
        cmd = [kiln_run, "--dir", bundle, "--inputs", inputs, *skip]
    else:
        cmd = [cli, "run", "--dir", bundle, "--tag_set", "serve", "--signature_def",
               "serving_default", "--inputs", inputs, *skip]
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall_ms = (time.perf_counter() - start) * 1000
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {p.returncode}")
    return wall_ms, usage.ru_maxrss


def rollup(pid):
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value = line.split(":", 1)
        fields[name] = int(value.split()[0])
    data_rss = 0
    in_data = False
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        if "-" in line.split(" ", 1)[0] and len(line.split()) >= 5:
            in_data = "variables.data-" in line
        elif in_data and line.startswith("Rss:"):
            data_rss += int(line.split()[1])
    fields["data_file_rss"] = data_rss
    return fields


def serve(cli, bundle, extra, procs, settle):
    """Starts `procs` serving processes, waits `settle` s, reads their memory, stops them."""
    cmd = [cli, "bench", "--dir", bundle, "--threads", "1", "--runs", "1",
           "--min_seconds", str(settle + 30), *extra]
    ps = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL) for _ in range(procs)]
    try:
        time.sleep(settle)
        return [rollup(p.pid) for p in ps]
    finally:
        for p in ps:
            p.terminate()
        for p in ps:
            p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--cli", default="build/tools/savedmodel-cli")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--procs", type=int, default=8, help="0: no serving-processes part")
    ap.add_argument("--settle", type=float, default=10.0,
                    help="seconds between starting the processes and reading their memory")
    ap.add_argument("--extra", action="append", default=[], help="more `bench` flags")
    ap.add_argument("--inputs", help="`run --inputs` for the new-process row (x=x.npy)")
    ap.add_argument("--kiln-run", help="also time this kiln-run in the new-process row")
    args = ap.parse_args()

    if args.inputs:
        rs = [run_once(args.cli, args.dir, args.inputs, args.extra) for _ in range(args.rounds)]
        print(f"new process, load, one call ({args.cli} run {' '.join(args.extra)}): wall "
              f"{statistics.median(r[0] for r in rs):.1f} ms (min {min(r[0] for r in rs):.1f}), "
              f"max RSS {statistics.median(r[1] for r in rs) / 1024:.1f} MB\n")
        if args.kiln_run:
            rs = [run_once(args.cli, args.dir, args.inputs, args.extra, args.kiln_run)
                  for _ in range(args.rounds)]
            print(f"new process, load, one call ({args.kiln_run} {' '.join(args.extra)}): wall "
                  f"{statistics.median(r[0] for r in rs):.1f} ms (min "
                  f"{min(r[0] for r in rs):.1f}), max RSS "
                  f"{statistics.median(r[1] for r in rs) / 1024:.1f} MB\n")

    print("| savedmodel-cli | load ms | first call ms | RSS after load MB | peak RSS MB |")
    print("|---|---|---|---|---|")
    runs = [bench_once(args.cli, args.dir, args.extra) for _ in range(args.rounds)]
    med = {k: statistics.median(r[k] for r in runs)
           for k in ("load_ms", "first_call_ms", "rss_after_load_kb", "peak_rss_kb")}
    print(f"| {args.cli} {' '.join(args.extra)} | {med['load_ms']:.1f} | "
          f"{med['first_call_ms']:.1f} | {med['rss_after_load_kb'] / 1024:.1f} | "
          f"{med['peak_rss_kb'] / 1024:.1f} |")

    if args.procs <= 0:
        return 0
    one = serve(args.cli, args.dir, args.extra, 1, args.settle)
    many = serve(args.cli, args.dir, args.extra, args.procs, args.settle)

    def row(label, rs):
        s = {k: sum(r.get(k, 0) for r in rs) / 1024 for k in
             ("Rss", "Pss", "Private_Clean", "Private_Dirty", "Shared_Clean", "Shared_Dirty",
              "Anonymous", "data_file_rss")}
        print(f"| {label} | {s['Rss']:.1f} | {s['Pss']:.1f} | {s['Private_Clean']:.1f} | "
              f"{s['Private_Dirty']:.1f} | {s['Shared_Clean']:.1f} | {s['Shared_Dirty']:.1f} | "
              f"{s['Anonymous']:.1f} | {s['data_file_rss']:.1f} |")
        return s

    print("| processes | sum Rss MB | sum Pss MB | Private_Clean | Private_Dirty | Shared_Clean "
          "| Shared_Dirty | Anonymous | data file Rss |")
    print("|---|---|---|---|---|---|---|---|---|")
    s1 = row("1", one)
    sn = row(str(args.procs), many)
    print(f"\nsum of Pss, {args.procs} processes / 1 process: {sn['Pss'] / s1['Pss']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
