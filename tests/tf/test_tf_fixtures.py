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
# TensorFlow Serving's half_plus_two: serving_default takes x; its classify and regress
# signatures parse tf.Example protos (ParseExample); all of them run.
HALF_PLUS_TWO = ["half_plus_two_v1", "half_plus_two_v2"]
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
            and f not in HALF_PLUS_TWO]


def test_fixtures_are_there():
    assert oracle.FIXTURES.is_dir(), f"no fixtures at {oracle.FIXTURES}"
    missing = set(UNSUPPORTED) | set(NO_SIGNATURE) | set(TF_REFUSES) | set(HALF_PLUS_TWO)
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


@pytest.mark.parametrize("name", HALF_PLUS_TWO)
def test_half_plus_two_serves_every_signature(name, tmp_path):
    """serving_default on x, and the classify / regress signatures on serialized tf.Examples
    (through kiln_call, which takes string inputs), with TensorFlow's outputs."""
    d = oracle.FIXTURES / name
    oracle.run([oracle.KILN_CALL, d, "list"])  # every signature loads
    sigs = tf.saved_model.load(str(d)).signatures
    x = np.array([[1.0], [2.0], [5.0]], np.float32)
    theirs = {k: v.numpy() for k, v in sigs["serving_default"](x=tf.constant(x)).items()}
    np.save(tmp_path / "x.npy", x)
    mine = oracle.kiln_run(d, "serving_default", {"x": tmp_path / "x.npy"}, tmp_path / "out")
    oracle.assert_outputs(mine, theirs, f"fixture {name} serving_default")
    np.testing.assert_allclose(mine["y"], [[2.5], [3.0], [4.5]])
    for key in sorted(sigs):
        spec = sigs[key].structured_input_signature[1]
        if list(spec) != ["inputs"] or spec["inputs"].dtype != tf.string:
            continue  # the signatures fed numbers
        ex = tf.train.Example()
        ex.features.feature["x"].float_list.value.append(7.0)
        ex.features.feature["x2"].float_list.value.append(3.0)
        serialized = ex.SerializeToString()
        assert not serialized.endswith(b"\0")
        theirs = {k: v.numpy() for k, v in sigs[key](inputs=tf.constant([serialized])).items()}
        feed = tmp_path / f"{key}.npy"
        np.save(feed, np.array([serialized], dtype="S"))
        mine = oracle.kiln_run(d, key, {"inputs": feed}, tmp_path / key)
        oracle.assert_outputs(mine, theirs, f"fixture {name} {key}")
