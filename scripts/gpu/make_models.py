"""Keras models for the GPU proof (scripts/gpu-check.sh), made here with the oracle TensorFlow:
the GPU machine has no TensorFlow. Each is saved as a SavedModel with an input (.npy) and
TensorFlow's own output (.npy) beside it, so the device half compares kiln's GPU result with
TensorFlow's and with kiln's CPU result. Sizes are kept small enough to carry (the device
tool carries 64 MiB in all); the timing rows use batch sizes the device half chooses.

usage: make_models.py OUT_DIR [MODEL ...]
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
from keras import layers  # noqa: E402


def mlp():
    return keras.Sequential([
        keras.Input((784,)),
        layers.Dense(512, activation="relu"),
        layers.Dense(512, activation="relu"),
        layers.Dense(10, activation="softmax"),
    ])


def cnn():
    # The seed CNN's shape of things: SAME convolutions (stride 2 pads asymmetrically), batch
    # norm, max and average pooling, a depthwise convolution, dense head.
    x = keras.Input((32, 32, 3))
    y = layers.Conv2D(16, 3, padding="same", use_bias=False)(x)
    y = layers.BatchNormalization()(y)
    y = layers.ReLU()(y)
    y = layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(y)
    y = layers.DepthwiseConv2D(3, padding="same", activation="relu6")(y)
    y = layers.MaxPooling2D(2)(y)
    y = layers.Conv2D(32, 1, activation="relu")(y)
    y = layers.AveragePooling2D(2, padding="same")(y)
    y = layers.Flatten()(y)
    y = layers.Dense(10, activation="softmax")(y)
    return keras.Model(x, y)


def mobilenet_v2():
    return keras.applications.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35, weights=None,
                                          classes=10)


def transformer(seq, d, heads, blocks, epsilon):
    # Transformer encoder blocks over (batch, seq, d): attention, layer norm, GELU feed-forward
    # (4 d wide), mean-pooled to a 10-way head.
    x = keras.Input((seq, d))
    y = x
    for _ in range(blocks):
        a = layers.MultiHeadAttention(heads, d // heads)(y, y)
        y = layers.LayerNormalization(epsilon=epsilon)(y + a)
        f = layers.Dense(4 * d, activation="gelu")(y)
        f = layers.Dense(d)(f)
        y = layers.LayerNormalization(epsilon=epsilon)(y + f)
    y = layers.GlobalAveragePooling1D()(y)
    return keras.Model(x, layers.Dense(10)(y))


def encoder():
    # A small pair of blocks (Keras's default layer-norm epsilon).
    return transformer(seq=32, d=64, heads=4, blocks=2, epsilon=1e-3)


def unet():
    # An image-to-image net: strided convolutions down; a Conv2DTranspose (stride 2, SAME: an
    # asymmetric padding) and UpSampling2D (bilinear, then nearest) up; skips concatenated.
    x = keras.Input((32, 32, 3))
    d1 = layers.Conv2D(16, 3, padding="same", activation="relu")(x)
    d2 = layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(d1)
    d3 = layers.Conv2D(64, 3, strides=2, padding="same", activation="relu")(d2)
    u2 = layers.Conv2DTranspose(32, 3, strides=2, padding="same", activation="relu")(d3)
    u2 = layers.Concatenate()([u2, d2])
    u1 = layers.UpSampling2D(2, interpolation="bilinear")(u2)
    u1 = layers.Conv2D(16, 3, padding="same", activation="relu")(u1)
    u1 = layers.Concatenate()([u1, d1])
    y = layers.UpSampling2D(2)(u1)
    return keras.Model(x, layers.Conv2D(2, 1)(y))


def resnet50():
    return keras.applications.ResNet50(weights=None)


def bert():
    # A BERT-base-sized encoder (12 layers, width 768, 12 heads, feed-forward 3072) over
    # sequences of 128 embeddings: the embeddings' lookup is not the part a GPU is bought for.
    return transformer(seq=128, d=768, heads=12, blocks=12, epsilon=1e-12)


# name: (builder, input shape, Keras dtype policy, weights tiled to carry). Large models get
# weights that repeat a block of their own initial values, so the bundle packs small (xz) and
# its scale is still the initialiser's; timings do not depend on the values.
MODELS = {"keras_mlp": (mlp, (4, 784), "float32", False),
          "keras_cnn": (cnn, (4, 32, 32, 3), "float32", False),
          "mobilenet_v2": (mobilenet_v2, (2, 96, 96, 3), "float32", False),
          "encoder": (encoder, (2, 32, 64), "float32", False),
          "unet": (unet, (2, 32, 32, 3), "float32", False),
          "unet_fp16": (unet, (2, 32, 32, 3), "mixed_float16", False),
          "resnet50": (resnet50, (2, 224, 224, 3), "float32", True),
          "resnet50_fp16": (resnet50, (2, 224, 224, 3), "mixed_float16", True),
          "bert": (bert, (2, 128, 768), "float32", True),
          "bert_fp16": (bert, (2, 128, 768), "mixed_float16", True)}


def main():
    out = sys.argv[1]
    keras.utils.set_random_seed(7)
    only = set(sys.argv[2:])
    for name, (make, shape, policy, tiled) in MODELS.items():
        if only and name not in only:
            continue
        keras.mixed_precision.set_global_policy(policy)
        model = make()
        keras.mixed_precision.set_global_policy("float32")
        if tiled:
            for w in model.weights:
                v = w.numpy()
                w.assign(np.resize(v.ravel()[:4099], v.shape))
        # Non-trivial batch-norm statistics, so the folded epilogue is exercised.
        for layer in model.layers:
            if isinstance(layer, layers.BatchNormalization):
                g, b, m, v = layer.get_weights()
                rng = np.random.default_rng(1)
                layer.set_weights([g * 1.5, b + 0.1, m + rng.normal(0, 0.1, m.shape),
                                   v + rng.uniform(0.5, 1.5, v.shape)])
        x = np.random.default_rng(3).uniform(-1, 1, shape).astype(np.float32)
        spec = tf.TensorSpec((None,) + shape[1:], tf.float32, name="x")
        fn = tf.function(lambda t: {"y": model(t, training=False)}, input_signature=[spec])
        path = os.path.join(out, name)
        tf.saved_model.save(model, path, signatures=fn.get_concrete_function())
        np.save(os.path.join(out, name + "_x.npy"), x)
        np.save(os.path.join(out, name + "_y.npy"), fn(tf.constant(x))["y"].numpy())
        print(name, "saved")


if __name__ == "__main__":
    main()
