"""tf.random.Generator against real TensorFlow: a module holding a Generator whose tf.function
draws normals, uniforms, integers and binomials (RngReadAndSkip, then the stateless V2 ops, as TF 2's
Generator draws; the older Stateful* ops through tf.raw_ops on the same state) and returns the
state afterwards is saved, then run once by our loader and once by TensorFlow on a fresh load:
every value and the final state must be identical. The saved graph must contain every op of
EXPECTED_OPS."""
import os

import numpy as np

import oracle

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

EXPECTED_OPS = {"RngReadAndSkip", "RngSkip", "StatefulUniform", "StatefulStandardNormalV2",
                "StatefulTruncatedNormal", "StatefulUniformInt", "StatefulUniformFullInt",
                "StatefulRandomBinomial"}


def _module():
    import tensorflow as tf

    class Noise(tf.Module):
        def __init__(self):
            super().__init__()
            self.g = tf.random.Generator.from_seed(7)

        @tf.function(input_signature=[])
        def draw(self):
            g = self.g
            h = g.state.handle
            out = {
                "normal": g.normal([40, 3]),
                "uniform64": g.uniform([25], dtype=tf.float64),
                "ints": g.uniform([30], minval=-3, maxval=9, dtype=tf.int32),
                "full": g.uniform_full_int([7], dtype=tf.int64),
                "truncated": g.truncated_normal([33]),
                "binomial": g.binomial([20, 3], counts=tf.constant([10., 100., 5000.]),
                                       probs=tf.constant([0.3, 0.95, 0.5]), dtype=tf.int32),
            }
            with tf.control_dependencies(list(out.values())):
                out["raw_uniform"] = tf.raw_ops.StatefulUniform(
                    resource=h, algorithm=tf.constant(1, tf.int64), shape=[9],
                    dtype=tf.float32)
            with tf.control_dependencies([out["raw_uniform"]]):
                out["raw_normal"] = tf.raw_ops.StatefulStandardNormalV2(
                    resource=h, algorithm=tf.constant(1, tf.int64), shape=[6],
                    dtype=tf.float64)
            with tf.control_dependencies([out["raw_normal"]]):
                out["raw_truncated"] = tf.raw_ops.StatefulTruncatedNormal(
                    resource=h, algorithm=tf.constant(1, tf.int64), shape=[2, 5],
                    dtype=tf.float16)
            with tf.control_dependencies([out["raw_truncated"]]):
                out["raw_int"] = tf.raw_ops.StatefulUniformInt(
                    resource=h, algorithm=tf.constant(1, tf.int64), shape=[11],
                    minval=tf.constant(-100, tf.int64), maxval=tf.constant(100, tf.int64))
            with tf.control_dependencies([out["raw_int"]]):
                out["raw_full"] = tf.raw_ops.StatefulUniformFullInt(
                    resource=h, algorithm=tf.constant(1, tf.int64), shape=[5],
                    dtype=tf.uint32)
            with tf.control_dependencies([out["raw_full"]]):
                skip = tf.raw_ops.RngSkip(resource=h, algorithm=tf.constant(1, tf.int64),
                                          delta=tf.constant(3, tf.int64))
            with tf.control_dependencies([skip]):
                out["state"] = g.state.read_value()
            return out

    return Noise()


def test_generator_matches_tensorflow_bit_for_bit(tmp_path):
    import tensorflow as tf

    d = tmp_path / "model"
    module = _module()
    tf.saved_model.save(module, str(d), signatures={"serving_default": module.draw})
    ops = oracle.kiln_show_all(d)
    missing = [op for op in EXPECTED_OPS if f"'{op}'" not in ops]
    assert not missing, f"the saved graph lacks {missing}"

    loaded = tf.saved_model.load(str(d))
    want = {k: v.numpy() for k, v in loaded.signatures["serving_default"]().items()}
    out = tmp_path / "out"
    out.mkdir()
    got = oracle.kiln_run(d, "serving_default", {}, out)
    assert sorted(got) == sorted(want)
    for key, w in want.items():
        g = got[key]
        assert g.dtype == w.dtype and g.shape == w.shape, key
        diff = int(np.sum(g != w))
        assert diff == 0, f"{key}: {diff} of {w.size} values differ from TensorFlow's"
    # The state moved on from the seed's: the draws really went through the variable.
    assert not np.array_equal(want["state"], tf.random.Generator.from_seed(7).state.numpy())
