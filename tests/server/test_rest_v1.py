"""TensorFlow Serving's REST API (/v1), spoken with plain HTTP (requests) and checked against
the JSON mapping TF Serving documents ("RESTful API": request and response formats)."""
import base64
import json

import numpy as np
import requests


def post(server, path, body):
    return requests.post(server.url + path, json=body, timeout=30)


def test_model_status(server):
    r = requests.get(server.url + "/v1/models/mlp", timeout=10)
    assert r.status_code == 200
    assert r.json() == {"model_version_status": [
        {"version": "1", "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}]}
    assert requests.get(server.url + "/v1/models/mlp/versions/1", timeout=10).status_code == 200
    labelled = requests.get(server.url + "/v1/models/multi/labels/stable", timeout=10)
    assert labelled.json()["model_version_status"][0]["version"] == "1"
    missing = requests.get(server.url + "/v1/models/nope", timeout=10)
    assert missing.status_code == 404 and "nope" in missing.json()["error"]


def test_metadata_is_the_signature_def_map(server):
    r = requests.get(server.url + "/v1/models/multi/metadata", timeout=10)
    assert r.status_code == 200
    body = r.json()
    assert body["model_spec"] == {"name": "multi", "signature_name": "", "version": "1"}
    sigs = body["metadata"]["signature_def"]["signature_def"]
    assert set(sigs) == {"serving_default", "double", "total"}
    a = sigs["serving_default"]["inputs"]["a"]
    assert a["dtype"] == "DT_FLOAT"
    assert [d["size"] for d in a["tensor_shape"]["dim"]] == ["-1", "3"]
    assert sigs["serving_default"]["method_name"] == "tensorflow/serving/predict"


def test_predict_row_and_columnar_mlp(server, repo):
    _, ref = repo
    x, y = ref["mlp_x"], ref["mlp_y"]
    r = post(server, "/v1/models/mlp:predict", {"instances": x.tolist()})
    assert r.status_code == 200, r.text
    got = np.array(r.json()["predictions"], np.float32)
    np.testing.assert_allclose(got, y, rtol=1e-5, atol=1e-6)
    r = post(server, "/v1/models/mlp/versions/1:predict", {"inputs": {"x": x[:2].tolist()}})
    assert r.status_code == 200
    np.testing.assert_allclose(np.array(r.json()["outputs"], np.float32), y[:2], rtol=1e-5, atol=1e-6)


def test_predict_cnn(server, repo):
    _, ref = repo
    r = post(server, "/v1/models/cnn:predict", {"instances": ref["cnn_x"].tolist()})
    assert r.status_code == 200, r.text
    np.testing.assert_allclose(np.array(r.json()["predictions"], np.float32), ref["cnn_y"],
                               rtol=1e-4, atol=1e-6)


def test_named_instances_b64_and_multiple_outputs(server):
    raw = [b"\x00\xffbin", b"text"]
    body = {"instances": [
        {"a": [1, 2, 3], "b": 10, "s": {"b64": base64.b64encode(raw[0]).decode()}},
        {"a": [4, 5, 6], "b": -3, "s": {"b64": base64.b64encode(raw[1]).decode()}}]}
    r = post(server, "/v1/models/multi:predict", body)
    assert r.status_code == 200, r.text
    preds = r.json()["predictions"]
    assert [p["n"] for p in preds] == [11, -2]
    assert preds[0]["y"] == [3, 5, 7]
    # Outputs whose name ends in _bytes come back base64-encoded (TF Serving's rule).
    assert [base64.b64decode(p["s_bytes"]["b64"]) for p in preds] == raw


def test_columnar_named_and_signature_name(server):
    r = post(server, "/v1/models/multi/labels/stable:predict",
             {"signature_name": "double", "inputs": {"a": [[1.5, 2, 3]]}})
    assert r.status_code == 200, r.text
    assert r.json() == {"outputs": [[3, 4, 6]]}
    # A single named input may also be given bare.
    r = post(server, "/v1/models/multi:predict", {"signature_name": "double", "instances": [[0, 1, 2]]})
    assert r.json() == {"predictions": [[0, 2, 4]]}


def test_half_outputs_and_bare_non_finite_numbers(server):
    # float16 and bfloat16 outputs are numbers (TF Serving writes half_val as floats); the
    # request's bare NaN / Infinity are what Python's json.dumps writes.
    body = '{"signature_name": "total", "inputs": {"a": [[1.5, -3, NaN], [Infinity, 0.1, 2]]}}'
    r = requests.post(server.url + "/v1/models/multi:predict", data=body, timeout=30)
    assert r.status_code == 200, r.text
    out = json.loads(r.text)["outputs"]
    assert out["half"][0][:2] == [1.5, -3] and out["bf16"][0][:2] == [1.5, -3]
    assert np.isnan(out["half"][0][2]) and out["half"][1][0] == float("inf")
    assert np.float16(out["half"][1][1]) == np.float16(0.1)  # printed as its float32
    assert out["sum"][0] == float("inf") and np.isnan(out["sum"][2])


def test_errors_are_4xx_with_a_message(server):
    cases = [
        ("/v1/models/nope:predict", {"instances": [[1]]}, 404),
        ("/v1/models/mlp:predict", {"signature_name": "nope", "instances": [[1]]}, 400),
        ("/v1/models/mlp/versions/9:predict", {"instances": [[1]]}, 404),
        ("/v1/models/mlp:predict", {"instances": [[1, 2]]}, 400),
        ("/v1/models/multi:predict", {"instances": [{"a": [1, 2, 3], "b": 1.5, "s": "x"}]}, 400),
        ("/v1/models/multi:predict", {"instances": [{"a": [1, 2, 3]}]}, 400),
        ("/v1/models/mlp:frobnicate", {"instances": [[1]]}, 400),
    ]
    for path, body, code in cases:
        r = post(server, path, body)
        assert r.status_code == code, (path, body, r.text)
        assert r.json()["error"], (path, body)


def _estimator_reference(root, examples, signature):
    """TF's outputs of the estimator bundle on the tf.Examples the JSON rows describe."""
    import tensorflow as tf
    protos = []
    for row in examples:
        ex = tf.train.Example()
        ex.features.feature["x"].float_list.value.extend(row["x"])
        if "kind" in row:
            ex.features.feature["kind"].bytes_list.value.append(row["kind"].encode())
        protos.append(ex.SerializeToString())
    fn = tf.saved_model.load(str(root / "estimator" / "1")).signatures[signature]
    return {k: v.numpy() for k, v in fn(inputs=tf.constant(protos)).items()}


def test_classify_and_regress_parse_examples(server, repo):
    """An Estimator-style bundle parses the examples itself (ParseExampleV2): the scores and
    values are TF's for the same examples."""
    rows = [{"x": [0.5, -1.25, 2.5], "kind": "b"}, {"x": [1.5, 0.25, -0.5]}]
    r = post(server, "/v1/models/estimator:classify", {"examples": rows})
    assert r.status_code == 200, r.text
    want = _estimator_reference(repo[0], rows, "classify")
    for row, scores in zip(r.json()["results"], want["scores"]):
        assert [c for c, _ in row] == ["neg", "pos"]
        np.testing.assert_allclose([s for _, s in row], scores, rtol=1e-5)
    r = post(server, "/v1/models/estimator:regress",
             {"signature_name": "regress", "examples": rows})
    assert r.status_code == 200, r.text
    np.testing.assert_allclose(r.json()["results"],
                               _estimator_reference(repo[0], rows, "regress")["outputs"],
                               rtol=1e-5)
    # A record without the required feature: TF's parse error, not a crash.
    r = post(server, "/v1/models/estimator:classify", {"examples": [{"kind": "a"}]})
    assert r.status_code == 400 and "x" in r.json()["error"], r.text


def test_classify_and_regress(server):
    import tensorflow as tf
    body = {"signature_name": "classify", "context": {"lang": "en"},
            "examples": [{"id": 7, "tag": "a"}, {"id": [1, 2], "tag": "b"}]}
    r = post(server, "/v1/models/examples:classify", body)
    assert r.status_code == 200, r.text
    result = r.json()["results"]
    assert len(result) == 2
    for row, want in zip(result, body["examples"]):
        (label, score), = row
        assert score == 0.25
        ex = tf.train.Example.FromString(label.encode("latin-1"))
        feats = ex.features.feature
        assert feats["lang"].bytes_list.value == [b"en"]
        ids = want["id"] if isinstance(want["id"], list) else [want["id"]]
        assert list(feats["id"].int64_list.value) == ids
        assert feats["tag"].bytes_list.value == [want["tag"].encode()]
    r = post(server, "/v1/models/examples:regress",
             {"signature_name": "regress", "examples": [{"x": 1.5}, {"x": 2.5}, {"x": 0.0}]})
    assert r.status_code == 200, r.text
    assert r.json() == {"results": [3, 3, 3]}
    # A signature that does not answer the API is refused before it runs (TF Serving's default
    # checks outputs, not method_name: native TF2 models write the predict method for all).
    r = post(server, "/v1/models/examples:regress", {"examples": [{"x": 1.0}]})
    assert r.status_code == 400 and "no 'outputs' output" in r.json()["error"], r.text


def test_tfx_predict_b64_examples(server, tfx_reference):
    """A TFX-style export (make_tfx) through :predict, as TFX's serving examples call it:
    serialized tf.Examples as {"b64": ...} instances, and columnar for the transform_features
    signature; the predictions and transformed features are TF's for the same examples."""
    from conftest import TFX_CONTEXT, TFX_ROWS, tfx_example
    protos = [tfx_example(r, TFX_CONTEXT).SerializeToString() for r in TFX_ROWS]
    b64 = [{"b64": base64.b64encode(p).decode()} for p in protos]
    r = post(server, "/v1/models/tfx:predict", {"instances": b64})
    assert r.status_code == 200, r.text
    want = tfx_reference("serving_default", protos)
    preds = r.json()["predictions"]
    for k, w in want.items():
        np.testing.assert_allclose([p[k] for p in preds], w, rtol=1e-5, atol=1e-6, err_msg=k)
    r = post(server, "/v1/models/tfx:predict",
             {"signature_name": "transform_features", "inputs": {"examples": b64}})
    assert r.status_code == 200, r.text
    got = r.json()["outputs"]
    want = tfx_reference("transform_features", protos)
    assert set(got) == set(want)
    for k, w in want.items():
        np.testing.assert_allclose(got[k], w, rtol=1e-5, atol=1e-6, err_msg=k)


def test_tfx_classify_and_regress_json_examples(server, tfx_reference):
    """The TFX-style export's classify and regress signatures with JSON examples (a b64 bytes
    feature, a context, a missing optional feature, out-of-vocabulary strings): the server
    builds the tf.Examples TF Serving builds, and the labels, scores and values are TF's for
    them."""
    from conftest import TFX_CONTEXT, TFX_ROWS, tfx_example
    protos = [tfx_example(r, TFX_CONTEXT).SerializeToString() for r in TFX_ROWS]
    body = {"signature_name": "classify", "context": TFX_CONTEXT, "examples": TFX_ROWS}
    r = post(server, "/v1/models/tfx:classify", body)
    assert r.status_code == 200, r.text
    want = tfx_reference("classify", protos)
    result = r.json()["results"]
    assert len(result) == len(TFX_ROWS)
    for row, labels, scores in zip(result, want["classes"], want["scores"]):
        assert [c.encode() for c, _ in row] == list(labels)
        np.testing.assert_allclose([s for _, s in row], scores, rtol=1e-5)
    r = post(server, "/v1/models/tfx:regress", {**body, "signature_name": "regress"})
    assert r.status_code == 200, r.text
    np.testing.assert_allclose(r.json()["results"], tfx_reference("regress", protos)["outputs"],
                               rtol=1e-5, atol=1e-6)


def test_tfx_malformed_examples(server, tfx_reference):
    """Examples the TFX-style export cannot parse are 400 with the words of TF's parser for the
    same input: bytes that are no tf.Example (:predict) and a string feature where the spec
    wants a float (:classify)."""
    from conftest import tfx_example
    r = post(server, "/v1/models/tfx:predict",
             {"instances": [{"b64": base64.b64encode(b"garbage").decode()}]})
    assert r.status_code == 400, r.text
    assert tfx_reference.error("serving_default", [b"garbage"]) in r.json()["error"]
    r = post(server, "/v1/models/tfx:classify",
             {"signature_name": "classify", "examples": [{"age": 30.0}, {"age": "old"}]})
    assert r.status_code == 400, r.text
    want = tfx_reference.error("classify", [tfx_example({"age": 30.0}).SerializeToString(),
                                            tfx_example({"age": "old"}).SerializeToString()])
    assert "Key: age, Index: 1" in want and want in r.json()["error"]


def test_nan_and_inf_in_give_what_tensorflow_gives(server, repo):
    """Issue 24 #7: NaN or +Inf in an MLP's input made its fused ReLU answer 0 (so softmax gave
    0.1 everywhere); TensorFlow's kernels give NaN for those rows. The other rows are unchanged.
    Non-finite inputs are sent as TF Serving spells them, "NaN" and "Infinity"."""
    def spelled(a):
        return [spelled(v) for v in a] if isinstance(a, list) else (
            "NaN" if a != a else "Infinity" if a == float("inf") else a)
    _, ref = repo
    x, y = ref["mlp_x"].copy(), ref["mlp_y"]
    x[0, 3] = np.nan
    x[1, 5] = np.inf
    r = post(server, "/v1/models/mlp:predict", {"instances": spelled(x.tolist())})
    assert r.status_code == 200, r.text
    got = np.array(r.json()["predictions"], np.float32)
    assert np.isnan(got[:2]).all(), got[:2]
    np.testing.assert_allclose(got[2:], y[2:], rtol=1e-5, atol=1e-6)


def test_method_name_check_follows_the_flag(repo, tmp_path):
    """A native TF2 classifier (TF2 writes method_name predict for every signature) serves
    :classify by default, as in TF Serving, whose --enable_signature_method_name_check is off;
    with the flag, TF Serving's checks and messages: :classify needs the classify method,
    :predict any of predict/classify/regress."""
    import tensorflow as tf
    from conftest import Server

    class Native(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
        def classify(self, inputs):
            n = tf.shape(inputs)[0]
            return {"classes": tf.reshape(inputs, [-1, 1]), "scores": tf.fill([n, 1], 0.5)}

    m = Native()
    models = tmp_path / "native"
    tf.saved_model.save(m, str(models / "1"), signatures={"serving_default": m.classify})
    body = {"examples": [{"x": 1.0}]}
    for flag in (False, True):
        args = [f"--model_base_path={models}", "--model_name=native"]
        if flag:
            args.append("--enable_signature_method_name_check")
        (tmp_path / f"srv{flag}").mkdir()
        srv = Server(args, tmp_path / f"srv{flag}").wait_ready()
        try:
            r = requests.post(srv.url + "/v1/models/native:classify", json=body, timeout=30)
            if flag:
                assert r.status_code == 400, r.text
                assert r.json()["error"].startswith(
                    "Expected classification signature method_name to be "
                    "tensorflow/serving/classify. Was: tensorflow/serving/predict"), r.text
            else:
                assert r.status_code == 200, r.text
                (row,), = r.json()["results"]
                assert row[1] == 0.5
            r = requests.post(srv.url + "/v1/models/native:predict",
                              json={"instances": [{"b64": "eA=="}]}, timeout=30)
            assert r.status_code == 200, r.text
        finally:
            assert srv.stop() == 0
