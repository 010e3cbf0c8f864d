"""Keras Applications with random weights: each application of make_applications
(weights=None, smallest input, exported by `model.export`) runs on our runtime through
`savedmodel-cli run` with TensorFlow's logits within 1e-4 relative. KILN_FULL_APPS=0 leaves
out the heavy ones (DenseNet121, NASNetMobile) for a quicker local run."""
import os

import pytest

import make_applications
import oracle


@pytest.mark.parametrize("name", make_applications.selected())
def test_application_gives_tf_outputs(application_models, name, tmp_path):
    root, manifest = application_models
    entry = manifest["models"][name]
    assert entry["error"] is None, f"TensorFlow could not export {name}:\n{entry['error']}"
    d, data = os.path.join(root, entry["dir"]), os.path.join(root, entry["data"])
    for key, spec in entry["signatures"].items():
        inputs = {k: os.path.join(data, f) for k, f in spec["inputs"].items()}
        theirs = {k: oracle.load_value(os.path.join(data, f)) for k, f in spec["outputs"].items()}
        mine = oracle.kiln_run(d, key, inputs, tmp_path / key)
        oracle.assert_model_outputs(mine, theirs, f"{name} signature {key}")
