"""A savedmodel-server process on free loopback ports, started and stopped by a test, with its
JSON log lines collected (shared by tests/server and tests/kserve)."""
import json
import os
import pathlib
import signal
import socket
import subprocess
import threading
import time

import requests

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("KILN_BUILD_DIR", ROOT / "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
SERVER = BUILD / "tools" / "savedmodel-server"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One savedmodel-server process; its stderr (JSON log lines) is collected."""

    def __init__(self, args, cwd):
        self.rest_port = free_port()
        self.grpc_port = free_port()
        self.args = [str(SERVER), f"--port={self.grpc_port}", f"--rest_api_port={self.rest_port}",
                     "--bind_address=127.0.0.1"] + [str(a) for a in args]
        self.log_lines = []
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, cwd=cwd)
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()

    def _read_log(self):
        for line in self.proc.stderr:
            self.log_lines.append(line.rstrip("\n"))

    @property
    def url(self):
        return f"http://127.0.0.1:{self.rest_port}"

    @property
    def grpc_target(self):
        return f"127.0.0.1:{self.grpc_port}"

    def wait_ready(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}:\n" + "\n".join(self.log_lines))
            try:
                if requests.get(self.url + "/v2/health/ready", timeout=1).status_code == 200:
                    return self
            except requests.ConnectionError:
                pass
            time.sleep(0.05)
        raise RuntimeError("server not ready:\n" + "\n".join(self.log_lines))

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise
        self._reader.join(timeout=5)
        return self.proc.returncode

    def logs(self):
        return [json.loads(line) for line in self.log_lines if line.startswith("{")]
