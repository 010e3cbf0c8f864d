"""Small bundles for the server tests, written by TensorFlow (the model a user would serve),
plus the MLP our own sample exports. Everything is tiny so the suite stays fast."""
import os
import subprocess

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402


def make_multi(path):
    """serving_default: float [None, 3], int64 [None], string [None] -> three outputs; a second
    signature 'double' (float [None, 3] -> 2x)."""
    import tensorflow as tf

    class Multi(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="a"),
                                      tf.TensorSpec([None], tf.int64, name="b"),
                                      tf.TensorSpec([None], tf.string, name="s")])
        def serve(self, a, b, s):
            return {"y": a * 2.0 + 1.0, "n": b + 1, "s_bytes": tf.identity(s)}

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="a")])
        def double(self, a):
            return {"y": a * 2.0}

    m = Multi()
    tf.saved_model.save(m, path, signatures={"serving_default": m.serve, "double": m.double})


def make_cnn(path):
    """A small CNN: conv 3x3x1x8 + relu, 2x2 max pool, dense 1352 -> 10, softmax; fixed weights."""
    import tensorflow as tf

    rng = np.random.default_rng(7)

    class Cnn(tf.Module):
        def __init__(self):
            self.k = tf.Variable(rng.normal(0, 0.3, (3, 3, 1, 8)).astype(np.float32))
            self.kb = tf.Variable(np.zeros(8, np.float32))
            self.w = tf.Variable(rng.normal(0, 0.05, (13 * 13 * 8, 10)).astype(np.float32))
            self.b = tf.Variable(np.zeros(10, np.float32))

        @tf.function(input_signature=[tf.TensorSpec([None, 28, 28, 1], tf.float32, name="x")])
        def serve(self, x):
            h = tf.nn.relu(tf.nn.conv2d(x, self.k, 1, "VALID") + self.kb)
            h = tf.nn.max_pool2d(h, 2, 2, "VALID")
            h = tf.reshape(h, [-1, 13 * 13 * 8])
            return {"probs": tf.nn.softmax(tf.matmul(h, self.w) + self.b)}

    m = Cnn()
    tf.saved_model.save(m, path, signatures={"serving_default": m.serve})
    return m


def make_examples(path):
    """Classify and regress signatures over serialized tf.Examples (TF Serving's conventions).
    TF2 saving always writes method_name 'tensorflow/serving/predict', so it is set afterwards
    in saved_model.pb, as a TF1 builder would have written it. classify answers each serialized
    example as its own label (so the test can check the bytes the server built) with score
    0.25; regress answers the number of examples for each."""
    import tensorflow as tf
    from tensorflow.core.protobuf import saved_model_pb2

    class Ex(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
        def classify(self, inputs):
            n = tf.shape(inputs)[0]
            return {"classes": tf.reshape(inputs, [-1, 1]),
                    "scores": tf.fill(tf.stack([n, 1]), 0.25)}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
        def regress(self, inputs):
            n = tf.shape(inputs)[0]
            return {"outputs": tf.fill(tf.stack([n]), tf.cast(n, tf.float32))}

    m = Ex()
    tf.saved_model.save(m, path, signatures={"serving_default": m.classify,
                                             "classify": m.classify, "regress": m.regress})
    pb = os.path.join(path, "saved_model.pb")
    sm = saved_model_pb2.SavedModel()
    with open(pb, "rb") as f:
        sm.ParseFromString(f.read())
    sigs = sm.meta_graphs[0].signature_def
    sigs["serving_default"].method_name = "tensorflow/serving/classify"
    sigs["classify"].method_name = "tensorflow/serving/classify"
    sigs["regress"].method_name = "tensorflow/serving/regress"
    with open(pb, "wb") as f:
        f.write(sm.SerializeToString())


def make_estimator(path):
    """An Estimator-style bundle: classify and regress signatures that parse serialized
    tf.Examples (ParseExampleV2) and score them with a small dense layer."""
    import tensorflow as tf
    from tensorflow.core.protobuf import saved_model_pb2
    spec = {"x": tf.io.FixedLenFeature([3], tf.float32),
            "kind": tf.io.FixedLenFeature([], tf.string, default_value="a")}

    class Estimator(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable([[0.5, -1.0], [1.5, 0.25], [-0.75, 2.0]])

        def _logits(self, inputs):
            f = tf.io.parse_example(inputs, spec)
            bonus = tf.cast(tf.equal(f["kind"], "b"), tf.float32)[:, None]
            return tf.matmul(f["x"], self.w) + bonus

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
        def classify(self, inputs):
            logits = self._logits(inputs)
            n = tf.shape(inputs)[0]
            return {"classes": tf.tile(tf.constant([["neg", "pos"]]), tf.stack([n, 1])),
                    "scores": tf.nn.softmax(logits)}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
        def regress(self, inputs):
            return {"outputs": tf.reduce_sum(self._logits(inputs), axis=1)}

    m = Estimator()
    tf.saved_model.save(m, path, signatures={"serving_default": m.classify,
                                             "classify": m.classify, "regress": m.regress})
    pb = os.path.join(path, "saved_model.pb")
    sm = saved_model_pb2.SavedModel()
    with open(pb, "rb") as f:
        sm.ParseFromString(f.read())
    sigs = sm.meta_graphs[0].signature_def
    for k in ("serving_default", "classify"):
        sigs[k].method_name = "tensorflow/serving/classify"
    sigs["regress"].method_name = "tensorflow/serving/regress"
    with open(pb, "wb") as f:
        f.write(sm.SerializeToString())


def make_all(root, samples_dir):
    """Model repository under root: {name}/1 for each model; returns reference data."""
    os.makedirs(os.path.join(root, "mlp"), exist_ok=True)
    subprocess.run([os.path.join(samples_dir, "mlp_export"), os.path.join(root, "mlp", "1"),
                    os.path.join(root, "mlp_io")], check=True, stdout=subprocess.DEVNULL)
    make_multi(os.path.join(root, "multi", "1"))
    cnn = make_cnn(os.path.join(root, "cnn", "1"))
    make_examples(os.path.join(root, "examples", "1"))
    make_estimator(os.path.join(root, "estimator", "1"))
    x = np.random.default_rng(3).random((4, 28, 28, 1), dtype=np.float32)
    ref = {
        "mlp_x": np.load(os.path.join(root, "mlp_io", "x_7.npy")),
        "mlp_y": np.load(os.path.join(root, "mlp_io", "y_7.npy")),
        "cnn_x": x,
        "cnn_y": cnn.serve(x)["probs"].numpy(),
    }
    return ref
