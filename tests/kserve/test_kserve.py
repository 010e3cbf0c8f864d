"""savedmodel-server proved with KServe's own tools (issue 24): the `kserve` SDK's REST (V1 and
V2, JSON and the binary tensor extension) and gRPC clients, and a schema-driven fuzz of the REST
V2 API with schemathesis against open_inference_rest.yaml, the Open Inference Protocol as its
documentation states it: no answer may be a 5xx, and every answer must be a documented one in
its documented schema."""
import asyncio
import pathlib

import numpy as np
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from kserve import (InferenceGRPCClient, InferenceRESTClient, InferInput, InferRequest,
                    RESTConfig)
from schemathesis.specs.openapi.checks import positive_data_acceptance

SPEC = pathlib.Path(__file__).with_name("open_inference_rest.yaml")


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_rest_v2_client(mlp, binary):
    srv, x, y = mlp

    async def go():
        client = InferenceRESTClient(RESTConfig(protocol="v2", retries=0, timeout=30))
        try:
            assert await client.is_server_live(srv.url)
            assert await client.is_server_ready(srv.url)
            assert await client.is_model_ready(srv.url, "mlp")
            assert not await client.is_model_ready(srv.url, "no-such-model")
            inp = InferInput("x", list(x.shape), "FP32")
            inp.set_data_from_numpy(x, binary_data=binary)
            req = InferRequest(model_name="mlp", infer_inputs=[inp], request_id="r-1")
            resp = await client.infer(srv.url, req, model_name="mlp")
            assert resp.id == "r-1" and resp.model_name == "mlp"
            return resp.outputs[0].as_numpy()
        finally:
            await client.close()

    np.testing.assert_allclose(run(go()), y, rtol=1e-5, atol=1e-6)


def test_rest_v1_client(mlp):
    srv, x, y = mlp

    async def go():
        client = InferenceRESTClient(RESTConfig(protocol="v1", retries=0, timeout=30))
        try:
            return await client.infer(srv.url, {"instances": x.tolist()}, model_name="mlp")
        finally:
            await client.close()

    np.testing.assert_allclose(np.array(run(go())["predictions"], np.float32), y, rtol=1e-5,
                               atol=1e-6)


def test_rest_client_errors(mlp):
    import httpx
    srv, x, _ = mlp

    async def go(model, data):
        client = InferenceRESTClient(RESTConfig(protocol="v2", retries=0, timeout=30))
        try:
            inp = InferInput("x", list(data.shape), "FP32")
            inp.set_data_from_numpy(data, binary_data=False)
            await client.infer(srv.url, InferRequest(model_name=model, infer_inputs=[inp]),
                               model_name=model)
        finally:
            await client.close()

    with pytest.raises(httpx.HTTPStatusError) as e:
        run(go("no-such-model", x))
    assert e.value.response.status_code == 404
    with pytest.raises(httpx.HTTPStatusError) as e:
        run(go("mlp", x[:, :10]))  # 10 features where the signature takes 784
    assert e.value.response.status_code == 400
    assert "784" in e.value.response.json()["error"]


def test_grpc_client(mlp):
    import grpc
    srv, x, y = mlp

    async def go():
        client = InferenceGRPCClient(srv.grpc_target, timeout=30, retries=0)
        try:
            assert await client.is_server_live()
            assert await client.is_server_ready()
            assert await client.is_model_ready("mlp")
            inp = InferInput("x", list(x.shape), "FP32")
            inp.set_data_from_numpy(x)
            resp = await client.infer(InferRequest(model_name="mlp", infer_inputs=[inp]))
            out = resp.outputs[0].as_numpy()
            with pytest.raises(grpc.aio.AioRpcError) as e:
                await client.infer(InferRequest(model_name="no-such-model", infer_inputs=[inp]))
            assert e.value.code() == grpc.StatusCode.NOT_FOUND
            return out
        finally:
            await client.close()

    np.testing.assert_allclose(run(go()), y, rtol=1e-5, atol=1e-6)


def _schema(srv, parameters=None):
    s = schemathesis.openapi.from_path(str(SPEC))
    s.config.update(base_url=srv.url, parameters=parameters)
    return s


@pytest.fixture(scope="session")
def any_model_schema(mlp):
    return _schema(mlp[0])


@pytest.fixture(scope="session")
def served_model_schema(mlp):
    # The served model and version: generated requests reach its signature's decoding.
    return _schema(mlp[0], {"model_name": "mlp", "model_version": "1"})


FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))
any_model = schemathesis.pytest.from_fixture("any_model_schema")
served_model = schemathesis.pytest.from_fixture("served_model_schema")


# Every default check (no 5xx; a documented status code, content type, headers and schema;
# 405 for methods the document does not list; schema-violating requests refused with 4xx)
# but one: a schema-valid inference request still fails when it does not fit the model's
# signature (an input name or shape the model does not have), which the protocol answers 400.
CHECKS = {"excluded_checks": [positive_data_acceptance], "timeout": 30}


@any_model.parametrize()
@FUZZ
def test_open_inference_protocol_fuzz(case):
    case.call_and_validate(**CHECKS)


@served_model.parametrize()
@FUZZ
def test_open_inference_protocol_fuzz_served_model(case):
    case.call_and_validate(**CHECKS)
