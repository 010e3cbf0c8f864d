#!/usr/bin/env python3
"""An audio front end against TensorFlow, measured in the same run: |stft| of 8 x 16000 samples
(frame 256, step 100) at fft_length 256 (radix 4), 300 (4 x 3 x 5 x 5) and 257 (a prime:
Bluestein). kiln: `savedmodel-cli bench --threads 1` p50; TF: the median of --runs calls of the
tf.function on one intra-op thread (TF_ENABLE_ONEDNN_OPTS=0). Prints a Markdown row per length.

    .venv-oracle/bin/python bench/signal_vs_tf.py [--cli build/tools/savedmodel-cli] [--runs 30]
"""
import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default="build/tools/savedmodel-cli")
    ap.add_argument("--runs", type=int, default=30)
    a = ap.parse_args()
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    x = np.random.default_rng(4).standard_normal((8, 16000)).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        np.save(tmp / "x.npy", x)
        print("| fft_length | kiln p50 (us) | TF median (us) | kiln / TF |")
        print("|---|---|---|---|")
        for n in (256, 300, 257):
            class Stft(tf.Module):
                @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32, name="x")])
                def f(self, x, n=n):
                    return {"y": tf.abs(tf.signal.stft(x, 256, 100, n))}

            m = Stft()
            d = tmp / f"stft{n}"
            tf.saved_model.save(m, str(d), signatures={"serving_default": m.f})
            out = subprocess.run([a.cli, "bench", "--dir", d, "--threads", "1", "--runs",
                                  str(a.runs), "--warmup", "3", "--json", "--inputs",
                                  f"x={tmp / 'x.npy'}"], capture_output=True, text=True,
                                 check=True).stdout
            kiln = json.loads(out.strip().splitlines()[-1])["p50_us"]
            xt = tf.constant(x)
            m.f(xt)
            times = []
            for _ in range(a.runs):
                t = time.perf_counter()
                m.f(xt)
                times.append(time.perf_counter() - t)
            theirs = float(np.median(times)) * 1e6
            print(f"| {n} | {kiln:.0f} | {theirs:.0f} | {kiln / theirs:.2f} |")


if __name__ == "__main__":
    main()
