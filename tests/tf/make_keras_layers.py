"""Every Keras layer: one tiny model per keras.layers class that has inference
behaviour, exported by Keras 3 (`model.export`) with TensorFlow 2.21, and TensorFlow's outputs
of the exported bundle recorded for the tests (test_keras_layers.py).

    python make_keras_layers.py OUT [CASE...]

Writes OUT/<case>/ (the SavedModel), OUT/<case>.data/ (inputs and TensorFlow's outputs of the
`serving_default` signature) and OUT/manifest.json (see recording.py). CASES is the table:
case name -> the layer classes it covers, its inputs and a function that builds the model.
Variants of one class are parallel branches of one model (one output each), which keeps the
generator at one export per case. NOT_COVERED lists, with the reason, the classes no case
covers; test_keras_layer_table.py checks that every class in keras.layers is in one or the
other.

Models are tiny (batch 2, a few hundred weights); every float weight is set to deterministic
random values (so biases and BatchNorm statistics are not trivial), inputs are deterministic
per case.
"""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

import recording  # noqa: E402

BATCH = 2
SIGNATURE = "serving_default"


class In:
    """One model input: shape without the batch dim, dtype, and how to draw its values."""

    def __init__(self, shape, dtype="float32", low=-2.0, high=2.0, choices=None, zero_tail=0):
        self.shape, self.dtype, self.low, self.high = tuple(shape), dtype, low, high
        self.choices = choices  # strings, or values for an integer input
        self.zero_tail = zero_tail  # this many trailing steps of axis 1 are 0 (padding/masking)

    def sample(self, rng):
        shape = (BATCH,) + self.shape
        if self.dtype == "string":
            v = rng.choice(np.array(self.choices, dtype=object), size=shape)
            return recording.to_numpy(v)
        if self.choices is not None:
            v = rng.choice(np.array(self.choices), size=shape).astype(self.dtype)
        elif self.dtype == "bool":
            v = rng.random(shape) < 0.7
        elif self.dtype.startswith("int"):
            v = rng.integers(int(self.low), int(self.high), shape).astype(self.dtype)
        else:
            v = rng.uniform(self.low, self.high, shape).astype(self.dtype)
        if self.zero_tail:
            # Row 0 keeps every step; row 1 ends with zero_tail padding steps.
            v[1, -self.zero_tail:] = 0
        return v


class Case:
    def __init__(self, covers, inputs, build, randomize=True, note=""):
        self.covers, self.inputs, self.build = covers, inputs, build
        self.randomize, self.note = randomize, note


CASES = {}


def case(name, covers, randomize=True, note="", **inputs):
    """Registers build(**keras inputs) -> output tensor or list of them as case `name`."""
    def register(build):
        assert name not in CASES, name
        CASES[name] = Case(covers, inputs, build, randomize, note)
        return build
    return register


# Short helpers for the builders below (keras is imported lazily: the table itself is read by
# tests without starting TensorFlow).
def _L():
    import keras
    return keras.layers


def _ops():
    import keras
    return keras.ops


F = "float32"

# --------------------------------------------------------------------------------------------
# Core


@case("dense", ["Dense"], x=In((5,)), seq=In((3, 5)))
def _(x, seq):
    L = _L()
    return [L.Dense(4)(x), L.Dense(3, activation="relu", use_bias=False)(x), L.Dense(4)(seq)]


@case("einsum_dense", ["EinsumDense"], x=In((5,)), seq=In((3, 5)))
def _(x, seq):
    L = _L()
    return [L.EinsumDense("ab,bc->ac", output_shape=4, bias_axes="c")(x),
            L.EinsumDense("abc,cd->abd", output_shape=(None, 4), bias_axes="d")(seq),
            L.EinsumDense("abc,cde->abde", output_shape=(None, 2, 3), bias_axes="de")(seq)]


@case("embedding", ["Embedding"], ids=In((4,), "int32", 0, 10))
def _(ids):
    return _L().Embedding(10, 3)(ids)


@case("reversible_embedding", ["ReversibleEmbedding"], ids=In((4,), "int32", 0, 10),
      h=In((4, 3)))
def _(ids, h):
    emb = _L().ReversibleEmbedding(10, 3)
    return [emb(ids), emb(h, reverse=True)]


@case("identity", ["Identity", "InputLayer"], x=In((3,)))
def _(x):
    return _L().Identity()(x)


@case("lambda", ["Lambda"], x=In((4,)))
def _(x):
    L, ops = _L(), _ops()
    return [L.Lambda(lambda t: t * 2.0 + 1.0)(x), L.Lambda(lambda t: ops.sum(t * t, axis=-1))(x)]


@case("masking", ["Masking"], x=In((5, 3), zero_tail=2))
def _(x):
    L = _L()
    return L.LSTM(3)(L.Masking(mask_value=0.0)(x))


# --------------------------------------------------------------------------------------------
# Activations

COMMON_ACTIVATIONS = ["relu", "sigmoid", "tanh", "softmax", "softplus", "softsign", "selu",
                      "elu", "exponential", "gelu", "hard_sigmoid", "silu", "linear", "relu6",
                      "leaky_relu", "log_softmax"]
MORE_ACTIVATIONS = ["mish", "hard_silu", "hard_tanh", "hard_shrink", "soft_shrink",
                    "tanh_shrink", "celu", "glu", "log_sigmoid", "sparse_plus", "sparse_sigmoid",
                    "sparsemax", "squareplus", "threshold"]


@case("activation", ["Activation"], x=In((6,), low=-3, high=3))
def _(x):
    return [_L().Activation(a)(x) for a in COMMON_ACTIVATIONS]


@case("activation_more", ["Activation"], x=In((6,), low=-3, high=3))
def _(x):
    import keras
    out = []
    for a in MORE_ACTIVATIONS:
        if a == "threshold":
            out.append(_L().Activation(lambda t: keras.activations.threshold(t, 0.5, -1.0))(x))
        else:
            out.append(_L().Activation(a)(x))
    return out


@case("activation_layers", ["ELU", "LeakyReLU", "PReLU", "ReLU", "Softmax"],
      x=In((3, 4), low=-3, high=3), mask=In((3, 4), "bool"))
def _(x, mask):
    L = _L()
    return [L.ELU(alpha=0.5)(x), L.LeakyReLU(negative_slope=0.2)(x), L.PReLU()(x),
            L.PReLU(shared_axes=[1])(x), L.ReLU()(x), L.ReLU(max_value=1.5)(x),
            L.ReLU(negative_slope=0.1, threshold=0.5)(x), L.Softmax()(x), L.Softmax(axis=1)(x),
            L.Softmax()(x, mask=mask)]


# --------------------------------------------------------------------------------------------
# Convolutions: default data_format (channels_last); strides, dilations, padding variants.


@case("conv1d", ["Conv1D"], x=In((10, 4)))
def _(x):
    C = _L().Conv1D
    return [C(3, 3)(x), C(3, 3, strides=2, padding="same")(x),
            C(2, 3, dilation_rate=2, padding="same")(x), C(2, 2, padding="causal")(x),
            C(4, 3, groups=2, activation="relu")(x)]


@case("conv2d", ["Conv2D"], x=In((9, 9, 4)))
def _(x):
    C = _L().Conv2D
    return [C(3, 3)(x), C(3, 3, strides=2, padding="same")(x),
            C(2, 3, dilation_rate=2, padding="same")(x), C(2, (1, 3), strides=(2, 1))(x),
            C(4, 3, groups=2, activation="relu")(x)]


@case("conv3d", ["Conv3D"], x=In((6, 6, 6, 2)))
def _(x):
    C = _L().Conv3D
    return [C(2, 3)(x), C(2, 3, strides=2, padding="same")(x),
            C(2, 2, dilation_rate=2, padding="same")(x)]


@case("conv1d_transpose", ["Conv1DTranspose"], x=In((5, 3)))
def _(x):
    C = _L().Conv1DTranspose
    return [C(2, 3)(x), C(2, 3, strides=2, padding="same")(x), C(2, 3, strides=2)(x)]


# Dilated transposed convolutions have cases of their own: TensorFlow's Eigen CPU kernels refuse
# them (recording.TF_CPU_LIMITS), and the other variants must not be skipped with them.
@case("conv1d_transpose_dilated", ["Conv1DTranspose"], x=In((5, 3)))
def _(x):
    return _L().Conv1DTranspose(2, 3, dilation_rate=2, padding="same")(x)


@case("conv2d_transpose", ["Conv2DTranspose"], x=In((4, 5, 3)))
def _(x):
    C = _L().Conv2DTranspose
    return [C(2, 3)(x), C(2, 3, strides=2, padding="same")(x), C(2, 3, strides=2)(x),
            C(2, 3, strides=2, output_padding=1)(x)]


@case("conv2d_transpose_dilated", ["Conv2DTranspose"], x=In((4, 5, 3)))
def _(x):
    return _L().Conv2DTranspose(2, 3, dilation_rate=2, padding="same")(x)


@case("conv3d_transpose", ["Conv3DTranspose"], x=In((3, 3, 3, 2)))
def _(x):
    C = _L().Conv3DTranspose
    return [C(2, 3)(x), C(2, 3, strides=2, padding="same")(x), C(2, 2, strides=2)(x)]


@case("separable_conv1d", ["SeparableConv1D"], x=In((10, 4)))
def _(x):
    C = _L().SeparableConv1D
    return [C(3, 3)(x), C(3, 3, strides=2, padding="same", depth_multiplier=2)(x),
            C(2, 3, dilation_rate=2, padding="same")(x)]


@case("separable_conv2d", ["SeparableConv2D"], x=In((8, 8, 3)))
def _(x):
    C = _L().SeparableConv2D
    return [C(3, 3)(x), C(3, 3, strides=2, padding="same", depth_multiplier=2)(x),
            C(2, 3, dilation_rate=2, padding="same")(x)]


@case("depthwise_conv1d", ["DepthwiseConv1D"], x=In((10, 3)))
def _(x):
    C = _L().DepthwiseConv1D
    return [C(3)(x), C(3, strides=2, padding="same", depth_multiplier=2)(x),
            C(3, dilation_rate=2, padding="same")(x)]


@case("depthwise_conv2d", ["DepthwiseConv2D"], x=In((8, 8, 3)))
def _(x):
    C = _L().DepthwiseConv2D
    return [C(3)(x), C(3, strides=2, padding="same", depth_multiplier=2)(x),
            C(3, dilation_rate=2, padding="same")(x)]


# --------------------------------------------------------------------------------------------
# Pooling


def _pool_variants(P, x):
    return [P(2)(x), P(3, strides=2, padding="same")(x), P(3, strides=1)(x)]


@case("max_pooling1d", ["MaxPooling1D"], x=In((9, 3)))
def _(x):
    return _pool_variants(_L().MaxPooling1D, x)


@case("max_pooling2d", ["MaxPooling2D"], x=In((7, 7, 3)))
def _(x):
    return _pool_variants(_L().MaxPooling2D, x)


@case("max_pooling3d", ["MaxPooling3D"], x=In((5, 5, 5, 2)))
def _(x):
    return _pool_variants(_L().MaxPooling3D, x)


@case("average_pooling1d", ["AveragePooling1D"], x=In((9, 3)))
def _(x):
    return _pool_variants(_L().AveragePooling1D, x)


@case("average_pooling2d", ["AveragePooling2D"], x=In((7, 7, 3)))
def _(x):
    return _pool_variants(_L().AveragePooling2D, x)


@case("average_pooling3d", ["AveragePooling3D"], x=In((5, 5, 5, 2)))
def _(x):
    return _pool_variants(_L().AveragePooling3D, x)


@case("global_pooling", ["GlobalAveragePooling1D", "GlobalMaxPooling1D",
                         "GlobalAveragePooling2D", "GlobalMaxPooling2D",
                         "GlobalAveragePooling3D", "GlobalMaxPooling3D"],
      x1=In((5, 3)), x2=In((4, 4, 3)), x3=In((3, 3, 3, 2)))
def _(x1, x2, x3):
    L = _L()
    out = []
    for x, (avg, mx) in ((x1, (L.GlobalAveragePooling1D, L.GlobalMaxPooling1D)),
                         (x2, (L.GlobalAveragePooling2D, L.GlobalMaxPooling2D)),
                         (x3, (L.GlobalAveragePooling3D, L.GlobalMaxPooling3D))):
        out += [avg()(x), mx()(x), avg(keepdims=True)(x)]
    return out


@case("global_average_pooling1d_masked", ["GlobalAveragePooling1D", "Embedding"],
      ids=In((6,), "int32", 1, 10, zero_tail=2))
def _(ids):
    L = _L()
    return L.GlobalAveragePooling1D()(L.Embedding(10, 3, mask_zero=True)(ids))


@case("adaptive_pooling", ["AdaptiveAveragePooling1D", "AdaptiveMaxPooling1D",
                           "AdaptiveAveragePooling2D", "AdaptiveMaxPooling2D",
                           "AdaptiveAveragePooling3D", "AdaptiveMaxPooling3D"],
      x1=In((7, 3)), x2=In((7, 6, 2)), x3=In((5, 4, 4, 2)))
def _(x1, x2, x3):
    L = _L()
    return [L.AdaptiveAveragePooling1D(3)(x1), L.AdaptiveMaxPooling1D(3)(x1),
            L.AdaptiveAveragePooling2D((3, 2))(x2), L.AdaptiveMaxPooling2D((3, 2))(x2),
            L.AdaptiveAveragePooling3D(2)(x3), L.AdaptiveMaxPooling3D(2)(x3)]


# --------------------------------------------------------------------------------------------
# Normalization


@case("batch_normalization", ["BatchNormalization"], x=In((4, 3)), img=In((3, 3, 2)))
def _(x, img):
    B = _L().BatchNormalization
    return [B()(x), B(axis=1)(x), B(center=False, scale=False)(x), B()(img)]


@case("layer_normalization", ["LayerNormalization"], x=In((3, 4)))
def _(x):
    N = _L().LayerNormalization
    return [N()(x), N(axis=[1, 2])(x), N(center=False)(x), N(scale=False, epsilon=0.1)(x)]


@case("group_normalization", ["GroupNormalization"], x=In((3, 4)), img=In((2, 2, 6)))
def _(x, img):
    G = _L().GroupNormalization
    return [G(groups=2)(x), G(groups=3)(img), G(groups=-1)(img)]


@case("unit_normalization", ["UnitNormalization"], x=In((3, 4)))
def _(x):
    U = _L().UnitNormalization
    return [U()(x), U(axis=[1, 2])(x)]


@case("rms_normalization", ["RMSNormalization"], x=In((3, 4)))
def _(x):
    return _L().RMSNormalization()(x)


@case("spectral_normalization", ["SpectralNormalization"], x=In((4,)), img=In((5, 5, 2)))
def _(x, img):
    L = _L()
    return [L.SpectralNormalization(L.Dense(3))(x),
            L.SpectralNormalization(L.Conv2D(2, 3))(img)]


# --------------------------------------------------------------------------------------------
# Regularisation layers: identities at inference (the exported `serve` runs training=False).


@case("regularization_identity", ["Dropout", "SpatialDropout1D", "SpatialDropout2D",
                                  "SpatialDropout3D", "GaussianDropout", "GaussianNoise",
                                  "AlphaDropout", "ActivityRegularization"],
      x1=In((4, 3)), x2=In((3, 3, 2)), x3=In((2, 2, 2, 2)))
def _(x1, x2, x3):
    L = _L()
    return [L.Dropout(0.5)(x1), L.SpatialDropout1D(0.5)(x1), L.SpatialDropout2D(0.5)(x2),
            L.SpatialDropout3D(0.5)(x3), L.GaussianDropout(0.5)(x1), L.GaussianNoise(0.5)(x1),
            L.AlphaDropout(0.5)(x1), L.ActivityRegularization(l1=0.1, l2=0.1)(x1)]


# --------------------------------------------------------------------------------------------
# Attention


@case("attention", ["Attention"], q=In((3, 4)), v=In((5, 4)), k=In((5, 4)))
def _(q, v, k):
    A = _L().Attention
    out, scores = A()([q, v], return_attention_scores=True)
    return [out, scores, A(use_scale=True)([q, v, k]), A(score_mode="concat")([q, v]),
            A()([q, q], use_causal_mask=True)]


@case("additive_attention", ["AdditiveAttention"], q=In((3, 4)), v=In((5, 4)), k=In((5, 4)))
def _(q, v, k):
    A = _L().AdditiveAttention
    return [A()([q, v]), A(use_scale=False)([q, v, k])]


@case("multi_head_attention", ["MultiHeadAttention"], q=In((3, 4)), v=In((5, 4)),
      mask=In((3, 5), "bool"))
def _(q, v, mask):
    M = _L().MultiHeadAttention
    out, scores = M(num_heads=2, key_dim=3)(q, v, return_attention_scores=True)
    return [out, scores, M(num_heads=2, key_dim=2, value_dim=3)(q, q),
            M(num_heads=2, key_dim=3)(q, v, attention_mask=mask),
            M(num_heads=1, key_dim=4, use_bias=False)(q, q, use_causal_mask=True)]


@case("group_query_attention", ["GroupQueryAttention"], q=In((3, 4)), v=In((5, 4)))
def _(q, v):
    G = _L().GroupQueryAttention
    return [G(head_dim=2, num_query_heads=4, num_key_value_heads=2)(q, v),
            G(head_dim=2, num_query_heads=2, num_key_value_heads=1)(q, q, use_causal_mask=True)]


# --------------------------------------------------------------------------------------------
# Recurrent layers (stateful=False everywhere: a SavedModel signature has no state to carry).


def _rnn_variants(R, x, **kw):
    full = R(3, return_sequences=True, return_state=True, **kw)(x)
    return [R(3, **kw)(x), R(3, go_backwards=True, **kw)(x)] + list(full)


@case("simple_rnn", ["SimpleRNN"], x=In((5, 3)))
def _(x):
    return _rnn_variants(_L().SimpleRNN, x)


@case("lstm", ["LSTM"], x=In((5, 3)))
def _(x):
    return _rnn_variants(_L().LSTM, x)


@case("gru", ["GRU"], x=In((5, 3)))
def _(x):
    G = _L().GRU
    return _rnn_variants(G, x) + [G(3, reset_after=False)(x)]


@case("rnn_cells", ["RNN", "SimpleRNNCell", "LSTMCell", "GRUCell", "StackedRNNCells"],
      x=In((4, 3)))
def _(x):
    L = _L()
    return [L.RNN(L.SimpleRNNCell(3))(x), L.RNN(L.LSTMCell(3), return_sequences=True)(x),
            L.RNN(L.GRUCell(3))(x),
            L.RNN(L.StackedRNNCells([L.LSTMCell(3), L.GRUCell(2)]))(x)]


@case("bidirectional", ["Bidirectional"], x=In((4, 3)))
def _(x):
    L = _L()
    out = [L.Bidirectional(L.LSTM(2, return_sequences=True), merge_mode=m)(x)
           for m in ("concat", "sum", "mul", "ave")]
    out += list(L.Bidirectional(L.GRU(2), merge_mode=None)(x))
    out += list(L.Bidirectional(L.SimpleRNN(2, return_state=True))(x))
    return out


@case("recurrent_masked_stacked", ["Embedding", "LSTM", "GRU", "Bidirectional"],
      ids=In((6,), "int32", 1, 12, zero_tail=2))
def _(ids):
    L = _L()
    e = L.Embedding(12, 3, mask_zero=True)(ids)
    h = L.LSTM(4, return_sequences=True)(e)
    return [L.LSTM(3)(h), L.Bidirectional(L.GRU(2, return_sequences=True))(e)]


@case("conv_lstm", ["ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"],
      x1=In((3, 5, 2)), x2=In((3, 4, 4, 2)), x3=In((2, 3, 3, 3, 1)))
def _(x1, x2, x3):
    L = _L()
    return [L.ConvLSTM1D(2, 3, padding="same")(x1),
            L.ConvLSTM2D(2, 3, return_sequences=True)(x2),
            L.ConvLSTM3D(1, 2)(x3)]


@case("time_distributed", ["TimeDistributed"], x=In((3, 4)), img=In((2, 4, 4, 1)))
def _(x, img):
    L = _L()
    return [L.TimeDistributed(L.Dense(2))(x), L.TimeDistributed(L.Conv2D(2, 3))(img)]


# --------------------------------------------------------------------------------------------
# Reshaping, cropping, padding, upsampling


@case("reshaping", ["Reshape", "Flatten", "Permute", "RepeatVector"], x=In((3, 4)), v=In((4,)))
def _(x, v):
    L = _L()
    return [L.Reshape((6, 2))(x), L.Reshape((-1, 3))(x), L.Flatten()(x), L.Permute((2, 1))(x),
            L.RepeatVector(3)(v)]


@case("cropping", ["Cropping1D", "Cropping2D", "Cropping3D"],
      x1=In((6, 2)), x2=In((5, 6, 2)), x3=In((4, 4, 5, 1)))
def _(x1, x2, x3):
    L = _L()
    return [L.Cropping1D((1, 2))(x1), L.Cropping2D(((1, 0), (2, 1)))(x2),
            L.Cropping3D(((1, 1), (0, 1), (2, 0)))(x3)]


@case("zero_padding", ["ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D"],
      x1=In((3, 2)), x2=In((2, 3, 2)), x3=In((2, 2, 2, 1)))
def _(x1, x2, x3):
    L = _L()
    return [L.ZeroPadding1D((1, 2))(x1), L.ZeroPadding2D(((1, 0), (2, 1)))(x2),
            L.ZeroPadding3D(1)(x3)]


@case("upsampling", ["UpSampling1D", "UpSampling2D", "UpSampling3D"],
      x1=In((3, 2)), x2=In((3, 4, 2)), x3=In((2, 2, 2, 1)))
def _(x1, x2, x3):
    L = _L()
    return [L.UpSampling1D(2)(x1), L.UpSampling2D(2)(x2),
            L.UpSampling2D((2, 3), interpolation="bilinear")(x2), L.UpSampling3D(2)(x3)]


# --------------------------------------------------------------------------------------------
# Merging


@case("merging", ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum"],
      a=In((3, 4)), b=In((3, 4)), c=In((3, 4)))
def _(a, b, c):
    L = _L()
    return [L.Add()([a, b, c]), L.Subtract()([a, b]), L.Multiply()([a, b, c]),
            L.Average()([a, b]), L.Maximum()([a, b, c]), L.Minimum()([a, b])]


@case("concatenate_dot", ["Concatenate", "Dot"], a=In((3, 4)), b=In((3, 4)), c=In((2, 4)),
      u=In((4,)), v=In((4,)))
def _(a, b, c, u, v):
    L = _L()
    return [L.Concatenate()([a, b]), L.Concatenate(axis=1)([a, c]), L.Dot(axes=1)([u, v]),
            L.Dot(axes=(2, 2))([a, c]), L.Dot(axes=1, normalize=True)([u, v])]


# --------------------------------------------------------------------------------------------
# Preprocessing layers that export to graph ops


@case("rescaling", ["Rescaling"], x=In((3, 3, 2), low=0, high=255))
def _(x):
    R = _L().Rescaling
    return [R(1.0 / 255)(x), R(1.0 / 127.5, offset=-1.0)(x), R([0.5, 2.0])(x)]


NORMALIZATION_ADAPT = np.random.default_rng(5).uniform(-3, 5, (20, 3)).astype(np.float32)


@case("normalization", ["Normalization"], randomize=False, x=In((3,), low=-3, high=5))
def _(x):
    N = _L().Normalization
    adapted = N()
    adapted.adapt(NORMALIZATION_ADAPT)
    return [N(mean=[1.0, 2.0, -1.0], variance=[4.0, 0.25, 1.0])(x), adapted(x),
            N(mean=[1.0, 2.0, -1.0], variance=[4.0, 0.25, 1.0], invert=True)(x)]


@case("resizing", ["Resizing"], img=In((6, 8, 2)))
def _(img):
    R = _L().Resizing
    return [R(4, 5)(img), R(9, 12, interpolation="nearest")(img),
            R(5, 5, interpolation="bicubic")(img), R(3, 4, interpolation="area")(img),
            R(5, 5, crop_to_aspect_ratio=True)(img), R(5, 5, pad_to_aspect_ratio=True)(img)]


@case("resizing_lanczos_antialias", ["Resizing"], img=In((6, 8, 2)))
def _(img):
    R = _L().Resizing
    return [R(4, 5, interpolation="lanczos3")(img), R(4, 5, interpolation="lanczos5")(img),
            R(3, 4, antialias=True)(img)]


@case("center_crop", ["CenterCrop"], img=In((6, 7, 2)))
def _(img):
    C = _L().CenterCrop
    return [C(4, 4)(img), C(8, 8)(img)]


WORDS = ["ant", "bee", "cat", "dog", "eel", "fox", "gnu", "zebra"]


@case("string_lookup", ["StringLookup"], s=In((4,), "string", choices=WORDS + ["", "owl"]),
      ids=In((4,), "int64", 0, 6))
def _(s, ids):
    S = _L().StringLookup
    vocab = ["ant", "bee", "cat", "dog", "eel"]
    return [S(vocabulary=vocab)(s), S(vocabulary=vocab, num_oov_indices=2)(s),
            S(vocabulary=vocab, mask_token="", output_mode="int")(s),
            S(vocabulary=vocab, output_mode="multi_hot")(s),
            S(vocabulary=vocab, output_mode="count")(s),
            S(vocabulary=vocab, invert=True)(ids)]


@case("integer_lookup", ["IntegerLookup"], v=In((4,), "int64", choices=[0, 3, 5, 7, 9, 11, 42]),
      ids=In((4,), "int64", 0, 6))
def _(v, ids):
    I = _L().IntegerLookup  # noqa: E741
    vocab = [3, 5, 7, 11, 42]
    return [I(vocabulary=vocab)(v), I(vocabulary=vocab, mask_token=0)(v),
            I(vocabulary=vocab, output_mode="one_hot")(v[:, :1]),
            I(vocabulary=vocab, output_mode="count")(v), I(vocabulary=vocab, invert=True)(ids)]


@case("hashing", ["Hashing"], s=In((3,), "string", choices=WORDS),
      i=In((3,), "int64", -50, 50))
def _(s, i):
    H = _L().Hashing
    return [H(num_bins=5)(s), H(num_bins=7, salt=[3, 11])(s), H(num_bins=4, mask_value="ant")(s),
            H(num_bins=6)(i), H(num_bins=6, output_mode="multi_hot")(s)]


SENTENCES = ["The quick brown fox.", "jumps over the LAZY dog!", "a fox, a dog", "",
             "Quick quick QUICK"]


@case("text_vectorization", ["TextVectorization"], randomize=False,
      text=In((), "string", choices=SENTENCES))
def _(text):
    T = _L().TextVectorization
    vocab = ["the", "quick", "fox", "dog", "a", "lazy"]
    return [T(vocabulary=vocab, output_sequence_length=5)(text),
            T(vocabulary=vocab, output_mode="multi_hot")(text),
            T(vocabulary=vocab, output_mode="count", ngrams=None)(text),
            T(vocabulary=vocab, output_mode="tf_idf", idf_weights=[1.0, 2.0, 0.5, 1.5, 3.0, 0.25])(
                text),
            T(vocabulary=vocab + ["quick fox"], ngrams=2, output_mode="multi_hot")(text),
            T(vocabulary=vocab, standardize="lower", split="character",
              output_sequence_length=6)(text)]


@case("category_encoding", ["CategoryEncoding"], ids=In((3,), "int32", 0, 6),
      w=In((3,), low=0, high=2))
def _(ids, w):
    C = _L().CategoryEncoding
    return [C(6, output_mode="one_hot")(ids[:, 0]), C(6, output_mode="multi_hot")(ids),
            C(6, output_mode="count")(ids), C(6, output_mode="count")(ids, count_weights=w)]


@case("discretization", ["Discretization"], randomize=False, x=In((4,), low=-3, high=3))
def _(x):
    D = _L().Discretization
    return [D(bin_boundaries=[-1.0, 0.0, 1.5])(x),
            D(bin_boundaries=[-1.0, 0.0, 1.5], output_mode="one_hot")(x[:, :1]),
            D(bin_boundaries=[0.0], output_mode="count")(x)]


@case("hashed_crossing", ["HashedCrossing"], a=In((), "int64", 0, 5),
      b=In((), "string", choices=WORDS))
def _(a, b):
    H = _L().HashedCrossing
    return [H(num_bins=7)((a, b)), H(num_bins=5, output_mode="one_hot")((a, b))]


@case("spectrograms", ["MelSpectrogram", "STFTSpectrogram"], wave=In((256,), low=-1, high=1))
def _(wave):
    L = _L()
    out = [L.MelSpectrogram(fft_length=64, sequence_stride=32, sampling_rate=8000,
                            num_mel_bins=8)(wave)]
    w3 = L.Reshape((256, 1))(wave)
    # window=None (rectangular): a named window needs scipy, which the oracle venv lacks.
    for mode in ("log", "magnitude", "psd", "real", "imag", "angle"):
        out.append(L.STFTSpectrogram(mode=mode, frame_length=32, frame_step=16, fft_length=32,
                                     window=None)(w3))
    return out


@case("pipeline", ["Pipeline"], img=In((6, 6, 3), low=0, high=255))
def _(img):
    L = _L()
    return L.Pipeline([L.Rescaling(1.0 / 255), L.CenterCrop(4, 4)])(img, training=False)


# Image layers that change pixels deterministically at inference too.
@case("image_adjustments", ["AutoContrast", "ContrastLimitedAdaptiveHistogramEqualization"],
      randomize=False, img=In((8, 8, 3), low=0, high=255))
def _(img):
    L = _L()
    return [L.AutoContrast(value_range=(0, 255))(img, training=False),
            L.ContrastLimitedAdaptiveHistogramEqualization(
                value_range=(0, 255), tile_grid_size=(2, 2))(img, training=False)]


# Augmentation layers: random (or, for Equalization and Solarization, applied) in training only;
# at inference (what `serve` runs) they pass the image through. Each is followed by a Rescaling
# so the output is not the input tensor itself.
AUGMENTATIONS = ["AugMix", "CutMix", "Equalization", "MixUp", "RandAugment", "RandomBrightness",
                 "RandomColorDegeneration", "RandomColorJitter", "RandomContrast", "RandomCrop",
                 "RandomElasticTransform", "RandomErasing", "RandomFlip", "RandomGaussianBlur",
                 "RandomGrayscale", "RandomHue", "RandomInvert", "RandomPerspective",
                 "RandomPosterization", "RandomRotation", "RandomSaturation", "RandomSharpness",
                 "RandomShear", "RandomTranslation", "RandomZoom", "Solarization"]


def _augmentation(name):
    L = _L()
    args = {"RandomBrightness": dict(factor=0.2), "RandomContrast": dict(factor=0.2),
            "RandomCrop": dict(height=6, width=6), "RandomHue": dict(factor=0.2),
            "RandomPosterization": dict(factor=(4, 6)), "RandomRotation": dict(factor=0.2),
            "RandomSaturation": dict(factor=0.2), "RandomSharpness": dict(factor=0.2),
            "RandomShear": dict(x_factor=0.2), "RandomTranslation": dict(height_factor=0.2,
                                                                          width_factor=0.2),
            "RandomZoom": dict(height_factor=0.2), "RandomColorDegeneration": dict(factor=0.2),
            "Equalization": dict(value_range=(0, 255), bins=16),
            "Solarization": dict(threshold_factor=(0.5, 0.5))}
    return getattr(L, name)(**args.get(name, {}))


@case("augmentation_inference", AUGMENTATIONS, randomize=False,
      img=In((6, 6, 3), low=0, high=255))
def _(img):
    L = _L()
    return [L.Rescaling(0.5)(_augmentation(n)(img, training=False)) for n in AUGMENTATIONS]


# The geometric ones as a model uses them (a data_augmentation block called without `training`):
# Keras 3 then keeps ImageProjectiveTransformV3 in the exported graph, with the transform
# inference gives.
GEOMETRIC = ["RandomRotation", "RandomZoom", "RandomTranslation"]


@case("augmentation_in_model", GEOMETRIC, randomize=False, img=In((6, 7, 3), low=0, high=255))
def _(img):
    L = _L()
    return [L.Rescaling(0.5)(_augmentation(n)(img)) for n in GEOMETRIC]


@case("max_num_bounding_boxes", ["MaxNumBoundingBoxes"], randomize=False,
      img=In((4, 4, 3)), boxes=In((5, 4), low=0, high=4), labels=In((5,), "int32", 0, 3))
def _(img, boxes, labels):
    out = _L().MaxNumBoundingBoxes(max_number=3, bounding_box_format="xyxy")(
        {"images": img, "bounding_boxes": {"boxes": boxes, "labels": labels}}, training=False)
    return [out["images"], out["bounding_boxes"]["boxes"], out["bounding_boxes"]["labels"]]


# --------------------------------------------------------------------------------------------
# Wrapping another SavedModel


@case("tfsm_layer", ["TFSMLayer"], x=In((4,)))
def _(x):
    # The inner model is exported next to the case's bundle directory (see _export).
    return _L().TFSMLayer(_TFSM_INNER, call_endpoint="serve")(x)


_TFSM_INNER = None

# Classes no case covers, with the reason.
NOT_COVERED = {
    "Layer": "the abstract base class of every layer (every case uses it)",
    "Wrapper": "an abstract base class (Bidirectional, TimeDistributed and "
               "SpectralNormalization are its concrete subclasses, covered above)",
    "FlaxLayer": "wraps a Flax module: needs the JAX backend, cannot run under TensorFlow",
    "JaxLayer": "wraps a JAX function: needs the JAX backend, cannot run under TensorFlow",
    "TorchModuleWrapper": "wraps a torch.nn.Module: needs the PyTorch backend",
}


# --------------------------------------------------------------------------------------------
# Building, exporting, recording


def build_model(name):
    """The case's keras.Model and its deterministic inputs {name: array}."""
    import keras
    c = CASES[name]
    seed = recording.seed_of(name)
    keras.utils.set_random_seed(seed)
    inputs = {k: keras.Input(shape=spec.shape, dtype=spec.dtype, name=k)
              for k, spec in c.inputs.items()}
    outputs = c.build(**inputs)
    if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
        outputs = outputs[0]
    model = keras.Model(inputs=inputs if len(inputs) > 1 else next(iter(inputs.values())),
                        outputs=outputs, name=name)
    if c.randomize:
        recording.randomize_weights(model, seed)
    rng = np.random.default_rng(seed)
    feed = {k: spec.sample(rng) for k, spec in c.inputs.items()}
    return model, feed


def _export(out, name):
    def make(bundle):
        global _TFSM_INNER
        if name == "tfsm_layer":
            import keras
            keras.utils.set_random_seed(1)
            inner = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, "tanh")])
            _TFSM_INNER = bundle + ".inner"
            inner.export(_TFSM_INNER, format="tf_saved_model", verbose=False)
        model, feed = build_model(name)
        LAYER_CLASSES[name] = layer_classes(model)
        model.export(bundle, format="tf_saved_model", verbose=False)
        return "model.export", {SIGNATURE: feed}
    return make


# {case: public names of every layer class its model contains}, filled by make_all.
LAYER_CLASSES = {}


def public_layer_names():
    """{layer class: its public names in keras.layers} (aliases such as Conv2D/Convolution2D
    share one class)."""
    import inspect
    import keras
    names = {}
    for n in dir(keras.layers):
        c = getattr(keras.layers, n)
        if inspect.isclass(c) and issubclass(c, keras.layers.Layer):
            names.setdefault(c, set()).add(n)
    return names


def layer_classes(model):
    """Public names of the classes of every layer inside the model, wrapped ones included."""
    public = public_layer_names()
    found = set()
    for layer in model._flatten_layers(include_self=False, recursive=True):
        found |= public.get(type(layer), set())
    return sorted(found)


def make_all(out, names=None, log=print):
    names = list(CASES) if not names else names
    os.makedirs(out, exist_ok=True)
    t0 = time.monotonic()
    entries = {n: recording.build_and_record(out, n, _export(out, n), log) for n in names}
    for n, e in entries.items():
        e["layer_classes"] = LAYER_CLASSES.get(n, [])
    return recording.write_manifest(
        out, {"models": entries, "seconds": round(time.monotonic() - t0, 1)}, __file__)


if __name__ == "__main__":
    m = make_all(sys.argv[1], sys.argv[2:])
    bad = {k: v["error"] for k, v in m["models"].items() if v["error"]}
    for k, e in bad.items():
        print(f"--- {k}\n{e}")
    print(f"{len(m['models']) - len(bad)} of {len(m['models'])} exported in {m['seconds']} s")
    sys.exit(1 if bad else 0)
