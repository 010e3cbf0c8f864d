"""The random distribution ops (gamma, Poisson, binomial, parameterized truncated normal,
StatelessShuffle) against real TensorFlow: a module whose tf.function draws from them with
fixed seeds (tf.random.stateless_gamma makes the StatelessRandomGammaV3 that Keras 3 graphs
hold) is saved and run by TensorFlow and by our loader, and every value must be identical:
each output element draws from its own skipped Philox stream, so large outputs are bit-exact
too. The saved graph must contain every op of EXPECTED_OPS."""
import os

import numpy as np

import oracle

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

EXPECTED_OPS = {"StatelessRandomGammaV3", "StatelessRandomGetKeyCounter", "StatelessRandomPoisson",
                "StatelessRandomBinomial", "StatelessParameterizedTruncatedNormal",
                "StatelessShuffle"}


def _module():
    import tensorflow as tf

    class RandomDist(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([2], tf.int32, name="seed"),
                                      tf.TensorSpec([None], tf.float32, name="alpha")])
        def draw(self, seed, alpha):
            return {
                "gamma": tf.random.stateless_gamma([500, 7], seed,
                                                   alpha=tf.concat([alpha, [1.0]], 0)),
                "gamma16": tf.random.stateless_gamma(
                    [300, 3], seed, alpha=tf.constant([0.2, 1.0, 9.0], tf.float16),
                    dtype=tf.float16),
                "gamma64": tf.random.stateless_gamma([400], seed,
                                                     alpha=tf.constant(0.7, tf.float64),
                                                     dtype=tf.float64),
                "poisson": tf.random.stateless_poisson(
                    [300, 4], seed, lam=tf.constant([0.5, 5.0, 30.0, 1000.0]), dtype=tf.int32),
                "binomial": tf.random.stateless_binomial(
                    [200, 3], seed, counts=tf.constant([10., 100., 5000.]),
                    probs=tf.constant([0.3, 0.95, 0.5]), output_dtype=tf.float32),
                "shuffle": tf.raw_ops.StatelessShuffle(
                    value=tf.range(1000), key=tf.constant([5], tf.uint64),
                    counter=tf.constant([1, 2], tf.uint64), alg=1),
                # Small: TF splits larger outputs of this op across its threads.
                "ptn": tf.raw_ops.StatelessParameterizedTruncatedNormal(
                    shape=[12], seed=seed, means=0.0, stddevs=1.0, minvals=-0.5, maxvals=1.0),
            }

    return RandomDist()


def test_random_distributions_match_tensorflow_bit_for_bit(tmp_path):
    import tensorflow as tf

    d = tmp_path / "model"
    module = _module()
    tf.saved_model.save(module, str(d), signatures={"serving_default": module.draw})
    ops = oracle.kiln_show_all(d)
    missing = [op for op in EXPECTED_OPS if f"'{op}'" not in ops]
    assert not missing, f"the saved graph lacks {missing}"

    seed = np.array([12, 34], np.int32)
    alpha = np.array([0.3, 1.7, 4.0, 0.05, 25.0, 1.0], np.float32)
    want = {k: v.numpy() for k, v in module.draw(tf.constant(seed), tf.constant(alpha)).items()}
    np.save(tmp_path / "seed.npy", seed)
    np.save(tmp_path / "alpha.npy", alpha)
    out = tmp_path / "out"
    out.mkdir()
    got = oracle.kiln_run(d, "serving_default",
                          {"seed": tmp_path / "seed.npy", "alpha": tmp_path / "alpha.npy"}, out)
    assert sorted(got) == sorted(want)
    for key, w in want.items():
        g = got[key]
        assert g.dtype == w.dtype and g.shape == w.shape, key
        diff = int(np.sum(g != w))
        assert diff == 0, f"{key}: {diff} of {w.size} values differ from TensorFlow's"
