"""Server soak (issue 24): wrk on REST :predict (MLP, batch 1) at 8/64/256/1024 connections,
then the same load next to a hostile mix (slow-loris clients, oversized chunked and gzip
bodies, endless headers, JSON that would expand), then the same load across a failed reload
(a corrupt version 2) and a good one (version 3). Prints requests, errors, p50/p99 and the
server's peak RSS for each; goals: 0 failed requests across the reloads, RSS bounded by the
configured limits, p99 at 1024 connections <= 10x p50.

    KILN_BUILD_DIR=build .venv-oracle/bin/python bench/server/soak.py [--seconds 10]
"""
import argparse
import gzip
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("KILN_BUILD_DIR", ROOT / "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
POST_LUA = ROOT / "bench" / "server" / "post.lua"
LIMITS = {"--rest_api_max_body_bytes": 4 << 20, "--rest_api_max_buffered_bytes": 256 << 20,
          "--max_json_parsed_bytes": 64 << 20, "--rest_api_num_threads": 16,
          "--rest_api_header_timeout_in_ms": 2000}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RssPeak:
    """Samples a process's RSS every 10 ms while alive."""

    def __init__(self, pid):
        self.pid, self.peak, self.stop = pid, 0, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def rss_mib(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def _run(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, self.rss_mib())
            time.sleep(0.01)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def wrk(url, body_file, conns, seconds):
    out = subprocess.run(
        ["wrk", f"-t{min(4, conns)}", f"-c{conns}", f"-d{seconds}s", "--timeout", "10s",
         "-s", str(POST_LUA), url], env=dict(os.environ, KILN_BODY=str(body_file)),
        capture_output=True, text=True, check=True).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("RESULT"))
    return {k: float(v) for k, v in (kv.split("=") for kv in line.split()[1:])}


def report(label, r, peak):
    ratio = r["p99_ms"] / r["p50_ms"] if r["p50_ms"] > 0 else float("nan")
    print(f"{label:<28} {int(r['requests']):>9} {int(r['errors']):>7} {r['p50_ms']:>9.2f} "
          f"{r['p99_ms']:>9.2f} {ratio:>8.1f} {peak:>9.0f}", flush=True)


# --- the hostile mix ------------------------------------------------------------------------

def send(port, data, timeout=5):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(data)
            while s.recv(65536):
                pass
    except OSError:
        pass


def slow_loris(port, stop):
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                for b in b"POST /v1/models/mlp:predict HTTP/1.1\r\nHost: x\r\n":
                    if stop.is_set():
                        return
                    s.sendall(bytes([b]))
                    time.sleep(0.2)
        except OSError:
            time.sleep(0.1)


def hostile(port, stop):
    head = b"POST /v1/models/mlp:predict HTTP/1.1\r\nHost: x\r\n"
    chunk = b"%x\r\n%s\r\n" % (1 << 16, b"1" * (1 << 16))
    bomb = gzip.compress(b"0" * (64 << 20))
    expand = b'{"instances": [' + b"{}," * 1_300_000 + b"{}]}"
    kinds = [
        head + b"Transfer-Encoding: chunked\r\n\r\n" + chunk * 160,  # 10 MiB chunked
        head + b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(bomb) + bomb,
        head + b"X-a: b\r\n" * 200_000,  # headers without end
        b"GET /" + b"a" * (1 << 20),  # a request line without end
        head + b"Content-Length: %d\r\n\r\n" % len(expand) + expand,
    ]
    i = 0
    while not stop.is_set():
        send(port, kinds[i % len(kinds)])
        i += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=10)
    args = ap.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="kiln-soak-"))
    try:
        models = work / "models" / "mlp"
        subprocess.run([str(BUILD / "samples" / "mlp_export"), str(models / "1"), str(work / "io")],
                       check=True, capture_output=True)
        import numpy as np
        x = np.load(work / "io" / "x_1.npy")
        body = work / "mlp.json"
        body.write_text(json.dumps({"instances": x.tolist()}))
        port = free_port()
        flags = [f"{k}={v}" for k, v in LIMITS.items()]
        server = subprocess.Popen(
            [str(BUILD / "tools" / "savedmodel-server"), "--port=0", f"--rest_api_port={port}",
             "--bind_address=127.0.0.1", f"--model_base_path={models}", "--model_name=mlp",
             "--file_system_poll_wait_seconds=1", "--max_num_load_retries=2",
             "--load_retry_interval_micros=200000"] + flags,
            stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}/v1/models/mlp:predict"
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                    if ln.startswith("model name")), "?")
        print(f"== {cpu}, {os.cpu_count()} cores; {args.seconds} s per row; limits: "
              + " ".join(flags))
        print(f"{'load':<28} {'requests':>9} {'errors':>7} {'p50 ms':>9} {'p99 ms':>9} "
              f"{'p99/p50':>8} {'peak MiB':>9}")
        watch = RssPeak(server.pid)
        print(f"{'idle':<28} {'':>9} {'':>7} {'':>9} {'':>9} {'':>8} {watch.rss_mib():>9.0f}")
        for conns in (8, 64, 256, 1024):
            with RssPeak(server.pid) as peak:
                r = wrk(url, body, conns, args.seconds)
            report(f"{conns} connections", r, peak.peak)

        stop = threading.Event()
        mix = [threading.Thread(target=slow_loris, args=(port, stop)) for _ in range(64)]
        mix += [threading.Thread(target=hostile, args=(port, stop)) for _ in range(8)]
        with RssPeak(server.pid) as peak:
            for t in mix:
                t.start()
            r = wrk(url, body, 64, args.seconds)
            stop.set()
            for t in mix:
                t.join()
        report("64 conns + hostile mix", r, peak.peak)

        def reloads():
            time.sleep(1)
            bad = models / "2"
            shutil.copytree(models / "1", work / "v2")
            (work / "v2" / "saved_model.pb").write_bytes(b"corrupt")
            os.rename(work / "v2", bad)
            time.sleep(args.seconds / 2)
            shutil.copytree(models / "1", work / "v3")
            os.rename(work / "v3", models / "3")

        t = threading.Thread(target=reloads)
        with RssPeak(server.pid) as peak:
            t.start()
            r = wrk(url, body, 64, args.seconds)
            t.join()
        report("64 conns, bad+good reload", r, peak.peak)
        import urllib.request
        status = json.load(urllib.request.urlopen(url.replace(":predict", ""), timeout=10))
        print("versions after the reloads:",
              {s["version"]: s["state"] for s in status["model_version_status"]})
        server.terminate()
        server.wait(30)
        print(f"server exit: {server.returncode}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
