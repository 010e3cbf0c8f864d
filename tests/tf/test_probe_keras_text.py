"""Keras text, tabular and sequence models as users deploy them (model.export, a tf.Module over
tf.io.parse_example, tf_keras model.save): preprocessing layers inside the model fed with
awkward strings (invalid UTF-8, Unicode whitespace, vocabulary files), masked RNNs and attention
with padding in the middle, variable lengths and empty batches run through `savedmodel-cli run`
with TensorFlow's outputs; and a serving plan that `savedmodel-cli compile` writes for a
tf_keras bundle must serve a load of its signature."""
import os

import numpy as np
import pytest

import oracle

CORPUS = ["The quick brown fox jumps.", "over the LAZY dog!", "a fox, a dog; and a cat",
          "naïve Café ÉCOLE über", "dog-eat-dog world", "cat cat dog fox the the the"]
TEXT = [b"The fox!", b"", b"QUICK, brown: dog...", b"caf\xc3 bad\xff\xfeutf8",
        b"tab\there\nnew\rline\x0bvt", b"nbsp\xc2\xa0ideo\xe3\x80\x80space", b"   lead  trail ",
        b"\xf0\x9f\x98\x80 emoji \xe2\x80\x94", b"x\x80\x80y \xed\xa0\x80sur", b"A" * 40 + b" the"]
PADDED = np.array([[5, 3, 8, 0, 0, 0], [5, 0, 8, 2, 0, 0], [0, 0, 4, 4, 1, 9],
                   [0, 0, 0, 0, 0, 0], [7, 0, 0, 0, 0, 1]], np.int32)


def _text(tf, keras, L, d):
    vocab = os.path.join(d, "vocab.txt")
    with open(vocab, "w", encoding="utf-8") as f:
        f.write("\n".join(["the", "quick", "fox", "dog", "a", "café", "lazy"]) + "\n")
    keras.utils.set_random_seed(0)
    text = keras.Input(shape=(), dtype="string", name="text")
    col = keras.Input(shape=(1,), dtype="string", name="col")
    tv = L.TextVectorization(max_tokens=30, output_sequence_length=8)
    tv.adapt(tf.constant(CORPUS))
    chars = L.TextVectorization(split="character", output_sequence_length=12)
    chars.adapt(tf.constant(CORPUS))
    ngrams = L.TextVectorization(output_mode="tf_idf", ngrams=2)
    ngrams.adapt(tf.constant(CORPUS))
    ids = tv(text)
    score = L.Dense(2)(L.GlobalAveragePooling1D()(L.Embedding(31, 4, mask_zero=True)(ids)))
    outs = {"ids": ids, "score": score, "chars": chars(text), "tfidf": ngrams(col),
            "file": L.TextVectorization(vocabulary=vocab, output_sequence_length=5)(text),
            "lookup": L.StringLookup(vocabulary=vocab, mask_token="", num_oov_indices=2)(col),
            "hash": L.Hashing(num_bins=7, salt=[3, 11])(col)}
    model = keras.Model({"text": text, "col": col}, outs)
    t = np.array(TEXT, dtype="S")
    return model, {"many": {"text": t, "col": t.reshape(-1, 1)},
                   "one": {"text": t[3:4], "col": t[3:4].reshape(-1, 1)},
                   "empty": {"text": t[:0], "col": t[:0].reshape(0, 1)}}


def _sequences(tf, keras, L, d):
    keras.utils.set_random_seed(0)
    t = keras.Input(shape=(None,), dtype="int32", name="tokens")
    e = L.Embedding(12, 6, mask_zero=True)(t)
    outs = {"lstm": L.LSTM(4)(e), "gru_seq": L.GRU(3, return_sequences=True)(e),
            "bi": L.Bidirectional(L.LSTM(3), merge_mode="sum")(e),
            "gru_back": L.GRU(3, reset_after=False, go_backwards=True)(e),
            "avg": L.GlobalAveragePooling1D()(e),
            "mha": L.GlobalAveragePooling1D()(L.MultiHeadAttention(2, 3)(e, e)),
            "causal": L.MultiHeadAttention(2, 3)(e, e, use_causal_mask=True)}
    model = keras.Model(t, outs)
    rng = np.random.default_rng(0)
    cases = {"padded": {"tokens": PADDED}, "one": {"tokens": PADDED[1:2]},
             "empty": {"tokens": PADDED[:0]}}
    for n in (1, 9):
        cases[f"len{n}"] = {"tokens": rng.integers(0, 12, (3, n)).astype(np.int32)}
    return model, cases


def _examples(tf, keras, L, d):
    """A wide & deep model behind tf.io.parse_example (a tf.Module, tf.saved_model.save)."""
    keras.utils.set_random_seed(0)
    age = keras.Input(shape=(1,), name="age")
    city = keras.Input(shape=(1,), dtype="string", name="city")
    zipc = keras.Input(shape=(1,), dtype="int64", name="zip")
    desc = keras.Input(shape=(), dtype="string", name="desc")
    tv = L.TextVectorization(max_tokens=25, output_sequence_length=6)
    tv.adapt(tf.constant(CORPUS))
    wide = L.Concatenate()([
        L.StringLookup(vocabulary=["paris", "rome", "oslo"], output_mode="one_hot")(city),
        L.Hashing(num_bins=8, output_mode="one_hot")(zipc),
        L.HashedCrossing(num_bins=6, output_mode="one_hot")((city[:, 0], zipc[:, 0])),
        L.Discretization(bin_boundaries=[18., 30., 50.], output_mode="one_hot")(age)])
    deep = L.Concatenate()([L.Normalization(mean=40, variance=100)(age), L.GlobalAveragePooling1D()(
        L.Embedding(26, 4, mask_zero=True)(tv(desc)))])
    logit = L.Dense(1)(L.Concatenate()([wide, L.Dense(4, activation="relu")(deep)]))
    model = keras.Model({"age": age, "city": city, "zip": zipc, "desc": desc}, logit)
    spec = {"age": tf.io.FixedLenFeature([1], tf.float32),
            "city": tf.io.FixedLenFeature([1], tf.string, default_value=[""]),
            "zip": tf.io.FixedLenFeature([1], tf.int64, default_value=[0]),
            "desc": tf.io.VarLenFeature(tf.string), "tags": tf.io.RaggedFeature(tf.string)}

    class Serve(tf.Module):
        def __init__(self):
            self.model = model

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
        def serve(self, examples):
            f = tf.io.parse_example(examples, spec)
            text = tf.strings.reduce_join(tf.sparse.to_dense(f.pop("desc")), axis=1,
                                          separator=" ")
            tags = f.pop("tags")
            return {"logit": self.model({**f, "desc": text}), "ntags": tags.row_lengths(),
                    "tags": tags.to_tensor(default_value="?")}

    def ex(**feats):
        e = tf.train.Example()
        for k, v in feats.items():
            f = e.features.feature[k]
            if isinstance(v[0], float):
                f.float_list.value.extend(v)
            elif isinstance(v[0], int):
                f.int64_list.value.extend(v)
            else:
                f.bytes_list.value.extend([s.encode() for s in v])
        return e.SerializeToString()

    # Each record ends in a non-zero byte: NumPy's 'S' arrays drop trailing zeros. Each has a
    # description: an all-padding one averages 0/0, NaN in TF's Eigen kernels (and ours) but
    # finite with TF's oneDNN ops on.
    recs = [ex(age=[33.0], city=["rome"], zip=[75001], desc=["quick", "fox"], tags=["a", "b"]),
            ex(age=[70.0], desc=["the"], tags=["x"]),
            ex(age=[12.0], city=["oslo"], zip=[7], desc=["zzz"])]
    assert not any(r.endswith(b"\0") for r in recs)
    module = Serve()
    return (module, {"serving_default": module.serve}), {
        "many": {"examples": np.array(recs, dtype="S")},
        "one": {"examples": np.array(recs[1:2], dtype="S")}}


MODELS = {"text": _text, "sequences": _sequences, "examples": _examples}


@pytest.fixture(scope="module")
def text_models(tmp_path_factory):
    """{name: (bundle dir, {case: (inputs {key: .npy}, TF's outputs {key: array})})}."""
    import tensorflow as tf
    import keras
    from keras import layers as L
    root = tmp_path_factory.mktemp("keras_text")
    out = {}
    for name, make in MODELS.items():
        d = root / name
        d.mkdir()
        model, cases = make(tf, keras, L, str(d))
        if isinstance(model, tuple):
            tf.saved_model.save(model[0], str(d / "sm"), signatures=model[1])
        else:
            model.export(str(d / "sm"), verbose=False)
        sig = tf.saved_model.load(str(d / "sm")).signatures["serving_default"]
        runs = {}
        for case, feed in cases.items():
            paths = {}
            for k, v in feed.items():
                paths[k] = d / f"{case}_{k}.npy"
                np.save(paths[k], v)
            res = sig(**{k: tf.constant(v) for k, v in feed.items()})
            runs[case] = (paths, {k: np.asarray(v) for k, v in res.items()})
        out[name] = (d / "sm", runs)
    return out


@pytest.mark.parametrize("name", list(MODELS))
def test_keras_text_model_gives_tf_outputs(text_models, name, tmp_path):
    d, runs = text_models[name]
    for case, (inputs, theirs) in sorted(runs.items()):
        ours = oracle.kiln_run(d, "serving_default", inputs, tmp_path / case)
        oracle.assert_model_outputs(ours, theirs, f"{name} ({case})")


def _compile_and_serve(d, inputs):
    oracle.run([oracle.KILN_CLI, "compile", "--dir", d])
    oracle.run([oracle.KILN_CLI, "run", "--dir", d, "--tag_set", "serve", "--signature_def",
                "serving_default", "--input_exprs", inputs, "--plan", "require"])


def test_tf_keras_text_rnn_plan_serves_a_signature_load(tmp_path):
    """tf_keras saves the adapt step of an adapted TextVectorization (tf.data's IteratorGetNext,
    an op we lack) and the cuDNN path of its LSTM: neither writes a variable, so compile (which
    loads every function) freezes the LSTM's weights as a load of the signature does."""
    import tensorflow as tf
    import tf_keras as K
    K.utils.set_random_seed(0)
    tv = K.layers.TextVectorization(max_tokens=30, output_sequence_length=7)
    tv.adapt(tf.constant(CORPUS))
    text = K.Input(shape=(1,), dtype=tf.string, name="text")
    e = K.layers.Embedding(31, 4, mask_zero=True)(tv(text))
    model = K.Model(text, K.layers.Dense(2)(K.layers.Bidirectional(K.layers.LSTM(3))(e)))
    d = tmp_path / "text_lstm"
    model.save(str(d), save_format="tf")
    _compile_and_serve(d, "text=[['a quick fox'],['']]")


def test_tf_keras_plan_serves_a_signature_load(tmp_path):
    """tf_keras saves the training call, which assigns the batch norm's moving averages: compile
    (which loads every function) cannot freeze them, a load of the signature alone does, and the
    plan holds the graph of each kind of load."""
    import tensorflow as tf  # noqa: F401
    import tf_keras as K
    K.utils.set_random_seed(0)
    x = K.Input(shape=(4,), name="x")
    model = K.Model(x, K.layers.Dense(2)(K.layers.BatchNormalization()(K.layers.Dense(8)(x))))
    model.compile("adam", "mse")
    model.fit(np.ones((8, 4)), np.ones((8, 2)), verbose=0)
    d = tmp_path / "bn"
    model.save(str(d), save_format="tf")
    _compile_and_serve(d, "x=[[1,2,3,4]]")
