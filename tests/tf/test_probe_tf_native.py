"""Plain-TensorFlow SavedModels (tf.Module + tf.function(input_signature), tf.saved_model.save)
that once ran differently here than in TensorFlow: each test writes one small module, runs its
serving_default through `savedmodel-cli run` and compares with what TensorFlow computes."""
import os

import numpy as np

import oracle

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def test_stateless_full_int_uint64_has_tf_default_dtype(tmp_path):
    """uint64 is the FullInt ops' default dtype, so TF writes their dtype attr without it."""
    import tensorflow as tf

    def fn(seed):
        return {"u64": tf.random.stateless_uniform([9], seed, None, None, tf.uint64),
                "i64": tf.random.stateless_uniform([9], seed, None, None, tf.int64)}

    ours, theirs = oracle.run_module(tmp_path, fn, [tf.TensorSpec([2], tf.int32, "seed")],
                                     {"seed": np.array([7, -3], np.int32)})
    oracle.assert_outputs(ours, theirs, "stateless FullInt")


def test_segment_max_min_keep_nan_as_tf(tmp_path):
    """TF's segment max and min step as std::max(value, acc): a NaN stays unless a later value
    replaces it, and of 0 and -0 the later one wins."""
    import tensorflow as tf
    nan = np.nan
    x = np.array([3, nan, nan, 3, 1, nan, 2, nan, nan, 0, -0.0, -0.0, 0], np.float32)
    seg = np.array([0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5], np.int32)

    def fn(x, seg):
        x2 = tf.stack([x, -x], axis=1)
        return {"max": tf.math.segment_max(x2, seg), "min": tf.math.segment_min(x2, seg),
                "umax": tf.math.unsorted_segment_max(x2, seg, 6),
                "umin": tf.math.unsorted_segment_min(x2, seg, 6)}

    ours, theirs = oracle.run_module(
        tmp_path, fn,
        [tf.TensorSpec([None], tf.float32, "x"), tf.TensorSpec([None], tf.int32, "seg")],
        {"x": x, "seg": seg})
    oracle.assert_outputs(ours, theirs, "segment max/min with NaN")
    for k in theirs:  # assert_allclose treats 0 and -0 as equal (a NaN's sign means nothing)
        zero = theirs[k] == 0
        np.testing.assert_array_equal(np.signbit(ours[k][zero]), np.signbit(theirs[k][zero]),
                                      err_msg=k)


def test_general_eig(tmp_path):
    """tf.linalg.eig / eigvals (op Eig): eigenvalues in TF's order, eigenvectors up to a unit
    phase per column, float32, float64 and complex inputs."""
    import tensorflow as tf
    rng = np.random.default_rng(5)
    a = rng.normal(size=(2, 4, 4)).astype(np.float32)
    b = rng.normal(size=(3, 3))
    c = (rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))).astype(np.complex64)

    def fn(a, b, c):
        e, v = tf.linalg.eig(a)
        ec, vc = tf.linalg.eig(c)
        return {"e": e, "v": v, "eb": tf.linalg.eigvals(b), "ec": ec, "vc": vc}

    ours, theirs = oracle.run_module(
        tmp_path, fn, [tf.TensorSpec([None, 4, 4], tf.float32, "a"),
                       tf.TensorSpec([3, 3], tf.float64, "b"),
                       tf.TensorSpec([3, 3], tf.complex64, "c")], {"a": a, "b": b, "c": c})
    assert sorted(ours) == sorted(theirs)
    for k in ("e", "eb", "ec"):
        # The same eigenvalues; the order of a conjugate pair follows the last bits of the
        # Schur iteration (Eigen version, vector ISA), so compare them sorted.
        assert ours[k].dtype == theirs[k].dtype and ours[k].shape == theirs[k].shape, k
        key = lambda e: np.sort_complex(np.round(e, 4))  # noqa: E731
        np.testing.assert_allclose(key(ours[k]), key(theirs[k]), rtol=1e-4, atol=1e-4, err_msg=k)
    for k, m in (("v", a), ("vc", c)):
        v, t = ours[k], theirs[k]
        assert v.dtype == t.dtype and v.shape == t.shape, k
        # A V = V diag(e), unit columns; the phase of each column is the solver's choice.
        e = ours["e" if k == "v" else "ec"]
        np.testing.assert_allclose(m.astype(v.dtype) @ v, v * e[..., None, :], atol=1e-4,
                                   err_msg=k)
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=1e-5, err_msg=k)


def test_neg_and_abs_of_signed_zero(tmp_path):
    """Neg(0.0) is -0.0 and Abs(-0.0) is 0.0 in TF (1 / -x and signbit see the difference)."""
    import tensorflow as tf

    def fn(x, h):
        return {"neg": -x, "abs": tf.abs(x), "inv_neg": 1.0 / -x, "neg_h": -h, "abs_h": tf.abs(h)}

    x = np.array([0.0, -0.0, 1.5, -2.0], np.float32)
    ours, theirs = oracle.run_module(
        tmp_path, fn,
        [tf.TensorSpec([None], tf.float32, "x"), tf.TensorSpec([None], tf.float16, "h")],
        {"x": x, "h": x.astype(np.float16)})
    oracle.assert_outputs(ours, theirs, "neg/abs")
    for k in theirs:
        np.testing.assert_array_equal(np.signbit(ours[k]), np.signbit(theirs[k]), err_msg=k)
