"""Keras Applications with random weights: the applications below with weights=None, at
the smallest input size each accepts, exported by `model.export`; TensorFlow's outputs of the
exported bundle recorded for test_keras_applications.py.

    python make_applications.py OUT [NAME...]        (KILN_FULL_APPS=0: without the heavy ones)

Every application is built with classes=10 (a small top) and classifier_activation=None: the
test compares logits, which a softmax would squash towards 0 and 1 and so hide differences.
Inputs: a batch of 2 images, uniform in [0, 255) (the applications that include their own
preprocessing expect that range; the others get the same values).
"""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

import recording  # noqa: E402

BATCH = 2
SIGNATURE = "serving_default"

# name: (keras.applications constructor, input size in pixels (the smallest it accepts),
#        heavy: left out with KILN_FULL_APPS=0, for a quicker local run; the test command
#        runs them)
APPS = {
    "MobileNetV2": ("MobileNetV2", 32, False),
    "MobileNetV3Small": ("MobileNetV3Small", 32, False),
    "ResNet50": ("ResNet50", 32, False),
    "EfficientNetB0": ("EfficientNetB0", 32, False),
    "DenseNet121": ("DenseNet121", 32, True),
    "InceptionV3": ("InceptionV3", 75, False),
    "Xception": ("Xception", 71, False),
    "NASNetMobile": ("NASNetMobile", 32, True),
    "ConvNeXtTiny": ("ConvNeXtTiny", 32, False),
}


def full():
    return os.environ.get("KILN_FULL_APPS", "1") != "0"


def selected():
    """The applications generated and tested in this run."""
    return [n for n, (_, _, heavy) in APPS.items() if full() or not heavy]


def build(name):
    import keras
    ctor, size, _ = APPS[name]
    seed = recording.seed_of(name)
    keras.utils.set_random_seed(seed)
    model = getattr(keras.applications, ctor)(
        weights=None, input_shape=(size, size, 3), classes=10, classifier_activation=None)
    x = np.random.default_rng(seed).uniform(0, 255, (BATCH, size, size, 3)).astype(np.float32)
    return model, x


def _export(name):
    def make(bundle):
        model, x = build(name)
        model.export(bundle, format="tf_saved_model", verbose=False)
        import tensorflow as tf
        (key,) = tf.saved_model.load(bundle).signatures[SIGNATURE].structured_input_signature[1]
        return "model.export", {SIGNATURE: {key: x}}
    return make


def make_all(out, names=None, log=print):
    names = selected() if not names else names
    os.makedirs(out, exist_ok=True)
    t0 = time.monotonic()
    entries = {n: recording.build_and_record(out, n, _export(n), log) for n in names}
    return recording.write_manifest(
        out, {"models": entries, "seconds": round(time.monotonic() - t0, 1)}, __file__)


if __name__ == "__main__":
    m = make_all(sys.argv[1], sys.argv[2:])
    bad = {k: v["error"] for k, v in m["models"].items() if v["error"]}
    for k, e in bad.items():
        print(f"--- {k}\n{e}")
    print(f"{len(m['models']) - len(bad)} of {len(m['models'])} exported in {m['seconds']} s")
    sys.exit(1 if bad else 0)
