"""KServe V2 / Open Inference Protocol over REST and gRPC, with tritonclient (HTTP and gRPC)."""
import numpy as np
import pytest
import requests


@pytest.fixture(scope="module")
def http(server):
    import tritonclient.http as httpclient
    c = httpclient.InferenceServerClient(url=f"127.0.0.1:{server.rest_port}")
    yield c
    c.close()


@pytest.fixture(scope="module")
def grpcc(server):
    import tritonclient.grpc as grpcclient
    c = grpcclient.InferenceServerClient(url=server.grpc_target)
    yield c
    c.close()


def test_health_and_metadata(http, grpcc):
    for c in (http, grpcc):
        assert c.is_server_live()
        assert c.is_server_ready()
        assert c.is_model_ready("mlp")
        assert c.is_model_ready("mlp", "1")
        assert not c.is_model_ready("mlp", "7")
        assert not c.is_model_ready("nope")
    meta = http.get_server_metadata()
    assert meta["name"] == "kiln" and "binary_tensor_data" in meta["extensions"]
    m = http.get_model_metadata("multi")
    assert m["versions"] == ["1"]
    assert {i["name"]: (i["datatype"], i["shape"]) for i in m["inputs"]} == {
        "a": ("FP32", [-1, 3]), "b": ("INT64", [-1]), "s": ("BYTES", [-1])}
    g = grpcc.get_model_metadata("multi", as_json=True)
    assert sorted(o["name"] for o in g["outputs"]) == ["n", "s_bytes", "y"]


@pytest.mark.parametrize("binary", [True, False])
def test_http_infer_mlp(http, repo, binary):
    import tritonclient.http as httpclient
    _, ref = repo
    x = ref["mlp_x"]
    inp = httpclient.InferInput("x", list(x.shape), "FP32")
    inp.set_data_from_numpy(x, binary_data=binary)
    out = httpclient.InferRequestedOutput("output_0", binary_data=binary)
    r = http.infer("mlp", [inp], outputs=[out], request_id="r1")
    np.testing.assert_allclose(r.as_numpy("output_0"), ref["mlp_y"], rtol=1e-5, atol=1e-6)
    resp = r.get_response()
    assert resp["model_name"] == "mlp" and resp["model_version"] == "1" and resp["id"] == "r1"


def test_http_infer_all_outputs_and_bytes(http):
    import tritonclient.http as httpclient
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([5, -6], np.int64)
    s = np.array([b"\x00\x01raw", b"txt"], dtype=object)
    inputs = []
    for name, v, dt in (("a", a, "FP32"), ("b", b, "INT64"), ("s", s, "BYTES")):
        i = httpclient.InferInput(name, list(v.shape), dt)
        i.set_data_from_numpy(v)
        inputs.append(i)
    r = http.infer("multi", inputs)  # no outputs named: all, binary
    np.testing.assert_array_equal(r.as_numpy("y"), a * 2 + 1)
    np.testing.assert_array_equal(r.as_numpy("n"), b + 1)
    assert r.as_numpy("s_bytes").tolist() == s.tolist()


def test_grpc_infer_cnn_and_multi(grpcc, repo):
    import tritonclient.grpc as grpcclient
    _, ref = repo
    x = ref["cnn_x"]
    inp = grpcclient.InferInput("x", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    r = grpcclient and grpcc.infer("cnn", [inp], outputs=[grpcclient.InferRequestedOutput("probs")])
    np.testing.assert_allclose(r.as_numpy("probs"), ref["cnn_y"], rtol=1e-4, atol=1e-6)
    s = np.array([b"a", b"\xffb"], dtype=object)
    inputs = []
    for name, v, dt in (("a", np.ones((2, 3), np.float32), "FP32"), ("b", np.array([1, 2], np.int64), "INT64"),
                        ("s", s, "BYTES")):
        i = grpcclient.InferInput(name, list(v.shape), dt)
        i.set_data_from_numpy(v)
        inputs.append(i)
    r = grpcc.infer("multi", inputs, model_version="1")
    assert r.as_numpy("n").tolist() == [2, 3]
    assert r.as_numpy("s_bytes").tolist() == s.tolist()


def test_v2_errors(http, grpcc, server):
    import tritonclient.grpc as grpcclient
    import tritonclient.http as httpclient
    from tritonclient.utils import InferenceServerException
    bad = httpclient.InferInput("x", [1, 3], "FP32")
    bad.set_data_from_numpy(np.zeros((1, 3), np.float32))
    with pytest.raises(InferenceServerException) as e:
        http.infer("mlp", [bad])
    assert "x" in str(e.value)
    with pytest.raises(InferenceServerException):
        http.infer("nope", [bad])
    g = grpcclient.InferInput("x", [1, 3], "FP32")
    g.set_data_from_numpy(np.zeros((1, 3), np.float32))
    with pytest.raises(InferenceServerException) as e:
        grpcc.infer("mlp", [g])
    assert "INVALID_ARGUMENT" in str(e.value.status())
    # The JSON error body the protocol specifies.
    r = requests.post(server.url + "/v2/models/mlp/infer",
                      json={"inputs": [{"name": "x", "shape": [2 ** 62], "datatype": "FP32", "data": [1]}]})
    assert r.status_code == 400 and "limit" in r.json()["error"]
