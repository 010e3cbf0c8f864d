"""Whole models against Keras 3: tests/tf/kiln_model.cc builds each model of MODELS (Sequential
and functional: branches, a merge, a shared layer, a nested model, two inputs, masks from
Embedding(mask_zero) and Masking into LSTM / GRU) as this file builds it in Keras, with Keras's
layer names. Our Summary() must print exactly what Keras's model.summary() prints (at Keras's
default width and at line_length=70), and with Keras's weights copied in (model.weights order)
our outputs, eager and traced, must match Keras's, and so must TensorFlow's outputs running the
SavedModel we export."""
import os

import numpy as np
import pytest

import oracle

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
import keras  # noqa: E402

L = keras.layers
RTOL = 1e-5


def _sequential_cnn():
    return keras.Sequential([
        keras.Input((12, 12, 1)),
        L.Conv2D(8, 3, activation="relu", name="conv2d"),
        L.Conv2D(4, 3, name="conv2d_1"),
        L.GlobalAveragePooling2D(name="global_average_pooling2d"),
        L.Dense(10, name="dense"),
    ], name="sequential")


def _functional_chain():
    x = keras.Input((16,), name="input_layer")
    h = L.Dense(8, activation="relu", name="dense")(x)
    return keras.Model(x, L.Dense(3, name="dense_1")(h), name="functional")


def _functional_branches():
    x = keras.Input((8,), name="x")
    shared = L.Dense(8, activation="tanh", name="dense")
    h1 = shared(x)
    h2 = L.Dense(8, name="dense_1")(x)
    s = L.Add(name="add")([h1, h2])
    again = shared(s)
    c = L.Concatenate(name="concatenate")([again, h1])
    y = L.Dense(2, name="dense_2")(c)
    return keras.Model(x, [y, s], name="branches")


def _functional_nested():
    xi = keras.Input((6,), name="input_layer")
    encoder = keras.Model(xi, L.Dense(4, activation="relu", name="dense")(xi), name="encoder")
    x = keras.Input((6,), name="input_layer")
    return keras.Model(x, L.Dense(2, name="dense")(encoder(x)), name="outer")


def _functional_two_inputs():
    a = keras.Input((3,), name="a")
    b = keras.Input((2,), name="b")
    c = L.Concatenate(name="concatenate")([a, b])
    return keras.Model([a, b], L.Dense(4, name="dense")(c), name="two_inputs")


def _embedding_mask_lstm():
    x = keras.Input((7,), dtype="int32", name="input_layer")
    e = L.Embedding(20, 4, mask_zero=True, name="embedding")(x)
    h = L.LSTM(5, return_sequences=True, name="lstm")(e)
    return keras.Model(x, L.Dense(2, name="dense")(L.LSTM(3, name="lstm_1")(h)),
                       name="masked_lstm")


def _masking_gru_sequential():
    return keras.Sequential([
        keras.Input((6, 3)),
        L.Masking(0.0, name="masking"),
        L.GRU(4, return_sequences=True, name="gru"),
        L.GRU(3, name="gru_1"),
        L.Dense(2, name="dense"),
    ], name="masked_gru")


def _padded_ids(rng):
    x = rng.integers(1, 20, size=(3, 7)).astype(np.int32)
    x[0, 4:] = 0  # right-padded
    x[1, 2] = 0   # a hole
    x[2, :] = 0   # all padding
    x[2, 0] = 5
    return [x]


def _zeroed_steps(rng):
    x = rng.uniform(-1, 1, size=(3, 6, 3)).astype(np.float32)
    x[0, 3:] = 0
    x[1, 0] = 0
    return [x]


def _floats(*shapes):
    return lambda rng: [rng.uniform(-1, 1, size=s).astype(np.float32) for s in shapes]


# name: (Keras builder, inputs). Keras's functional graph records a mask's computation as an
# operation of its own ("not_equal (NotEqual)" rows, connected to the layers taking the mask);
# kiln computes masks inside the model's call, so that model's summary is not compared.
NO_SUMMARY = {"embedding_mask_lstm"}
MODELS = {
    "sequential_cnn": (_sequential_cnn, _floats((2, 12, 12, 1))),
    "functional_chain": (_functional_chain, _floats((3, 16))),
    "functional_branches": (_functional_branches, _floats((3, 8))),
    "functional_nested": (_functional_nested, _floats((3, 6))),
    "functional_two_inputs": (_functional_two_inputs, _floats((3, 3), (3, 2))),
    "embedding_mask_lstm": (_embedding_mask_lstm, _padded_ids),
    "masking_gru_sequential": (_masking_gru_sequential, _zeroed_steps),
}


def _keras_summary(model, **kwargs):
    lines = []
    model.summary(print_fn=lambda s, line_break=True: lines.append(s), **kwargs)
    return "".join(lines)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_matches_keras(name, tmp_path, monkeypatch):
    # Keras narrows the table to the terminal's width; a wide "terminal" keeps its defaults.
    monkeypatch.setenv("COLUMNS", "200")
    build, make_inputs = MODELS[name]
    model = build()
    rng = np.random.default_rng(sum(map(ord, name)))
    for k, w in enumerate(model.weights):
        value = rng.uniform(-0.5, 0.5, size=tuple(w.shape)).astype(np.float32)
        w.assign(value)
        np.save(tmp_path / f"w_{k}.npy", value)
    inputs = make_inputs(rng)
    for i, x in enumerate(inputs):
        np.save(tmp_path / f"x_{i}.npy", x)
    theirs = model(inputs if len(inputs) > 1 else inputs[0])
    theirs = [np.asarray(t) for t in (theirs if isinstance(theirs, (list, tuple)) else [theirs])]

    listing = oracle.run([oracle.KILN_MODEL, tmp_path, name]).stdout.split()
    # Our variables in Keras's order (the paths below the layer agree; a nested model's are
    # prefixed with its name in ours, as Sequential's).
    assert [p.split("/")[-2:] for p in listing] == [w.path.split("/")[-2:] for w in model.weights]

    if name not in NO_SUMMARY:
        assert (tmp_path / "summary.txt").read_text() == _keras_summary(model), f"{name}: summary"
        assert (tmp_path / "summary_70.txt").read_text() == _keras_summary(
            model, line_length=70), f"{name}: summary at line_length=70"
    for j, t in enumerate(theirs):
        for mode in ("", "traced_"):
            ours = np.load(tmp_path / f"y_{mode}{j}.npy")
            atol = max(oracle.ATOL, 1e-6 * float(np.abs(t).max()))
            oracle.assert_same(ours, t, f"{name}: {mode}output {j}", rtol=RTOL, atol=atol)

    import tensorflow as tf
    loaded = tf.saved_model.load(str(tmp_path / "bundle"))
    out = loaded.signatures["serving_default"](
        **{f"x_{i}": tf.constant(x) for i, x in enumerate(inputs)})
    assert sorted(out) == [f"output_{j}" for j in range(len(theirs))], f"{name}: {list(out)}"
    for j, t in enumerate(theirs):
        atol = max(oracle.ATOL, 1e-6 * float(np.abs(t).max()))
        oracle.assert_same(out[f"output_{j}"].numpy(), t, f"{name}: TensorFlow on our bundle",
                           rtol=RTOL, atol=atol)
