"""Models nobody tuned for: Keras applications and hand-built deployed kinds (random init,
model.export()), their tf2onnx conversion and inputs, for bench/untuned/run.py.
  python bench/untuned/models.py build [names...]
writes bench/.cache/untuned/<name>/ (the SavedModel), <name>.onnx and the inputs per batch.
"""
import json, os, subprocess, sys, traceback
from pathlib import Path
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
CACHE = Path(os.environ.get(
    "UNTUNED_CACHE", Path(__file__).resolve().parents[1] / ".cache" / "untuned"))

# name -> (builder, [batches], input kind)
def app(ctor, size, **kw):
    def b():
        import keras
        keras.utils.set_random_seed(4)
        return getattr(keras.applications, ctor)(weights=None, input_shape=(size, size, 3), **kw)
    return b

def vit_small():
    import keras, numpy as np
    from keras import layers as L, ops
    keras.utils.set_random_seed(11)
    img, patch, dim, depth, heads = 224, 16, 384, 6, 6
    n = (img // patch) ** 2
    x_in = keras.Input((img, img, 3), name="image")
    x = L.Conv2D(dim, patch, strides=patch)(x_in)
    x = L.Reshape((n, dim))(x)
    class AddClsPos(L.Layer):
        def build(self, s):
            self.cls = self.add_weight(shape=(1, 1, dim), initializer="random_normal")
            self.pos = self.add_weight(shape=(1, n + 1, dim), initializer="random_normal")
        def call(self, x):
            b = ops.shape(x)[0]
            c = ops.broadcast_to(self.cls, (b, 1, dim))
            return ops.concatenate([c, x], axis=1) + self.pos
    x = AddClsPos()(x)
    for _ in range(depth):
        h = L.LayerNormalization(epsilon=1e-6)(x)
        x = x + L.MultiHeadAttention(heads, dim // heads)(h, h)
        h = L.LayerNormalization(epsilon=1e-6)(x)
        h = L.Dense(dim * 4, activation="gelu")(h)
        x = x + L.Dense(dim)(h)
    x = L.LayerNormalization(epsilon=1e-6)(x)
    out = L.Dense(1000)(x[:, 0])
    return keras.Model(x_in, out, name="vit_small")

def distilbert():
    import keras
    from keras import layers as L, ops
    keras.utils.set_random_seed(12)
    seq, hid, heads, ffn, layers, vocab = 128, 768, 12, 3072, 6, 30522
    ids = keras.Input((seq,), dtype="int32", name="input_ids")
    mask = keras.Input((seq,), dtype="int32", name="attention_mask")
    x = L.Embedding(vocab, hid)(ids)
    pos = L.Embedding(512, hid)(ops.arange(seq)[None, :])
    x = L.LayerNormalization(epsilon=1e-12)(x + pos)
    am = L.Lambda(lambda m: ops.broadcast_to(ops.cast(m[:, None, :], "bool"), (ops.shape(m)[0], seq, seq)))(mask)
    for _ in range(layers):
        a = L.MultiHeadAttention(heads, hid // heads)(x, x, attention_mask=am)
        x = L.LayerNormalization(epsilon=1e-12)(x + a)
        h = L.Dense(ffn, activation="gelu")(x)
        x = L.LayerNormalization(epsilon=1e-12)(x + L.Dense(hid)(h))
    pooled = L.Dense(hid, activation="tanh")(x[:, 0])
    out = L.Dense(2)(pooled)
    return keras.Model([ids, mask], out, name="distilbert")

def unet():
    import keras
    from keras import layers as L
    keras.utils.set_random_seed(13)
    x_in = keras.Input((128, 128, 3), name="image")
    x = x_in; skips = []
    for f in (32, 64, 128, 256):
        x = L.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = L.BatchNormalization()(x)
        x = L.Conv2D(f, 3, padding="same", activation="relu")(x)
        skips.append(x); x = L.MaxPooling2D(2)(x)
    x = L.Conv2D(512, 3, padding="same", activation="relu")(x)
    x = L.Conv2D(512, 3, padding="same", activation="relu")(x)
    for f, s in zip((256, 128, 64, 32), reversed(skips)):
        x = L.Conv2DTranspose(f, 2, strides=2, padding="same")(x)
        x = L.Concatenate()([x, s])
        x = L.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = L.BatchNormalization()(x)
        x = L.Conv2D(f, 3, padding="same", activation="relu")(x)
    out = L.Conv2D(4, 1, activation="softmax")(x)
    return keras.Model(x_in, out, name="unet")

def audio_cnn():
    import keras
    from keras import layers as L
    keras.utils.set_random_seed(14)
    x_in = keras.Input((16000, 1), name="waveform")
    x = L.Conv1D(32, 80, strides=4, activation="relu")(x_in)
    x = L.BatchNormalization()(x); x = L.MaxPooling1D(4)(x)
    for f in (32, 64, 128):
        x = L.Conv1D(f, 3, padding="same", activation="relu")(x)
        x = L.BatchNormalization()(x); x = L.MaxPooling1D(4)(x)
    x = L.GlobalAveragePooling1D()(x)
    out = L.Dense(35, activation="softmax")(L.Dense(128, activation="relu")(x))
    return keras.Model(x_in, out, name="audio_cnn")

def lstm_tagger():
    import keras
    from keras import layers as L
    keras.utils.set_random_seed(15)
    ids = keras.Input((64,), dtype="int32", name="tokens")
    x = L.Embedding(10000, 128)(ids)
    x = L.LSTM(256, return_sequences=True)(x)
    x = L.LSTM(256, return_sequences=True)(x)
    out = L.TimeDistributed(L.Dense(20, activation="softmax"))(x)
    return keras.Model(ids, out, name="lstm_tagger")

def gru_attn():
    import keras
    from keras import layers as L, ops
    keras.utils.set_random_seed(16)
    ids = keras.Input((100,), dtype="int32", name="tokens")
    x = L.Embedding(20000, 128)(ids)
    h = L.GRU(128, return_sequences=True)(x)
    s = L.Dense(1)(L.Dense(64, activation="tanh")(h))       # (B,T,1)
    w = L.Softmax(axis=1)(s)
    pooled = L.Lambda(lambda t: ops.sum(t[0] * t[1], axis=1))([h, w])
    out = L.Dense(5, activation="softmax")(pooled)
    return keras.Model(ids, out, name="gru_attn")

def dlrm():
    import keras
    from keras import layers as L, ops
    keras.utils.set_random_seed(17)
    ntab, dim = 8, 32
    dense = keras.Input((13,), name="dense")
    cats = keras.Input((ntab,), dtype="int32", name="sparse")
    bot = L.Dense(dim, activation="relu")(L.Dense(64, activation="relu")(dense))
    sizes = [100000, 50000, 20000, 10000, 5000, 1000, 500, 100]
    embs = [L.Embedding(sizes[i], dim)(cats[:, i]) for i in range(ntab)]
    feats = L.Lambda(lambda t: ops.stack(t, axis=1))([bot] + embs)      # (B, 9, dim)
    inter = L.Lambda(lambda f: ops.matmul(f, ops.transpose(f, (0, 2, 1))))(feats)  # (B,9,9)
    inter = L.Flatten()(inter)
    top = L.Concatenate()([bot, inter])
    top = L.Dense(256, activation="relu")(top)
    top = L.Dense(128, activation="relu")(top)
    out = L.Dense(1, activation="sigmoid")(top)
    return keras.Model([dense, cats], out, name="dlrm")

def tabular_mlp():
    import keras
    from keras import layers as L
    keras.utils.set_random_seed(18)
    x_in = keras.Input((64,), name="features")
    x = x_in
    for u in (512, 256, 128):
        x = L.Dense(u)(x); x = L.BatchNormalization()(x); x = L.Activation("relu")(x); x = L.Dropout(0.3)(x)
    out = L.Dense(1, activation="sigmoid")(x)
    return keras.Model(x_in, out, name="tabular_mlp")

def kws_dscnn():
    import keras
    from keras import layers as L
    keras.utils.set_random_seed(19)
    x_in = keras.Input((49, 10, 1), name="mfcc")
    x = L.Conv2D(64, (10, 4), strides=2, padding="same")(x_in)
    x = L.Activation("relu")(L.BatchNormalization()(x))
    for _ in range(4):
        x = L.DepthwiseConv2D(3, padding="same")(x)
        x = L.Activation("relu")(L.BatchNormalization()(x))
        x = L.Conv2D(64, 1)(x)
        x = L.Activation("relu")(L.BatchNormalization()(x))
    x = L.GlobalAveragePooling2D()(x)
    out = L.Dense(12, activation="softmax")(x)
    return keras.Model(x_in, out, name="kws_dscnn")

def tcn():
    import keras
    from keras import layers as L
    keras.utils.set_random_seed(20)
    x_in = keras.Input((256, 16), name="series")
    x = L.Conv1D(64, 1)(x_in)
    for d in (1, 2, 4, 8, 16, 32):
        h = L.Conv1D(64, 3, padding="causal", dilation_rate=d, activation="relu")(x)
        h = L.Conv1D(64, 3, padding="causal", dilation_rate=d, activation="relu")(h)
        x = L.Add()([x, h])
    out = L.Dense(1)(x[:, -1])
    return keras.Model(x_in, out, name="tcn")

def gpt_decoder():
    import keras
    from keras import layers as L, ops
    keras.utils.set_random_seed(21)
    seq, dim, heads, layers, vocab = 128, 512, 8, 6, 16000
    ids = keras.Input((seq,), dtype="int32", name="tokens")
    x = L.Embedding(vocab, dim)(ids) + L.Embedding(seq, dim)(ops.arange(seq)[None, :])
    for _ in range(layers):
        h = L.LayerNormalization(epsilon=1e-5)(x)
        x = x + L.MultiHeadAttention(heads, dim // heads)(h, h, use_causal_mask=True)
        h = L.LayerNormalization(epsilon=1e-5)(x)
        x = x + L.Dense(dim)(L.Dense(4 * dim, activation="gelu")(h))
    x = L.LayerNormalization(epsilon=1e-5)(x)
    out = L.Dense(vocab)(x[:, -1])       # next-token logits of the last position
    return keras.Model(ids, out, name="gpt_decoder")

MODELS = {
    "densenet121_160": (app("DenseNet121", 160), [1, 8]),
    "xception_160": (app("Xception", 160), [1, 8]),
    "nasnetmobile_160": (app("NASNetMobile", 160), [1, 8]),
    "effnetv2b0_160": (app("EfficientNetV2B0", 160, include_preprocessing=False), [1, 8]),
    "convnext_tiny_160": (app("ConvNeXtTiny", 160, include_preprocessing=False), [1, 4]),
    "mobilenetv3small_224": (app("MobileNetV3Small", 224, include_preprocessing=False), [1, 32]),
    "vit_small_224": (vit_small, [1, 8]),
    "distilbert_128": (distilbert, [1, 8]),
    "unet_128": (unet, [1, 8]),
    "audio_cnn_16k": (audio_cnn, [1, 32]),
    "lstm_tagger_64": (lstm_tagger, [1, 32]),
    "gru_attn_100": (gru_attn, [1, 32]),
    "dlrm": (dlrm, [1, 256]),
    "tabular_mlp": (tabular_mlp, [1, 1024]),
    "kws_dscnn": (kws_dscnn, [1, 32]),
    "tcn_256": (tcn, [1, 32]),
    "gpt_decoder_128": (gpt_decoder, [1, 8]),
}

def make_inputs(name, d, batch):
    import numpy as np, tensorflow as tf
    out = CACHE / f"{name}.b{batch}.inputs"
    if (out / "done").exists():
        return {p.stem: str(p) for p in out.glob("*.npy")}
    out.mkdir(parents=True, exist_ok=True)
    fn = tf.saved_model.load(str(d)).signatures["serving_default"]
    rng = np.random.default_rng(batch * 7 + sum(map(ord, name)))
    files = {}
    for k, spec in fn.structured_input_signature[1].items():
        shape = [batch if (i == 0 and s is None) else (s or 1) for i, s in enumerate(spec.shape.as_list())]
        dt = spec.dtype.as_numpy_dtype
        if np.issubdtype(dt, np.floating):
            v = rng.uniform(-1, 1, shape).astype(dt)
        elif k == "attention_mask":
            v = np.ones(shape, dt); v[:, shape[1] * 3 // 4:] = 0
        else:
            v = rng.integers(0, 100, shape).astype(dt)
        np.save(out / f"{k}.npy", v); files[k] = str(out / f"{k}.npy")
    (out / "done").write_text("1")
    return files

def build(name):
    d = CACHE / name
    if not (d / "saved_model.pb").exists():
        model = MODELS[name][0]()
        model.export(str(d), format="tf_saved_model", verbose=False)
        (CACHE / f"{name}.params").write_text(str(model.count_params()))
    onnx = CACHE / f"{name}.onnx"
    if not onnx.exists() and not (CACHE / f"{name}.onnx.failed").exists():
        p = subprocess.run([sys.executable, "-m", "tf2onnx.convert", "--saved-model", str(d),
                            "--signature_def", "serving_default", "--output", str(onnx)],
                           capture_output=True, text=True)
        if p.returncode != 0:
            (CACHE / f"{name}.onnx.failed").write_text(p.stderr[-3000:])
        else:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from fix_erfc import replace_erfc
            replace_erfc(str(onnx))
    ins = {b: make_inputs(name, d, b) for b in MODELS[name][1]}
    return {"model": str(d), "onnx": str(onnx) if onnx.exists() else None, "inputs": ins}

if __name__ == "__main__":
    CACHE.mkdir(parents=True, exist_ok=True)
    names = sys.argv[2:] or list(MODELS)
    res = {}
    for n in names:
        try:
            res[n] = build(n); print(n, "ok", "onnx" if res[n]["onnx"] else "NO-ONNX", file=sys.stderr, flush=True)
        except Exception as e:
            traceback.print_exc(); res[n] = {"error": str(e)[-300:]}
    prev = json.loads((CACHE / "built.json").read_text()) if (CACHE / "built.json").exists() else {}
    prev.update(res); (CACHE / "built.json").write_text(json.dumps(prev, indent=1))
