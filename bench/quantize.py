#!/usr/bin/env python3
"""Size, accuracy and speed of quantized bundles (issue 25, `savedmodel-cli quantize`).

    KILN_BUILD_DIR=build .venv-oracle/bin/python bench/quantize.py [--epochs 3] [--threads 1]

Trains three classifiers with Keras on real handwritten digits (scripts/fetch-mnist.sh: 4 000
training and 1 000 test images of MNIST, from a PyPI wheel): the seed CNN (two convolutions and
a dense head), a MobileNetV2-style net (inverted residual blocks, depthwise convolutions) and a
small transformer classifier (patch embedding, two attention blocks). Each is exported
(model.export), then quantized in every mode (`int8` calibrated on 256 training digits). For
each bundle, in the same run:

- size: bytes of the bundle against the float bundle's;
- top-1 accuracy on the 1 000 test digits, computed by kiln (`savedmodel-cli run`), and the drop
  against the float bundle's accuracy computed the same way;
- TensorFlow's accuracy on the quantized bundle (it must load and run it);
- speed: `savedmodel-cli bench` p50 at batch 1 and batch 64 as a ratio to the float bundle's
  (the two measured alternately three times; the median ratio). Below 1: faster.

With `--ort`, ONNX Runtime's own int8 as a peer (issue 25's goal: kiln's int8 at least 1.2x
ONNX Runtime's): each float bundle converted by tf2onnx, quantized by
`onnxruntime.quantization.quantize_static` (QDQ, per-channel int8 weights, uint8 activations,
min/max calibration on the same 256 digits), its top-1 on the test digits and its p50 at batch 1
and 64 (in-process `InferenceSession.run`, intra-op threads = --threads) against kiln's int8
bundle's `savedmodel-cli bench` p50, measured alternately three times (the median ratio).

Prints Markdown tables. Figures depend on the machine: say on which CPU when quoting them.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("KILN_BUILD_DIR", ROOT / "build"))
CLI = BUILD / "tools" / "savedmodel-cli"
MODES = ["weights_int8", "int8", "float16", "bfloat16"]


def digits():
    out = ROOT / "out" / "data" / "mnist-5k"
    subprocess.run(["bash", str(ROOT / "scripts" / "fetch-mnist.sh"), str(out)], check=True)
    return [np.load(out / f) for f in ("train_x.npy", "train_y.npy", "test_x.npy", "test_y.npy")]


def seed_cnn(keras):
    inp = keras.Input((28, 28, 1), name="image")
    x = keras.layers.Conv2D(32, 3, activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    return keras.Model(inp, keras.layers.Dense(10)(x))


def mobilenet_v2_style(keras):
    L = keras.layers
    inp = keras.Input((28, 28, 1), name="image")
    x = L.Conv2D(32, 3, strides=2, padding="same", use_bias=False)(inp)
    x = L.ReLU(6.0)(L.BatchNormalization(momentum=0.9)(x))
    for filters, stride in [(32, 1), (64, 2), (64, 1), (128, 2)]:
        y = L.Conv2D(x.shape[-1] * 4, 1, use_bias=False)(x)
        y = L.ReLU(6.0)(L.BatchNormalization(momentum=0.9)(y))
        y = L.DepthwiseConv2D(3, strides=stride, padding="same", use_bias=False)(y)
        y = L.ReLU(6.0)(L.BatchNormalization(momentum=0.9)(y))
        y = L.BatchNormalization(momentum=0.9)(L.Conv2D(filters, 1, use_bias=False)(y))
        x = L.Add()([x, y]) if stride == 1 and x.shape[-1] == filters else y
    x = L.GlobalAveragePooling2D()(L.ReLU(6.0)(L.Conv2D(256, 1)(x)))
    return keras.Model(inp, L.Dense(10)(x))


def transformer(keras):
    L = keras.layers
    inp = keras.Input((28, 28, 1), name="image")
    x = L.Reshape((49, 16))(L.Conv2D(16, 4, strides=4)(inp))  # 7x7 patches of 4x4
    x = L.Dense(128)(x)
    for _ in range(2):
        a = L.MultiHeadAttention(4, 32)(x, x)
        x = L.LayerNormalization()(x + a)
        f = L.Dense(128)(L.Dense(256, activation="gelu")(x))
        x = L.LayerNormalization()(x + f)
    x = L.GlobalAveragePooling1D()(x)
    return keras.Model(inp, L.Dense(10)(x))


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True, **kw)


def kiln_accuracy(d, x_file, y):
    with tempfile.TemporaryDirectory() as out:
        run([CLI, "run", "--dir", d, "--tag_set", "serve", "--signature_def", "serving_default",
             "--inputs", f"image={x_file}", "--outdir", out])
        (logits,) = [np.load(p) for p in Path(out).glob("*.npy")]
    return float((logits.argmax(1) == y).mean())


def tf_accuracy(d, x, y):
    import tensorflow as tf
    sig = tf.saved_model.load(str(d)).signatures["serving_default"]
    (logits,) = sig(image=tf.constant(x)).values()
    return float((logits.numpy().argmax(1) == y).mean())


def p50_us(d, batch, threads, runs):
    out = run([CLI, "bench", "--dir", d, "--batch", batch, "--threads", threads, "--runs", runs,
               "--warmup", 5, "--json"]).stdout
    return json.loads(out)["p50_us"]


def ort_int8(base, calib_x, out):
    """tf2onnx's conversion of the float bundle, quantized by ONNX Runtime (static, QDQ)."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    import onnxruntime as ort
    onnx_float, onnx_int8 = out / "float.onnx", out / "int8.onnx"
    run([sys.executable, "-m", "tf2onnx.convert", "--saved-model", base, "--signature_def",
         "serving_default", "--output", onnx_float])
    name = ort.InferenceSession(str(onnx_float),
                                providers=["CPUExecutionProvider"]).get_inputs()[0].name

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.batches = iter([{name: calib_x[i:i + 32]} for i in range(0, len(calib_x), 32)])

        def get_next(self):
            return next(self.batches, None)

    quantize_static(str(onnx_float), str(onnx_int8), Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
    return onnx_int8, name


def ort_session(model, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])


def ort_p50_us(session, name, x, runs):
    import time
    for _ in range(5):
        session.run(None, {name: x})
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        session.run(None, {name: x})
        times.append((time.perf_counter() - t0) * 1e6)
    return sorted(times)[len(times) // 2]


def size(d):
    return sum(p.stat().st_size for p in Path(d).rglob("*") if p.is_file())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--out", default=str(ROOT / "bench" / ".cache" / "quantize"))
    ap.add_argument("--models", default="seed_cnn,mobilenet_v2_style,transformer")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--ort", action="store_true", help="ONNX Runtime's int8 as a peer")
    args = ap.parse_args()
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    import tensorflow as tf
    keras = tf.keras
    train_x, train_y, test_x, test_y = digits()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    x_file = out / "test_x.npy"
    np.save(x_file, test_x.astype(np.float32))
    calib = out / "calib_x.npy"
    np.save(calib, train_x[:256].astype(np.float32))
    peers = []
    print("| model | bundle | size | kiln top-1 | drop (points) | TF top-1 | p50 b1 | p50 b64 |")
    print("|---|---|---|---|---|---|---|---|")
    for name, make in [("seed_cnn", seed_cnn), ("mobilenet_v2_style", mobilenet_v2_style),
                       ("transformer", transformer)]:
        if name not in args.models.split(","):
            continue
        keras.utils.set_random_seed(25)
        model = make(keras)
        model.compile(optimizer="adam",
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        model.fit(train_x, train_y, epochs=args.epochs, batch_size=64, verbose=0)
        base = out / name / "float32"
        if base.exists():
            import shutil
            shutil.rmtree(base)
        model.export(str(base), verbose=False)
        bundles = [("float32", base)]
        for mode in args.modes.split(","):
            q = out / name / mode
            more = ["--calibration", f"image={calib}"] if mode == "int8" else []
            run([CLI, "quantize", "--dir", base, "--output_dir", q, "--mode", mode, "--overwrite",
                 *more])
            bundles.append((mode, q))
        ref_acc = kiln_accuracy(base, x_file, test_y)
        for mode, d in bundles:
            acc = kiln_accuracy(d, x_file, test_y)
            ratios = []
            for batch, runs in ((1, args.runs), (64, max(5, args.runs // 5))):
                # The float bundle and this one alternately, three times: the median ratio.
                r = [p50_us(d, batch, args.threads, runs) / p50_us(base, batch, args.threads, runs)
                     for _ in range(3)]
                ratios.append(sorted(r)[1])
            print(f"| {name} | {mode} | {size(d) / size(base):.3f}x | {acc * 100:.1f} % | "
                  f"{(ref_acc - acc) * 100:+.1f} | {tf_accuracy(d, test_x, test_y) * 100:.1f} % | "
                  f"{ratios[0]:.2f}x | {ratios[1]:.2f}x |", flush=True)
        if args.ort and "int8" in args.modes.split(","):
            try:
                model_int8, name_in = ort_int8(base, np.load(calib), out / name)
                session = ort_session(model_int8, args.threads)
                (logits,) = session.run(None, {name_in: test_x.astype(np.float32)})
                row = [name, float((logits.argmax(1) == test_y).mean())]
                for batch, runs in ((1, args.runs), (64, max(5, args.runs // 5))):
                    x = test_x[:batch].astype(np.float32)
                    r = [ort_p50_us(session, name_in, x, runs) /
                         p50_us(out / name / "int8", batch, args.threads, runs) for _ in range(3)]
                    row.append(sorted(r)[1])
                peers.append(row)
            except Exception as e:  # noqa: BLE001 (a peer that cannot run is reported)
                peers.append([name, str(e).splitlines()[0][:120]])
    if peers:
        print()
        print("| model | ONNX Runtime int8 top-1 | ORT / kiln int8 b1 | ORT / kiln int8 b64 |")
        print("|---|---|---|---|")
        for row in peers:
            if len(row) == 2:
                print(f"| {row[0]} | n/a: {row[1]} | | |")
            else:
                print(f"| {row[0]} | {row[1] * 100:.1f} % | {row[2]:.2f}x | {row[3]:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
