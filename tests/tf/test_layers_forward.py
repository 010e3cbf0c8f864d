"""kiln::modules layers against Keras 3: each case builds a Keras layer, gives it random
weights, and runs it; tests/tf/kiln_layer.cc builds our layer with the same options, copies the
weights in by variable name (so the names and shapes must be Keras's), and runs it eagerly and
traced, and saves it as a SavedModel that TensorFlow loads and runs. Outputs agree within 1e-5 relative (the absolute floor is 1e-6 of the output's largest
magnitude, for sums that cancel to near 0); BatchNormalization in training also compares the
moving statistics it leaves behind. Dropout in training is random in both and is checked by
tests/modules instead.

Each case also compares gradients: d sum(y * gw) / d x and / d each trainable weight, for a
random gw, from tf.GradientTape on the Keras layer and from our GradientTape, eagerly and
inside a traced function (within 1e-4 relative: the backward passes sum in other orders)."""
import os

import numpy as np
import pytest

import oracle

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
import keras  # noqa: E402

L = keras.layers
RTOL = 1e-5
GRAD_RTOL = 1e-4


class Case:
    """`output`: which of a return_state layer's outputs is compared (kiln_layer's output=);
    `call(layer, x)`: how Keras calls the layer when not layer(x) (self-attention); `masked`:
    the layer is called with MASK (layer(x, mask=...), kiln_layer's mask.npy); `prep(x)`
    edits the random input (zero timesteps for Masking)."""

    def __init__(self, make, kiln_type, options, shape, training=False, ints=None, output=None,
                 call=None, masked=False, prep=None):
        self.make, self.kiln_type, self.options = make, kiln_type, options
        self.shape, self.training, self.ints, self.output = shape, training, ints, output
        self.call, self.masked, self.prep = call, masked, prep


# (3, 5) timesteps: right-padded, a hole in the middle, the first step masked.
MASK = np.ones((3, 5), dtype=bool)
MASK[0, 3:] = False
MASK[1, 1] = False
MASK[2, 0] = False


def _zero_steps(x):
    x = x.copy()
    x[0, 3:, :] = 0
    x[1, 1, :] = 0
    return x


CASES = {
    "conv1d_same_strided": Case(lambda: L.Conv1D(4, 3, strides=2, padding="same", activation="relu"),
                                "Conv1D", dict(filters=4, kernel_size=3, strides=2, padding="same",
                                               activation="relu"), (2, 9, 3)),
    "conv1d_dilated_groups": Case(lambda: L.Conv1D(4, 3, dilation_rate=2, groups=2, activation="tanh"),
                                  "Conv1D", dict(filters=4, kernel_size=3, dilation_rate=2, groups=2,
                                                 activation="tanh"), (2, 10, 4)),
    "conv2d_valid_strided": Case(lambda: L.Conv2D(5, (3, 2), strides=(2, 1), activation="gelu"),
                                 "Conv2D", dict(filters=5, kernel_size="3,2", strides="2,1",
                                                activation="gelu"), (2, 8, 7, 3)),
    "conv2d_same_dilated_nobias": Case(
        lambda: L.Conv2D(4, 3, padding="same", dilation_rate=2, use_bias=False, activation="elu"),
        "Conv2D", dict(filters=4, kernel_size=3, padding="same", dilation_rate=2, use_bias=0,
                       activation="elu"), (2, 8, 8, 3)),
    "conv2d_groups": Case(lambda: L.Conv2D(6, 3, groups=3, padding="same", activation="selu"),
                          "Conv2D", dict(filters=6, kernel_size=3, groups=3, padding="same",
                                         activation="selu"), (2, 6, 6, 3)),
    "depthwise_strided": Case(
        lambda: L.DepthwiseConv2D(3, strides=2, padding="same", depth_multiplier=2,
                                  activation="swish"),
        "DepthwiseConv2D", dict(kernel_size=3, strides=2, padding="same", depth_multiplier=2,
                                activation="swish"), (2, 7, 7, 3)),
    "depthwise_dilated": Case(lambda: L.DepthwiseConv2D((2, 3), dilation_rate=2),
                              "DepthwiseConv2D", dict(kernel_size="2,3", dilation_rate=2),
                              (1, 8, 8, 2)),
    "separable": Case(
        lambda: L.SeparableConv2D(5, 3, padding="same", depth_multiplier=2, activation="sigmoid"),
        "SeparableConv2D", dict(filters=5, kernel_size=3, padding="same", depth_multiplier=2,
                                activation="sigmoid"), (2, 6, 6, 3)),
    "conv2d_transpose_valid": Case(lambda: L.Conv2DTranspose(4, 3, strides=2),
                                   "Conv2DTranspose", dict(filters=4, kernel_size=3, strides=2),
                                   (2, 5, 5, 3)),
    "conv2d_transpose_same": Case(
        lambda: L.Conv2DTranspose(3, (3, 2), strides=(2, 1), padding="same", activation="relu"),
        "Conv2DTranspose", dict(filters=3, kernel_size="3,2", strides="2,1", padding="same",
                                activation="relu"), (2, 4, 5, 2)),
    "max_pool1d": Case(lambda: L.MaxPooling1D(3, strides=2, padding="same"), "MaxPooling1D",
                       dict(pool_size=3, strides=2, padding="same"), (2, 9, 3)),
    "avg_pool1d": Case(lambda: L.AveragePooling1D(2), "AveragePooling1D", dict(pool_size=2),
                       (2, 9, 3)),
    "max_pool2d": Case(lambda: L.MaxPooling2D((2, 3), strides=(2, 2)), "MaxPooling2D",
                       dict(pool_size="2,3", strides="2,2"), (2, 7, 8, 3)),
    "avg_pool2d_same": Case(lambda: L.AveragePooling2D(3, strides=2, padding="same"),
                            "AveragePooling2D", dict(pool_size=3, strides=2, padding="same"),
                            (2, 7, 8, 3)),
    "global_max1d": Case(lambda: L.GlobalMaxPooling1D(), "GlobalMaxPooling1D", {}, (2, 6, 3)),
    "global_avg1d_keepdims": Case(lambda: L.GlobalAveragePooling1D(keepdims=True),
                                  "GlobalAveragePooling1D", dict(keepdims=1), (2, 6, 3)),
    "global_max2d_keepdims": Case(lambda: L.GlobalMaxPooling2D(keepdims=True),
                                  "GlobalMaxPooling2D", dict(keepdims=1), (2, 4, 5, 3)),
    "global_avg2d": Case(lambda: L.GlobalAveragePooling2D(), "GlobalAveragePooling2D", {},
                         (2, 4, 5, 3)),
    "batch_norm_inference": Case(lambda: L.BatchNormalization(), "BatchNormalization", {},
                                 (2, 4, 4, 3)),
    "batch_norm_training": Case(lambda: L.BatchNormalization(momentum=0.9, epsilon=1e-2),
                                "BatchNormalization", dict(momentum=0.9, epsilon=0.01),
                                (4, 3, 3, 3), training=True),
    "layer_norm": Case(lambda: L.LayerNormalization(), "LayerNormalization", {}, (2, 3, 5)),
    "dropout_inference": Case(lambda: L.Dropout(0.5), "Dropout", dict(rate=0.5), (2, 5)),
    "flatten": Case(lambda: L.Flatten(), "Flatten", {}, (2, 3, 4, 5)),
    "reshape": Case(lambda: L.Reshape((-1, 10)), "Reshape", dict(target_shape="-1,10"),
                    (2, 3, 4, 5)),
    "embedding": Case(lambda: L.Embedding(10, 4), "Embedding", dict(input_dim=10, output_dim=4),
                      (2, 5), ints=10),
    "lstm": Case(lambda: L.LSTM(4), "LSTM", dict(units=4), (2, 5, 3)),
    "lstm_sequences_backwards": Case(
        lambda: L.LSTM(3, return_sequences=True, go_backwards=True, activation="relu"), "LSTM",
        dict(units=3, return_sequences=1, go_backwards=1, activation="relu"), (2, 4, 3)),
    "lstm_state_c": Case(lambda: L.LSTM(3, return_sequences=True, return_state=True), "LSTM",
                         dict(units=3, return_sequences=1, return_state=1, output=2), (2, 4, 2),
                         output=2),
    "lstm_nobias_one_step": Case(lambda: L.LSTM(2, use_bias=False), "LSTM",
                                 dict(units=2, use_bias=0), (3, 1, 4)),
    "gru": Case(lambda: L.GRU(4), "GRU", dict(units=4), (2, 5, 3)),
    "gru_sequences_backwards": Case(
        lambda: L.GRU(3, return_sequences=True, go_backwards=True), "GRU",
        dict(units=3, return_sequences=1, go_backwards=1), (2, 4, 3)),
    "gru_reset_before": Case(lambda: L.GRU(3, reset_after=False, return_sequences=True), "GRU",
                             dict(units=3, reset_after=0, return_sequences=1), (2, 4, 3)),
    "gru_state_nobias": Case(lambda: L.GRU(3, use_bias=False, return_state=True), "GRU",
                             dict(units=3, use_bias=0, return_state=1, output=1), (2, 3, 2),
                             output=1),
    "lstm_masked": Case(lambda: L.LSTM(4), "LSTM", dict(units=4), (3, 5, 2), masked=True),
    "lstm_masked_sequences": Case(lambda: L.LSTM(3, return_sequences=True), "LSTM",
                                  dict(units=3, return_sequences=1), (3, 5, 2), masked=True),
    "lstm_masked_sequences_backwards": Case(
        lambda: L.LSTM(3, return_sequences=True, go_backwards=True), "LSTM",
        dict(units=3, return_sequences=1, go_backwards=1), (3, 5, 2), masked=True),
    "lstm_masked_state_c": Case(lambda: L.LSTM(3, return_state=True), "LSTM",
                                dict(units=3, return_state=1, output=2), (3, 5, 2), output=2,
                                masked=True),
    "lstm_dropout_inference": Case(lambda: L.LSTM(4, dropout=0.5, recurrent_dropout=0.3), "LSTM",
                                   dict(units=4, dropout=0.5, recurrent_dropout=0.3), (2, 4, 3)),
    "gru_masked": Case(lambda: L.GRU(4), "GRU", dict(units=4), (3, 5, 2), masked=True),
    "gru_masked_sequences": Case(lambda: L.GRU(3, return_sequences=True), "GRU",
                                 dict(units=3, return_sequences=1), (3, 5, 2), masked=True),
    "gru_reset_before_masked_sequences": Case(
        lambda: L.GRU(3, reset_after=False, return_sequences=True), "GRU",
        dict(units=3, reset_after=0, return_sequences=1), (3, 5, 2), masked=True),
    "gru_dropout_inference": Case(lambda: L.GRU(3, dropout=0.4, recurrent_dropout=0.2), "GRU",
                                  dict(units=3, dropout=0.4, recurrent_dropout=0.2), (2, 4, 3)),
    "masking": Case(lambda: L.Masking(0.0), "Masking", dict(mask_value=0.0), (3, 5, 2),
                    prep=_zero_steps),
    "embedding_mask_zero": Case(lambda: L.Embedding(10, 4, mask_zero=True), "Embedding",
                                dict(input_dim=10, output_dim=4, mask_zero=1), (2, 5), ints=10),
    "mha": Case(lambda: L.MultiHeadAttention(2, 3), "MultiHeadAttention",
                dict(num_heads=2, key_dim=3), (2, 4, 5), call=lambda l, x: l(x, x)),
    "mha_causal_value_dim_output": Case(
        lambda: L.MultiHeadAttention(3, 2, value_dim=4, output_shape=6), "MultiHeadAttention",
        dict(num_heads=3, key_dim=2, value_dim=4, output_dim=6, use_causal_mask=1), (2, 5, 3),
        call=lambda l, x: l(x, x, use_causal_mask=True)),
    "mha_nobias": Case(lambda: L.MultiHeadAttention(1, 4, use_bias=False), "MultiHeadAttention",
                       dict(num_heads=1, key_dim=4, use_bias=0), (3, 2, 4),
                       call=lambda l, x: l(x, x)),
    "dense": Case(lambda: L.Dense(3, activation="relu"), "Dense", dict(units=3, activation="relu"),
                  (2, 6)),
}
for _name in ["linear", "relu", "softmax", "sigmoid", "tanh", "gelu", "elu", "selu", "swish"]:
    CASES[f"activation_{_name}"] = Case(lambda n=_name: L.Activation(n), "Activation",
                                        dict(activation=_name), (2, 3, 4))


def _local_name(w):
    """A weight's path below the layer: "kernel", or "lstm_cell/kernel" in a sublayer."""
    return w.path.split("/", 1)[1]


def _file_name(name):
    return name.replace("/", "__")


def _weights_for(layer, rng):
    """Random weights in Keras's variable order; variances stay positive."""
    values = []
    for w in layer.weights:
        name = _local_name(w)
        lo, hi = (0.5, 1.5) if name == "moving_variance" else (-1.0, 1.0)
        values.append(rng.uniform(lo, hi, size=tuple(w.shape)).astype(np.float32))
    layer.set_weights(values)
    return [(_local_name(w), bool(w.trainable), v) for w, v in zip(layer.weights, values)]


def _assert_close(ours, theirs, what, rtol=RTOL):
    theirs = np.asarray(theirs)
    floor = 1e-6 if rtol == RTOL else 1e-5
    atol = max(oracle.ATOL, floor * float(np.abs(theirs).max())) if theirs.size else oracle.ATOL
    oracle.assert_same(ours, theirs, what, rtol=rtol, atol=atol)


def _keras_call(case, layer, x, rng):
    """Keras's output and, for gw (random, output-shaped), its gradients of sum(y * gw):
    {"x" (a float x only) or a weight's local name: gradient}."""
    import tensorflow as tf
    xt = tf.constant(x)
    with tf.GradientTape(persistent=True) as tape:
        if not case.ints:
            tape.watch(xt)
        if case.kiln_type in ("BatchNormalization", "Dropout"):
            y = layer(xt, training=case.training)
        elif case.call:
            y = case.call(layer, xt)
        elif case.masked:
            y = layer(xt, mask=tf.constant(MASK))
        else:
            y = layer(xt)
        if case.output is not None:
            y = y[case.output]
        gw = rng.uniform(-1, 1, size=tuple(y.shape)).astype(np.float32)
        loss = tf.reduce_sum(y * gw)
    grads = {}
    if not case.ints:
        grads["x"] = tape.gradient(loss, xt)
    for w in layer.trainable_weights:
        grads[_local_name(w)] = tape.gradient(loss, w)
    for k, g in grads.items():
        assert g is not None, f"Keras: no gradient for {k}"
        grads[k] = np.asarray(tf.convert_to_tensor(g))
    return np.asarray(y), gw, grads


def _assert_tf_loads_bundle(d, x, theirs, weights, name):
    """TensorFlow loads the layer's bundle: serving_default gives Keras's output, and the
    variables sit in the object graph under Keras's names with Keras's values."""
    import tensorflow as tf
    import recording
    loaded = tf.saved_model.load(str(d))
    for wname, trainable, value in weights:
        v = loaded
        for part in wname.split("/"):
            v = getattr(v, part)
        assert v.trainable == trainable, f"{name}: {wname} trainable in the bundle"
        np.testing.assert_array_equal(v.numpy(), value, err_msg=f"{name}: {wname} in the bundle")
    try:
        out = loaded.signatures["serving_default"](x=tf.constant(x))
    except Exception as e:  # noqa: BLE001 - only TF's known CPU refusals are skipped
        reason = recording.tf_cpu_limit(e)
        if reason is None:
            raise
        pytest.skip(f"{name}: kiln's outputs and gradients match Keras and TensorFlow loads the "
                    f"bundle with Keras's variables, but TensorFlow cannot run it on this "
                    f"machine: {reason}")
    assert list(out) == ["output_0"], f"{name}: bundle outputs {list(out)}"
    _assert_close(out["output_0"].numpy(), theirs, f"{name}: TensorFlow running our bundle")


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_matches_keras(name, tmp_path):
    case = CASES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    if case.ints:
        x = rng.integers(0, case.ints, size=case.shape).astype(np.int32)
    else:
        x = rng.uniform(-2, 2, size=case.shape).astype(np.float32)
    if case.prep:
        x = case.prep(x)
    layer = case.make()
    if case.call:
        case.call(layer, x)  # builds it (MultiHeadAttention's build takes query and value)
    else:
        layer.build(x.shape)
    weights = _weights_for(layer, rng)
    theirs, gw, their_grads = _keras_call(case, layer, x, rng)

    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "gw.npy", gw)
    if case.masked:
        np.save(tmp_path / "mask.npy", MASK)
    for wname, _, value in weights:
        np.save(tmp_path / f"w_{_file_name(wname)}.npy", value)
    args = [oracle.KILN_LAYER, tmp_path, case.kiln_type, f"training={int(case.training)}"]
    args += [f"{k}={v}" for k, v in case.options.items()]
    listing = oracle.run(args).stdout.split()
    # Our variables: Keras's names, order and trainability.
    assert listing[0::2] == [w for w, _, _ in weights], f"{name}: variable names"
    assert [t == "1" for t in listing[1::2]] == [t for _, t, _ in weights], f"{name}: trainable"

    _assert_close(np.load(tmp_path / "y.npy"), theirs, f"{name}: eager output")
    _assert_close(np.load(tmp_path / "y_traced.npy"), theirs, f"{name}: traced output")
    trainable = [w for w, t, _ in weights if t]
    assert sorted(their_grads) == sorted((["x"] if not case.ints else []) + trainable)
    for what, g in their_grads.items():
        for mode in ("", "traced_"):
            _assert_close(np.load(tmp_path / f"g_{mode}{_file_name(what)}.npy"), g,
                          f"{name}: {mode}gradient for {what}", rtol=GRAD_RTOL)
    if not case.training:
        _assert_tf_loads_bundle(tmp_path / "bundle", x, theirs, weights, name)
    else:
        for w in layer.weights:
            wname = _file_name(_local_name(w))
            _assert_close(np.load(tmp_path / f"after_{wname}.npy"), np.asarray(w.numpy()),
                          f"{name}: {wname} after the training call")
