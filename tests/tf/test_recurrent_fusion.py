"""Keras LSTM, GRU and SimpleRNN layers run as one fused kernel (libexec/kernels/recurrent_loop.h): each model's
While loops are taken by the fused kernel (KILN_RECURRENT_FUSION=log names every node it takes),
and the outputs match TensorFlow's and the generic loop's (KILN_RECURRENT_FUSION=0). Layers
outside the fused forms (a GRU with reset_after=False, a sigmoid SimpleRNN) still run, through
the generic loop. The same holds for the loops tf.keras 2 (Keras 2, what TF <= 2.15 saved, from the
tf_keras package) exports: weights passed into the loop as tensors, a cond on the time alone, and a
GRU whose recurrent part is split by a Split with its own bias."""
import os
import re

import numpy as np
import pytest

import oracle

T, D, BATCH = 7, 4, 3

# name: (builder of the output tensor from the input, how many loops the kernel must fuse)
CASES = {
    "lstm_last": (lambda L, x: L.LSTM(8)(x), 1),
    "lstm_sequences": (lambda L, x: L.LSTM(8, return_sequences=True)(x), 1),
    "lstm_backwards_state": (
        lambda L, x: L.Concatenate()(L.LSTM(6, go_backwards=True, return_state=True)(x)), 1),
    "bidirectional_lstm": (lambda L, x: L.Bidirectional(L.LSTM(5))(x), 2),
    "stacked_lstm": (lambda L, x: L.LSTM(4)(L.LSTM(6, return_sequences=True)(x)), 2),
    "lstm_unit_forget_bias_off": (lambda L, x: L.LSTM(3, unit_forget_bias=False)(x), 1),
    "gru_last": (lambda L, x: L.GRU(5)(x), 1),
    "gru_sequences_backwards": (
        lambda L, x: L.GRU(6, return_sequences=True, go_backwards=True)(x), 1),
    "bidirectional_gru": (lambda L, x: L.Bidirectional(L.GRU(4))(x), 2),
    "gru_reset_before_not_fused": (lambda L, x: L.GRU(5, reset_after=False)(x), 0),
    "simple_rnn_sequences": (lambda L, x: L.SimpleRNN(6, return_sequences=True)(x), 1),
    "simple_rnn_relu_masked": (
        lambda L, x: L.SimpleRNN(4, activation="relu")(L.Masking(mask_value=0.0)(x)), 1),
    "simple_rnn_sigmoid_not_fused": (lambda L, x: L.SimpleRNN(4, activation="sigmoid")(x), 0),
    "masked_lstm": (lambda L, x: L.LSTM(5)(L.Masking(mask_value=0.0)(x)), 1),
    "masked_gru_sequences": (
        lambda L, x: L.GRU(5, return_sequences=True)(L.Masking(mask_value=0.0)(x)), 1),
    "masked_bidirectional_lstm_sequences": (
        lambda L, x: L.Bidirectional(L.LSTM(3, return_sequences=True))(
            L.Masking(mask_value=0.0)(x)), 2),
    # Sequences of any length (Input((None, D))): the cond's bound is a tensor, not a constant.
    "dyn_lstm_sequences": (lambda L, x: L.LSTM(5, return_sequences=True)(x), 1),
    "dyn_masked_gru": (lambda L, x: L.GRU(4)(L.Masking(mask_value=0.0)(x)), 1),
    # Mixed precision (the layer computes in float16 / bfloat16 over float32 variables): the
    # fused kernel computes in float32 and rounds the loop variables to the layer's type.
    "f16_lstm_sequences": (lambda L, x: L.LSTM(5, return_sequences=True)(x), 1),
    "f16_masked_gru": (lambda L, x: L.GRU(4)(L.Masking(mask_value=0.0)(x)), 1),
    "bf16_bidirectional_lstm": (lambda L, x: L.Bidirectional(L.LSTM(3))(x), 2),
    # Token ids through Embedding(mask_zero=True): the mask Keras tiles by [1, 1].
    "ids_embedding_bidirectional_gru": (
        lambda L, x: L.Bidirectional(L.GRU(4))(L.Embedding(20, 3, mask_zero=True)(x)), 2),
    "ids_embedding_lstm_sequences": (
        lambda L, x: L.LSTM(5, return_sequences=True)(L.Embedding(20, 3, mask_zero=True)(x)), 1),
}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    import keras
    L = keras.layers
    root = tmp_path_factory.mktemp("recurrent")
    rng = np.random.default_rng(7)
    x = rng.standard_normal((BATCH, T, D)).astype(np.float32)
    x[1, 5:] = 0.0  # masked steps for the Masking cases: trailing, and one in the middle
    x[2, 2] = 0.0
    ids = rng.integers(1, 20, (BATCH, T)).astype(np.int32)
    ids[0, 4:] = 0  # padding, and one masked token in the middle
    ids[2, 1] = 0
    out = {}
    policies = {"f16_": "mixed_float16", "bf16_": "mixed_bfloat16"}
    for name, (build, _) in CASES.items():
        keras.utils.set_random_seed(3)
        policy = next((p for k, p in policies.items() if name.startswith(k)), "float32")
        keras.mixed_precision.set_global_policy(policy)
        if name.startswith("ids_"):
            inp = keras.Input((T,), dtype="int32", name="x")
        else:
            inp = keras.Input((None if name.startswith("dyn_") else T, D), name="x")
        y = build(L, inp)
        if policy != "float32":  # float32 outputs (NumPy has no bfloat16)
            y = L.Activation("linear", dtype="float32")(y)
        model = keras.Model(inp, y)
        keras.mixed_precision.set_global_policy("float32")
        # Random biases too, so every gate's bias is exercised.
        for w in model.weights:
            if "bias" in w.path:
                w.assign(rng.standard_normal(w.shape).astype(np.float32) * 0.5)
        d = root / name
        model.export(str(d), format="tf_saved_model", verbose=False)
        out[name] = (d, np.asarray(model(ids if name.startswith("ids_") else x)))
    np.save(root / "x.npy", x)
    np.save(root / "ids.npy", ids)
    return root, out


def _run(d, feed, outdir, mode):
    proc = oracle.run([oracle.KILN_CLI, "run", "--dir", d, "--tag_set", "serve",
                       "--signature_def", "serving_default",
                       "--inputs", f"x={feed}", "--outdir", outdir],
                      env={"KILN_RECURRENT_FUSION": mode})
    # A fused node whose call does not fit runs the generic loop and says why: none may.
    assert "runs the generic loop" not in proc.stderr, proc.stderr
    (out,) = [np.load(p) for p in os.scandir(outdir) if p.name.endswith(".npy")]
    # A node is prepared more than once (a first look, then for real): count nodes, not lines.
    return out, len(set(re.findall(r"node '([^']*)' \(\w+\) runs as a fused (?:LSTM|GRU|SimpleRNN) loop",
                                    proc.stderr)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_fused_loop_gives_tf_outputs(models, name, tmp_path):
    root, out = models
    d, expected = out[name]
    feed = root / ("ids.npy" if name.startswith("ids_") else "x.npy")
    fused, taken = _run(d, feed, tmp_path / "fused", "log")
    assert taken == CASES[name][1], f"{name}: the fused kernel took {taken} loops"
    generic, none = _run(d, feed, tmp_path / "generic", "0")
    assert none == 0
    # float32 within float32 rounding; half precision within its own (11 or 8 significant bits,
    # rounded after each of TF's ops and only at the loop variables here).
    rtol, atol = {"f16_": (1e-2, 4e-3), "bf16_": (6e-2, 3e-2)}.get(name.split("_")[0] + "_",
                                                                  (1e-5, 1e-6))
    oracle.assert_same(fused, expected, f"{name} fused vs TF", rtol=rtol, atol=atol)
    oracle.assert_same(fused, generic, f"{name} fused vs the generic loop", rtol=rtol, atol=atol)


# tf.keras 2's forms: name -> (builder, loops the kernel must fuse).
TFK2_CASES = {
    "tfk2_lstm_last": (lambda L, x: L.LSTM(8)(x), 1),
    "tfk2_lstm_backwards_state": (
        lambda L, x: L.Concatenate()(L.LSTM(6, go_backwards=True, return_state=True)(x)), 1),
    "tfk2_stacked_lstm": (lambda L, x: L.LSTM(4)(L.LSTM(6, return_sequences=True)(x)), 2),
    "tfk2_gru_sequences_backwards": (
        lambda L, x: L.GRU(6, return_sequences=True, go_backwards=True)(x), 1),
    "tfk2_masked_gru_sequences": (
        lambda L, x: L.GRU(5, return_sequences=True)(L.Masking(mask_value=0.0)(x)), 1),
    "tfk2_gru_reset_before_not_fused": (lambda L, x: L.GRU(5, reset_after=False)(x), 0),
    "tfk2_simple_rnn_relu_masked": (
        lambda L, x: L.SimpleRNN(4, activation="relu")(L.Masking(mask_value=0.0)(x)), 1),
    "tfk2_dyn_lstm_sequences": (lambda L, x: L.LSTM(5, return_sequences=True)(x), 1),
    "tfk2_f16_lstm_sequences": (lambda L, x: L.LSTM(5, return_sequences=True)(x), 1),
    "tfk2_ids_embedding_bidirectional_gru": (
        lambda L, x: L.Bidirectional(L.GRU(4))(L.Embedding(20, 3, mask_zero=True)(x)), 2),
}


@pytest.fixture(scope="module")
def tfk2_models(tmp_path_factory):
    import tf_keras as keras
    L = keras.layers
    root = tmp_path_factory.mktemp("recurrent_tfk2")
    rng = np.random.default_rng(11)
    x = rng.standard_normal((BATCH, T, D)).astype(np.float32)
    x[1, 5:] = 0.0
    x[2, 2] = 0.0
    ids = rng.integers(1, 20, (BATCH, T)).astype(np.int32)
    ids[0, 4:] = 0
    ids[2, 1] = 0
    out = {}
    for name, (build, _) in TFK2_CASES.items():
        keras.utils.set_random_seed(3)
        f16 = "_f16_" in name
        keras.mixed_precision.set_global_policy("mixed_float16" if f16 else "float32")
        if "_ids_" in name:
            inp = keras.Input((T,), dtype="int32", name="x")
        else:
            inp = keras.Input((None if "_dyn_" in name else T, D), name="x")
        y = build(L, inp)
        if f16:
            y = L.Activation("linear", dtype="float32")(y)
        model = keras.Model(inp, y)
        keras.mixed_precision.set_global_policy("float32")
        for w in model.weights:
            if "bias" in w.name:
                w.assign(rng.standard_normal(w.shape).astype(np.float32) * 0.5)
        d = root / name
        model.save(str(d), save_format="tf")
        out[name] = (d, np.asarray(model(ids if "_ids_" in name else x)))
    np.save(root / "x.npy", x)
    np.save(root / "ids.npy", ids)
    return root, out


@pytest.mark.parametrize("name", sorted(TFK2_CASES))
def test_fused_tf_keras2_loop_gives_tf_outputs(tfk2_models, name, tmp_path):
    root, out = tfk2_models
    d, expected = out[name]
    feed = root / ("ids.npy" if "_ids_" in name else "x.npy")
    fused, taken = _run(d, feed, tmp_path / "fused", "log")
    assert taken == TFK2_CASES[name][1], f"{name}: the fused kernel took {taken} loops"
    generic, none = _run(d, feed, tmp_path / "generic", "0")
    assert none == 0
    rtol, atol = (1e-2, 4e-3) if "_f16_" in name else (1e-5, 1e-6)
    oracle.assert_same(fused, expected, f"{name} fused vs TF", rtol=rtol, atol=atol)
    oracle.assert_same(fused, generic, f"{name} fused vs the generic loop", rtol=rtol, atol=atol)


@pytest.mark.parametrize("layer,steps,batch", [("lstm", 40, 30), ("masked_gru", 40, 30),
                                               ("lstm", 600, 1)])
def test_fused_loop_projects_in_chunks(layer, steps, batch, tmp_path):
    """Enough rows (steps x batch) that the kernel projects the input chunk by chunk (512 rows
    at a time: 17 steps of 30 rows, then 6; or 512 steps of one sequence, then 88, through the
    packed product batch 1 uses), with the states carried across chunks."""
    import keras
    L = keras.layers
    rng = np.random.default_rng(5)
    x = rng.standard_normal((batch, steps, D)).astype(np.float32)
    x[batch // 10, 25:] = 0.0  # masked steps across a chunk boundary
    keras.utils.set_random_seed(3)
    inp = keras.Input((steps, D), name="x")
    if layer == "lstm":
        y = L.LSTM(8, return_sequences=True)(inp)
    else:
        y = L.GRU(6, return_sequences=True)(L.Masking(mask_value=0.0)(inp))
    model = keras.Model(inp, y)
    d = tmp_path / layer
    model.export(str(d), format="tf_saved_model", verbose=False)
    np.save(tmp_path / "x.npy", x)
    fused, taken = _run(d, tmp_path / "x.npy", tmp_path / "fused", "log")
    assert taken == 1
    generic, _ = _run(d, tmp_path / "x.npy", tmp_path / "generic", "0")
    oracle.assert_same(fused, np.asarray(model(x)), f"{layer} fused vs TF", rtol=1e-5, atol=1e-6)
    oracle.assert_same(fused, generic, f"{layer} fused vs the generic loop", rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["lstm_sequences", "bidirectional_gru", "simple_rnn_sequences"])
@pytest.mark.parametrize("mode", ["weights_int8", "float16", "bfloat16"])
def test_quantized_loop_stays_fused(models, name, mode, tmp_path):
    """`savedmodel-cli quantize` stores the cell's weights as int8 levels (dequantized by a Cast
    and a Mul in the loop's body) or half precision (a Cast): the fused kernel reads them that way
    once, instead of the generic loop dequantizing them at every step; TF's outputs on the
    quantized bundle are kiln's."""
    import tensorflow as tf
    root, out = models
    d, _ = out[name]
    q = tmp_path / "q"
    oracle.run([oracle.KILN_CLI, "quantize", "--dir", d, "--output_dir", q, "--mode", mode,
                "--min_elements", "1"])
    x = np.load(root / "x.npy")
    (theirs,) = tf.saved_model.load(str(q)).signatures["serving_default"](
        x=tf.constant(x)).values()
    fused, taken = _run(q, root / "x.npy", tmp_path / "fused", "log")
    assert taken == CASES[name][1], f"{name} {mode}: the fused kernel took {taken} loops"
    oracle.assert_same(fused, theirs.numpy(), f"{name} {mode} fused vs TF", rtol=1e-5, atol=1e-6)
