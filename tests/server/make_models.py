"""Small bundles for the server tests, written by TensorFlow (the model a user would serve),
plus the MLP our own sample exports. Everything is tiny so the suite stays fast."""
import os
import shutil
import subprocess
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402


def make_multi(path):
    """serving_default: float [None, 3], int64 [None], string [None] -> three outputs; a second
    signature 'double' (float [None, 3] -> 2x); 'total' (its column sums, and the input as float16
    and bfloat16)."""
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

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="a")])
        def total(self, a):  # column sums: not one row per input row; float16 and bfloat16
            return {"sum": tf.reduce_sum(a, axis=0), "half": tf.cast(a, tf.float16),
                    "bf16": tf.cast(a, tf.bfloat16)}

    m = Multi()
    tf.saved_model.save(m, path, signatures={"serving_default": m.serve, "double": m.double,
                                             "total": m.total})


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


TFX_LABELS = ["low", "mid", "high"]
TFX_VOCAB = ["Bachelors", "HS-grad", "Masters", "Some-college", "Doctorate"]


def make_tfx(path):
    """A model as TFX's Trainer exports it (its `_get_serve_tf_examples_fn` pattern): a Keras
    model (tf_keras, as TFX uses) over the features a tf.Transform graph makes, behind
    tf.function serving functions that take serialized tf.train.Examples (input `examples`),
    parse them with tf.io.parse_example against the raw feature spec (label left out) and apply
    the transform before calling the model. The transform is written as tf.Transform bakes it
    into its graph once analyzers have run: z-scores with constant mean and variance
    (tft.scale_to_z_score), a vocabulary read from an asset file by a TextFileInitializer into a
    StaticVocabularyTable with OOV buckets (tft.apply_vocabulary), buckets by searchsorted over
    constant boundaries (tft.apply_buckets), a hashed string (tft.hash_strings) and a VarLen
    feature densified with a default (the TFX taxi example's _fill_in_missing). As TFX, the
    transform is a Keras layer set on the model (model.tft_layer) so its table and asset are
    saved with it. Signatures: serving_default (predict: `probabilities`, `value`),
    transform_features (predict: the transformed features, as TFX's templates export it),
    classify (`classes`, `scores`) and regress (`outputs`). TF2 saving writes method_name
    'tensorflow/serving/predict' for every signature, so classify's and regress's are set
    afterwards in saved_model.pb, as make_estimator does."""
    import tensorflow as tf
    import tf_keras
    from tensorflow.core.protobuf import saved_model_pb2

    spec = {
        "age": tf.io.FixedLenFeature([], tf.float32, default_value=38.0),
        "hours_per_week": tf.io.FixedLenFeature([], tf.int64, default_value=40),
        "education": tf.io.FixedLenFeature([], tf.string, default_value=""),
        "native_country": tf.io.FixedLenFeature([], tf.string, default_value="United-States"),
        "capital_gain": tf.io.VarLenFeature(tf.float32),
    }
    # The vocabulary file tft.vocabulary writes; saving copies it into the bundle's assets/.
    tmp = tempfile.mkdtemp()
    vocab_file = os.path.join(tmp, "education_vocab")
    with open(vocab_file, "w") as f:
        f.write("\n".join(TFX_VOCAB) + "\n")
    n_edu, n_oov, n_country, age_bounds = len(TFX_VOCAB), 2, 10, [25.0, 35.0, 50.0, 65.0]

    def z_score(x, mean, var):
        # tft.scale_to_z_score once its analyzer has run: the mean and variance are constants.
        numerator = tf.cast(x, tf.float32) - mean
        denominator = tf.sqrt(tf.constant(var, tf.float32))
        return tf.where(tf.not_equal(denominator, 0.0), numerator / denominator, numerator)

    class TransformLayer(tf_keras.layers.Layer):
        """What tf_transform_output.transform_features_layer() gives: raw features in,
        transformed features out."""

        def __init__(self):
            super().__init__(trainable=False)
            init = tf.lookup.TextFileInitializer(
                vocab_file, key_dtype=tf.string, key_index=tf.lookup.TextFileIndex.WHOLE_LINE,
                value_dtype=tf.int64, value_index=tf.lookup.TextFileIndex.LINE_NUMBER)
            self.education_table = tf.lookup.StaticVocabularyTable(init, num_oov_buckets=n_oov)

        def call(self, raw):
            gain = raw["capital_gain"]
            gain = tf.squeeze(tf.sparse.to_dense(
                tf.SparseTensor(gain.indices, gain.values, [gain.dense_shape[0], 1]), 0.0), axis=1)
            age = raw["age"]
            buckets = tf.searchsorted(tf.constant(age_bounds), tf.reshape(age, [-1]),
                                      side="right", out_type=tf.int64)
            return {
                "age_xf": z_score(age, 38.5, 144.0),
                "age_bucket_xf": tf.reshape(buckets, tf.shape(age)),
                "hours_xf": z_score(raw["hours_per_week"], 40.0, 100.0),
                "gain_xf": z_score(tf.math.log1p(gain), 1.5, 9.0),
                "education_xf": self.education_table.lookup(raw["education"]),
                "country_xf": tf.strings.to_hash_bucket_fast(raw["native_country"], n_country),
            }

    tf_keras.utils.set_random_seed(11)
    numeric = {k: tf_keras.Input(shape=(), name=k, dtype=tf.float32)
               for k in ("age_xf", "hours_xf", "gain_xf")}
    categorical = {k: tf_keras.Input(shape=(), name=k, dtype=tf.int64)
                   for k in ("age_bucket_xf", "education_xf", "country_xf")}
    parts = [tf_keras.layers.Reshape((1,))(v) for v in numeric.values()]
    parts.append(tf_keras.layers.CategoryEncoding(len(age_bounds) + 1, output_mode="one_hot")(
        categorical["age_bucket_xf"]))
    parts.append(tf_keras.layers.CategoryEncoding(n_edu + n_oov, output_mode="one_hot")(
        categorical["education_xf"]))
    parts.append(tf_keras.layers.Embedding(n_country, 3)(categorical["country_xf"]))
    h = tf_keras.layers.Concatenate()(parts)

    def dense(units, seed, **kw):
        return tf_keras.layers.Dense(
            units, bias_initializer=tf_keras.initializers.RandomNormal(stddev=0.1, seed=seed), **kw)

    h = dense(16, 1, activation="relu")(h)
    h = dense(8, 2, activation="relu")(h)
    outputs = {"probabilities": dense(len(TFX_LABELS), 3, activation="softmax",
                                      name="probabilities")(h),
               "value": dense(1, 4, name="value")(h)}
    model = tf_keras.Model({**numeric, **categorical}, outputs)
    model.tft_layer = TransformLayer()

    def run(examples):
        return model(model.tft_layer(tf.io.parse_example(examples, spec)))

    examples_spec = tf.TensorSpec([None], tf.string, name="examples")

    @tf.function(input_signature=[examples_spec])
    def serve_tf_examples_fn(examples):
        out = run(examples)
        return {"probabilities": out["probabilities"], "value": out["value"]}

    @tf.function(input_signature=[examples_spec])
    def transform_features_fn(examples):
        return model.tft_layer(tf.io.parse_example(examples, spec))

    @tf.function(input_signature=[examples_spec])
    def classify_fn(examples):
        n = tf.shape(examples)[0]
        return {"classes": tf.tile(tf.constant([TFX_LABELS]), tf.stack([n, 1])),
                "scores": run(examples)["probabilities"]}

    @tf.function(input_signature=[examples_spec])
    def regress_fn(examples):
        return {"outputs": tf.squeeze(run(examples)["value"], axis=1)}

    model.save(path, save_format="tf", signatures={"serving_default": serve_tf_examples_fn,
                                                   "transform_features": transform_features_fn,
                                                   "classify": classify_fn,
                                                   "regress": regress_fn})
    pb = os.path.join(path, "saved_model.pb")
    sm = saved_model_pb2.SavedModel()
    with open(pb, "rb") as f:
        sm.ParseFromString(f.read())
    sigs = sm.meta_graphs[0].signature_def
    sigs["classify"].method_name = "tensorflow/serving/classify"
    sigs["regress"].method_name = "tensorflow/serving/regress"
    with open(pb, "wb") as f:
        f.write(sm.SerializeToString())
    shutil.rmtree(tmp)


def make_all(root, samples_dir):
    """Model repository under root: {name}/1 for each model; returns reference data."""
    os.makedirs(os.path.join(root, "mlp"), exist_ok=True)
    subprocess.run([os.path.join(samples_dir, "mlp_export"), os.path.join(root, "mlp", "1"),
                    os.path.join(root, "mlp_io")], check=True, stdout=subprocess.DEVNULL)
    make_multi(os.path.join(root, "multi", "1"))
    cnn = make_cnn(os.path.join(root, "cnn", "1"))
    make_examples(os.path.join(root, "examples", "1"))
    make_estimator(os.path.join(root, "estimator", "1"))
    make_tfx(os.path.join(root, "tfx", "1"))
    x = np.random.default_rng(3).random((4, 28, 28, 1), dtype=np.float32)
    ref = {
        "mlp_x": np.load(os.path.join(root, "mlp_io", "x_7.npy")),
        "mlp_y": np.load(os.path.join(root, "mlp_io", "y_7.npy")),
        "cnn_x": x,
        "cnn_y": cnn.serve(x)["probs"].numpy(),
    }
    return ref
