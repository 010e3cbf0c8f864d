"""The workloads of the peer benchmark (issue 8): each one's SavedModel, built once into the
cache dir, its ONNX conversion (tf2onnx, same SavedModel and signature), and its inputs (the
same .npy files for every engine).

A bundle is rebuilt only when its directory has no `meta.json` with the current BUILD_VERSION.
run_peers.py runs `python workloads.py prepare ...` as a subprocess: TensorFlow is imported
there, never in the harness itself, whose memory its children would otherwise inherit (Linux
carries a parent's RSS high-water mark into a forked child's getrusage ru_maxrss).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

# Bump when a builder changes, so cached bundles are rebuilt.
BUILD_VERSION = 1


@dataclass
class Workload:
    name: str
    bundle: str  # key of BUNDLES
    signature: str
    batch: int | None  # the input batch size, None when the input has no batch dim
    # Goals of issue 8 checked for this row: see report.GOALS.
    goals: list = field(default_factory=list)
    onnx: bool = True  # False: ONNX Runtime does not run it (training graphs)
    note: str = ""


# The rows of the table, in order. (numpy and TensorFlow are imported inside the builders: the
# harness reads this table without them.)
WORKLOADS = [
    Workload("scalar_add", "scalar_add", "serving_default", None, ["latency_1us", "ort_1.5"],
             note="x + y on float32 scalars (a tf.Module signature)"),
    Workload("power", "power", "serving_default", None, ["latency_1us", "ort_1.5"],
             note="100 int32 10x10 MatMuls (samples/power's bundle)"),
    Workload("mlp_b1", "mlp", "serving_default", 1, ["ort_1.2"],
             note="784-512-512-10 MLP (samples/mlp_export's bundle), batch 1"),
    Workload("mlp_b256", "mlp", "serving_default", 256, ["ort_1.2", "sgemm_85"],
             note="the same MLP, batch 256"),
    Workload("cnn_b1", "mnist_cnn", "serving_default", 1,
             ["ort_1.2", "tf_1.2", "cnn_load_10ms", "cnn_rss"],
             note="the seed's MNIST CNN (Keras, model.export), batch 1"),
    Workload("cnn_b64", "mnist_cnn", "serving_default", 64, ["ort_1.2", "tf_1.2", "cnn_rss"],
             note="the same CNN, batch 64"),
    Workload("seed_conv", "seed_conv", "serving_default", 1, ["ort_1.2", "tf_1.2"],
             note="one Conv2D(100, 3) on a 1x200x200x100 input (a tf.Module)"),
    Workload("mobilenet_v2", "mobilenet_v2", "serving_default", 1, ["ort_1.0"],
             note="MobileNetV2 alpha 1.0, 224 px, random weights, batch 1"),
    Workload("resnet50", "resnet50", "serving_default", 1, ["ort_1.0"],
             note="ResNet50, 224 px, random weights, batch 1"),
    Workload("lstm_text_b1", "lstm_text", "serving_default", 1, ["ort_1.2", "tf_1.2"],
             note="issue 22: a Keras LSTM text classifier (Embedding 20000x128, LSTM(128) over "
                  "200 tokens, Dense), batch 1"),
    Workload("lstm_text_b64", "lstm_text", "serving_default", 64, ["ort_1.2", "tf_1.2"],
             note="the same LSTM classifier, batch 64"),
    Workload("bigru_text_b1", "bigru_text", "serving_default", 1, ["ort_1.2", "tf_1.2"],
             note="issue 22: a bidirectional GRU text classifier (Embedding 20000x64 with "
                  "mask_zero, Bidirectional(GRU(64)) over 100 tokens, Dense), batch 1"),
    Workload("conv_gru_series_b32", "conv_gru_series", "serving_default", 32,
             ["ort_1.2", "tf_1.2"],
             note="issue 22: a time-series model (causal Conv1D 32, GRU(64) returning "
                  "sequences, GRU(32), Dense) over 128 steps of 8 features, batch 32"),
    Workload("bert_encoder_b1", "bert_encoder", "serving_default", 1, ["ort_1.2", "tf_1.2"],
             note="issue 22: a BERT-base-sized encoder (12 layers, hidden 768, 12 heads, FFN "
                  "3072, GELU, LayerNorm) on 128 token embeddings, batch 1"),
    Workload("bert_encoder_b8", "bert_encoder", "serving_default", 8, ["ort_1.2", "tf_1.2"],
             note="the same encoder, batch 8"),
    Workload("resnet50_mixed", "resnet50_mixed", "serving_default", 1, ["ort_1.0", "tf_1.0"],
             note="ResNet50 built under Keras's mixed_float16 policy (float16 compute, float32 "
                  "weights), batch 1: how GPU-trained models are saved"),
    Workload("resnet50_mixed_bf16", "resnet50_mixed_bf16", "serving_default", 1,
             ["ort_1.0", "tf_1.0"],
             note="ResNet50 under mixed_bfloat16 (bfloat16 compute, float32 weights), batch 1"),
    Workload("bert_encoder_mixed_b1", "bert_encoder_mixed", "serving_default", 1,
             ["ort_1.0", "tf_1.0"],
             note="the BERT-base-sized encoder under mixed_float16, batch 1"),
    Workload("efficientnet_b0", "efficientnet_b0", "serving_default", 1, ["ort_1.2", "tf_1.2"],
             note="issue 22: EfficientNetB0, 224 px, random weights, batch 1"),
    Workload("wide_deep_b64", "wide_deep", "serving_default", 64, ["ort_1.2", "tf_1.2"],
             note="issue 22: a wide-and-deep recommender (13 dense features, 26 categorical "
                  "ids: linear + embeddings into a 256-128 MLP), batch 64"),
    Workload("cnn_train_b50", "mnist_cnn_train", "train_step", 50, [], onnx=False,
             note="a training step of the MNIST CNN (GradientTape + SGD), batch 50 "
                  "(TensorFlow graph mode vs ours; ONNX Runtime does not train)"),
    Workload("cnn_train_adam_b50", "kiln_mnist_train", "train_one_step", 50, ["tf_1.0"],
             onnx=False,
             note="issue 11: the seed's CNN train step written in C++ (samples/train_mnist: "
                  "GradientTape + Adam), batch 50, the same bundle in TensorFlow and in kiln"),
]

SMOKE_WORKLOADS = [Workload("scalar_add", "scalar_add", "serving_default", None, [],
                            note="x + y on float32 scalars (smoke run)")]


# ---------------------------------------------------------------------------------------------
# Bundle builders: (bundle dir, cache dir, build dir) -> meta dict


def _scalar_add(d, cache, build):
    import tensorflow as tf

    class Add(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([], tf.float32, name="x"),
                                      tf.TensorSpec([], tf.float32, name="y")])
        def add(self, x, y):
            return x + y

    m = Add()
    tf.saved_model.save(m, str(d), signatures={"serving_default": m.add})
    return {}


def _power(d, cache, build):
    # samples/power writes <root>/power; 1 timing run is enough, we only want the bundle.
    root = cache / "power.samples"
    shutil.rmtree(root, ignore_errors=True)
    _run([build / "samples" / "power", root, "1"])
    shutil.move(str(root / "power"), str(d))
    shutil.rmtree(root, ignore_errors=True)
    return {}


def _mlp(d, cache, build):
    io = cache / "mlp.io"
    _run([build / "samples" / "mlp_export", d, io])
    return {"flops_per_example": 2 * (784 * 512 + 512 * 512 + 512 * 10)}


def mnist_cnn_model():
    """The seed's MNIST CNN (as tests/tf/make_tf_models.py builds it)."""
    import keras
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


def _keras_memory(model):
    """Weights in bytes, and the largest activation set per example: the most bytes one layer
    holds at once (its inputs plus its outputs), float32."""
    import numpy as np
    weights = sum(int(np.prod(w.shape)) * 4 for w in model.weights)
    largest = 0
    for layer in model.layers:
        ins = layer.input if isinstance(layer.input, list) else [layer.input]
        outs = layer.output if isinstance(layer.output, list) else [layer.output]
        size = sum(int(np.prod(t.shape[1:])) * 4 for t in ins + outs)
        largest = max(largest, size)
    return {"weights_bytes": weights, "activation_bytes_per_example": largest}


def _mnist_cnn(d, cache, build):
    model = mnist_cnn_model()
    model.export(str(d), format="tf_saved_model", verbose=False)
    return _keras_memory(model)


def _mnist_cnn_train(d, cache, build):
    import keras
    import tensorflow as tf

    class Trainer(tf.Module):
        def __init__(self):
            super().__init__()
            self.model = mnist_cnn_model()
            self.optimizer = keras.optimizers.SGD(learning_rate=0.01)
            self.optimizer.build(self.model.trainable_variables)

        @tf.function(input_signature=[tf.TensorSpec([None, 28, 28, 1], tf.float32, name="x"),
                                      tf.TensorSpec([None], tf.int32, name="y")])
        def train_step(self, x, y):
            with tf.GradientTape() as tape:
                probs = self.model(x, training=True)
                loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, probs))
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
            return {"loss": loss}

    m = Trainer()
    tf.saved_model.save(m, str(d), signatures={"train_step": m.train_step})
    return {}


def _kiln_mnist_train(d, cache, build):
    """Our own export of the seed's train step (samples/train_mnist, untrained, without the
    per-step print so neither engine writes to stdout in the timing loop)."""
    root = Path(__file__).resolve().parents[2]
    data = Path(cache) / "mnist-5k"
    _run(["bash", root / "scripts" / "fetch-mnist.sh", data])
    shutil.rmtree(d, ignore_errors=True)
    _run([Path(build) / "samples" / "train_mnist", data, d, "--steps", "0", "--quiet"])
    return {}


def _seed_conv(d, cache, build):
    import keras
    import tensorflow as tf
    keras.utils.set_random_seed(3)

    class Conv(tf.Module):
        def __init__(self):
            super().__init__()
            self.conv = keras.layers.Conv2D(100, 3)  # the seed's conv_layer
            self.conv.build((None, 200, 200, 100))

        @tf.function(input_signature=[tf.TensorSpec([None, 200, 200, 100], tf.float32,
                                                    name="image")])
        def conv_fn(self, image):
            return self.conv(image)

    m = Conv()
    tf.saved_model.save(m, str(d), signatures={"serving_default": m.conv_fn})
    return {"flops_per_example": 2 * 198 * 198 * 100 * 3 * 3 * 100}


def _application(ctor):
    def build_app(d, cache, build):
        import keras
        keras.utils.set_random_seed(4)
        model = getattr(keras.applications, ctor)(weights=None, input_shape=(224, 224, 3))
        model.export(str(d), format="tf_saved_model", verbose=False)
        return {}
    return build_app


def _mixed(builder, policy="mixed_float16"):
    """`builder`'s model built under a Keras mixed-precision policy."""
    def build_mixed(d, cache, build):
        import keras
        keras.mixed_precision.set_global_policy(policy)
        try:
            return builder(d, cache, build)
        finally:
            keras.mixed_precision.set_global_policy("float32")
    return build_mixed


def _lstm_text(d, cache, build):
    import keras
    keras.utils.set_random_seed(5)
    L = keras.layers
    ids = keras.Input((200,), dtype="int32", name="ids")
    x = L.Embedding(20000, 128)(ids)
    x = L.LSTM(128)(x)
    model = keras.Model(ids, L.Dense(1, activation="sigmoid")(x), name="lstm_text")
    model.export(str(d), format="tf_saved_model", verbose=False)
    return {}


def _bigru_text(d, cache, build):
    import keras
    keras.utils.set_random_seed(6)
    L = keras.layers
    ids = keras.Input((100,), dtype="int32", name="ids")
    x = L.Embedding(20000, 64, mask_zero=True)(ids)
    x = L.Bidirectional(L.GRU(64))(x)
    model = keras.Model(ids, L.Dense(1, activation="sigmoid")(x), name="bigru_text")
    model.export(str(d), format="tf_saved_model", verbose=False)
    return {}


def _conv_gru_series(d, cache, build):
    import keras
    keras.utils.set_random_seed(7)
    L = keras.layers
    series = keras.Input((128, 8), name="series")
    x = L.Conv1D(32, 3, padding="causal", activation="relu")(series)
    x = L.GRU(64, return_sequences=True)(x)
    x = L.GRU(32)(x)
    model = keras.Model(series, L.Dense(1)(x), name="conv_gru_series")
    model.export(str(d), format="tf_saved_model", verbose=False)
    return {}


def _bert_encoder(d, cache, build):
    """BERT-base's encoder stack (post-LayerNorm blocks) on token embeddings: what a text model
    runs after its embedding lookup."""
    import keras
    keras.utils.set_random_seed(6)
    L = keras.layers
    hidden, heads, ffn, layers = 768, 12, 3072, 12
    x_in = keras.Input((128, hidden), name="embeddings")
    x = x_in
    for _ in range(layers):
        att = L.MultiHeadAttention(heads, hidden // heads)(x, x)
        x = L.LayerNormalization(epsilon=1e-12)(x + att)
        h = L.Dense(ffn, activation="gelu")(x)
        x = L.LayerNormalization(epsilon=1e-12)(x + L.Dense(hidden)(h))
    model = keras.Model(x_in, x, name="bert_encoder")
    model.export(str(d), format="tf_saved_model", verbose=False)
    return {}


def _wide_deep(d, cache, build):
    import keras
    keras.utils.set_random_seed(7)
    L = keras.layers
    dense = keras.Input((13,), name="dense")
    cats = keras.Input((26,), dtype="int32", name="categorical")
    wide = L.Flatten()(L.Embedding(26 * 1000, 1)(cats))  # a linear model over one-hot ids
    deep = L.Flatten()(L.Embedding(26 * 1000, 16)(cats))
    deep = L.Concatenate()([deep, L.BatchNormalization()(dense)])
    deep = L.Dense(128, activation="relu")(L.Dense(256, activation="relu")(deep))
    logit = L.Add()([L.Dense(1)(deep), L.Dense(1)(L.Concatenate()([wide, dense]))])
    model = keras.Model([dense, cats], L.Activation("sigmoid")(logit), name="wide_deep")
    model.export(str(d), format="tf_saved_model", verbose=False)
    return {}


BUNDLES = {
    "scalar_add": _scalar_add,
    "power": _power,
    "mlp": _mlp,
    "mnist_cnn": _mnist_cnn,
    "mnist_cnn_train": _mnist_cnn_train,
    "kiln_mnist_train": _kiln_mnist_train,
    "seed_conv": _seed_conv,
    "mobilenet_v2": _application("MobileNetV2"),
    "resnet50": _application("ResNet50"),
    "efficientnet_b0": _application("EfficientNetB0"),
    "resnet50_mixed": _mixed(_application("ResNet50")),
    "resnet50_mixed_bf16": _mixed(_application("ResNet50"), "mixed_bfloat16"),
    "bert_encoder_mixed": _mixed(_bert_encoder),
    "lstm_text": _lstm_text,
    "bigru_text": _bigru_text,
    "conv_gru_series": _conv_gru_series,
    "bert_encoder": _bert_encoder,
    "wide_deep": _wide_deep,
}


def _run(cmd):
    cmd = [str(c) for c in cmd]
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return proc


def bundle(cache, build, name, log=print):
    """The bundle dir of BUNDLES[name], built if the cache has no current one; and its meta."""
    d = Path(cache) / name
    meta_path = d / "meta.json"
    if meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if meta.get("build_version") == BUILD_VERSION:
            return d, meta
    log(f"run_peers: building the {name} bundle in {d}")
    shutil.rmtree(d, ignore_errors=True)
    meta = BUNDLES[name](d, Path(cache), Path(build))
    meta["build_version"] = BUILD_VERSION
    meta_path.write_text(json.dumps(meta, indent=1))
    return d, meta


def onnx_model(cache, bundle_dir, signature, log=print):
    """The bundle's signature converted by tf2onnx (its command line, as a user runs it)."""
    out = Path(cache) / f"{Path(bundle_dir).name}.{signature}.onnx"
    stamp = Path(str(out) + ".version")
    if out.exists() and stamp.exists() and stamp.read_text() == str(BUILD_VERSION):
        return out
    log(f"run_peers: converting {bundle_dir} ({signature}) to ONNX")
    _run([sys.executable, "-m", "tf2onnx.convert", "--saved-model", bundle_dir,
          "--signature_def", signature, "--output", out])
    stamp.write_text(str(BUILD_VERSION))
    return out


def signature_inputs(bundle_dir, signature):
    """{input key: (numpy dtype, shape with None for unknown dims)} read with TensorFlow."""
    import tensorflow as tf
    fn = tf.saved_model.load(str(bundle_dir)).signatures[signature]
    return {k: (spec.dtype.as_numpy_dtype, spec.shape.as_list() if spec.shape.rank is not None
                else []) for k, spec in fn.structured_input_signature[1].items()}


def inputs(cache, workload, bundle_dir, log=print):
    """The workload's input files {key: path}: deterministic random values of the signature's
    dtypes, unknown dims = the batch (first) or 1; the MLP uses samples/mlp_export's inputs."""
    import numpy as np
    d = Path(cache) / f"{workload.name}.inputs"
    stamp = d / "version"
    if stamp.exists() and stamp.read_text() == str(BUILD_VERSION):
        return {p.stem: p for p in d.glob("*.npy")}
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    rng = np.random.default_rng(sum(map(ord, workload.name)))
    files = {}
    for key, (dtype, shape) in signature_inputs(bundle_dir, workload.signature).items():
        shape = [(workload.batch or 1) if (dim is None and i == 0) else (dim or 1)
                 for i, dim in enumerate(shape)]
        if workload.bundle == "mlp":
            value = np.load(Path(cache) / "mlp.io" / f"x_{workload.batch}.npy")
        elif np.issubdtype(dtype, np.floating):
            value = rng.uniform(-1, 1, shape).astype(dtype)
        elif workload.name in ("cnn_train_b50", "cnn_train_adam_b50"):
            value = rng.integers(0, 10, shape).astype(dtype)  # class labels
        elif workload.bundle in ("lstm_text", "bigru_text", "wide_deep"):
            value = rng.integers(0, 1000, shape).astype(dtype)  # token / category ids
        elif np.issubdtype(dtype, np.integer):
            value = rng.integers(-1, 2, shape).astype(dtype)
        else:
            raise ValueError(f"{workload.name}: no input generator for {key} ({dtype})")
        files[key] = d / f"{key}.npy"
        np.save(files[key], value)
    stamp.write_text(str(BUILD_VERSION))
    return files


def prepare(cache, build, names):
    """{workload: {"model", "meta", "onnx", "inputs"} or {"error"}} for the named workloads."""
    by_name = {w.name: w for w in WORKLOADS + SMOKE_WORKLOADS}
    out = {}

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    Path(cache).mkdir(parents=True, exist_ok=True)
    for name in names:
        w = by_name[name]
        try:
            model, meta = bundle(cache, build, w.bundle, log)
            onnx = onnx_model(cache, model, w.signature, log) if w.onnx else None
            files = inputs(cache, w, model, log)
            out[name] = {"model": str(model), "meta": meta, "onnx": onnx and str(onnx),
                         "inputs": {k: str(v) for k, v in files.items()}}
        except Exception as e:  # noqa: BLE001 - the harness reports the row as n/a
            log(traceback.format_exc(limit=3))
            out[name] = {"error": f"building the workload failed: {str(e).strip().splitlines()[-1]}"}
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="builds the peer benchmark's workloads")
    ap.add_argument("command", choices=["prepare"])
    ap.add_argument("--cache", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("workloads", nargs="+")
    a = ap.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    print(json.dumps(prepare(a.cache, a.build, a.workloads)))
