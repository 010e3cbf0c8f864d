"""TensorFlow Serving's gRPC API (PredictionService), with the tensorflow-serving-api client."""
import grpc
import numpy as np
import pytest


@pytest.fixture(scope="module")
def stub(server):
    from tensorflow_serving.apis import prediction_service_pb2_grpc
    channel = grpc.insecure_channel(server.grpc_target)
    yield prediction_service_pb2_grpc.PredictionServiceStub(channel)
    channel.close()


def test_predict_mlp(stub, repo):
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2
    _, ref = repo
    req = predict_pb2.PredictRequest()
    req.model_spec.name = "mlp"
    req.model_spec.signature_name = "serving_default"
    req.inputs["x"].CopyFrom(tf.make_tensor_proto(ref["mlp_x"]))
    resp = stub.Predict(req, timeout=30)
    out = tf.make_ndarray(resp.outputs["output_0"])
    np.testing.assert_allclose(out, ref["mlp_y"], rtol=1e-5, atol=1e-6)
    assert resp.model_spec.name == "mlp" and resp.model_spec.version.value == 1
    assert resp.model_spec.signature_name == "serving_default"


def test_predict_strings_labels_and_output_filter(stub):
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2
    req = predict_pb2.PredictRequest()
    req.model_spec.name = "multi"
    req.model_spec.version_label = "stable"
    req.inputs["a"].CopyFrom(tf.make_tensor_proto(np.array([[1, 2, 3]], np.float32)))
    req.inputs["b"].CopyFrom(tf.make_tensor_proto(np.array([41], np.int64)))
    req.inputs["s"].CopyFrom(tf.make_tensor_proto(np.array([b"\x00x"], object)))
    req.output_filter.extend(["n", "s_bytes"])
    resp = stub.Predict(req, timeout=30)
    assert set(resp.outputs) == {"n", "s_bytes"}
    assert tf.make_ndarray(resp.outputs["n"]).tolist() == [42]
    assert tf.make_ndarray(resp.outputs["s_bytes"]).tolist() == [b"\x00x"]


def test_get_model_metadata(stub):
    from tensorflow_serving.apis import get_model_metadata_pb2
    req = get_model_metadata_pb2.GetModelMetadataRequest()
    req.model_spec.name = "multi"
    req.metadata_field.append("signature_def")
    resp = stub.GetModelMetadata(req, timeout=30)
    sigs = get_model_metadata_pb2.SignatureDefMap()
    resp.metadata["signature_def"].Unpack(sigs)
    assert set(sigs.signature_def) == {"serving_default", "double", "total"}
    assert sigs.signature_def["double"].inputs["a"].dtype == 1  # DT_FLOAT
    assert resp.model_spec.version.value == 1


def test_classify_and_regress(stub):
    import tensorflow as tf
    from tensorflow_serving.apis import classification_pb2, regression_pb2
    ex = tf.train.Example()
    # Labels are proto3 strings (UTF-8): this test's model echoes the serialized example as its
    # label, so the features stay ASCII-only bytes (small ints and text).
    ex.features.feature["f"].int64_list.value.extend([15, 20])
    ex.features.feature["g"].bytes_list.value.append(b"word")
    req = classification_pb2.ClassificationRequest()
    req.model_spec.name = "examples"
    req.input.example_list.examples.append(ex)
    resp = stub.Classify(req, timeout=30)
    (cls,) = resp.result.classifications[0].classes
    assert cls.score == 0.25
    assert tf.train.Example.FromString(cls.label.encode("latin-1")) == ex
    rreq = regression_pb2.RegressionRequest()
    rreq.model_spec.name = "examples"
    rreq.model_spec.signature_name = "regress"
    rreq.input.example_list.examples.extend([ex, ex])
    rresp = stub.Regress(rreq, timeout=30)
    assert [r.value for r in rresp.result.regressions] == [2.0, 2.0]


def test_classify_and_regress_parse_examples(stub, repo):
    """The Estimator-style bundle parses the examples (ParseExampleV2), through gRPC: TF's
    scores and values for the same examples, the context's features merged into each."""
    import tensorflow as tf
    from tensorflow_serving.apis import classification_pb2, regression_pb2
    rows = [[0.5, -1.25, 2.5], [1.5, 0.25, -0.5]]
    req = classification_pb2.ClassificationRequest()
    req.model_spec.name = "estimator"
    ctx = req.input.example_list_with_context.context
    ctx.features.feature["kind"].bytes_list.value.append(b"b")
    protos = []
    for x in rows:
        ex = req.input.example_list_with_context.examples.add()
        ex.features.feature["x"].float_list.value.extend(x)
        full = tf.train.Example()
        full.CopyFrom(ex)
        full.features.feature["kind"].bytes_list.value.append(b"b")
        protos.append(full.SerializeToString())
    resp = stub.Classify(req, timeout=30)
    sigs = tf.saved_model.load(str(repo[0] / "estimator" / "1")).signatures
    want = sigs["classify"](inputs=tf.constant(protos))["scores"].numpy()
    for c, w in zip(resp.result.classifications, want):
        assert [x.label for x in c.classes] == ["neg", "pos"]
        np.testing.assert_allclose([x.score for x in c.classes], w, rtol=1e-5)
    rreq = regression_pb2.RegressionRequest()
    rreq.model_spec.name = "estimator"
    rreq.model_spec.signature_name = "regress"
    rreq.input.CopyFrom(req.input)
    rresp = stub.Regress(rreq, timeout=30)
    np.testing.assert_allclose([r.value for r in rresp.result.regressions],
                               sigs["regress"](inputs=tf.constant(protos))["outputs"].numpy(),
                               rtol=1e-5)


def test_multi_inference(stub, repo):
    """MultiInference (tensorflow-serving-api's client): the Estimator-style bundle's classify and
    regress signatures over one input, each result equal to its own API's; TF Serving's errors
    for an empty request, two models, a signature asked twice and another method."""
    from tensorflow_serving.apis import classification_pb2, inference_pb2, regression_pb2
    req = inference_pb2.MultiInferenceRequest()
    for sig, method in (("classify", "tensorflow/serving/classify"),
                        ("regress", "tensorflow/serving/regress")):
        task = req.tasks.add()
        task.model_spec.name = "estimator"
        task.model_spec.signature_name = sig
        task.method_name = method
    for x in ([0.5, -1.25, 2.5], [1.5, 0.25, -0.5]):
        ex = req.input.example_list.examples.add()
        ex.features.feature["x"].float_list.value.extend(x)
        ex.features.feature["kind"].bytes_list.value.append(b"a")
    resp = stub.MultiInference(req, timeout=30)
    assert [r.model_spec.signature_name for r in resp.results] == ["classify", "regress"]
    assert resp.results[0].model_spec.version.value == resp.results[1].model_spec.version.value
    creq = classification_pb2.ClassificationRequest()
    creq.model_spec.name = "estimator"
    creq.input.CopyFrom(req.input)
    assert resp.results[0].classification_result == stub.Classify(creq, timeout=30).result
    rreq = regression_pb2.RegressionRequest()
    rreq.model_spec.name = "estimator"
    rreq.model_spec.signature_name = "regress"
    rreq.input.CopyFrom(req.input)
    assert resp.results[1].regression_result == stub.Regress(rreq, timeout=30).result

    def error_of(r):
        with pytest.raises(grpc.RpcError) as e:
            stub.MultiInference(r, timeout=10)
        return e.value.code(), e.value.details()

    assert error_of(inference_pb2.MultiInferenceRequest()) == (
        grpc.StatusCode.INVALID_ARGUMENT, "Found no tasks in MultiInferenceRequest.")
    two = inference_pb2.MultiInferenceRequest()
    two.CopyFrom(req)
    two.tasks[1].model_spec.name = "examples"
    assert error_of(two) == (grpc.StatusCode.INVALID_ARGUMENT, "All ModelSpecs in a "
                             "MultiInferenceRequest must access the same model name.")
    twice = inference_pb2.MultiInferenceRequest()
    twice.CopyFrom(req)
    twice.tasks[1].model_spec.signature_name = "classify"
    assert error_of(twice) == (grpc.StatusCode.INVALID_ARGUMENT,
                               "Duplicate evaluation of signature: classify")
    other = inference_pb2.MultiInferenceRequest()
    other.CopyFrom(req)
    other.tasks[1].method_name = "tensorflow/serving/predict"
    assert error_of(other)[0] == grpc.StatusCode.UNIMPLEMENTED


def test_tfx_predict_parses_and_transforms(stub, tfx_reference):
    """A TFX-style export (make_tfx) through Predict: serialized tf.Examples in (`examples`),
    parsed, transformed (z-scores, vocabulary with OOV buckets, buckets, a hashed string, a
    VarLen feature filled in) and scored; the model's outputs and the transformed features
    (the transform_features signature) are TF's for the same examples."""
    import tensorflow as tf
    from conftest import TFX_CONTEXT, TFX_ROWS, tfx_example
    from tensorflow_serving.apis import predict_pb2
    protos = [tfx_example(r, TFX_CONTEXT).SerializeToString() for r in TFX_ROWS]
    for signature in ("serving_default", "transform_features"):
        req = predict_pb2.PredictRequest()
        req.model_spec.name = "tfx"
        req.model_spec.signature_name = signature
        req.inputs["examples"].CopyFrom(tf.make_tensor_proto(protos, dtype=tf.string))
        resp = stub.Predict(req, timeout=30)
        want = tfx_reference(signature, protos)
        assert set(resp.outputs) == set(want)
        for k, w in want.items():
            got = tf.make_ndarray(resp.outputs[k])
            assert got.dtype == w.dtype and got.shape == w.shape, k
            np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6, err_msg=k)


def test_tfx_classify_regress_and_multi_inference(stub, tfx_reference):
    """The TFX-style export's classify and regress signatures through Classify, Regress and
    MultiInference (examples with a context, a missing optional feature, out-of-vocabulary
    strings): TF's classes, scores and values for the same examples, and each MultiInference
    result equal to its own API's."""
    from conftest import TFX_CONTEXT, TFX_ROWS, tfx_example
    from tensorflow_serving.apis import classification_pb2, inference_pb2, regression_pb2
    protos = [tfx_example(r, TFX_CONTEXT).SerializeToString() for r in TFX_ROWS]
    creq = classification_pb2.ClassificationRequest()
    creq.model_spec.name = "tfx"
    creq.model_spec.signature_name = "classify"
    inp = creq.input.example_list_with_context
    inp.context.CopyFrom(tfx_example(TFX_CONTEXT))
    for r in TFX_ROWS:
        inp.examples.add().CopyFrom(tfx_example(r))
    cresp = stub.Classify(creq, timeout=30)
    want = tfx_reference("classify", protos)
    assert len(cresp.result.classifications) == len(TFX_ROWS)
    for c, labels, scores in zip(cresp.result.classifications, want["classes"], want["scores"]):
        assert [x.label.encode() for x in c.classes] == list(labels)
        np.testing.assert_allclose([x.score for x in c.classes], scores, rtol=1e-5)
    rreq = regression_pb2.RegressionRequest()
    rreq.model_spec.name = "tfx"
    rreq.model_spec.signature_name = "regress"
    rreq.input.CopyFrom(creq.input)
    rresp = stub.Regress(rreq, timeout=30)
    np.testing.assert_allclose([r.value for r in rresp.result.regressions],
                               tfx_reference("regress", protos)["outputs"], rtol=1e-5, atol=1e-6)
    mreq = inference_pb2.MultiInferenceRequest()
    mreq.input.CopyFrom(creq.input)
    for sig, method in (("classify", "tensorflow/serving/classify"),
                        ("regress", "tensorflow/serving/regress")):
        task = mreq.tasks.add()
        task.model_spec.name = "tfx"
        task.model_spec.signature_name = sig
        task.method_name = method
    mresp = stub.MultiInference(mreq, timeout=30)
    assert mresp.results[0].classification_result == cresp.result
    assert mresp.results[1].regression_result == rresp.result
    # serving_default is a predict signature: Classify refuses it, as TF Serving does.
    creq.model_spec.signature_name = ""
    with pytest.raises(grpc.RpcError) as e:
        stub.Classify(creq, timeout=10)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_tfx_malformed_examples(stub, tfx_reference):
    """Examples the TFX-style export cannot parse: bytes that are no tf.Example (Predict) and a
    string where the feature spec wants a float (Classify) are INVALID_ARGUMENT with the words
    of TF's parser for the same input."""
    import tensorflow as tf
    from conftest import tfx_example
    from tensorflow_serving.apis import classification_pb2, predict_pb2
    req = predict_pb2.PredictRequest()
    req.model_spec.name = "tfx"
    req.inputs["examples"].CopyFrom(tf.make_tensor_proto([b"", b"garbage"], dtype=tf.string))
    with pytest.raises(grpc.RpcError) as e:
        stub.Predict(req, timeout=10)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    want = tfx_reference.error("serving_default", [b"", b"garbage"])
    assert want == "Could not parse example input, value: 'garbage'"
    assert want in e.value.details()
    creq = classification_pb2.ClassificationRequest()
    creq.model_spec.name = "tfx"
    creq.model_spec.signature_name = "classify"
    bad = tfx_example({"age": "old"})
    creq.input.example_list.examples.append(bad)
    with pytest.raises(grpc.RpcError) as e:
        stub.Classify(creq, timeout=10)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    want = tfx_reference.error("classify", [bad.SerializeToString()])
    assert "Key: age" in want and want in e.value.details()


def test_grpc_errors(stub):
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2
    req = predict_pb2.PredictRequest()
    req.model_spec.name = "nope"
    with pytest.raises(grpc.RpcError) as e:
        stub.Predict(req, timeout=10)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    req.model_spec.name = "mlp"
    req.inputs["x"].CopyFrom(tf.make_tensor_proto(np.zeros((1, 3), np.float32)))
    with pytest.raises(grpc.RpcError) as e:
        stub.Predict(req, timeout=10)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # A declared shape of 2^62 elements with one value: refused before allocation.
    t = tf.make_tensor_proto(np.zeros((1,), np.float32))
    t.tensor_shape.dim[0].size = 2 ** 62
    req.inputs["x"].CopyFrom(t)
    with pytest.raises(grpc.RpcError) as e:
        stub.Predict(req, timeout=10)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_oversized_message_bounded_and_garbage_is_invalid_argument(repo, tmp_path):
    """Finding 5: a message far over the limit is cut off once the transport holds the memory
    quota (not after 300 MiB are buffered), and bytes that are no protobuf get
    INVALID_ARGUMENT with a message instead of INTERNAL with none."""
    import threading
    import time

    from conftest import Server, write_config
    from tensorflow_serving.apis import predict_pb2
    root, _ = repo
    cfg = write_config(tmp_path / "models.config", root, ["mlp"])
    srv = Server([f"--model_config_file={cfg}", "--file_system_poll_wait_seconds=0",
                  "--rest_api_max_body_bytes=1000000", "--grpc_memory_quota_bytes=33554432"],
                 tmp_path).wait_ready()
    try:
        channel = grpc.insecure_channel(srv.grpc_target,
                                        options=[("grpc.max_send_message_length", -1)])
        predict = channel.unary_unary("/tensorflow.serving.PredictionService/Predict")
        with pytest.raises(grpc.RpcError) as e:
            predict(b"\xff\xff\xff\xff", timeout=10)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "not a valid protobuf" in e.value.details()

        req = predict_pb2.PredictRequest()
        req.model_spec.name = "mlp"
        req.inputs["x"].dtype = 1
        req.inputs["x"].tensor_content = bytes(120 << 20)
        rss0, peak, stop = srv.rss_kib(), [0], threading.Event()

        def sample():
            while not stop.is_set():
                peak[0] = max(peak[0], srv.rss_kib())
                time.sleep(0.005)

        t = threading.Thread(target=sample)
        t.start()
        try:
            with pytest.raises(grpc.RpcError) as e:
                predict(req.SerializeToString(), timeout=60)
        finally:
            stop.set()
            t.join()
        assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert (peak[0] - rss0) < 80 * 1024, f"the server grew {(peak[0] - rss0) >> 10} MiB"
        # and the server still answers
        ok = predict_pb2.PredictRequest()
        ok.model_spec.name = "mlp"
        ok.inputs["x"].dtype = 1
        ok.inputs["x"].tensor_shape.dim.add().size = 1
        ok.inputs["x"].tensor_shape.dim.add().size = 784
        ok.inputs["x"].tensor_content = bytes(784 * 4)
        from tensorflow_serving.apis import prediction_service_pb2_grpc
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        assert "output_0" in stub.Predict(ok, timeout=30).outputs
        channel.close()
    finally:
        assert srv.stop() == 0


def test_model_service_get_model_status(server):
    # What TF Serving's clients poll for readiness: ModelService.GetModelStatus, by name, by
    # version and by label; an unknown model is NOT_FOUND.
    from tensorflow_serving.apis import get_model_status_pb2, model_service_pb2_grpc
    with grpc.insecure_channel(server.grpc_target) as channel:
        models = model_service_pb2_grpc.ModelServiceStub(channel)
        req = get_model_status_pb2.GetModelStatusRequest()
        req.model_spec.name = "mlp"
        resp = models.GetModelStatus(req, timeout=30)
        assert len(resp.model_version_status) == 1
        status = resp.model_version_status[0]
        assert status.version == 1
        assert status.state == get_model_status_pb2.ModelVersionStatus.AVAILABLE
        assert status.status.error_code == 0 and status.status.error_message == ""
        req.model_spec.name = "multi"
        req.model_spec.version_label = "stable"
        assert models.GetModelStatus(req, timeout=30).model_version_status[0].version == 1
        req = get_model_status_pb2.GetModelStatusRequest()
        req.model_spec.name = "nope"
        with pytest.raises(grpc.RpcError) as err:
            models.GetModelStatus(req, timeout=30)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
