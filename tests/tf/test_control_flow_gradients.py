"""Gradients through control flow (issue 11): tests/tf/kiln_cf_train.cc exports a train step whose
GradientTape differentiates through a Cond (If) and a ForRange (While) with a Cond in its body.
TensorFlow runs the exported signature and gets what our runtime gets, and both equal the same
math written with tf.cond / tf.while_loop under tf.GradientTape."""
import numpy as np
import pytest

import oracle

LR = np.float32(0.1)
# x and the loop count of each step: sum(x * w) changes sign, so both branches of the first
# Cond are taken; odd and even counts end the loop in either branch of the nested one.
CALLS = [
    (np.array([0.5, -0.3, 0.8], np.float32), 3),
    (np.array([-0.7, 0.2, -0.4], np.float32), 2),
    (np.array([0.1, 0.9, -0.2], np.float32), 0),
    (np.array([0.3, -0.6, 0.5], np.float32), 4),
]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    d = tmp_path_factory.mktemp("cf_train") / "bundle"
    oracle.run([oracle.KILN_CF_TRAIN, d])
    return d


def reference_steps():
    """The same train step in TensorFlow's own Python: (loss, dw, db, dx) per call."""
    import tensorflow as tf
    w = tf.Variable([0.6, -0.4, 0.9], dtype=tf.float32)
    b = tf.Variable(0.3, dtype=tf.float32)

    @tf.function
    def step(x, n):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            h = tf.cond(tf.reduce_sum(x * w) > 0, lambda: tf.tanh(x * w) + b,
                        lambda: x * w * b)

            def body(i, acc):
                nxt = tf.cond(tf.equal(i % 2, 0), lambda: tf.tanh(acc * w),
                              lambda: acc * tf.sigmoid(x) * b)
                return i + 1, nxt + x

            _, acc = tf.while_loop(lambda i, acc: i < n, body, [tf.constant(0), h])
            loss = tf.reduce_sum(acc * acc)
        dx = tape.gradient(loss, x)
        dw, db = tape.gradient(loss, [w, b])
        w.assign_sub(LR * dw)
        b.assign_sub(LR * db)
        return loss, dw, db, dx

    out = []
    for x, n in CALLS:
        out.append([v.numpy() for v in step(tf.constant(x), tf.constant(n, tf.int32))])
    return out


def test_tensorflow_runs_our_control_flow_gradients_as_our_runtime_does(bundle, tmp_path):
    import tensorflow as tf
    loaded = tf.saved_model.load(str(bundle))
    theirs = []
    for x, n in CALLS:
        r = loaded.signatures["train_step"](x=tf.constant(x), n=tf.constant(n, tf.int32))
        theirs.append([r[f"output_{k}"].numpy() for k in range(4)])

    inputs = []
    for k, (x, n) in enumerate(CALLS):
        inputs += [f"n={oracle.save_value(tmp_path / f'n{k}', np.int32(n))}",
                   f"x={oracle.save_value(tmp_path / f'x{k}', x)}"]
    oracle.run([oracle.KILN_CALL, bundle, "calls", "signature", "train_step", len(CALLS),
                tmp_path / "ours"] + inputs)
    ours = [[np.load(tmp_path / "ours" / str(k) / f"output_{i}.npy") for i in range(4)]
            for k in range(len(CALLS))]

    reference = reference_steps()
    for k in range(len(CALLS)):
        for i, what in enumerate(["loss", "dw", "db", "dx"]):
            oracle.assert_same(ours[k][i], theirs[k][i], f"call {k} {what} (kiln vs TF)",
                               rtol=1e-5, atol=1e-6)
            oracle.assert_same(ours[k][i], reference[k][i],
                               f"call {k} {what} (kiln vs tf.GradientTape)", rtol=1e-4,
                               atol=1e-5)


def test_the_gradients_are_tensorflows_control_flow_ops(bundle):
    from tensorflow.core.protobuf import saved_model_pb2
    sm = saved_model_pb2.SavedModel()
    sm.ParseFromString((bundle / "saved_model.pb").read_bytes())
    # Branch and loop bodies are library functions: their ops count too.
    ops = {n.op for f in sm.meta_graphs[0].graph_def.library.function for n in f.node_def}
    for op in ["If", "While", "EmptyTensorList", "TensorListPushBack", "TensorListPopBack"]:
        assert op in ops, f"{op} is not among the bundle's ops: {sorted(ops)}"
