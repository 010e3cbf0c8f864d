"""The models a new user deploys first: common architectures and SavedModel
kinds written by TensorFlow 2.21 / Keras 3, with TensorFlow's outputs recorded for
test_deployed_models.py.

    python make_deployed_models.py OUT [NAME...]

MODELS says, per model, how it is written and what the tests run: the signatures (fed the
recorded inputs through `savedmodel-cli run`) and the restored methods (called by name through
kiln_call). The train step is recorded over TRAIN_CALLS calls on one load: the loss of each
call and every variable after it, by object-graph path. half_plus_two_v1/v2 are TensorFlow
Serving's fixtures from ../shared/fixtures (not written here; their entries point there).
"""
import os
import sys
import time
import traceback

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

import recording  # noqa: E402

BATCH = 2
TRAIN_CALLS = 3

# name: (how it is written, signatures run, restored methods called)
MODELS = {
    "lstm_text_classifier": ("model.export", ["serving_default"], ["serve"]),
    "bidirectional_gru": ("model.export", ["serving_default"], ["serve"]),
    "mobilenet_v2_small": ("model.export", ["serving_default"], []),
    "resnet50_small": ("model.export", ["serving_default"], []),
    "transformer_block": ("model.export", ["serving_default"], ["serve"]),
    "dilated_conv1d": ("model.export", ["serving_default"], []),
    "conv2d_transpose_autoencoder": ("model.export", ["serving_default"], []),
    "image_ops_module": ("tf.saved_model.save",
                         ["einsum", "one_hot", "resize", "top_k"],
                         ["einsum", "one_hot", "resize", "top_k"]),
    "lookup_preprocessing": ("tf.saved_model.save", ["lookup", "lookup_one"], ["lookup"]),
    "train_step": ("tf.saved_model.save", ["predict"], []),
    "tf1_builder": ("tf.compat.v1.saved_model.Builder", ["serving_default"], []),
    "half_plus_two_v1": ("fixture", ["serving_default", "regress_x2_to_y3"], []),
    "half_plus_two_v2": ("fixture", ["serving_default", "regress_x2_to_y3"], []),
}

# ---------------------------------------------------------------------------------------------
# Keras models


def lstm_text_classifier():
    import keras
    L = keras.layers
    tokens = keras.Input((12,), dtype="int32", name="tokens")
    h = L.Embedding(200, 16, mask_zero=True)(tokens)
    h = L.LSTM(16)(h)
    return keras.Model(tokens, L.Dense(1, activation="sigmoid")(h)), {"tokens": _tokens(12)}


def bidirectional_gru():
    import keras
    L = keras.layers
    tokens = keras.Input((12,), dtype="int32", name="tokens")
    h = L.Embedding(200, 8, mask_zero=True)(tokens)
    h = L.Bidirectional(L.GRU(8, return_sequences=True))(h)
    h = L.GlobalAveragePooling1D()(h)
    return keras.Model(tokens, L.Dense(3, activation="softmax")(h)), {"tokens": _tokens(12)}


def _tokens(n):
    t = np.random.default_rng(9).integers(1, 200, (BATCH, n)).astype(np.int32)
    t[1, n - 4:] = 0  # padding, masked by mask_zero
    return t


def _images(size, channels=3, high=255.0, seed=3):
    return np.random.default_rng(seed).uniform(0, high, (BATCH, size, size, channels)).astype(
        np.float32)


def mobilenet_v2_small():
    import keras
    m = keras.applications.MobileNetV2(weights=None, alpha=0.35, input_shape=(64, 64, 3),
                                       classes=10)
    return m, {"image": _images(64)}


def resnet50_small():
    import keras
    m = keras.applications.ResNet50(weights=None, input_shape=(32, 32, 3), classes=10)
    return m, {"image": _images(32)}


def transformer_block():
    import keras
    L, ops = keras.layers, keras.ops
    seq, dim = 10, 16
    tokens = keras.Input((seq,), dtype="int32", name="tokens")
    positions = L.Embedding(seq, dim)(ops.arange(seq))
    x = L.Embedding(100, dim)(tokens) + positions
    attn = L.MultiHeadAttention(num_heads=2, key_dim=8)(x, x)
    x = L.LayerNormalization(epsilon=1e-6)(x + L.Dropout(0.1)(attn))
    ffn = L.Dense(dim)(L.Dense(32, activation="relu")(x))
    x = L.LayerNormalization(epsilon=1e-6)(x + L.Dropout(0.1)(ffn))
    out = L.Dense(2, activation="softmax")(L.GlobalAveragePooling1D()(x))
    t = np.random.default_rng(4).integers(0, 100, (BATCH, seq)).astype(np.int32)
    return keras.Model(tokens, out), {"tokens": t}


def dilated_conv1d():
    import keras
    L = keras.layers
    wave = keras.Input((32, 1), name="wave")
    x = L.Conv1D(8, 2, padding="causal")(wave)
    for rate in (1, 2, 4, 8):
        h = L.Conv1D(8, 2, padding="causal", dilation_rate=rate, activation="tanh")(x)
        x = L.Add()([x, L.Conv1D(8, 1)(h)])
    out = L.Dense(1)(L.GlobalMaxPooling1D()(x))
    w = np.random.default_rng(5).uniform(-1, 1, (BATCH, 32, 1)).astype(np.float32)
    return keras.Model(wave, out), {"wave": w}


def conv2d_transpose_autoencoder():
    import keras
    L = keras.layers
    img = keras.Input((28, 28, 1), name="image")
    x = L.Conv2D(8, 3, strides=2, padding="same", activation="relu")(img)
    x = L.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)
    x = L.Conv2DTranspose(16, 3, strides=2, padding="same", activation="relu")(x)
    x = L.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu")(x)
    out = L.Conv2D(1, 3, padding="same", activation="sigmoid")(x)
    return keras.Model(img, out), {"image": _images(28, 1, 1.0)}


KERAS_MODELS = {f.__name__: f for f in (lstm_text_classifier, bidirectional_gru,
                                        mobilenet_v2_small, resnet50_small, transformer_block,
                                        dilated_conv1d, conv2d_transpose_autoencoder)}


def _export_keras(name):
    def make(bundle):
        import keras
        keras.utils.set_random_seed(recording.seed_of(name))
        model, feed = KERAS_MODELS[name]()
        model.export(bundle, format="tf_saved_model", verbose=False)
        import tensorflow as tf
        names = sorted(tf.saved_model.load(bundle).signatures["serving_default"]
                       .structured_input_signature[1])
        if len(names) == 1 and len(feed) == 1:
            feed = {names[0]: next(iter(feed.values()))}  # Applications name it keras_tensor_N
        assert names == sorted(feed), f"{name}: the signature takes {names}"
        return "model.export", {"serving_default": feed}, {"serve": [feed[k] for k in names]}
    return make


# ---------------------------------------------------------------------------------------------
# tf.Modules


def _image_ops_module():
    import tensorflow as tf

    class ImageOps(tf.Module):
        def __init__(self):
            super().__init__()
            rng = np.random.default_rng(6)
            self.w = tf.Variable(rng.standard_normal((4, 5)).astype(np.float32), name="w")

        @tf.function(input_signature=[tf.TensorSpec([None, 8, 8, 3], tf.float32, name="images")])
        def resize(self, images):
            return {"bilinear": tf.image.resize(images, [12, 16]),
                    "nearest": tf.image.resize(images, [5, 6], method="nearest"),
                    "bicubic": tf.image.resize(images, [10, 10], method="bicubic"),
                    "area": tf.image.resize(images, [4, 4], method="area"),
                    "antialias": tf.image.resize(images, [5, 5], antialias=True)}

        @tf.function(input_signature=[tf.TensorSpec([None, 10], tf.float32, name="x")])
        def top_k(self, x):
            values, indices = tf.math.top_k(x, k=3)
            return {"values": values, "indices": indices}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.int32, name="ids")])
        def one_hot(self, ids):
            return {"plain": tf.one_hot(ids, 5),
                    "on_off": tf.one_hot(ids, 4, on_value=2.0, off_value=-1.0, axis=0)}

        @tf.function(input_signature=[tf.TensorSpec([None, 3, 4], tf.float32, name="a"),
                                      tf.TensorSpec([None, 6, 4], tf.float32, name="b")])
        def einsum(self, a, b):
            return {"matmul": tf.einsum("bij,jk->bik", a, self.w),
                    "batch_dot": tf.einsum("bij,bkj->bik", a, b),
                    "reduce": tf.einsum("bij->bj", a),
                    "outer": tf.einsum("bi,bj->bij", a[:, 0], b[:, 0])}

    rng = np.random.default_rng(7)
    calls = {
        "resize": {"images": rng.uniform(0, 1, (BATCH, 8, 8, 3)).astype(np.float32)},
        "top_k": {"x": rng.standard_normal((BATCH, 10)).astype(np.float32)},
        "one_hot": {"ids": np.array([0, 3, 4, 7, -1], np.int32)},  # 7 and -1: all off
        "einsum": {"a": rng.standard_normal((BATCH, 3, 4)).astype(np.float32),
                   "b": rng.standard_normal((BATCH, 6, 4)).astype(np.float32)},
    }
    return ImageOps(), calls


VOCAB_FILE_WORDS = ["apple", "banana", "cherry", "date", "elderberry"]


def _lookup_module(asset_dir):
    import tensorflow as tf
    os.makedirs(asset_dir, exist_ok=True)
    vocab_path = os.path.join(asset_dir, "vocab.txt")
    with open(vocab_path, "w") as f:
        f.write("\n".join(VOCAB_FILE_WORDS) + "\n")

    class Lookup(tf.Module):
        def __init__(self):
            super().__init__()
            keys = tf.constant(["apple", "cherry", "kiwi", "lemon"])
            self.from_tensors = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(keys, tf.constant([10, 20, 30, 40], tf.int64)),
                default_value=-1)
            self.from_file = tf.lookup.StaticHashTable(
                tf.lookup.TextFileInitializer(vocab_path, tf.string,
                                              tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
                                              tf.lookup.TextFileIndex.LINE_NUMBER),
                default_value=-1)
            self.mutable = tf.lookup.experimental.MutableHashTable(tf.string, tf.float32, -1.0)
            self.mutable.insert(tf.constant(["banana", "kiwi"]), tf.constant([0.5, 1.5]))

        def _normalize(self, words):
            w = tf.strings.lower(tf.strings.strip(words))
            return tf.strings.regex_replace(w, "[^a-z]", "")

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="words")])
        def lookup(self, words):
            w = self._normalize(words)
            return {"normalized": w,
                    "id_tensors": self.from_tensors.lookup(w),
                    "id_file": self.from_file.lookup(w),
                    "weight": self.mutable.lookup(w),
                    "length": tf.strings.length(w),
                    "prefix": tf.strings.substr(w, 0, 3),
                    "tagged": tf.strings.join(["<", w, ">"]),
                    "hash": tf.strings.to_hash_bucket_fast(w, 7)}

        @tf.function(input_signature=[tf.TensorSpec([], tf.string, name="word")])
        def lookup_one(self, word):
            w = self._normalize(word)
            return {"normalized": w, "id_file": self.from_file.lookup(w)}

    words = np.array([b" Apple", b"CHERRY!", b"kiwi", b"date", b"fig", b"Banana "], dtype=object)
    return Lookup(), {"lookup": {"words": words}, "lookup_one": {"word": np.array(b"Cherry")}}


def _train_step_module():
    import keras
    import tensorflow as tf

    class Trainer(tf.Module):
        def __init__(self):
            super().__init__()
            keras.utils.set_random_seed(11)
            self.model = keras.Sequential([keras.Input((4,)),
                                           keras.layers.Dense(8, activation="relu"),
                                           keras.layers.Dense(1)])
            self.optimizer = keras.optimizers.Adam(learning_rate=0.05)
            self.optimizer.build(self.model.trainable_variables)

        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x"),
                                      tf.TensorSpec([None, 1], tf.float32, name="y")])
        def train_step(self, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
            return {"loss": loss}

        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
        def predict(self, x):
            return {"y": self.model(x, training=False)}

    rng = np.random.default_rng(12)
    batches = [{"x": rng.standard_normal((8, 4)).astype(np.float32),
                "y": rng.standard_normal((8, 1)).astype(np.float32)} for _ in range(TRAIN_CALLS)]
    return Trainer(), batches, {"predict": {"x": batches[0]["x"]}}


def variables_by_path(root):
    """{object-graph path: value} of every variable reachable from a loaded object, paths
    formed as our loader forms them (breadth first, first path wins, '/'-joined local names)."""
    import tensorflow as tf
    out, seen, queue = {}, {id(root)}, [(root, "")]
    while queue:
        obj, path = queue.pop(0)
        for name, child in tf.train.TrackableView(obj).children(obj).items():
            if id(child) in seen:
                continue
            seen.add(id(child))
            p = f"{path}/{name}" if path else name
            if isinstance(child, tf.Variable):
                out[p] = child.numpy()
            queue.append((child, p))
    return out


def _record_train_steps(bundle, batches):
    """TRAIN_CALLS calls of train_step on one fresh load: the inputs, the loss of each call and
    every variable after it."""
    import tensorflow as tf
    data = bundle + ".data"
    os.makedirs(data, exist_ok=True)
    loaded = tf.saved_model.load(bundle)
    calls = []
    for k, feed in enumerate(batches):
        out = loaded.signatures["train_step"](**{n: tf.constant(v) for n, v in feed.items()})
        variables = variables_by_path(loaded)
        calls.append({
            "inputs": {n: recording.write_value(f"{data}/train_step.{k}.in.{n}", v)
                       for n, v in feed.items()},
            "outputs": {n: recording.write_value(f"{data}/train_step.{k}.out.{n}", v)
                        for n, v in out.items()},
            "variables": {p: recording.write_value(f"{data}/train_step.{k}.var{i}", v)
                          for i, (p, v) in enumerate(sorted(variables.items()))},
        })
    return calls


def _tf1_builder(bundle):
    """y = w * x + b with TF1 reference variables (VariableV2) restored by the saver's op."""
    import tensorflow as tf
    v1 = tf.compat.v1
    with tf.Graph().as_default() as g, v1.Session(graph=g) as sess:
        x = v1.placeholder(tf.float32, [None], name="x")
        w = v1.Variable(0.5, name="w", use_resource=False)
        b = v1.Variable(2.0, name="b", use_resource=False)
        scale = v1.Variable([1.0, -1.0, 3.0], name="scale", use_resource=False)
        y = tf.add(w * x, b, name="y")
        z = tf.reduce_sum(tf.expand_dims(x, 1) * scale, axis=1, name="z")
        sess.run(v1.global_variables_initializer())
        sess.run([w.assign(0.75), scale.assign([2.0, 0.5, -1.0])])  # saved values != initial
        builder = v1.saved_model.Builder(bundle)
        sig = v1.saved_model.predict_signature_def({"x": x}, {"y": y, "z": z})
        builder.add_meta_graph_and_variables(sess, ["serve"],
                                             signature_def_map={"serving_default": sig},
                                             saver=v1.train.Saver())
        builder.save()
    return {"serving_default": {"x": np.array([1.0, 2.0, 5.0, -3.0], np.float32)}}


def _make_module(name):
    def make(bundle):
        import tensorflow as tf
        methods = {}
        if name == "image_ops_module":
            module, calls = _image_ops_module()
            tf.saved_model.save(module, bundle, signatures={k: getattr(module, k) for k in calls})
            feeds = calls
            methods = {k: list(v.values()) for k, v in calls.items()}
        elif name == "lookup_preprocessing":
            module, feeds = _lookup_module(bundle + ".vocab")
            tf.saved_model.save(module, bundle, signatures={"lookup": module.lookup,
                                                            "lookup_one": module.lookup_one})
            methods = {"lookup": [feeds["lookup"]["words"]]}
        elif name == "train_step":
            module, batches, feeds = _train_step_module()
            tf.saved_model.save(module, bundle, signatures={"train_step": module.train_step,
                                                            "predict": module.predict})
            TRAIN_RECORDS[name] = _record_train_steps(bundle, batches)
        elif name == "tf1_builder":
            feeds = _tf1_builder(bundle)
        return MODELS[name][0], feeds, methods
    return make


def _fixture(name):
    def make(bundle):
        import oracle
        FIXTURE_DIRS[name] = str(oracle.FIXTURES.resolve() / name)
        # TensorFlow Serving's example: x = [1, 2, 5] -> y = 0.5 x + 2 = [2.5, 3, 4.5].
        x = np.array([1.0, 2.0, 5.0], np.float32)
        return "fixture", {"serving_default": {"x": x},
                           "regress_x2_to_y3": {"inputs": x.reshape(3, 1)}}, {}
    return make


TRAIN_RECORDS = {}
FIXTURE_DIRS = {}


def _maker(name):
    if name in KERAS_MODELS:
        return _export_keras(name)
    if MODELS[name][0] == "fixture":
        return _fixture(name)
    return _make_module(name)


def _record_methods(bundle, methods):
    """Each restored method called once, positionally, on a fresh load."""
    import tensorflow as tf
    data = bundle + ".data"
    entries = {}
    for method, args in methods.items():
        loaded = tf.saved_model.load(bundle)  # kept alive while its method runs
        out = getattr(loaded, method)(*[tf.constant(a) for a in args])
        flat = [v for v in tf.nest.flatten(out)]
        entries[method] = {
            "inputs": [recording.write_value(f"{data}/{method}.arg{i}", a)
                       for i, a in enumerate(args)],
            "outputs": [recording.write_value(f"{data}/{method}.ret{i}", v)
                        for i, v in enumerate(flat)]}
    return entries


def make_all(out, names=None, log=print):
    names = list(MODELS) if not names else names
    os.makedirs(out, exist_ok=True)
    t0 = time.monotonic()
    entries = {}
    for name in names:
        maker = _maker(name)
        methods = {}

        def make(bundle, maker=maker, name=name):
            how, feeds, m = maker(bundle)
            if name in FIXTURE_DIRS:
                # Recorded from the fixture itself; data goes beside the other models.
                os.makedirs(bundle + ".data", exist_ok=True)
                if not os.path.exists(bundle):
                    os.symlink(FIXTURE_DIRS[name], bundle)
            methods.update(m)
            return how, feeds

        entry = recording.build_and_record(out, name, make, log)
        if entry["error"] is None:
            try:
                entry["methods"] = _record_methods(os.path.join(out, name), methods)
            except Exception:  # noqa: BLE001 - kept for the model's tests, like export errors
                entry["error"] = traceback.format_exc(limit=4)
            if name in TRAIN_RECORDS:
                entry["train_step_calls"] = TRAIN_RECORDS[name]
        entries[name] = entry
    return recording.write_manifest(
        out, {"models": entries, "seconds": round(time.monotonic() - t0, 1)}, __file__)


if __name__ == "__main__":
    m = make_all(sys.argv[1], sys.argv[2:])
    bad = {k: v["error"] for k, v in m["models"].items() if v["error"]}
    for k, e in bad.items():
        print(f"--- {k}\n{e}")
    print(f"{len(m['models']) - len(bad)} of {len(m['models'])} written in {m['seconds']} s")
    sys.exit(1 if bad else 0)
