"""TensorFlow reads what we write: the bundles our samples export, judged by TensorFlow 2.21's
CLI, its Python loader, its re-save, tf2onnx + onnxruntime and the TFLite converter."""
import warnings

import numpy as np
import pytest
import tensorflow as tf

import oracle

BUNDLES = ["demo", "mlp"]


def tf_feed(inputs):
    return {k: tf.constant(np.load(v)) for k, v in inputs.items()}


def our_outputs(bundle, tmp_path):
    d, inputs = bundle
    return oracle.kiln_run(d, "serving_default", inputs, tmp_path / "kiln_out")


@pytest.mark.parametrize("name", BUNDLES)
def test_saved_model_cli_show_all_equals_ours(ours, name):
    d, _ = ours[name]
    oracle.assert_show_equal(oracle.kiln_show_all(d), oracle.tf_show_all(d), name)


@pytest.mark.parametrize("name", BUNDLES)
def test_saved_model_cli_run_gives_our_outputs(ours, name, tmp_path):
    d, inputs = ours[name]
    arg = ";".join(f"{k}={v}" for k, v in inputs.items())
    oracle.run([oracle.TF_CLI, "run", "--dir", d, "--tag_set", "serve", "--signature_def",
                "serving_default", "--inputs", arg, "--outdir", tmp_path / "tf_out"])
    theirs = {p.stem: np.load(p) for p in (tmp_path / "tf_out").glob("*.npy")}
    oracle.assert_outputs(our_outputs(ours[name], tmp_path), theirs, f"{name} serving_default")


@pytest.mark.parametrize("name", BUNDLES)
def test_tf_loads_without_warnings_and_signature_gives_our_outputs(ours, name, tmp_path):
    d, inputs = ours[name]
    with oracle.tf_warnings() as logged:
        loaded = tf.saved_model.load(str(d))
        out = loaded.signatures["serving_default"](**tf_feed(inputs))
    oracle.assert_no_warnings(logged, name)
    theirs = {k: v.numpy() for k, v in out.items()}
    oracle.assert_outputs(our_outputs(ours[name], tmp_path), theirs, f"{name} serving_default")


def test_demo_restored_method_after_tf_load(ours, tmp_path):
    d, inputs = ours["demo"]
    loaded = tf.saved_model.load(str(d))
    assert float(loaded.addprint(tf.constant(5.0)).numpy()) == 61.0  # x was 56 at save
    assert float(loaded.addprint(tf.constant(5.0)).numpy()) == 66.0
    (ours_61,) = oracle.kiln_call_function(d, "addprint", [inputs["a"]], tmp_path / "call")
    assert ours_61 == np.float32(61.0)


def test_mlp_restored_method_after_tf_load(ours, tmp_path):
    d, inputs = ours["mlp"]
    loaded = tf.saved_model.load(str(d))
    theirs = loaded.predict(tf.constant(np.load(inputs["x"]))).numpy()
    (ours_y,) = oracle.kiln_call_function(d, "predict", [inputs["x"]], tmp_path / "call")
    oracle.assert_same(ours_y, theirs, "mlp predict")


def _tf_variables(obj, path=(), seen=None):
    """{object-graph path: tf.Variable} by walking the loaded object's trackable children."""
    seen = set() if seen is None else seen
    found = {}
    for child_name, child in obj._trackable_children().items():
        if id(child) in seen or child_name == "signatures":
            continue
        seen.add(id(child))
        child_path = path + (child_name,)
        if isinstance(child, tf.Variable):
            found["/".join(child_path)] = child
        else:
            found.update(_tf_variables(child, child_path, seen))
    return found


@pytest.mark.parametrize("name", BUNDLES)
def test_tf_restores_our_variable_values_and_names(ours, name, tmp_path):
    from tensorflow.core.protobuf import saved_model_pb2
    d, _ = ours[name]
    proto = saved_model_pb2.SavedModel()
    proto.ParseFromString((d / "saved_model.pb").read_bytes())
    saved_names = sorted(n.variable.name for n in proto.meta_graphs[0].object_graph_def.nodes
                         if n.HasField("variable"))
    loaded = tf.saved_model.load(str(d))
    theirs = _tf_variables(loaded)
    mine = oracle.kiln_variables(d, tmp_path / "vars")
    assert sorted(theirs) == sorted(mine), f"{name}: variable paths TF {sorted(theirs)}, " \
                                           f"ours {sorted(mine)}"
    for path, v in theirs.items():
        oracle.assert_same(mine[path], v.numpy(), f"{name} variable {path}")
    assert sorted(v.name.removesuffix(":0") for v in theirs.values()) == saved_names
    if name == "demo":
        assert theirs["x"].numpy() == 56.0


@pytest.mark.parametrize("name", BUNDLES)
def test_tf_resave_runs_on_our_loader(ours, name, tmp_path):
    d, inputs = ours[name]
    resaved = tmp_path / "resaved"
    tf.saved_model.save(tf.saved_model.load(str(d)), str(resaved))
    before = our_outputs(ours[name], tmp_path)
    after = oracle.kiln_run(resaved, "serving_default", inputs, tmp_path / "after")
    oracle.assert_outputs(after, before, f"{name} re-saved by TF, serving_default")
    method = {"demo": "addprint", "mlp": "predict"}[name]
    assert method in oracle.kiln_functions(resaved)
    (y,) = oracle.kiln_call_function(resaved, method, list(inputs.values()), tmp_path / "call")
    (y0,) = oracle.kiln_call_function(d, method, list(inputs.values()), tmp_path / "call0")
    oracle.assert_same(y, y0, f"{name} re-saved by TF, {method}")


@pytest.mark.parametrize("name", BUNDLES)
def test_tf1_session_loader_runs_ours_and_saves_through_the_saver_def(ours, name, tmp_path):
    """TF1's loader restores through our SaverDef's restore function, runs serving_default
    from the main graph, and our SaverDef's save function writes a checkpoint TF can read."""
    d, inputs = ours[name]
    mine = our_outputs(ours[name], tmp_path)
    with tf.compat.v1.Session(graph=tf.Graph()) as sess:
        mg = tf.compat.v1.saved_model.loader.load(sess, ["serve"], str(d))
        # Saved before running the signature, which may assign variables (DemoModule's does).
        sd = mg.saver_def
        prefix = str(tmp_path / "ckpt")
        sess.run(sd.save_tensor_name, {sd.filename_tensor_name: prefix})
        sig = mg.signature_def["serving_default"]
        feed = {sig.inputs[k].name: np.load(v) for k, v in inputs.items()}
        fetches = {k: t.name for k, t in sig.outputs.items()}
        oracle.assert_outputs(mine, sess.run(fetches, feed), f"{name} TF1 Session")
    reader = tf.train.load_checkpoint(prefix)
    mine_vars = oracle.kiln_variables(d, tmp_path / "vars")
    for path, value in mine_vars.items():
        key = "/".join(part.replace(".", "..").replace("/", ".S") for part in path.split("/"))
        saved = reader.get_tensor(f"{key}/.ATTRIBUTES/VARIABLE_VALUE")
        oracle.assert_same(value, saved, f"{name} variable {path} saved by the SaverDef")


def test_tf2onnx_converts_mlp_and_onnxruntime_matches(ours, tmp_path):
    import onnxruntime
    d, inputs = ours["mlp"]
    onnx_path = tmp_path / "mlp.onnx"
    oracle.run([oracle.TF_CLI.parent / "python", "-m", "tf2onnx.convert", "--saved-model", d,
                "--signature_def", "serving_default", "--output", onnx_path], timeout=600)
    session = onnxruntime.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    (feed,) = session.get_inputs()
    (y,) = session.run(None, {feed.name: np.load(inputs["x"])})
    mine = our_outputs(ours["mlp"], tmp_path)["output_0"]
    np.testing.assert_allclose(mine, y, rtol=0, atol=1e-5, err_msg="mlp: onnxruntime vs ours")


def test_tflite_converts_mlp_and_interpreter_matches(ours, tmp_path):
    d, inputs = ours["mlp"]
    flatbuffer = tf.lite.TFLiteConverter.from_saved_model(str(d)).convert()
    x = np.load(inputs["x"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tf.lite.Interpreter is deprecated for LiteRT
        interpreter = tf.lite.Interpreter(model_content=flatbuffer)
    runner = interpreter.get_signature_runner("serving_default")
    y = runner(x=x)["output_0"]
    mine = our_outputs(ours["mlp"], tmp_path)["output_0"]
    np.testing.assert_allclose(mine, y, rtol=0, atol=1e-5, err_msg="mlp: TFLite vs ours")
