"""gRPC load on savedmodel-server with TF Serving's Python client (tensorflow-serving-api):
N threads send Predict for `seconds`, then throughput, p50/p99 and errors are printed. The
same inputs run in TensorFlow in-process (tf.saved_model.load) as the peer in the same run.

  grpc_load.py HOST:PORT MODEL BUNDLE_DIR INPUT_NPY [threads] [seconds]"""
import os
import sys
import threading
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import grpc  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc  # noqa: E402


def main():
    target, model, bundle, npy = sys.argv[1:5]
    threads = int(sys.argv[5]) if len(sys.argv) > 5 else 8
    seconds = float(sys.argv[6]) if len(sys.argv) > 6 else 20
    x = np.load(npy)
    loaded = tf.saved_model.load(bundle)
    fn = loaded.signatures["serving_default"]
    key = list(fn.structured_input_signature[1])[0]
    req = predict_pb2.PredictRequest()
    req.model_spec.name = model
    req.inputs[key].CopyFrom(tf.make_tensor_proto(x))
    channel = grpc.insecure_channel(target)
    stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
    lat, errors = [], [0]
    lock = threading.Lock()
    end = time.time() + seconds

    def worker():
        mine = []
        while time.time() < end:
            t0 = time.perf_counter()
            try:
                stub.Predict(req, timeout=30)
            except grpc.RpcError:
                with lock:
                    errors[0] += 1
                continue
            mine.append(time.perf_counter() - t0)
        with lock:
            lat.extend(mine)

    ts = [threading.Thread(target=worker) for _ in range(threads)]
    start = time.time()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.time() - start
    lat_ms = np.array(lat) * 1000
    # Peer: TensorFlow in-process, one caller, same input.
    xt = tf.constant(x)
    for _ in range(20):
        fn(**{key: xt})
    tf_lat = []
    t_end = time.time() + min(5.0, seconds)
    while time.time() < t_end:
        t0 = time.perf_counter()
        fn(**{key: xt})
        tf_lat.append(time.perf_counter() - t0)
    tf_ms = np.array(tf_lat) * 1000
    print(f"RESULT grpc model={model} batch={x.shape[0]} threads={threads} requests={len(lat)} "
          f"rps={len(lat) / wall:.1f} p50_ms={np.percentile(lat_ms, 50):.3f} "
          f"p99_ms={np.percentile(lat_ms, 99):.3f} errors={errors[0]} "
          f"tf_inprocess_p50_ms={np.percentile(tf_ms, 50):.3f} "
          f"ratio_grpc_p50_to_tf_inprocess={np.percentile(lat_ms, 50) / np.percentile(tf_ms, 50):.2f}")


if __name__ == "__main__":
    main()
