"""We read what TensorFlow writes: bundles TensorFlow 2.21 / Keras 3 export at test time
(tests/tf/make_tf_models.py) run on our loader with TensorFlow's outputs, and our `show --all`
prints what saved_model_cli prints."""
from pathlib import Path

import pytest

import make_tf_models
import oracle

SIGNATURES = [(b, s) for b, (sigs, _) in make_tf_models.BUNDLES.items() for s in sigs]
METHODS = [(b, m) for b, (_, methods) in make_tf_models.BUNDLES.items() for m in methods]


def _bundle(tf_models, name):
    root, manifest = tf_models
    entry = manifest["bundles"][name]
    return root / entry["dir"], root / entry["data"], entry


@pytest.mark.parametrize("name", sorted(make_tf_models.BUNDLES))
def test_show_all_equals_saved_model_cli(tf_models, name):
    d, _, _ = _bundle(tf_models, name)
    oracle.assert_show_equal(oracle.kiln_show_all(d), oracle.tf_show_all(d), name)


@pytest.mark.parametrize("name,signature", SIGNATURES)
def test_signature_gives_tf_outputs(tf_models, name, signature, tmp_path):
    d, data, entry = _bundle(tf_models, name)
    spec = entry["signatures"][signature]
    inputs = {k: data / f for k, f in spec["inputs"].items()}
    theirs = {k: oracle.load_value(data / f) for k, f in spec["outputs"].items()}
    if any(Path(f).suffix == ".str" for f in inputs.values()):
        # savedmodel-cli's .npy reader takes no strings: run it through the loader API.
        mine = oracle.kiln_call_signature(d, signature, inputs, tmp_path / "out")
    else:
        mine = oracle.kiln_run(d, signature, inputs, tmp_path / "out")
    oracle.assert_outputs(mine, theirs, f"{name} signature {signature}")


@pytest.mark.parametrize("name,method", METHODS)
def test_restored_method_callable_by_name(tf_models, name, method, tmp_path):
    d, data, entry = _bundle(tf_models, name)
    spec = entry["methods"][method]
    assert method in oracle.kiln_functions(d), f"{name}: no restored function {method!r}"
    mine = oracle.kiln_call_function(d, method, [data / f for f in spec["inputs"]],
                                     tmp_path / "out")
    theirs = [oracle.load_value(data / f) for f in spec["outputs"]]
    assert len(mine) == len(theirs), f"{name}.{method}: {len(mine)} outputs, TF {len(theirs)}"
    for i, (a, b) in enumerate(zip(mine, theirs)):
        oracle.assert_same(a, b, f"{name}.{method} output {i}")
