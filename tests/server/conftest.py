"""Fixtures for the model server tests (tests/server, run by scripts/test.sh): bundles, and
savedmodel-server processes on free loopback ports, started and stopped by the tests.

Clients are ones this project did not write: requests (TF Serving's REST API),
tensorflow-serving-api (its gRPC API) and tritonclient (KServe V2, HTTP and gRPC)."""
import base64
import os
import pathlib
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("KILN_BUILD_DIR", ROOT / "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
SERVER = BUILD / "tools" / "savedmodel-server"
CLI = BUILD / "tools" / "savedmodel-cli"
SAMPLES = BUILD / "samples"
FIXTURES = pathlib.Path(os.environ.get("KILN_FIXTURES_DIR", ROOT.parent / "shared" / "fixtures" / "tf-written"))

from server_process import Server, free_port  # noqa: E402,F401  (tests import them from here)


@pytest.fixture(scope="session", autouse=True)
def built():
    missing = [str(p) for p in (SERVER, CLI, SAMPLES / "mlp_export") if not os.access(p, os.X_OK)]
    if missing:
        pytest.fail(f"not built (KILN_BUILD_DIR={BUILD}): {missing}", pytrace=False)


@pytest.fixture(scope="session")
def repo(tmp_path_factory):
    """A model repository (TF Serving layout) with mlp, multi, cnn, examples, estimator and tfx
    at version 1, and the reference data for them."""
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
    cfg = write_config(d / "models.config", root,
                       ["mlp", "multi", "cnn", "examples", "estimator", "tfx"],
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


# Examples for the TFX-style bundle (make_models.make_tfx), as TF Serving's REST API takes them
# (JSON features: ints to int64_list, floats to float_list, strings and {"b64"} to bytes_list),
# with the context merged into each (the example's own feature wins, as protobuf merges).
TFX_CONTEXT = {"native_country": "Mexico"}
TFX_ROWS = [
    # every feature; a bytes feature as b64; its country over the context's
    {"age": 29.0, "hours_per_week": 50, "education": "Masters",
     "native_country": {"b64": base64.b64encode(b"Canada").decode()}, "capital_gain": [1200.0]},
    # an out-of-vocabulary education (OOV bucket 6); hours and the VarLen gain missing (defaults)
    {"age": 70.5, "education": "Preschool"},
    # another OOV bucket (5); an age on a bucket boundary; a zero gain
    {"age": 25.0, "education": "Prof-school", "capital_gain": [0.0]},
    # nothing but the context: every default
    {},
]


def tfx_example(row, context=None):
    """The tf.train.Example TF Serving builds from a JSON row (and the context)."""
    import tensorflow as tf
    ex = tf.train.Example()
    for key, value in {**(context or {}), **row}.items():
        feature = ex.features.feature[key]
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, dict):
                feature.bytes_list.value.append(base64.b64decode(v["b64"]))
            elif isinstance(v, str):
                feature.bytes_list.value.append(v.encode())
            elif isinstance(v, float):
                feature.float_list.value.append(v)
            else:
                feature.int64_list.value.append(v)
    return ex


@pytest.fixture(scope="session")
def tfx_reference(repo):
    """TF's outputs of the tfx bundle's signatures: reference(signature, protos) gives the
    outputs as numpy arrays, reference.error(signature, protos) the message of TF's kernel
    error (the words TF Serving answers with, without TF's graph-execution wrapping)."""
    import tensorflow as tf
    sigs = tf.saved_model.load(str(repo[0] / "tfx" / "1")).signatures

    def reference(signature, protos):
        out = sigs[signature](examples=tf.constant(protos))
        return {k: v.numpy() for k, v in out.items()}

    def error(signature, protos):
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            sigs[signature](examples=tf.constant(protos))
        # "Graph execution error: ... <stack traces unavailable>\n{message}\n\t [[{{node ...}}]]"
        return e.value.message.split("\n\t [[")[0].split("\n")[-1]

    reference.error = error
    return reference
