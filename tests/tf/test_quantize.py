"""Issue 25: `savedmodel-cli quantize` writes SavedModels that TensorFlow still runs. A Keras
CNN classifier quantized to int8 weights, float16 and bfloat16: TensorFlow loads each copy
(tf.saved_model.load, and the TF1 Session loader that TF Serving and saved_model_cli use), its
outputs stay close to the float model's, kiln gives TensorFlow's outputs on the quantized copy,
and the copy is at most 0.27x (int8) or 0.52x (half) of the float bundle. Every deployed model
(make_deployed_models.MODELS) quantized to int8 weights runs in TensorFlow and in kiln alike, or
is refused with the reason each variable stays float. A graph in quantization-aware training's
form runs on kiln's integer kernels and agrees with TensorFlow."""
import json
import os
from pathlib import Path

import numpy as np
import pytest

import make_deployed_models as g
import oracle


def _bytes(d):
    return sum(p.stat().st_size for p in Path(d).rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def cnn(tmp_path_factory):
    """A small image classifier whose weights dominate its bundle, exported by Keras."""
    import tensorflow as tf
    keras = tf.keras
    keras.utils.set_random_seed(25)
    inp = keras.Input((16, 16, 3), name="image")
    x = keras.layers.Conv2D(32, 3, activation="relu")(inp)
    x = keras.layers.DepthwiseConv2D(3, activation="relu")(x)
    x = keras.layers.Conv2D(64, 3, strides=2, activation="relu")(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(10)(x)
    model = keras.Model(inp, out)
    d = tmp_path_factory.mktemp("cnn") / "float"
    model.export(str(d), verbose=False)
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (8, 16, 16, 3)).astype(np.float32)
    return d, x


def _tf_outputs(d, x):
    import tensorflow as tf
    sig = tf.saved_model.load(str(d)).signatures["serving_default"]
    (key, value), = sig(image=tf.constant(x)).items()
    return value.numpy()


def _tf1_outputs(d, x):
    """The Session loader TF Serving uses: the main graph, the saver's restore op."""
    import tensorflow as tf
    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        mg = tf.compat.v1.saved_model.loader.load(sess, ["serve"], str(d))
        sig = mg.signature_def["serving_default"]
        (_, out), = sig.outputs.items()
        return sess.run(out.name, {sig.inputs["image"].name: x})


def _kiln_outputs(d, x, tmp):
    np.save(tmp / "x.npy", x)
    (out,) = oracle.kiln_run(d, "serving_default", {"image": tmp / "x.npy"}, tmp / "out").values()
    return out


def _has_object_graph(d):
    from tensorflow.core.protobuf import saved_model_pb2
    sm = saved_model_pb2.SavedModel()
    sm.ParseFromString((Path(d) / "saved_model.pb").read_bytes())
    return any(mg.HasField("object_graph_def") and mg.object_graph_def.nodes
               for mg in sm.meta_graphs)


def _stored_once(d):
    """The data file against the bytes of its numeric entries: Keras's export holds each
    variable twice (`variables/N` and `_all_variables/M`), the quantized copy stores equal
    values once (both keys name one offset) and TensorFlow reads it as it is."""
    import tensorflow as tf
    r = tf.train.load_checkpoint(str(Path(d) / "variables" / "variables"))
    shapes, dtypes = r.get_variable_to_shape_map(), r.get_variable_to_dtype_map()
    entries = sum(int(np.prod(shapes[k])) * dtypes[k].size for k in shapes
                  if dtypes[k] != tf.string)
    data, = (Path(d) / "variables").glob("variables.data-*")
    return data.stat().st_size / entries


def _relative(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(a))


@pytest.mark.parametrize("mode,ratio,tol", [("weights_int8", 0.27, 0.02),
                                            ("float16", 0.52, 2e-3),
                                            ("bfloat16", 0.52, 2e-2)])
def test_tensorflow_runs_the_quantized_cnn(cnn, mode, ratio, tol, tmp_path):
    d, x = cnn
    q = tmp_path / "q"
    report = tmp_path / "report.json"
    oracle.run([oracle.KILN_CLI, "quantize", "--dir", d, "--output_dir", q, "--mode", mode,
                "--report", report])
    r = json.loads(report.read_text())
    want = "int8" if mode == "weights_int8" else mode
    # The kernels of 1024 elements or more (Keras' export holds each variable twice).
    # (By shape: Keras numbers layer names per process.)
    assert {tuple(v["shape"]) for v in r["variables"] if v["stored"] == want} == \
        {(3, 3, 32, 64), (1600, 512), (512, 10)}, r["variables"]
    assert r["output_bytes"] <= ratio * r["input_bytes"], r
    assert _bytes(q) == r["output_bytes"]
    assert _stored_once(q) < 0.55

    float_out = _tf_outputs(d, x)
    theirs = _tf_outputs(q, x)
    assert _relative(float_out, theirs) < tol, f"{mode}: TF's quantized outputs drift"
    assert (float_out.argmax(1) == theirs.argmax(1)).all()
    np.testing.assert_allclose(_tf1_outputs(q, x), theirs, rtol=1e-5, atol=1e-5)
    mine = _kiln_outputs(q, x, tmp_path)
    oracle.assert_same(mine, theirs, f"{mode}: kiln on the quantized bundle")


def test_report_tells_apart_variables_that_share_a_name(tmp_path):
    """A tf.Module's variables are all named "Variable": the table shows their object paths
    (what --exclude takes), not two rows that read "Variable"."""
    import tensorflow as tf

    class Two(tf.Module):
        def __init__(self):
            self.w = tf.Variable(np.linspace(-1, 1, 2048, dtype=np.float32).reshape(64, 32))
            self.v = tf.Variable(np.linspace(1, -1, 1024, dtype=np.float32).reshape(32, 32))

        @tf.function(input_signature=[tf.TensorSpec([None, 64], tf.float32)])
        def __call__(self, x):
            return tf.matmul(tf.matmul(x, self.w), self.v)

    m = Two()
    d = tmp_path / "two"
    tf.saved_model.save(m, str(d), signatures=m.__call__)
    out = oracle.run([oracle.KILN_CLI, "quantize", "--dir", d, "--output_dir", tmp_path / "q",
                      "--mode", "weights_int8"]).stdout
    rows = [line.split()[:2] for line in out.splitlines()
            if line.startswith(("w ", "v ", "Variable "))]
    assert sorted(rows) == [["v", "(Variable)"], ["w", "(Variable)"]], out


def test_int8_calibrated_cnn_runs_in_tensorflow_and_kiln(cnn, tmp_path):
    """Static int8: int8 weights and 8-bit activations whose ranges the calibration data set.
    TensorFlow runs the FakeQuant form as it is; kiln agrees with it."""
    d, x = cnn
    q = tmp_path / "q"
    rng = np.random.default_rng(1)
    np.save(tmp_path / "calib.npy", rng.uniform(-1, 1, (32, 16, 16, 3)).astype(np.float32))
    # The calibration copy of a run killed with -9 (its PID gone) is swept by the next run.
    import subprocess
    import tempfile
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = Path(tempfile.gettempdir()) / f"kiln-calibration-{dead.pid}-1-0"
    (stale / "variables").mkdir(parents=True, exist_ok=True)
    oracle.run([oracle.KILN_CLI, "quantize", "--dir", d, "--output_dir", q, "--mode", "int8",
                "--calibration", f"image={tmp_path / 'calib.npy'}", "--report",
                tmp_path / "r.json"])
    assert not stale.exists()
    r = json.loads((tmp_path / "r.json").read_text())
    # Every product's and convolution's weight, whatever its size; no bias.
    assert {tuple(v["shape"]) for v in r["variables"] if v["stored"] == "int8"} == \
        {(3, 3, 3, 32), (3, 3, 32, 1), (3, 3, 32, 64), (1600, 512), (512, 10)}, r["variables"]
    acts = r["activations"]
    assert len(acts) == 5 and all("kept_because" not in a for a in acts), acts
    # The image is signed (symmetric range); what follows a ReLU starts at 0.
    image, = [a for a in acts if a["tensor"] == "image"]
    assert image["narrow_range"] and image["min"] == -image["max"] and image["max"] <= 1
    assert all(a["min"] == 0 and not a["narrow_range"] for a in acts if a is not image)
    assert r["output_bytes"] <= 0.27 * r["input_bytes"], r
    assert _stored_once(q) < 0.55

    float_out = _tf_outputs(d, x)
    theirs = _tf_outputs(q, x)
    assert _relative(float_out, theirs) < 0.05, "int8: TF's quantized outputs drift"
    assert (float_out.argmax(1) == theirs.argmax(1)).mean() >= 0.75
    np.testing.assert_allclose(_tf1_outputs(q, x), theirs, rtol=1e-5, atol=1e-5)
    # kiln's integer kernels round an activation to the same level as TF's FakeQuant except
    # at exact ties; the outputs agree to well under one level of the last layer.
    mine = _kiln_outputs(q, x, tmp_path)
    assert _relative(theirs, mine) < 1e-2, "int8: kiln on the quantized bundle"
    assert (mine.argmax(1) == theirs.argmax(1)).all()


def test_int8_serving_plan_stores_levels(tmp_path):
    """`savedmodel-cli compile` of an int8 bundle stores the integer products' weights as int8
    levels (scales in an attr), not as the float32 weights the load folds them into (with the
    batch norms): the plan stays well under the float weights' bytes, and outputs with and
    without it are the same bits."""
    import shutil
    import tensorflow as tf
    keras = tf.keras
    keras.utils.set_random_seed(7)
    inp = keras.Input((12, 12, 3), name="image")
    x = inp
    for filters in (128, 256):
        x = keras.layers.Conv2D(filters, 3, use_bias=False)(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.ReLU()(x)
    out = keras.layers.Dense(10)(keras.layers.GlobalAveragePooling2D()(x))
    d = tmp_path / "float"
    keras.Model(inp, out).export(str(d), verbose=False)
    rng = np.random.default_rng(2)
    np.save(tmp_path / "calib.npy", rng.uniform(-1, 1, (16, 12, 12, 3)).astype(np.float32))
    q = tmp_path / "q"
    oracle.run([oracle.KILN_CLI, "quantize", "--dir", d, "--output_dir", q, "--mode", "int8",
                "--calibration", f"image={tmp_path / 'calib.npy'}"])
    oracle.run([oracle.KILN_CLI, "compile", "--dir", q])
    float_weights = (d / "variables" / "variables.data-00000-of-00001").stat().st_size
    plan = (q / "assets.extra" / "kiln.plan").stat().st_size
    assert plan <= 0.5 * float_weights, (plan, float_weights)
    np.save(tmp_path / "x.npy", rng.uniform(-1, 1, (4, 12, 12, 3)).astype(np.float32))
    outs = []
    for use in ("require", "ignore"):
        out = tmp_path / f"out_{use}"
        oracle.run([oracle.KILN_CLI, "run", "--dir", q, "--tag_set", "serve", "--signature_def",
                    "serving_default", "--plan", use, "--inputs", f"image={tmp_path / 'x.npy'}",
                    "--outdir", out])
        outs.append({p.stem: np.load(p) for p in out.glob("*.npy")})
    assert outs[0].keys() == outs[1].keys() and outs[0]
    for k in outs[0]:
        assert outs[0][k].tobytes() == outs[1][k].tobytes(), k


@pytest.mark.parametrize("mode", ["weights_int8", "int8"])
@pytest.mark.parametrize("name", sorted(g.MODELS))
def test_deployed_models_quantized_run_in_tensorflow(deployed_models, name, mode, tmp_path):
    import tensorflow as tf
    root, manifest = deployed_models
    entry = manifest["models"][name]
    assert entry["error"] is None, entry["error"]
    d = Path(root) / entry["dir"]
    data = Path(root) / entry["data"]
    q = tmp_path / "q"
    # --min_elements 16: these test models are small; quantize nearly every weight, so that
    # every way a variable is used (loops, attention, embeddings, training) is exercised.
    # int8 calibrates on the first signature's recorded inputs.
    calibration = []
    if mode == "int8":
        spec = entry["signatures"][g.MODELS[name][1][0]]
        calibration = ["--signature_def", g.MODELS[name][1][0], "--calibration",
                       ";".join(f"{k}={data / f}" for k, f in spec["inputs"].items())]
    proc = oracle.run([oracle.KILN_CLI, "quantize", "--dir", d, "--output_dir", q, "--mode",
                       mode, "--min_elements", "16", "--report", tmp_path / "r.json",
                       *calibration], check=False)
    if proc.returncode != 0:
        # Nothing to quantize is said with each variable's reason, a TF1 bundle (variables in
        # the main graph) is refused as such; nothing is written.
        assert "has no variable to quantize" in proc.stderr or (
            "is a TF1 SavedModel" in proc.stderr and not _has_object_graph(d)), proc.stderr
        assert not q.exists()
        return
    r = json.loads((tmp_path / "r.json").read_text())
    assert any(v["stored"] == "int8" for v in r["variables"])
    loaded = tf.saved_model.load(str(q))
    for key in g.MODELS[name][1]:
        spec = entry["signatures"][key]
        feeds = {k: oracle.load_value(data / f) for k, f in spec["inputs"].items()}
        theirs = {k: v.numpy() for k, v in
                  loaded.signatures[key](**{k: tf.constant(v) for k, v in feeds.items()}).items()}
        inputs = {k: data / f for k, f in spec["inputs"].items()}
        if any(Path(f).suffix == ".str" for f in inputs.values()):
            mine = oracle.kiln_call_signature(q, key, inputs, tmp_path / f"out.{key}")
        else:
            mine = oracle.kiln_run(q, key, inputs, tmp_path / f"out.{key}")
        if mode == "int8":
            # A float difference of an ulp (kiln's fused kernels against TF's separate ops)
            # can move an activation across a rounding boundary of its 8-bit levels, and a
            # deep net carries that on: on resnet50_small's int8 bundle (random weights, 50
            # requantized layers) kiln's own float path at two ISA levels differed by 1.9 %
            # (relative, softmax output), and kiln capped at AVX2 differs from TF by 6.3 %. The
            # integer kernels themselves match TF's arithmetic to 1e-5 (op tester) and the
            # trained-like CNN above to 1e-2; here kiln and TF agree on the class.
            for k, v in theirs.items():
                v = np.asarray(v)
                if v.dtype.kind == "f" and np.linalg.norm(v) > 0:
                    m = np.asarray(mine[k])
                    assert _relative(v.astype(np.float64), m) < 0.15, \
                        f"{name} {key} {k}: kiln and TF differ on the int8 bundle"
                    if v.ndim == 2 and v.shape[1] > 1:
                        assert (v.argmax(1) == m.argmax(1)).all(), f"{name} {key} {k}: classes"
                else:
                    np.testing.assert_array_equal(np.asarray(mine[k]), v)
        else:
            oracle.assert_model_outputs(mine, theirs, f"{name} {key} quantized")
        floats = {k: oracle.load_value(data / f) for k, f in spec["outputs"].items()}
        for k, v in floats.items():
            if np.asarray(v).dtype.kind == "f" and np.linalg.norm(v) > 0:
                # int8 quantizes the activations too, from two calibration rows, in nets of
                # random weights: a looser bound (trained models: bench/quantize.py).
                bound = 0.25 if mode == "int8" else 0.1
                assert _relative(np.asarray(v, np.float64), theirs[k]) < bound, \
                    f"{name} {key} {k}: {mode} moved the output too far"


def test_quantization_aware_training_graph_runs_on_integers(tmp_path):
    """The form quantization-aware training exports (TF Model Optimization's QAT): activations
    through FakeQuantWithMinMaxVars and weights through FakeQuantWithMinMaxVarsPerChannel
    (symmetric, narrow), every range a variable. kiln runs the products on integers, chained
    where one feeds the next, and agrees with TensorFlow."""
    import tensorflow as tf
    rng = np.random.default_rng(5)

    def fq_weights(k):
        m = np.abs(k).reshape(-1, k.shape[-1]).max(0).astype(np.float32)
        return tf.Variable(k), tf.Variable(-m), tf.Variable(m)

    class Qat(tf.Module):
        def __init__(self):
            self.k1 = fq_weights(rng.normal(0, .3, (3, 3, 3, 8)).astype(np.float32))
            self.k2 = fq_weights(rng.normal(0, .2, (3, 3, 8, 16)).astype(np.float32))
            self.w3 = fq_weights(rng.normal(0, .1, (16 * 4 * 4, 10)).astype(np.float32))
            self.b = [tf.Variable(rng.normal(0, .1, n).astype(np.float32)) for n in (8, 16, 10)]
            self.ranges = [tf.Variable(v, dtype=tf.float32) for v in (1.0, 4.0, 3.0)]

        @staticmethod
        def _w(k):
            return tf.quantization.fake_quant_with_min_max_vars_per_channel(
                k[0], k[1], k[2], num_bits=8, narrow_range=True)

        def _a(self, x, i):
            return tf.quantization.fake_quant_with_min_max_vars(x, 0.0, self.ranges[i])

        @tf.function(input_signature=[tf.TensorSpec([None, 8, 8, 3], tf.float32, name="image")])
        def serve(self, image):
            x = self._a(image, 0)
            x = tf.nn.relu(tf.nn.conv2d(x, self._w(self.k1), 1, "SAME") + self.b[0])
            x = self._a(x, 1)
            x = tf.nn.relu(tf.nn.conv2d(x, self._w(self.k2), 2, "SAME") + self.b[1])
            x = self._a(tf.reshape(x, [-1, 16 * 4 * 4]), 2)
            return {"logits": tf.matmul(x, self._w(self.w3)) + self.b[2]}

    m = Qat()
    d = tmp_path / "qat"
    tf.saved_model.save(m, str(d), signatures={"serving_default": m.serve})
    x = rng.uniform(0, 1, (4, 8, 8, 3)).astype(np.float32)
    theirs = _tf_outputs(d, x)
    placement = oracle.run([oracle.KILN_CLI, "show", "--dir", d, "--tag_set", "serve",
                            "--signature_def", "serving_default", "--placement"]).stdout
    assert placement.count("_KilnInt8Conv2D") == 2 and "_KilnInt8MatMul" in placement, placement
    assert "FakeQuant" not in placement, placement
    mine = _kiln_outputs(d, x, tmp_path)
    assert _relative(theirs, mine) < 1e-2, "QAT graph: kiln against TensorFlow"
    assert (mine.argmax(1) == theirs.argmax(1)).all()


def test_keras2_batch_norm_model_freezes_what_serving_never_writes(tmp_path):
    """A tf.keras (Keras 2) SavedModel holds its training-mode call, which assigns the batch
    norm's moving averages. Variables only such functions write are frozen for a load that runs
    signatures (savedmodel-cli run/bench, the server): the batch norm folds into the Dense and a
    weights_int8 bundle's dequantization folds at load, instead of running on every call."""
    import tf_keras
    import tensorflow as tf
    tf_keras.utils.set_random_seed(7)
    inp = tf_keras.Input((64,), name="x")
    x = tf_keras.layers.Dense(32)(inp)
    out = tf_keras.layers.BatchNormalization()(x)
    model = tf_keras.Model(inp, out)
    model.compile("sgd", "mse")
    rng = np.random.default_rng(3)
    model.fit(rng.normal(size=(16, 64)), rng.normal(size=(16, 32)), epochs=1, verbose=0)
    d = tmp_path / "float"
    model.save(str(d), save_format="tf")
    q = tmp_path / "q"
    oracle.run([oracle.KILN_CLI, "quantize", "--dir", d, "--output_dir", q, "--mode",
                "weights_int8", "--min_elements", "1"])
    x = rng.normal(size=(5, 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    for bundle in (d, q):
        placement = oracle.run([oracle.KILN_CLI, "show", "--dir", bundle, "--placement"]).stdout
        assert "dequantize" not in placement and "batchnorm" not in placement, placement
        sig = tf.saved_model.load(str(bundle)).signatures["serving_default"]
        (theirs,) = sig(x=tf.constant(x)).values()
        (mine,) = oracle.kiln_run(bundle, "serving_default", {"x": tmp_path / "x.npy"},
                                  tmp_path / f"out.{bundle.name}").values()
        oracle.assert_same(mine, theirs.numpy(), f"{bundle.name}: kiln on the Keras 2 bundle")


def test_int8_squeeze_excite_convolutions_run_on_integers(tmp_path):
    """A squeeze-excite block (EfficientNet, MobileNetV3): Keras 3's Reshape to (1, 1, C) has a
    shape computed at run time (Pack(batch, 1, 1, C)); its channels come from the Pack, so the
    convolutions after it run on integers too, and agree with TensorFlow."""
    import keras
    import tensorflow as tf
    keras.utils.set_random_seed(11)
    L = keras.layers
    inp = keras.Input((8, 8, 32), name="x")
    s = L.Reshape((1, 1, 32))(L.GlobalAveragePooling2D()(inp))
    s = L.Conv2D(16, 1, activation="relu")(s)
    s = L.Conv2D(32, 1, activation="sigmoid")(s)
    out = L.Conv2D(32, 1)(L.Multiply()([inp, s]))
    d = tmp_path / "float"
    keras.Model(inp, out).export(str(d), verbose=False)
    rng = np.random.default_rng(2)
    np.save(tmp_path / "calib.npy", rng.normal(size=(16, 8, 8, 32)).astype(np.float32))
    q = tmp_path / "q"
    oracle.run([oracle.KILN_CLI, "quantize", "--dir", d, "--output_dir", q, "--mode", "int8",
                "--min_elements", "1", "--calibration", f"x={tmp_path / 'calib.npy'}"])
    placement = oracle.run([oracle.KILN_CLI, "show", "--dir", q, "--placement",
                            "--signature_def", "serving_default"]).stdout
    assert placement.count("_KilnInt8Conv2D") == 3, placement
    x = rng.normal(size=(3, 8, 8, 32)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    (theirs,) = tf.saved_model.load(str(q)).signatures["serving_default"](
        x=tf.constant(x)).values()
    (mine,) = oracle.kiln_run(q, "serving_default", {"x": tmp_path / "x.npy"},
                              tmp_path / "out").values()
    assert _relative(theirs.numpy(), mine) < 1e-2
