"""Fixtures for tests/kserve: one savedmodel-server serving the MLP sample (no TensorFlow
needed), for KServe's own Python SDK and the schema-driven fuzz. Runs in .venv-kserve
(scripts/setup-oracles.sh), a venv of its own because the kserve SDK needs protobuf < 7 and a
web-framework stack that the TensorFlow oracle venv must not have changed under it."""
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "server"))
from server_process import BUILD, Server  # noqa: E402


@pytest.fixture(scope="session")
def mlp(tmp_path_factory):
    """(server, x, y): the MLP sample served as "mlp" version 1, with its export-time data."""
    import numpy as np
    d = tmp_path_factory.mktemp("kserve")
    subprocess.run([str(BUILD / "samples" / "mlp_export"), str(d / "models" / "mlp" / "1"),
                    str(d / "io")], check=True, capture_output=True)
    s = Server([f"--model_base_path={d / 'models' / 'mlp'}", "--model_name=mlp",
                "--file_system_poll_wait_seconds=0", "--rest_api_max_body_bytes=4000000"], d)
    try:
        s.wait_ready()
        yield s, np.load(d / "io" / "x_7.npy"), np.load(d / "io" / "y_7.npy")
    finally:
        code = s.stop()
        assert code == 0, "\n".join(s.log_lines)
