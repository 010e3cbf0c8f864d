"""Exports SavedModels with real TensorFlow for the "we read what TensorFlow writes" tests.

    python make_tf_models.py OUT_DIR

Writes OUT_DIR/<bundle>/ (the SavedModel) for every bundle in BUNDLES, and OUT_DIR/manifest.json:
for each bundle, the signatures and restored methods to run, each with its input files and the
outputs TensorFlow gives for them (computed on a fresh tf.saved_model.load of the written
bundle for every call, so stateful functions start from the saved state, as our loader does).
Inputs and outputs are .npy files, or .str files for string scalars (the raw bytes).
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402


# What make_all writes: {bundle: (signature keys, restored methods called)}. The tests
# parametrize over this before TensorFlow runs; make_all checks that it holds.
BUNDLES = {
    "demo_module": (["serving_default"], ["addprint"]),
    "keras_mlp_export": (["serve", "serving_default"], ["serve"]),
    "keras_mlp_saved": (["serving_default"], ["predict"]),
    "keras_cnn_export": (["serve", "serving_default"], ["serve"]),
    "keras_cnn_saved": (["serving_default"], ["predict"]),
    "control_flow": (["concat", "cond", "dynamic_rnn", "next_collatz", "range_loop",
                      "while_loop"],
                     ["concat", "cond", "dynamic_rnn", "next_collatz", "range_loop",
                      "while_loop"]),
}

# ---------------------------------------------------------------------------------------------
# The modules, as the seed notebooks write them.


class DemoModule(tf.Module):
    def __init__(self, init_value):
        super().__init__()
        self.x = tf.Variable(init_value)

    @tf.function(input_signature=[tf.TensorSpec(shape=[], dtype=tf.float32, name="a")])
    def addprint(self, a):
        self.x.assign_add(a)
        tf.print(self.x)
        return self.x.read_value()


class ControlFlow(tf.Module):
    """One tf.function per construct; each is also a signature of the saved module."""

    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(7)
        self.w = tf.Variable(rng.standard_normal((3, 4)).astype(np.float32) * 0.5, name="w")
        self.u = tf.Variable(rng.standard_normal((4, 4)).astype(np.float32) * 0.5, name="u")

    @tf.function(input_signature=[tf.TensorSpec([], tf.float32, name="x")])
    def cond(self, x):
        return tf.cond(x > 0.0, lambda: x * 2.0, lambda: -x - 1.0)

    @tf.function(input_signature=[tf.TensorSpec([], tf.int32, name="n")])
    def while_loop(self, n):
        _, total = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i * i), (0, 0))
        return total

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="v")])
    def range_loop(self, v):
        acc = tf.constant(0.0)
        for i in tf.range(tf.shape(v)[0]):
            acc = acc * 0.5 + v[i]
        return acc

    @tf.function(input_signature=[
        tf.TensorSpec([None, None, 3], tf.float32, name="input_data"),
        tf.TensorSpec([None, 4], tf.float32, name="initial_state"),
    ])
    def dynamic_rnn(self, input_data, initial_state):
        # The seed's dynamic_rnn: time-major TensorArray filled in a loop over tf.range.
        input_data = tf.transpose(input_data, [1, 0, 2])
        timesteps = tf.shape(input_data)[0]
        outputs = tf.TensorArray(tf.float32, size=timesteps)
        state = initial_state
        for i in tf.range(timesteps):
            state = tf.tanh(tf.matmul(input_data[i], self.w) + tf.matmul(state, self.u))
            outputs = outputs.write(i, state)
        return {"outputs": tf.transpose(outputs.stack(), [1, 0, 2]), "state": state}

    @tf.function(input_signature=[tf.TensorSpec([], tf.string, name="a"),
                                  tf.TensorSpec([], tf.string, name="b")])
    def concat(self, a, b):
        return a + b

    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32, name="x")])
    def next_collatz(self, x):
        return tf.where(x % 2 == 0, x // 2, 3 * x + 1)


def mlp():
    keras.utils.set_random_seed(1)
    return keras.Sequential([
        keras.Input(shape=(20,), name="x"),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(10, activation="softmax"),
    ], name="mlp")


def mnist_cnn():
    keras.utils.set_random_seed(2)
    return keras.Sequential([
        keras.Input(shape=(28, 28, 1), name="x"),
        keras.layers.Conv2D(32, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Conv2D(64, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Reshape((7 * 7 * 64,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(10),
        keras.layers.Softmax(),
    ], name="mnist_cnn")


def keras_saved(model, shape):
    """A Keras model saved with tf.saved_model.save, its call as serving_default and `predict`."""
    root = tf.Module()
    root.model = model
    root.predict = tf.function(lambda x: model(x, training=False),
                               input_signature=[tf.TensorSpec(shape, tf.float32, name="x")])
    return root, {"serving_default": root.predict}


# ---------------------------------------------------------------------------------------------
# Writing, running with TensorFlow, recording.


def _flatten(value):
    return [np.asarray(v.numpy() if hasattr(v, "numpy") else v) for v in tf.nest.flatten(value)]


def _write_value(path_stem, value):
    """Writes a numpy value; returns the file name."""
    value = np.asarray(value)
    if value.dtype.kind in "SO":
        assert value.shape == (), f"{path_stem}: only string scalars"
        raw = value.item()
        data = raw if isinstance(raw, bytes) else str(raw).encode()
        with open(path_stem + ".str", "wb") as f:
            f.write(data)
        return os.path.basename(path_stem) + ".str"
    np.save(path_stem + ".npy", value)
    return os.path.basename(path_stem) + ".npy"


def _record(bundle_dir, signatures=(), methods=()):
    """Runs each signature (inputs by name) and method (inputs positional) with TensorFlow on a
    fresh load of the bundle; writes inputs and TF's outputs beside the bundle."""
    data = bundle_dir + ".data"
    os.makedirs(data, exist_ok=True)
    entry = {"dir": os.path.basename(bundle_dir), "signatures": {}, "methods": {}}
    every = set(tf.saved_model.load(bundle_dir).signatures.keys())
    assert every == {k for k, _ in signatures}, f"{bundle_dir}: signatures {every} not all fed"
    for key, feed in signatures:
        loaded = tf.saved_model.load(bundle_dir)
        fn = loaded.signatures[key]
        out = fn(**{k: tf.constant(v) for k, v in feed.items()})
        files_in = {k: _write_value(f"{data}/{key}.in.{k}", v) for k, v in feed.items()}
        files_out = {k: _write_value(f"{data}/{key}.out.{k}", v.numpy()) for k, v in out.items()}
        entry["signatures"][key] = {"inputs": files_in, "outputs": files_out}
    for method, args in methods:
        loaded = tf.saved_model.load(bundle_dir)
        out = getattr(loaded, method)(*[tf.constant(a) for a in args])
        files_in = [_write_value(f"{data}/{method}.arg{i}", a) for i, a in enumerate(args)]
        files_out = [_write_value(f"{data}/{method}.ret{i}", v)
                     for i, v in enumerate(_flatten(out))]
        entry["methods"][method] = {"inputs": files_in, "outputs": files_out}
    entry["data"] = os.path.basename(data)
    return entry


def make_all(out):
    os.makedirs(out, exist_ok=True)
    manifest = {"tensorflow": tf.__version__, "keras": keras.__version__, "bundles": {}}
    rng = np.random.default_rng(123)

    def add(name, **calls):
        manifest["bundles"][name] = _record(os.path.join(out, name), **calls)

    # DemoModule after addprint(5.0) and addprint(50.0): x == 56 in the bundle.
    demo = DemoModule(1.0)
    demo.addprint(5.0)
    demo.addprint(50.0)
    tf.saved_model.save(demo, f"{out}/demo_module", signatures=demo.addprint)
    add("demo_module", signatures=[("serving_default", {"a": np.float32(5.0)})],
        methods=[("addprint", [np.float32(5.0)])])

    # Keras MLP and MNIST CNN, each with model.export and with tf.saved_model.save.
    x_mlp = rng.standard_normal((3, 20)).astype(np.float32)
    x_cnn = rng.random((2, 28, 28, 1)).astype(np.float32)
    for name, make, x in (("mlp", mlp, x_mlp), ("cnn", mnist_cnn, x_cnn)):
        model = make()
        model.export(f"{out}/keras_{name}_export", format="tf_saved_model", verbose=False)
        add(f"keras_{name}_export", methods=[("serve", [x])],
            signatures=[("serve", {"x": x}), ("serving_default", {"x": x})])
        root, sigs = keras_saved(model, [None] + list(x.shape[1:]))
        tf.saved_model.save(root, f"{out}/keras_{name}_saved", signatures=sigs)
        add(f"keras_{name}_saved", signatures=[("serving_default", {"x": x})],
            methods=[("predict", [x])])

    # Control flow, TensorArray, strings and tf.where, each a signature of one module.
    cf = ControlFlow()
    calls = {
        "cond": [np.float32(-2.5)],
        "while_loop": [np.int32(10)],
        "range_loop": [np.array([1.0, -2.0, 3.0, 0.25], np.float32)],
        "dynamic_rnn": [rng.standard_normal((2, 5, 3)).astype(np.float32),
                        np.zeros((2, 4), np.float32)],
        "concat": [np.array(b"Hello, "), np.array(b"kiln")],
        "next_collatz": [np.array([1, 2, 3, 6, 7, 27], np.int32)],
    }
    arg_names = {
        "cond": ["x"], "while_loop": ["n"], "range_loop": ["v"],
        "dynamic_rnn": ["input_data", "initial_state"], "concat": ["a", "b"],
        "next_collatz": ["x"],
    }
    tf.saved_model.save(cf, f"{out}/control_flow",
                        signatures={k: getattr(cf, k) for k in calls})
    sig_feeds = [(k, dict(zip(arg_names[k], v))) for k, v in calls.items()]
    add("control_flow", signatures=sig_feeds, methods=list(calls.items()))

    got = {k: (sorted(v["signatures"]), sorted(v["methods"]))
           for k, v in manifest["bundles"].items()}
    assert got == BUNDLES, f"make_all wrote {got}, BUNDLES says {BUNDLES}"
    with open(f"{out}/manifest.json", "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    return manifest


if __name__ == "__main__":
    m = make_all(sys.argv[1])
    print(json.dumps({k: sorted(v["signatures"]) for k, v in m["bundles"].items()}))
