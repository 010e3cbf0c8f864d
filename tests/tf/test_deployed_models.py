"""The deployed-model suite: the architectures and SavedModel kinds a new user tries
(make_deployed_models.MODELS) run on our runtime with TensorFlow's outputs: signatures through
`savedmodel-cli run` (string inputs as .npy files and as literals), restored methods by name
through kiln_call, the train step over several calls on one load (losses and every variable
after each call), TF1 bundles (ours written with SavedModelBuilder, TensorFlow Serving's
half_plus_two). Floats within 1e-4 relative, everything else exactly."""
import os

import numpy as np
import pytest

import make_deployed_models as g
import oracle

SIGNATURES = [(m, s) for m, (_, sigs, _) in g.MODELS.items() for s in sigs]
METHODS = [(m, f) for m, (_, _, methods) in g.MODELS.items() for f in methods]


def _entry(models, name):
    root, manifest = models
    entry = manifest["models"][name]
    assert entry["error"] is None, f"TensorFlow could not write or run {name}:\n{entry['error']}"
    return os.path.join(root, entry["dir"]), os.path.join(root, entry["data"]), entry


@pytest.mark.parametrize("name,signature", SIGNATURES)
def test_signature_gives_tf_outputs(deployed_models, name, signature, tmp_path):
    d, data, entry = _entry(deployed_models, name)
    spec = entry["signatures"][signature]
    inputs = {k: os.path.join(data, f) for k, f in spec["inputs"].items()}
    theirs = {k: oracle.load_value(os.path.join(data, f)) for k, f in spec["outputs"].items()}
    mine = oracle.kiln_run(d, signature, inputs, tmp_path / "out")
    oracle.assert_model_outputs(mine, theirs, f"{name} signature {signature}")


@pytest.mark.parametrize("name,method", METHODS)
def test_restored_method_gives_tf_outputs(deployed_models, name, method, tmp_path):
    d, data, entry = _entry(deployed_models, name)
    spec = entry["methods"][method]
    assert method in oracle.kiln_functions(d), f"{name}: no restored function {method!r}"
    mine = oracle.kiln_call_function(d, method, [os.path.join(data, f) for f in spec["inputs"]],
                                     tmp_path / "out")
    theirs = [oracle.load_value(os.path.join(data, f)) for f in spec["outputs"]]
    assert len(mine) == len(theirs), f"{name}.{method}: {len(mine)} outputs, TF {len(theirs)}"
    for i, (a, b) in enumerate(zip(mine, theirs)):
        oracle.assert_close_model(a, b, f"{name}.{method} output {i}")


def _kiln_run_exprs(d, signature, exprs, outdir):
    """`savedmodel-cli run` fed by --input_exprs literals; {output key: array}."""
    oracle.run([oracle.KILN_CLI, "run", "--dir", d, "--tag_set", "serve", "--signature_def",
                signature, "--input_exprs", exprs, "--outdir", outdir])
    return {p.stem: np.load(p) for p in outdir.glob("*.npy")}


def _tf_signature(d, signature, feed):
    import tensorflow as tf
    out = tf.saved_model.load(str(d)).signatures[signature](
        **{k: tf.constant(v) for k, v in feed.items()})
    return {k: np.asarray(v.numpy()) for k, v in out.items()}


def test_string_literals_in_savedmodel_cli_run(deployed_models, tmp_path):
    """A user types the strings: a scalar and a list literal, as saved_model_cli takes them."""
    d, _, _ = _entry(deployed_models, "lookup_preprocessing")
    mine = _kiln_run_exprs(d, "lookup_one", 'word="Cherry"', tmp_path / "one")
    theirs = _tf_signature(d, "lookup_one", {"word": np.array(b"Cherry", dtype=object)})
    oracle.assert_model_outputs(mine, theirs, "lookup_one fed word=\"Cherry\"")
    mine = _kiln_run_exprs(d, "lookup", 'words=["Apple ", "fig", "KIWI"]', tmp_path / "list")
    theirs = _tf_signature(d, "lookup",
                           {"words": np.array([b"Apple ", b"fig", b"KIWI"], dtype=object)})
    oracle.assert_model_outputs(mine, theirs, "lookup fed a list literal")


def test_train_step_updates_variables_like_tf(deployed_models, tmp_path):
    """train_step (GradientTape + keras Adam) called TRAIN_CALLS times on one load: the loss of
    each call and every variable after it equal TensorFlow's doing the same on a fresh load."""
    d, data, entry = _entry(deployed_models, "train_step")
    calls = entry["train_step_calls"]
    inputs = [f"{k}={os.path.join(data, f)}" for c in calls for k, f in sorted(c["inputs"].items())]
    oracle.run([oracle.KILN_CALL, d, "calls", "signature", "train_step", len(calls),
                tmp_path] + inputs)
    for k, call in enumerate(calls):
        got = tmp_path / str(k)
        mine = {p.stem: oracle.load_value(p) for p in got.iterdir() if p.suffix == ".npy"
                and not p.stem.startswith("var_")}
        theirs = {n: oracle.load_value(os.path.join(data, f)) for n, f in call["outputs"].items()}
        oracle.assert_model_outputs(mine, theirs, f"train_step call {k}")
        listing = dict(line.split("\t") for line in (got / "variables.txt").read_text().splitlines())
        assert sorted(listing) == sorted(call["variables"]), (
            f"call {k}: variables ours-only {sorted(set(listing) - set(call['variables']))}, "
            f"TF-only {sorted(set(call['variables']) - set(listing))}")
        for path, f in call["variables"].items():
            oracle.assert_close_model(np.load(got / listing[path]),
                                      oracle.load_value(os.path.join(data, f)),
                                      f"train_step call {k}: variable {path}")


@pytest.mark.parametrize("name", ["half_plus_two_v1", "half_plus_two_v2"])
def test_half_plus_two_serving_example(deployed_models, name, tmp_path):
    """TensorFlow Serving's canonical example: x = [1, 2, 5] gives y = [2.5, 3, 4.5]."""
    d, data, entry = _entry(deployed_models, name)
    mine = _kiln_run_exprs(d, "serving_default", "x=[1, 2, 5]", tmp_path / "out")
    oracle.assert_outputs(mine, {"y": np.array([2.5, 3.0, 4.5], np.float32)}, name)
    theirs = oracle.load_value(os.path.join(data, entry["signatures"]["serving_default"]
                                            ["outputs"]["y"]))
    oracle.assert_same(theirs, np.array([2.5, 3.0, 4.5], np.float32), f"{name}: TensorFlow")
