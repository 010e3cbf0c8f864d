"""Fixtures for the model server tests (tests/server, run by scripts/test.sh): bundles, and
savedmodel-server processes on free loopback ports, started and stopped by the tests.

Clients are ones this project did not write: requests (TF Serving's REST API),
tensorflow-serving-api (its gRPC API) and tritonclient (KServe V2, HTTP and gRPC)."""
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import threading
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest  # noqa: E402
import requests  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("KILN_BUILD_DIR", ROOT / "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
SERVER = BUILD / "tools" / "savedmodel-server"
CLI = BUILD / "tools" / "savedmodel-cli"
SAMPLES = BUILD / "samples"
FIXTURES = pathlib.Path(os.environ.get("KILN_FIXTURES_DIR", ROOT.parent / "shared" / "fixtures" / "tf-written"))


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


@pytest.fixture(scope="session", autouse=True)
def built():
    missing = [str(p) for p in (SERVER, CLI, SAMPLES / "mlp_export") if not os.access(p, os.X_OK)]
    if missing:
        pytest.fail(f"not built (KILN_BUILD_DIR={BUILD}): {missing}", pytrace=False)


@pytest.fixture(scope="session")
def repo(tmp_path_factory):
    """A model repository (TF Serving layout) with mlp, multi, cnn, examples and estimator at
    version 1, and the reference data for them."""
    import make_models
    root = tmp_path_factory.mktemp("models")
    ref = make_models.make_all(str(root), str(SAMPLES))
    return root, ref


def write_config(path, root, names, extra=None):
    cfg = "model_config_list {\n"
    for n in names:
        cfg += f'  config {{ name: "{n}" base_path: "{root / n}" model_platform: "tensorflow"'
        cfg += (extra or {}).get(n, "") + " }\n"
    cfg += "}\n"
    path.write_text(cfg)
    return path


@pytest.fixture(scope="session")
def server(repo, tmp_path_factory):
    """The shared server: every model, labels on multi, default options."""
    root, _ = repo
    d = tmp_path_factory.mktemp("server")
    cfg = write_config(d / "models.config", root, ["mlp", "multi", "cnn", "examples", "estimator"],
                       {"multi": ' version_labels { key: "stable" value: 1 }'})
    s = Server([f"--model_config_file={cfg}", "--file_system_poll_wait_seconds=1",
                "--rest_api_max_body_bytes=4000000", "--rest_api_timeout_in_ms=2000"], d)
    try:
        yield s.wait_ready()
    finally:
        code = s.stop()
        assert code == 0, "\n".join(s.log_lines)


def copy_model(src, dst):
    """Copies a version directory and renames it into place (how versions should appear)."""
    tmp = dst.parent / (dst.name + ".tmp")
    shutil.copytree(src, tmp)
    os.rename(tmp, dst)
