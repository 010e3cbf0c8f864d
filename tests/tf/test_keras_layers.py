"""Every Keras layer: every case of make_keras_layers.CASES (one tiny model per
keras.layers class with inference behaviour, exported by Keras 3 with `model.export`) runs on
our runtime through `savedmodel-cli run` with TensorFlow's outputs (floats 1e-4 relative,
everything else exactly). KNOWN_GAPS lists the cases that need ops outside the runtime, with
the reason; they are strict expected failures, so one that starts passing fails the suite until
it is taken off the list."""
import os

import pytest

import make_keras_layers
import oracle


# Cases whose models use ops the runtime does not have yet (none is in
# ../shared/spec/tf-ops-target.txt), with the reason. None now: augmentation_inference (Keras
# 3's augmentation layers keep the stateless random ops in the graph at inference, down to
# StatelessRandomGammaV3) runs since the random distributions landed.
KNOWN_GAPS: dict[str, str] = {}


def _case(name):
    if name in KNOWN_GAPS:
        return pytest.param(name, marks=pytest.mark.xfail(reason=KNOWN_GAPS[name], strict=True))
    return name


@pytest.mark.parametrize("name", [_case(n) for n in sorted(make_keras_layers.CASES)])
def test_layer_model_gives_tf_outputs(keras_layer_models, name, tmp_path):
    root, manifest = keras_layer_models
    entry = manifest["models"][name]
    assert entry["error"] is None, f"TensorFlow could not export {name}:\n{entry['error']}"
    # The model holds the classes the case says it covers (the table cannot lie).
    missing = set(make_keras_layers.CASES[name].covers) - set(entry["layer_classes"])
    assert not missing, f"{name}: the model has no {sorted(missing)} layer"
    d, data = os.path.join(root, entry["dir"]), os.path.join(root, entry["data"])
    skipped = []
    for key, spec in entry["signatures"].items():
        inputs = {k: os.path.join(data, f) for k, f in spec["inputs"].items()}
        mine = oracle.kiln_run(d, key, inputs, tmp_path / key)
        if spec.get("tf_cannot_compute"):
            # No oracle here, but kiln must still run it and give what the signature declares.
            oracle.assert_outputs_match_specs(mine, spec["output_specs"],
                                              f"keras layer case {name}, signature {key}")
            skipped.append(f"{key}: {spec['tf_cannot_compute']}")
            continue
        theirs = {k: oracle.load_value(os.path.join(data, f)) for k, f in spec["outputs"].items()}
        oracle.assert_model_outputs(mine, theirs, f"keras layer case {name}, signature {key}")
    if skipped:
        pytest.skip("TensorFlow cannot compute this on this machine, so kiln's outputs (it ran, "
                    "with the declared shapes) are not compared: " + "; ".join(skipped))
