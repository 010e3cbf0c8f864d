"""The real TensorFlow-written fixtures (shared/fixtures/tf-written): every non-malformed one with
a serving_default runs on our runtime with the outputs TensorFlow 2.21 computes for it now;
one that uses an op we do not implement is refused at load time, naming the op."""
import numpy as np
import pytest
import tensorflow as tf

import oracle

# Fixtures whose serving_default uses an op kiln does not implement: {fixture: op}.
UNSUPPORTED = {
    "tftrt_2.0_saved_model": "TRTEngineOp",  # a TensorRT engine
}
# Fixtures whose serving_default runs but whose other signatures need an op kiln lacks: loading
# every signature names that op, loading serving_default alone (what `run` does) works.
# half_plus_two's classify/regress signatures parse tf.Example protos.
PARTLY_SUPPORTED = {
    "half_plus_two_v1": "ParseExample",
    "half_plus_two_v2": "ParseExample",
}
# Fixtures with no serving_default signature (nothing to run; both loaders must load them).
NO_SIGNATURE = ["CyclicModule", "SimpleV1Model"]
# Fixtures TensorFlow 2.21's Python loader refuses: {fixture: what TF says}. A deliberate
# deviation (docs/tf-compat.md): ours loads them, leaving never-initialised variables
# uninitialised, and runs what does not read them.
TF_REFUSES = {
    # uninitialized_variable's key is listed in the object graph but has no value saved;
    # serving_default computes `value + initialized_variable`.
    "UninitializedVariable": "not found in checkpoint",
}


def _fixtures():
    if not oracle.FIXTURES.is_dir():
        return []
    return sorted(p.name for p in oracle.FIXTURES.iterdir()
                  if p.is_dir() and not p.name.startswith("malformed_"))


RUNNABLE = [f for f in _fixtures()
            if f not in UNSUPPORTED and f not in NO_SIGNATURE and f not in TF_REFUSES
            and f not in PARTLY_SUPPORTED]


def test_fixtures_are_there():
    assert oracle.FIXTURES.is_dir(), f"no fixtures at {oracle.FIXTURES}"
    missing = set(UNSUPPORTED) | set(NO_SIGNATURE) | set(TF_REFUSES) | set(PARTLY_SUPPORTED)
    assert missing <= set(_fixtures()), f"missing fixtures: {missing - set(_fixtures())}"


@pytest.mark.parametrize("name", RUNNABLE)
def test_serving_default_gives_tf_outputs(name, tmp_path):
    d = oracle.FIXTURES / name
    fn = tf.saved_model.load(str(d)).signatures["serving_default"]
    feed = oracle.example_inputs(fn, seed=sum(map(ord, name)))
    out = fn(**{k: tf.constant(v) for k, v in feed.items()})
    theirs = {k: np.asarray(v.numpy()) for k, v in out.items()}
    inputs = {k: oracle.save_value(tmp_path / f"in_{k}", v) for k, v in feed.items()}
    if any(v.dtype.kind in "SO" for v in theirs.values()):
        mine = oracle.kiln_call_signature(d, "serving_default", inputs, tmp_path / "out")
    else:
        mine = oracle.kiln_run(d, "serving_default", inputs, tmp_path / "out")
    oracle.assert_outputs(mine, theirs, f"fixture {name} serving_default")


@pytest.mark.parametrize("name", NO_SIGNATURE)
def test_signatureless_fixture_loads(name):
    d = oracle.FIXTURES / name
    tf.saved_model.load(str(d))
    oracle.run([oracle.KILN_CALL, d, "list"])


@pytest.mark.parametrize("name,op", sorted(UNSUPPORTED.items()))
def test_unsupported_op_is_named_at_load(name, op):
    proc = oracle.run([oracle.KILN_CALL, oracle.FIXTURES / name, "list"], check=False)
    assert proc.returncode == 1, f"{name}: loaded although it uses {op}"
    # Refused at load, before anything runs, naming every missing op with its first node.
    assert f"{op} (" in proc.stderr and "does not implement" in proc.stderr, proc.stderr
    proc = oracle.run([oracle.KILN_CLI, "run", "--dir", oracle.FIXTURES / name, "--tag_set",
                       "serve", "--signature_def", "serving_default"], check=False)
    assert proc.returncode == 1 and op in proc.stderr, proc.stderr


@pytest.mark.parametrize("name,tf_error", sorted(TF_REFUSES.items()))
def test_fixture_tf_refuses_runs_on_ours(name, tf_error, tmp_path):
    d = oracle.FIXTURES / name
    with pytest.raises(Exception, match=tf_error):
        tf.saved_model.load(str(d))
    # TF's checkpoint reader is the oracle for what was saved: value + initialized_variable.
    reader = tf.train.load_checkpoint(str(d / "variables" / "variables"))
    initialized = reader.get_tensor("initialized_variable/.ATTRIBUTES/VARIABLE_VALUE")
    value = oracle.save_value(tmp_path / "value", np.float32(3.0))
    mine = oracle.kiln_run(d, "serving_default", {"value": value}, tmp_path / "out")
    oracle.assert_outputs(mine, {"output_0": np.float32(3.0) + initialized}, name)


@pytest.mark.parametrize("name,op", sorted(PARTLY_SUPPORTED.items()))
def test_partly_supported_fixture_serves_its_default_signature(name, op, tmp_path):
    d = oracle.FIXTURES / name
    proc = oracle.run([oracle.KILN_CALL, d, "list"], check=False)
    assert proc.returncode == 1 and f"{op} (" in proc.stderr, proc.stderr
    fn = tf.saved_model.load(str(d)).signatures["serving_default"]
    x = np.array([[1.0], [2.0], [5.0]], np.float32)
    theirs = {k: v.numpy() for k, v in fn(x=tf.constant(x)).items()}
    np.save(tmp_path / "x.npy", x)
    mine = oracle.kiln_run(d, "serving_default", {"x": tmp_path / "x.npy"}, tmp_path / "out")
    oracle.assert_outputs(mine, theirs, f"fixture {name} serving_default")
    np.testing.assert_allclose(mine["y"], [[2.5], [3.0], [4.5]])
