"""Issue 21's long tail (make_long_tail_models.MODELS): models TensorFlow wrote with
mixed-precision policies, half-precision signatures and the op areas beyond the first target
list run on our runtime with TensorFlow's outputs, through `savedmodel-cli run`."""
import os

import numpy as np
import pytest

import make_long_tail_models as g
import oracle

# Per tolerance class: (rtol, atol as a fraction of the output's largest magnitude). float16
# has 11 significant bits, bfloat16 8; a model rounds to them after every op, in places that
# differ between TF's kernels and ours.
# A "_sum" class is one long product rounded once: about one unit of the last place of the
# largest output (TF's bfloat16 kernel without oneDNN rounds a little more).
TOLERANCE = {"float32": (1e-4, 1e-5), "float16": (1e-2, 4e-3), "bfloat16": (6e-2, 3e-2),
             "float16_sum": (0, 1e-3), "bfloat16_sum": (0, 1e-2)}


def _as_float(a):
    """bfloat16 arrays come back from .npy as 2-byte voids (NumPy has no bfloat16)."""
    a = np.asarray(a)
    if a.dtype.kind == "V" and a.dtype.itemsize == 2:
        import ml_dtypes
        return a.view(ml_dtypes.bfloat16), "bfloat16"
    return a, str(a.dtype)


def _assert_close(ours, theirs, tolerance, what):
    ours, our_type = _as_float(ours)
    theirs, their_type = _as_float(theirs)
    assert our_type == their_type, f"{what}: dtype ours {our_type}, TF {their_type}"
    assert ours.shape == theirs.shape, f"{what}: shape ours {ours.shape}, TF {theirs.shape}"
    if theirs.dtype.kind not in "fcV" and their_type != "bfloat16":
        np.testing.assert_array_equal(ours, theirs, err_msg=what)
        return
    rtol, atol_of_max = TOLERANCE[tolerance]
    t = theirs.astype(np.complex128 if theirs.dtype.kind == "c" else np.float64)
    o = ours.astype(t.dtype)
    finite = np.abs(t[np.isfinite(t)])
    atol = max(oracle.ATOL, atol_of_max * float(finite.max())) if finite.size else oracle.ATOL
    np.testing.assert_allclose(o, t, rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.parametrize("name", list(g.MODELS))
def test_long_tail_model_gives_tf_outputs(long_tail_models, name, tmp_path):
    root, manifest = long_tail_models
    entry = manifest["models"][name]
    assert entry["error"] is None, f"TensorFlow could not write or run {name}:\n{entry['error']}"
    d, data = os.path.join(root, entry["dir"]), os.path.join(root, entry["data"])
    for signature, spec in sorted(entry["signatures"].items()):
        inputs = {k: os.path.join(data, f) for k, f in spec["inputs"].items()}
        theirs = {k: oracle.load_value(os.path.join(data, f)) for k, f in spec["outputs"].items()}
        mine = oracle.kiln_run(d, signature, inputs, tmp_path / signature)
        assert sorted(mine) == sorted(theirs), f"{name} {signature}: outputs {sorted(mine)}, " \
                                               f"TF {sorted(theirs)}"
        for k in sorted(theirs):
            _assert_close(mine[k], theirs[k], g.MODELS[name], f"{name} {signature} output {k!r}")
