"""Fixtures for the TensorFlow oracle tests (run by scripts/test.sh with the venv that
scripts/setup-oracles.sh makes): our binaries from $KILN_BUILD_DIR (default build/), bundles
our samples export, and bundles TensorFlow exports at test time."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import oracle  # noqa: E402

# The model suite (test_keras_layers.py, test_keras_applications.py, test_deployed_models.py:
# every Keras layer, Keras Applications, the architectures users deploy) runs in the test
# command; KILN_MODEL_SUITE=0 leaves it out of a quick run.
MODEL_SUITE = os.environ.get("KILN_MODEL_SUITE", "1") != "0"
collect_ignore = [] if MODEL_SUITE else [
    "test_keras_layers.py", "test_keras_applications.py", "test_deployed_models.py"]


@pytest.fixture(scope="session", autouse=True)
def binaries():
    """Our programs must be built: a missing one is a failure, never a skip."""
    needed = [oracle.KILN_CLI, oracle.KILN_CALL, oracle.KILN_LAYER, oracle.KILN_CF_TRAIN,
              oracle.SAMPLES / "demo_module_export", oracle.SAMPLES / "mlp_export", oracle.TF_CLI]
    missing = [str(p) for p in needed if not os.access(p, os.X_OK)]
    if missing:
        pytest.fail(f"not built or not installed (KILN_BUILD_DIR={oracle.BUILD}): {missing}",
                    pytrace=False)


@pytest.fixture(scope="session")
def ours(tmp_path_factory):
    """Bundles our samples write, with the inputs to feed their serving_default.

    {name: (bundle dir, {input key: .npy path})}"""
    d = tmp_path_factory.mktemp("ours")
    oracle.run([oracle.SAMPLES / "demo_module_export", d / "demo"])
    oracle.run([oracle.SAMPLES / "mlp_export", d / "mlp", d / "mlp_io"])
    a = d / "demo_a.npy"
    np.save(a, np.float32(5.0))
    return {
        "demo": (d / "demo", {"a": a}),
        "mlp": (d / "mlp", {"x": d / "mlp_io" / "x_7.npy"}),
    }


@pytest.fixture(scope="session")
def tf_models(tmp_path_factory):
    """Bundles TensorFlow writes now (tests/tf/make_tf_models.py) and TF's outputs for them."""
    import make_tf_models
    d = tmp_path_factory.mktemp("tf_models")
    return d, make_tf_models.make_all(str(d))


def _generated_models(tmp_path_factory, set_name, generator, names):
    """Generates one model set (or reuses $KILN_MODELS_DIR/<set> when the same
    generator wrote it); returns (dir, manifest)."""
    import recording
    root = os.environ.get("KILN_MODELS_DIR")
    out = os.path.join(root, set_name) if root else str(tmp_path_factory.mktemp(set_name))
    return out, recording.load_or_make(out, generator.make_all, generator.__file__, names)


@pytest.fixture(scope="session")
def keras_layer_models(tmp_path_factory):
    import make_keras_layers as g
    return _generated_models(tmp_path_factory, "keras_layers", g, list(g.CASES))


@pytest.fixture(scope="session")
def application_models(tmp_path_factory):
    import make_applications as g
    return _generated_models(tmp_path_factory, "applications", g, g.selected())


@pytest.fixture(scope="session")
def deployed_models(tmp_path_factory):
    import make_deployed_models as g
    return _generated_models(tmp_path_factory, "models", g, list(g.MODELS))


@pytest.fixture(scope="session")
def long_tail_models(tmp_path_factory):
    import make_long_tail_models as g
    return _generated_models(tmp_path_factory, "long_tail", g, list(g.MODELS))
