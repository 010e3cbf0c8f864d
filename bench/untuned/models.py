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

# A second set (tenth session): kinds the first set lacks — pre-activation ResNets, Inception,
# text CNNs and BiLSTMs, forecasters, autoencoders, super-resolution, mixed precision, in-model
# preprocessing, 3-D convolutions, group norm, ASPP, YOLO-style heads, a tf_keras model.
def text_bilstm():
    import keras
    from keras import layers as L
    keras.utils.set_random_seed(22)
    ids = keras.Input((200,), dtype="int32", name="tokens")
    x = L.Embedding(20000, 128)(ids)
    x = L.Bidirectional(L.LSTM(64))(x)
    x = L.Dense(64, activation="relu")(x)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(x), name="text_bilstm")

def text_cnn():
    import keras
    from keras import layers as L
    keras.utils.set_random_seed(23)
    ids = keras.Input((500,), dtype="int32", name="tokens")
    x = L.Embedding(20000, 128)(ids)
    x = L.Conv1D(128, 5, activation="relu")(x); x = L.MaxPooling1D(5)(x)
    x = L.Conv1D(128, 5, activation="relu")(x); x = L.GlobalMaxPooling1D()(x)
    x = L.Dropout(0.5)(L.Dense(128, activation="relu")(x))
    return keras.Model(ids, L.Dense(4, activation="softmax")(x), name="text_cnn")

def lstm_forecaster():
    import keras
    from keras import layers as L
    keras.utils.set_random_seed(24)
    x_in = keras.Input((48, 8), name="history")
    x = L.LSTM(64, return_sequences=True)(x_in)
    x = L.LSTM(32)(x)
    return keras.Model(x_in, L.Dense(24)(x), name="lstm_forecaster")

def conv_autoencoder():
    import keras
    from keras import layers as L
    keras.utils.set_random_seed(25)
    x_in = keras.Input((64, 64, 1), name="image")
    x = L.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x_in)
    x = L.Conv2D(64, 3, strides=2, padding="same", activation="relu")(x)
    x = L.Conv2DTranspose(64, 3, strides=2, padding="same", activation="relu")(x)
    x = L.Conv2DTranspose(32, 3, strides=2, padding="same", activation="relu")(x)
    return keras.Model(x_in, L.Conv2D(1, 3, padding="same", activation="sigmoid")(x), name="conv_ae")

def espcn():
    import keras, tensorflow as tf
    from keras import layers as L
    keras.utils.set_random_seed(26)
    x_in = keras.Input((128, 128, 1), name="lowres")
    x = L.Conv2D(64, 5, padding="same", activation="tanh")(x_in)
    x = L.Conv2D(32, 3, padding="same", activation="tanh")(x)
    x = L.Conv2D(9, 3, padding="same")(x)
    out = L.Lambda(lambda t: tf.nn.depth_to_space(t, 3))(x)
    return keras.Model(x_in, out, name="espcn")

def mixed_resnet():
    import keras
    from keras import layers as L
    keras.utils.set_random_seed(27)
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        x_in = keras.Input((64, 64, 3), name="image")
        x = L.Conv2D(32, 3, padding="same", use_bias=False)(x_in)
        x = L.Activation("relu")(L.BatchNormalization()(x))
        for f in (32, 64, 128):
            s = 1 if f == 32 else 2
            h = L.Conv2D(f, 3, strides=s, padding="same", use_bias=False)(x)
            h = L.Activation("relu")(L.BatchNormalization()(h))
            h = L.BatchNormalization()(L.Conv2D(f, 3, padding="same", use_bias=False)(h))
            sc = x if s == 1 and x.shape[-1] == f else L.Conv2D(f, 1, strides=s)(x)
            x = L.Activation("relu")(L.Add()([h, sc]))
        x = L.GlobalAveragePooling2D()(x)
        out = L.Activation("softmax", dtype="float32")(L.Dense(10)(x))
        return keras.Model(x_in, out, name="mixed_resnet")
    finally:
        keras.mixed_precision.set_global_policy("float32")

def wide_deep_prep():
    import keras, numpy as np
    from keras import layers as L
    keras.utils.set_random_seed(28)
    city = keras.Input((1,), dtype="string", name="city")
    device = keras.Input((1,), dtype="string", name="device")
    num = keras.Input((6,), name="numeric")
    look = L.StringLookup(vocabulary=[f"city{i}" for i in range(200)])
    c = L.Flatten()(L.Embedding(look.vocabulary_size(), 16)(look(city)))
    h = L.Hashing(64)(device)
    d = L.CategoryEncoding(64, output_mode="one_hot")(h)
    norm = L.Normalization(mean=np.arange(6, dtype="float32"), variance=np.ones(6, "float32") * 4)
    n = norm(num)
    deep = L.Dense(64, activation="relu")(L.Concatenate()([c, n]))
    deep = L.Dense(32, activation="relu")(deep)
    out = L.Dense(1, activation="sigmoid")(L.Concatenate()([deep, d]))
    return keras.Model({"city": city, "device": device, "numeric": num}, out, name="wide_deep_prep")

def mobilenet_embed():
    import keras
    from keras import layers as L
    keras.utils.set_random_seed(29)
    base = keras.applications.MobileNet(weights=None, include_top=False, alpha=0.5,
                                        input_shape=(128, 128, 3), pooling="avg")
    x = L.Dense(128)(base.output)
    return keras.Model(base.input, L.UnitNormalization()(x), name="mobilenet_embed")

def video_c3d():
    import keras
    from keras import layers as L
    keras.utils.set_random_seed(30)
    x_in = keras.Input((8, 56, 56, 3), name="clip")
    x = L.Conv3D(32, 3, padding="same", activation="relu")(x_in); x = L.MaxPooling3D((1, 2, 2))(x)
    x = L.Conv3D(64, 3, padding="same", activation="relu")(x); x = L.MaxPooling3D(2)(x)
    x = L.Conv3D(128, 3, padding="same", activation="relu")(x)
    x = L.GlobalAveragePooling3D()(x)
    return keras.Model(x_in, L.Dense(10, activation="softmax")(x), name="video_c3d")

def groupnorm_unet():
    import keras
    from keras import layers as L
    keras.utils.set_random_seed(31)
    x_in = keras.Input((64, 64, 3), name="image")
    x = L.Conv2D(64, 3, padding="same")(x_in)
    skips = []
    for f in (64, 128):
        h = L.Activation("swish")(L.GroupNormalization(8)(x))
        h = L.Conv2D(f, 3, padding="same")(h)
        h = L.Activation("swish")(L.GroupNormalization(8)(h))
        h = L.Conv2D(f, 3, padding="same")(h)
        x = L.Add()([h, x if x.shape[-1] == f else L.Conv2D(f, 1)(x)])
        skips.append(x); x = L.Conv2D(f, 3, strides=2, padding="same")(x)
    for f, s in zip((128, 64), reversed(skips)):
        x = L.UpSampling2D(2)(x)
        x = L.Conv2D(f, 3, padding="same")(L.Concatenate()([x, s]))
        x = L.Activation("swish")(L.GroupNormalization(8)(x))
    return keras.Model(x_in, L.Conv2D(3, 3, padding="same")(x), name="groupnorm_unet")

def deeplab_lite():
    import keras
    from keras import layers as L
    keras.utils.set_random_seed(32)
    x_in = keras.Input((128, 128, 3), name="image")
    x = x_in
    for f in (32, 64, 128):
        x = L.Conv2D(f, 3, strides=2, padding="same", use_bias=False)(x)
        x = L.Activation("relu")(L.BatchNormalization()(x))
    branches = [L.Conv2D(64, 1, activation="relu")(x)]
    for d in (2, 4, 6):
        branches.append(L.Conv2D(64, 3, padding="same", dilation_rate=d, activation="relu")(x))
    g = L.GlobalAveragePooling2D(keepdims=True)(x)
    g = L.UpSampling2D(16, interpolation="bilinear")(L.Conv2D(64, 1, activation="relu")(g))
    x = L.Conv2D(64, 1, activation="relu")(L.Concatenate()(branches + [g]))
    x = L.Conv2D(21, 1)(x)
    return keras.Model(x_in, L.UpSampling2D(8, interpolation="bilinear")(x), name="deeplab_lite")

def yolo_tiny():
    import keras
    from keras import layers as L
    keras.utils.set_random_seed(33)
    def cbl(x, f, k=3):
        x = L.Conv2D(f, k, padding="same", use_bias=False)(x)
        return L.LeakyReLU(0.1)(L.BatchNormalization()(x))
    x_in = keras.Input((160, 160, 3), name="image")
    x = x_in
    for f in (16, 32, 64, 128):
        x = L.MaxPooling2D(2)(cbl(x, f))
    route = cbl(x, 256); x = L.MaxPooling2D(2)(route)
    x = cbl(cbl(x, 512), 256, 1)
    head1 = L.Conv2D(75, 1)(cbl(x, 512))
    x = L.UpSampling2D(2)(cbl(x, 128, 1))
    x = cbl(L.Concatenate()([x, route]), 256)
    head2 = L.Conv2D(75, 1)(x)
    return keras.Model(x_in, [head1, head2], name="yolo_tiny")

def tfk_gru_classifier():
    import tf_keras as tfk
    tfk.utils.set_random_seed(34)
    L = tfk.layers
    ids = tfk.Input((80,), dtype="int32", name="tokens")
    x = L.Embedding(10000, 64)(ids)
    x = L.GRU(96, return_sequences=True)(x)
    x = L.GRU(96)(x)
    return tfk.Model(ids, L.Dense(6, activation="softmax")(x), name="tfk_gru")

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
    "inceptionv3_160": (app("InceptionV3", 160), [1, 8]),
    "resnet50v2_160": (app("ResNet50V2", 160), [1, 8]),
    "text_bilstm": (text_bilstm, [1, 32]),
    "text_cnn": (text_cnn, [1, 32]),
    "lstm_forecaster": (lstm_forecaster, [1, 256]),
    "conv_ae_64": (conv_autoencoder, [1, 32]),
    "espcn_128": (espcn, [1, 8]),
    "mixed_resnet_64": (mixed_resnet, [1, 32]),
    "wide_deep_prep": (wide_deep_prep, [1, 256]),
    "mobilenet_embed_128": (mobilenet_embed, [1, 16]),
    "video_c3d": (video_c3d, [1, 4]),
    "groupnorm_unet_64": (groupnorm_unet, [1, 8]),
    "deeplab_lite_128": (deeplab_lite, [1, 8]),
    "yolo_tiny_160": (yolo_tiny, [1, 8]),
    "tfk_gru": (tfk_gru_classifier, [1, 32]),
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
        if spec.dtype == tf.string:
            v = np.array([f"{k}{i}".encode() for i in rng.integers(0, 250, shape).ravel()]).reshape(shape)
        elif np.issubdtype(dt, np.floating):
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
        if type(model).__module__.startswith("tf_keras"):  # tf_keras's SavedModel: model.save
            model.save(str(d), save_format="tf")
        else:
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
