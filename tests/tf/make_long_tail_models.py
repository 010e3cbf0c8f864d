"""The long tail of issue 21, as TensorFlow 2.21 / Keras 3 write it: mixed-precision Keras models
(float16 and bfloat16 policies), half-precision signatures, and tf.Modules for the op areas a
fixed op list left out. TensorFlow's outputs are recorded for test_long_tail_models.py.

    python make_long_tail_models.py OUT [NAME...]

MODELS says, per model, the tolerance its outputs are held to: "float32" (1e-4 relative, as
the generated models), "float16" or "bfloat16" (the policy's compute type: TF and kiln round
intermediate results to it in different places, so they agree to a few units of its last
place, relative to the output's largest magnitude), "float16_sum" or "bfloat16_sum" (one long
product, accumulated in float32 and rounded once as TF's CPU MatMul does: within about one
unit of the last place of the largest output; a sum rounded to half precision at every step
misses by several).
"""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

import recording  # noqa: E402

BATCH = 2

# name: tolerance class (see the module docstring)
MODELS = {
    "cnn_mixed_float16": "float16",
    "cnn_mixed_bfloat16": "bfloat16",
    "transformer_mixed_float16": "float16",
    "transformer_mixed_bfloat16": "bfloat16",
    "lstm_mixed_float16": "float16",
    "gru_mixed_bfloat16": "bfloat16",
    "half_signature": "float16",
    "stateless_random": "float32",
    "fake_quant": "float32",
    "linalg": "float32",
    "parse_example": "float32",
    "complex_signal": "float32",
    "tf1_control_flow": "float32",
    "image_bytes": "float32",
    "speech_commands": "float32",
    "batch_function": "float32",
    "ctc_decoders": "float32",
    "decoder_steps": "float32",
    "wide_dense_float16": "float16_sum",
    "wide_dense_bfloat16": "bfloat16_sum",
    "dense_int8_quantized": "float32",
    "dense_float8_quantized": "float32",
}


def _images(size, channels=3, seed=3):
    return np.random.default_rng(seed).uniform(-1, 1, (BATCH, size, size, channels)).astype(
        np.float32)


def _cnn():
    import keras
    L = keras.layers
    img = keras.Input((16, 16, 3), name="image")
    x = L.Conv2D(8, 3, activation="relu")(img)
    x = L.BatchNormalization()(x)
    x = L.DepthwiseConv2D(3, padding="same", activation="relu6")(x)
    x = L.SeparableConv2D(8, 3, padding="same")(x)
    x = L.MaxPooling2D()(x)
    x = L.Conv2DTranspose(4, 3, strides=2, padding="same")(x)
    x = L.AveragePooling2D(2)(x)
    x = L.GlobalAveragePooling2D()(x)
    x = L.Dense(10)(x)
    out = L.Activation("softmax", dtype="float32")(x)
    return keras.Model(img, out), {"image": _images(16)}


def _transformer():
    import keras
    L = keras.layers
    seq, dim = 8, 16
    tokens = keras.Input((seq,), dtype="int32", name="tokens")
    x = L.Embedding(50, dim)(tokens)
    a = L.MultiHeadAttention(num_heads=2, key_dim=8)(x, x)
    x = L.LayerNormalization()(x + a)
    f = L.Dense(dim)(L.Dense(32, activation="gelu")(x))
    x = L.LayerNormalization()(x + f)
    out = L.Dense(3, dtype="float32")(L.GlobalAveragePooling1D()(x))
    t = np.random.default_rng(4).integers(0, 50, (BATCH, seq)).astype(np.int32)
    return keras.Model(tokens, out), {"tokens": t}


def _recurrent(layer):
    def make():
        import keras
        L = keras.layers
        seq = keras.Input((6, 4), name="seq")
        x = layer(L)(seq)
        out = L.Dense(2, dtype="float32")(x)
        s = np.random.default_rng(5).uniform(-1, 1, (BATCH, 6, 4)).astype(np.float32)
        return keras.Model(seq, out), {"seq": s}
    return make


KERAS = {
    "cnn": _cnn,
    "transformer": _transformer,
    "lstm": _recurrent(lambda L: L.LSTM(8)),
    "gru": _recurrent(lambda L: L.GRU(8, return_sequences=True)),
}


def _export_keras(name):
    arch, policy = name.split("_mixed_")

    def make(bundle):
        import keras
        keras.mixed_precision.set_global_policy("mixed_" + policy)
        try:
            keras.utils.set_random_seed(recording.seed_of(name))
            model, feed = KERAS[arch]()
            recording.randomize_weights(model, recording.seed_of(name))
            model.export(bundle, format="tf_saved_model", verbose=False)
        finally:
            keras.mixed_precision.set_global_policy("float32")
        return "model.export", {"serving_default": feed}
    return make


def _half_signature(bundle):
    """float16 in and out, float16 and bfloat16 variables, a bfloat16 output."""
    import tensorflow as tf

    class Half(tf.Module):
        def __init__(self):
            super().__init__()
            rng = np.random.default_rng(6)
            self.w = tf.Variable(rng.uniform(-1, 1, (4, 3)).astype(np.float16))
            self.wb = tf.Variable(rng.uniform(-1, 1, (4, 3)).astype(np.float32), dtype=tf.bfloat16)

        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float16)])
        def f(self, x):
            y = tf.matmul(x, self.w)
            z = tf.matmul(tf.cast(x, tf.bfloat16), self.wb)
            return {"softmax": tf.nn.softmax(y), "relu_bf16": tf.nn.relu(z),
                    "sum": tf.reduce_sum(x, axis=1), "as_float": tf.cast(z, tf.float32),
                    "sqrt": tf.sqrt(tf.abs(x)), "top": tf.math.top_k(y, 2).values}

    m = Half()
    tf.saved_model.save(m, bundle, signatures={"serving_default": m.f})
    x = np.random.default_rng(7).uniform(-2, 2, (BATCH, 4)).astype(np.float16)
    return "tf.saved_model.save", {"serving_default": {"x": x}}


def _wide_dense(dtype_name):
    """One long half-precision product (1024 terms) with a bias: what a Dense layer of a
    mixed-precision model computes."""
    def make(bundle):
        import tensorflow as tf
        dt = tf.as_dtype(dtype_name)

        class Wide(tf.Module):
            def __init__(self):
                super().__init__()
                rng = np.random.default_rng(8)
                self.w = tf.Variable(tf.cast(rng.uniform(-0.1, 0.1, (1024, 16)), dt))
                self.b = tf.Variable(tf.cast(rng.uniform(-1, 1, (16,)), dt))

            @tf.function(input_signature=[tf.TensorSpec([None, 1024], tf.float32)])
            def f(self, x):
                h = tf.cast(x, dt)
                return {"dense": tf.nn.bias_add(tf.matmul(h, self.w), self.b),
                        "batched": tf.matmul(h[None], self.w[None])}

        m = Wide()
        tf.saved_model.save(m, bundle, signatures={"serving_default": m.f})
        x = np.random.default_rng(9).uniform(-1, 1, (BATCH, 1024)).astype(np.float32)
        return "tf.saved_model.save", {"serving_default": {"x": x}}
    return make


def _dense_quantized(mode):
    """Keras 3's model.quantize(mode). "int8": int8 kernels, inputs quantized per row on each
    call, BatchMatMulV3 of int8 x int8 into int32, then rescaled. "float8": inputs and kernels
    scaled and cast to float8_e4m3fn and back (quantize-dequantize), scales from amax histories."""
    def make(bundle):
        return _export_quantized(bundle, mode)
    return make


def _export_quantized(bundle, mode):
    import keras
    L = keras.layers
    keras.utils.set_random_seed(recording.seed_of("dense_" + mode + "_quantized"))
    x = keras.Input((4, 24), name="x")
    h = L.Dense(32, activation="relu")(x)
    h = L.EinsumDense("abc,cd->abd", output_shape=(4, 8), bias_axes="d")(h)
    out = L.Dense(3)(L.Flatten()(h))
    model = keras.Model(x, out)
    recording.randomize_weights(model, recording.seed_of("dense_" + mode + "_quantized"))
    model.quantize(mode)
    model.export(bundle, format="tf_saved_model", verbose=False)
    feed = np.random.default_rng(10).uniform(-2, 2, (BATCH, 4, 24)).astype(np.float32)
    return "model.export", {"serving_default": {"x": feed}}


def _stateless_random(bundle):
    """tf.random.stateless_* (the V2 ops with key, counter and algorithm), the V1 raw ops with a
    seed input, and Keras's seeded Dropout / GaussianNoise / RandomFlip run in training mode."""
    import tensorflow as tf
    raw = tf.raw_ops

    class Random(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32),
                                      tf.TensorSpec([2], tf.int64)])
        def f(self, x, seed):
            out = {"uniform": x + tf.random.stateless_uniform(tf.shape(x), seed=seed)}
            for dt in (tf.float64, tf.float16, tf.bfloat16):
                u = tf.random.stateless_uniform([5], seed=seed, dtype=dt)
                n = tf.random.stateless_normal([6], seed=seed, dtype=dt)
                out[f"uniform_{dt.name}"] = tf.cast(u, tf.float32)
                out[f"normal_{dt.name}"] = tf.cast(n, tf.float32)
            out["normal"] = tf.random.stateless_normal([7, 3], seed=seed, mean=1.0, stddev=2.0)
            out["truncated"] = tf.random.stateless_truncated_normal([300], seed=seed)
            out["truncated_f64"] = tf.random.stateless_truncated_normal([9], seed=seed,
                                                                        dtype=tf.float64)
            out["int32"] = tf.random.stateless_uniform([9], seed=seed, minval=-5, maxval=7,
                                                       dtype=tf.int32)
            out["int64"] = tf.random.stateless_uniform([5], seed=seed, minval=0, maxval=1 << 40,
                                                       dtype=tf.int64)
            out["full_uint32"] = tf.random.stateless_uniform([6], seed=seed, minval=None,
                                                             maxval=None, dtype=tf.uint32)
            out["full_int64"] = tf.random.stateless_uniform([3], seed=seed, minval=None,
                                                            maxval=None, dtype=tf.int64)
            out["categorical"] = tf.random.stateless_categorical(
                tf.math.log([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05]]), 8, seed=seed)
            s32 = tf.cast(seed, tf.int32)
            out["v1_uniform"] = raw.StatelessRandomUniform(shape=[5], seed=s32)
            out["v1_truncated"] = raw.StatelessTruncatedNormal(shape=[5], seed=seed)
            out["v1_int"] = raw.StatelessRandomUniformInt(shape=[5], seed=seed, minval=3,
                                                          maxval=90)
            out["v1_full"] = raw.StatelessRandomUniformFullInt(shape=[4], seed=seed,
                                                               dtype=tf.int64)
            return out

    m = Random()
    tf.saved_model.save(m, bundle, signatures={"serving_default": m.f})
    x = np.random.default_rng(8).uniform(-1, 1, (BATCH, 3)).astype(np.float32)
    feeds = {"serving_default": {"x": x, "seed": np.array([7, 42], np.int64)}}
    return "tf.saved_model.save", feeds


def _fake_quant(bundle):
    """What quantisation-aware training leaves in a graph: fake-quant with fixed, variable and
    per-channel ranges, and quantize-dequantize pairs (V2, V3, V4; given or own range; per axis;
    both rounding modes; float64: TF's CPU kernels take float32 and float64 only)."""
    import tensorflow as tf
    q = tf.quantization
    raw = tf.raw_ops

    class FakeQuant(tf.Module):
        def __init__(self):
            super().__init__()
            self.lo = tf.Variable(-1.5)
            self.hi = tf.Variable(2.0)
            self.ch_lo = tf.Variable([-1.0, -2.0, -0.5, 0.0])
            self.ch_hi = tf.Variable([1.0, 2.5, 0.5, 0.0])

        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
        def f(self, x):
            d = tf.cast(x, tf.float64)
            return {
                "args": q.fake_quant_with_min_max_args(x, -2.0, 2.0, num_bits=6),
                "vars": q.fake_quant_with_min_max_vars(x, self.lo, self.hi, narrow_range=True),
                "per_channel": q.fake_quant_with_min_max_vars_per_channel(x, self.ch_lo,
                                                                          self.ch_hi),
                "qdq_given": q.quantize_and_dequantize_v2(x, -1.0, 1.0, range_given=True),
                "qdq_own": q.quantize_and_dequantize_v2(x, 0.0, 0.0, num_bits=4),
                "qdq_unsigned": q.quantize_and_dequantize_v2(
                    tf.abs(x), 0.0, 1.5, signed_input=False, range_given=True,
                    round_mode="HALF_UP"),
                # Per axis, each channel's own range (TF 2.21 refuses a given per-axis range:
                # it asks for scalars).
                "qdq_axis": raw.QuantizeAndDequantizeV4(input=x, input_min=self.ch_lo,
                                                        input_max=self.ch_hi, axis=1,
                                                        narrow_range=True),
                "qdq_v3": raw.QuantizeAndDequantizeV3(input=x, input_min=-1.0, input_max=1.0,
                                                      num_bits=5, range_given=True),
                "qdq_v4_f64": raw.QuantizeAndDequantizeV4(input=d, input_min=d[0, 0] - 1,
                                                          input_max=d[0, 0] + 1),
            }

    m = FakeQuant()
    tf.saved_model.save(m, bundle, signatures={"serving_default": m.f})
    x = np.random.default_rng(9).uniform(-2.5, 2.5, (5, 4)).astype(np.float32)
    return "tf.saved_model.save", {"serving_default": {"x": x}}


def _linalg(bundle):
    """tf.linalg on batches: decompositions, solves, inverses, determinants, in float32, float64
    and complex64. Factors that are unique only up to signs (eigenvectors, singular vectors)
    are returned as what is unique: |v| and the reconstruction u diag(s) v^H."""
    import tensorflow as tf
    la = tf.linalg

    class Linalg(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 3, 3], tf.float32),
                                      tf.TensorSpec([None, 3, 2], tf.float32)])
        def f(self, a, b):
            spd = tf.matmul(a, a, transpose_b=True) + 3.0 * tf.eye(3)
            lower = la.band_part(a, -1, 0) + 4.0 * tf.eye(3)
            d = tf.cast(spd, tf.float64)
            c = tf.complex(spd, a)
            sign, logdet = la.slogdet(a)
            lu, perm = la.lu(spd)
            q, r = la.qr(a)
            qf, rf = la.qr(tf.transpose(b, [0, 2, 1]), full_matrices=True)
            s, u, v = la.svd(b)
            e, vec = la.eigh(spd)
            return {
                "cholesky": la.cholesky(spd), "cholesky_f64": la.cholesky(d),
                "inv": la.inv(spd), "inv_adjoint": la.inv(a + 4.0 * tf.eye(3), adjoint=True),
                "inv_c64": tf.abs(la.inv(c)),
                "solve": la.solve(spd, b), "solve_adjoint": la.solve(lower, b, adjoint=True),
                "tri_lower": la.triangular_solve(lower, b),
                "tri_upper_adjoint": la.triangular_solve(tf.transpose(lower, [0, 2, 1]), b,
                                                         lower=False, adjoint=True),
                "tri_broadcast": la.triangular_solve(lower[0], b),
                "sign": sign, "logdet": logdet, "det": la.det(spd),
                "lu": lu, "perm": perm, "lu_f64": la.lu(d)[0],
                "q_abs": tf.abs(q), "r_abs": tf.abs(r), "qr": tf.matmul(q, r),
                "qf_shape": tf.shape(qf), "rf_abs": tf.abs(rf),
                "s": s, "usv": tf.matmul(u * s[:, None, :], v, adjoint_b=True),
                "s_only": la.svd(a, compute_uv=False),
                "eig": e, "eig_vec_abs": tf.abs(vec), "eig_only": la.eigvalsh(d),
            }

    m = Linalg()
    tf.saved_model.save(m, bundle, signatures={"serving_default": m.f})
    rng = np.random.default_rng(10)
    feeds = {"serving_default": {"a": rng.uniform(-1, 1, (BATCH, 3, 3)).astype(np.float32),
                                 "b": rng.uniform(-1, 1, (BATCH, 3, 2)).astype(np.float32)}}
    return "tf.saved_model.save", feeds


def _examples():
    """Serialized tf.train.Examples: every feature kind, missing features, an empty Feature.
    Written with sorted keys and a last feature that ends in a letter: a .npy byte string
    ("S") drops trailing NUL bytes, which a record ending in a 0 value would have."""
    import tensorflow as tf
    f = tf.train
    records = []
    for i in range(3):
        feats = {"age": f.Feature(int64_list=f.Int64List(value=[20 + i])),
                 "tags": f.Feature(bytes_list=f.BytesList(value=[b"t%d" % j for j in range(i)])),
                 "clicks": f.Feature(int64_list=f.Int64List(value=list(range(i + 1)))),
                 "seq": f.Feature(float_list=f.FloatList(value=[0.5 * j for j in range(2 * i)])),
                 "vec": f.Feature(float_list=f.FloatList(value=[i, -i, 0.25]))}
        if i != 1:
            feats["score"] = f.Feature(float_list=f.FloatList(value=[1.5 * i, 2.0]))
            feats["name"] = f.Feature(bytes_list=f.BytesList(value=[b"rec%d" % i]))
        if i == 2:
            feats["empty"] = f.Feature()
        feats["zz_end"] = f.Feature(bytes_list=f.BytesList(value=[b"end"]))
        example = f.Example(features=f.Features(feature=feats))
        records.append(example.SerializeToString(deterministic=True))
        assert not records[-1].endswith(b"\0")
    return np.array(records, dtype=object)


def _parse_example(bundle):
    """tf.io.parse_example (ParseExampleV2: dense with and without defaults, variable-length
    dense, sparse, ragged), parse_single_example and the TF 1 ParseExample, feeding a small
    dense model as an Estimator-style serving signature would."""
    import tensorflow as tf
    io = tf.io
    spec = {
        "age": io.FixedLenFeature([], tf.int64),
        "score": io.FixedLenFeature([2], tf.float32, default_value=[-1.0, -2.0]),
        "name": io.FixedLenFeature([], tf.string, default_value="none"),
        "vec": io.FixedLenFeature([3], tf.float32),
        "seq": io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True,
                                          default_value=9.0),
        "tags": io.VarLenFeature(tf.string),
        "clicks": io.RaggedFeature(tf.int64),
        "empty": io.VarLenFeature(tf.float32),
    }

    class Parse(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(np.linspace(-1, 1, 6).reshape(6, 1).astype(np.float32))

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def parse(self, examples):
            p = io.parse_example(examples, spec)
            x = tf.concat([p["score"], p["vec"], tf.cast(p["age"][:, None], tf.float32)], 1)
            return {"age": p["age"], "score": p["score"], "name": p["name"], "seq": p["seq"],
                    "tags_indices": p["tags"].indices, "tags_values": p["tags"].values,
                    "tags_shape": p["tags"].dense_shape, "clicks_values": p["clicks"].values,
                    "clicks_splits": p["clicks"].row_splits, "empty": p["empty"].dense_shape,
                    "prediction": tf.matmul(x, self.w)}

        @tf.function(input_signature=[tf.TensorSpec([], tf.string)])
        def single(self, example):
            p = io.parse_single_example(example, {"score": spec["score"], "vec": spec["vec"],
                                                  "tags": spec["tags"]})
            return {"score": p["score"], "vec": p["vec"], "tags": p["tags"].values,
                    "tags_indices": p["tags"].indices}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def v1(self, examples):
            r = tf.raw_ops.ParseExample(
                serialized=examples, names=[], sparse_keys=["clicks"], dense_keys=["age", "vec"],
                dense_defaults=[tf.constant([], tf.int64), tf.constant([], tf.float32)],
                sparse_types=[tf.int64], dense_shapes=[[], [3]])
            return {"clicks": r.sparse_values[0], "clicks_indices": r.sparse_indices[0],
                    "age": r.dense_values[0], "vec": r.dense_values[1]}

    m = Parse()
    tf.saved_model.save(m, bundle, signatures={"serving_default": m.parse, "single": m.single,
                                               "v1": m.v1})
    records = _examples()
    feeds = {"serving_default": {"examples": records}, "single": {"example": records[2]},
             "v1": {"examples": records}}
    return "tf.saved_model.save", feeds


def _complex_signal(bundle):
    """An audio front end's complex arithmetic (rfft, a phase rotation by exp on complex64,
    magnitudes, an STFT) and CumulativeLogsumexp."""
    import tensorflow as tf

    class Signal(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 16], tf.float32)])
        def f(self, x):
            spec = tf.signal.rfft(x)
            rotated = spec * tf.exp(tf.complex(0.0, 0.3) * tf.cast(tf.range(9), tf.complex64))
            z = tf.complex(x, -x)
            return {"magnitude": tf.abs(rotated), "log_power": tf.math.log(tf.abs(spec) + 1.0),
                    "stft": tf.abs(tf.signal.stft(x, 8, 4)),
                    "arith": tf.math.real(tf.sqrt(z) * z - z / (z + 1.0) + tf.tanh(z * 0.1)),
                    "logsumexp": tf.math.cumulative_logsumexp(x, axis=1),
                    "logsumexp_rev": tf.math.cumulative_logsumexp(x, axis=1, exclusive=True,
                                                                  reverse=True)}

    m = Signal()
    tf.saved_model.save(m, bundle, signatures={"serving_default": m.f})
    x = np.random.default_rng(11).uniform(-1, 1, (BATCH, 16)).astype(np.float32)
    return "tf.saved_model.save", {"serving_default": {"x": x}}


def _tf1_control_flow(bundle):
    """A TF1 graph (tf.compat.v1, control flow v1) saved with SavedModelBuilder: an LSTM over
    time as dynamic_rnn writes it (a while loop with TensorArrays), nested while loops whose trip counts
    come from the input, a cond inside a loop body, conds with constant-only branches, a cond
    holding a loop, and a reference variable read inside a loop (RefEnter)."""
    import tensorflow as tf
    v1 = tf.compat.v1
    v1.disable_control_flow_v2()
    try:
        with tf.Graph().as_default() as g, v1.Session(graph=g) as sess:
            v1.set_random_seed(5)
            x = v1.placeholder(tf.float32, [None, 5, 3], name="x")
            n = v1.placeholder(tf.int32, [], name="n")
            # An LSTM over time as dynamic_rnn writes it (Keras 3 has no v1 cells): inputs
            # unstacked into a TensorArray, outputs written to another, the state a loop var.
            kernel = v1.Variable(np.random.default_rng(1).uniform(-0.5, 0.5, (7, 16))
                                 .astype(np.float32), name="kernel", use_resource=False)
            inputs_ta = tf.TensorArray(tf.float32, size=5).unstack(tf.transpose(x, [1, 0, 2]))
            outputs_ta = tf.TensorArray(tf.float32, size=5)

            def lstm_step(t, out_ta, c, h):
                z = tf.matmul(tf.concat([inputs_ta.read(t), h], 1), kernel)
                i, f, o, u = tf.split(z, 4, axis=1)
                c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(u)
                h = tf.sigmoid(o) * tf.tanh(c)
                return t + 1, out_ta.write(t, h), c, h

            zeros = tf.zeros([tf.shape(x)[0], 4])
            _, out_ta, _, _ = v1.while_loop(lambda t, *_: t < 5, lstm_step,
                                            [tf.constant(0), outputs_ta, zeros, zeros])
            rnn_out = tf.transpose(out_ta.stack(), [1, 0, 2])
            w = v1.Variable(np.linspace(0.5, 1.5, 3).astype(np.float32), name="w",
                            use_resource=False)

            def outer_body(i, acc):
                def inner_body(j, a):
                    a = a + x[:, j % 5, :] * w * tf.cast(i + 1, tf.float32)
                    return j + 1, a
                _, acc = v1.while_loop(lambda j, a: j <= i, inner_body, [0, acc])
                acc = v1.cond(tf.equal(i % 2, 0), lambda: acc * 0.5, lambda: acc - 1.0)
                return i + 1, acc

            _, nested = v1.while_loop(lambda i, acc: i < n, outer_body,
                                      [tf.constant(0), tf.zeros_like(x[:, 0, :])])
            total = tf.reduce_sum(x)
            sign = v1.cond(total > 0, lambda: tf.constant(1.0), lambda: tf.constant(-1.0))
            branch = v1.cond(n > 2,
                             lambda: v1.while_loop(lambda k, v: k < n, lambda k, v: (k + 1, v * 1.5),
                                                   [0, x[:, :, 0]])[1],
                             lambda: x[:, :, 1] + sign)
            sess.run(v1.global_variables_initializer())
            builder = v1.saved_model.Builder(bundle)
            sig = v1.saved_model.predict_signature_def(
                {"x": x, "n": n},
                {"rnn": rnn_out, "nested": nested, "sign": sign, "branch": branch})
            builder.add_meta_graph_and_variables(sess, ["serve"],
                                                 signature_def_map={"serving_default": sig,
                                                                    "few": sig},
                                                 saver=v1.train.Saver())
            builder.save()
    finally:
        v1.enable_control_flow_v2()
    x = np.random.default_rng(12).uniform(-1, 1, (BATCH, 5, 3)).astype(np.float32)
    # n = 4 takes the conditional's loop branch; n = 1 the other, and the inner loops run once.
    return "tf.compat.v1.saved_model.Builder", {"serving_default": {"x": x, "n": np.int32(4)},
                                                "few": {"x": x, "n": np.int32(1)}}


def _image_bytes(bundle):
    """An image-bytes serving signature: a batch of encoded JPEG, PNG and BMP files through
    tf.io.decode_image (DecodeImage, float32 in [0, 1]) in a map_fn, resized and scored."""
    import struct

    import tensorflow as tf

    class Images(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(np.linspace(-1, 1, 12).reshape(3, 4).astype(np.float32))

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def serve(self, images):
            def one(data):
                img = tf.io.decode_image(data, channels=3, dtype=tf.float32,
                                         expand_animations=False)
                return tf.image.resize(img, [8, 8])

            x = tf.map_fn(one, images, fn_output_signature=tf.TensorSpec([8, 8, 3], tf.float32))
            return {"scores": tf.matmul(tf.reduce_mean(x, [1, 2]), self.w),
                    "first": tf.io.decode_image(images[0], dtype=tf.uint8,
                                                expand_animations=False)}

    # Width 8: BMP rows need no padding, and pixels from 1 up: a .npy byte string drops the
    # trailing NUL bytes a file ending in zeros would lose.
    rng = np.random.default_rng(13)
    y, x = np.mgrid[0:12, 0:8]
    rgb = np.clip(np.stack([x * 20, y * 15, (x + y) * 9], -1) + rng.integers(0, 25, (12, 8, 3)),
                  1, 255).astype(np.uint8)
    row = 8 * 3
    rows = [rgb[i, :, ::-1].tobytes() for i in range(12)][::-1]
    bmp = (b"BM" + struct.pack("<IHHI", 54 + row * 12, 0, 0, 54) +
           struct.pack("<IiiHHIIiiII", 40, 8, 12, 1, 24, 0, row * 12, 2835, 2835, 0, 0) +
           b"".join(rows))
    files = [tf.io.encode_jpeg(rgb, quality=92).numpy(), tf.io.encode_png(rgb).numpy(), bmp,
             tf.io.encode_png(np.concatenate([rgb, rgb[..., :1]], -1)).numpy()]
    assert not any(f.endswith(b"\0") for f in files)
    m = Images()
    tf.saved_model.save(m, bundle, signatures={"serving_default": m.serve})
    return "tf.saved_model.save", {"serving_default": {"images": np.array(files, dtype=object)}}


def _speech_commands(bundle):
    """TF's speech-commands deployment: a WAV file in (DecodeWav), AudioSpectrogram, Mfcc, a
    small classifier over the MFCC frames; also the audio written back (EncodeWav) and a
    second signature taking a batch of WAV files in a map_fn."""
    import tensorflow as tf

    class Speech(tf.Module):
        def __init__(self):
            super().__init__()
            rng = np.random.default_rng(17)
            self.w = tf.Variable(rng.uniform(-0.2, 0.2, (13, 4)).astype(np.float32))

        def features(self, wav):
            audio, rate = tf.audio.decode_wav(wav, desired_channels=1, desired_samples=4000)
            spec = tf.raw_ops.AudioSpectrogram(input=audio, window_size=480, stride=160,
                                               magnitude_squared=True)
            return tf.raw_ops.Mfcc(spectrogram=spec, sample_rate=rate,
                                   dct_coefficient_count=13), audio, rate

        @tf.function(input_signature=[tf.TensorSpec([], tf.string)])
        def serve(self, wav):
            mfcc, audio, rate = self.features(wav)
            logits = tf.reduce_mean(tf.tensordot(mfcc, self.w, 1), [0, 1])
            return {"scores": tf.nn.softmax(logits), "mfcc": mfcc,
                    "spectrogram": tf.raw_ops.AudioSpectrogram(input=audio, window_size=256,
                                                               stride=128),
                    "echo": tf.io.encode_base64(tf.audio.encode_wav(audio * 0.5, rate)),
                    "rate": rate}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def batch(self, wavs):
            return {"mfcc": tf.map_fn(lambda w: self.features(w)[0][0], wavs,
                                      fn_output_signature=tf.TensorSpec([None, 13], tf.float32))}

    t = np.arange(3600) / 8000.0
    tone = (0.4 * np.sin(2 * np.pi * 440 * t) + 0.2 * np.sin(2 * np.pi * 1250 * t)).astype(
        np.float32)
    chirp = (0.3 * np.sin(2 * np.pi * (200 + 900 * t) * t)).astype(np.float32)
    stereo = np.stack([tone, chirp], -1)
    # The byte strings end in a nonzero byte: a .npy byte string drops trailing NULs.
    wavs = [tf.audio.encode_wav(a, 8000).numpy() for a in (stereo, chirp[:, None], tone[:, None])]
    wavs = [w if not w.endswith(b"\0") else w[:-2] + b"\x01\x01" for w in wavs]
    m = Speech()
    tf.saved_model.save(m, bundle, signatures={"serving_default": m.serve, "batch": m.batch})
    return "tf.saved_model.save", {"serving_default": {"wav": np.array(wavs[0], dtype=object)},
                                   "batch": {"wavs": np.array(wavs, dtype=object)}}


def _batch_function(bundle):
    """TF Serving's in-graph batching (tf.nondifferentiable_batch_function: a BatchFunction op
    calling a function with the request's tensors and the captured variables): a dense layer
    and a reduction inside the batched function, a second output computed outside it; and the
    older Batch and Unbatch ops around an element-wise step."""
    import tensorflow as tf

    class Batched(tf.Module):
        def __init__(self):
            super().__init__()
            rng = np.random.default_rng(11)
            self.w = tf.Variable(rng.standard_normal((3, 4)).astype(np.float32))
            self.b = tf.Variable(rng.standard_normal((4,)).astype(np.float32))

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def f(self, x):
            @tf.nondifferentiable_batch_function(1, 8, 1000)
            def dense(x):
                y = tf.nn.relu(tf.matmul(x, self.w) + self.b)
                return y, tf.reduce_sum(y, axis=1)

            y, total = dense(x)
            # The older ops: Batch hands this call's rows on, Unbatch takes them back by id.
            (rows,), index, call_id = tf.raw_ops.Batch(
                in_tensors=[x * 3.0], num_batch_threads=1, max_batch_size=8,
                batch_timeout_micros=1000, grad_timeout_micros=1000000)
            back = tf.raw_ops.Unbatch(batched_tensor=tf.exp(rows), batch_index=index, id=call_id,
                                      timeout_micros=1000000)
            return {"y": y, "total": total, "scaled": total * 2.0, "unbatched": back}

    m = Batched()
    tf.saved_model.save(m, bundle, signatures={"serving_default": m.f})
    x = np.random.default_rng(12).uniform(-1, 1, (BATCH + 1, 3)).astype(np.float32)
    return "tf.saved_model.save", {"serving_default": {"x": x}}


def _ctc_decoders(bundle):
    """An OCR / speech model's serving tail: per-frame class scores decoded by CTC beam search
    (tf.nn.ctc_beam_search_decoder, 3 paths of a beam of 8, sequences of different lengths) and
    by the greedy decoder, the sparse results made dense."""
    import tensorflow as tf

    class Decoders(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, None, 12], tf.float32),
                                      tf.TensorSpec([None], tf.int32)])
        def f(self, logits, lengths):
            time_major = tf.transpose(logits, [1, 0, 2])
            paths, log_probs = tf.nn.ctc_beam_search_decoder(time_major, lengths, beam_width=8,
                                                             top_paths=3)
            out = {f"beam_{i}": tf.sparse.to_dense(p, default_value=-1)
                   for i, p in enumerate(paths)}
            out["beam_log_probs"] = log_probs
            (greedy,), neg = tf.nn.ctc_greedy_decoder(time_major, lengths)
            out["greedy"] = tf.sparse.to_dense(greedy, default_value=-1)
            out["greedy_neg_sum"] = neg
            return out

    m = Decoders()
    tf.saved_model.save(m, bundle, signatures={"serving_default": m.f})
    rng = np.random.default_rng(21)
    logits = (rng.standard_normal((4, 20, 12)) * 3).astype(np.float32)
    lengths = np.array([20, 13, 1, 7], np.int32)
    return "tf.saved_model.save", {"serving_default": {"logits": logits, "lengths": lengths}}


def _decoder_steps(bundle):
    """A generative decoder's step functions: a KV cache written and read through XLA's dynamic
    update slice and dynamic slice (what Keras 3's ops.slice_update writes on TensorFlow;
    positions out of range clamp), the last token guarded by a cond whose untaken branch would
    index an empty tensor, and a loop that runs zero times over a body that would index out of
    range. TF checks only what runs; so must kiln (the empty inputs)."""
    import tensorflow as tf
    from tensorflow.compiler.tf2xla.python import xla

    class Steps(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([2, 8, 4], tf.float32),
                                      tf.TensorSpec([2, 1, 4], tf.float32),
                                      tf.TensorSpec([], tf.int32)])
        def cache(self, cache, kv, pos):
            updated = xla.dynamic_update_slice(cache, kv, tf.stack([0, pos, 0]))
            window = xla.dynamic_slice(updated, tf.stack([0, pos - 2, 0]), [2, 3, 4])
            return {"cache": updated, "window": window}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
        def last(self, tokens):
            last = tf.cond(tf.size(tokens) > 0, lambda: tokens[-1], lambda: tf.constant(-1))
            _, total = tf.while_loop(lambda i, a: i < tf.size(tokens) - 1,
                                     lambda i, a: (i + 1, a + tokens[1]), (0, 0))
            return {"last": last, "total": total}

    m = Steps()
    tf.saved_model.save(m, bundle, signatures={"cache": m.cache, "cache_clamped": m.cache,
                                               "last": m.last, "last_empty": m.last,
                                               "last_one": m.last})
    rng = np.random.default_rng(22)
    cache = rng.standard_normal((2, 8, 4)).astype(np.float32)
    kv = rng.standard_normal((2, 1, 4)).astype(np.float32)
    return "tf.saved_model.save", {
        "cache": {"cache": cache, "kv": kv, "pos": np.int32(5)},
        "cache_clamped": {"cache": cache, "kv": kv, "pos": np.int32(11)},
        "last": {"tokens": np.array([4, 9, 2], np.int32)},
        "last_empty": {"tokens": np.zeros([0], np.int32)},
        "last_one": {"tokens": np.array([7], np.int32)}}


def _maker(name):
    if "_mixed_" in name:
        return _export_keras(name)
    return {"half_signature": _half_signature, "stateless_random": _stateless_random,
            "fake_quant": _fake_quant, "linalg": _linalg,
            "parse_example": _parse_example, "complex_signal": _complex_signal,
            "tf1_control_flow": _tf1_control_flow, "image_bytes": _image_bytes,
            "speech_commands": _speech_commands, "batch_function": _batch_function,
            "ctc_decoders": _ctc_decoders, "decoder_steps": _decoder_steps,
            "wide_dense_float16": _wide_dense("float16"),
            "wide_dense_bfloat16": _wide_dense("bfloat16"),
            "dense_int8_quantized": _dense_quantized("int8"),
            "dense_float8_quantized": _dense_quantized("float8")}[name]


def make_all(out, names=None, log=print):
    names = list(MODELS) if not names else names
    os.makedirs(out, exist_ok=True)
    t0 = time.monotonic()
    entries = {name: recording.build_and_record(out, name, _maker(name), log) for name in names}
    return recording.write_manifest(
        out, {"models": entries, "seconds": round(time.monotonic() - t0, 1)}, __file__)


if __name__ == "__main__":
    m = make_all(sys.argv[1], sys.argv[2:])
    bad = {k: v["error"] for k, v in m["models"].items() if v["error"]}
    for k, e in bad.items():
        print(f"--- {k}\n{e}")
    print(f"{len(m['models']) - len(bad)} of {len(m['models'])} written in {m['seconds']} s")
    sys.exit(1 if bad else 0)
