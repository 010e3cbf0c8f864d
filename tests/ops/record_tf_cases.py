"""Records TensorFlow 2.21's own results for ops whose reference is TF's arithmetic itself
(gradient kernels with TF's masking and summation, Eigen's special-function derivatives, the
blocked Cholesky gradient, banded triangular solves, protobuf's JSON-to-binary Example writer,
TF's isotonic regression, k-means seeding, candidate samplers', half-precision random draws and
StochasticCastToInt's rounding draws, the ragged fill-empty-rows, Eigen's volume patches, TF's
3-D max-pool second gradient, the image-transform fused convolutions, ScaleAndTranslateGrad,
zero-noise glimpses, Conv and the fused recurrent cells' gradients) into
tests/ops/cases_tf_recorded.inc, the op tester's references for them (cases_tf_recorded.cc).
Each op runs in a tf.function over constant operands, with TF_ENABLE_ONEDNN_OPTS=0 as on CPUs
without AVX-512 VNNI; the recording machinery is record_quantized_cases.py's.

Run: .venv-oracle/bin/python tests/ops/record_tf_cases.py
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from record_quantized_cases import _attrs_of, _cxx_tensor, _run, _tensor  # noqa: E402

OUT = os.path.join(HERE, "cases_tf_recorded.inc")


def _cases(tf, rng):
    def f(shape, lo, hi, dt=np.float32):
        return tf.constant(rng.uniform(lo, hi, size=shape).astype(dt))

    cases = []

    def add(op, **kw):
        cases.append((op, kw))

    x = f([3, 5], -8.0, 8.0)
    g = f([3, 5], -1.0, 1.0)
    add("FakeQuantWithMinMaxArgsGradient", gradients=g, inputs=x)
    add("FakeQuantWithMinMaxArgsGradient", gradients=g, inputs=x, min=-1.5, max=2.5, num_bits=4,
        narrow_range=True)
    for lo, hi, bits, narrow in [(-2.0, 3.0, 8, False), (0.0, 0.0, 8, False), (-4.5, 1.0, 6, True)]:
        add("FakeQuantWithMinMaxVarsGradient", gradients=g, inputs=x, min=tf.constant(lo),
            max=tf.constant(hi), num_bits=bits, narrow_range=narrow)
    x3 = f([2, 3, 4], -5.0, 5.0)
    g3 = f([2, 3, 4], -1.0, 1.0)
    add("FakeQuantWithMinMaxVarsPerChannelGradient", gradients=g3, inputs=x3,
        min=tf.constant([-2.0, 0.0, -1.0, -6.0]), max=tf.constant([2.0, 0.0, 3.0, 0.5]))
    add("FakeQuantWithMinMaxVarsPerChannelGradient", gradients=g, inputs=x,
        min=tf.constant([-2.0, -1.0, -3.0, -0.5, -4.0]), max=tf.constant([2.0, 1.0, 3.0, 0.5, 4.0]),
        num_bits=5, narrow_range=True)
    for dt in [np.float32, np.float64]:
        add("QuantizeAndDequantizeV4Grad", gradients=f([3, 5], -1.0, 1.0, dt),
            input=f([3, 5], -3.0, 3.0, dt), input_min=tf.constant(dt(-1.0)),
            input_max=tf.constant(dt(2.0)))
        add("QuantizeAndDequantizeV4Grad", gradients=f([2, 3, 4], -1.0, 1.0, dt),
            input=f([2, 3, 4], -3.0, 3.0, dt), input_min=tf.constant(np.array([-1, -2, 0], dt)),
            input_max=tf.constant(np.array([1, 0.5, 2], dt)), axis=1)
        add("IgammaGradA", a=f([4, 5], 0.3, 6.0, dt), x=f([4, 5], 0.05, 8.0, dt))
        add("IgammaGradA", a=f([4, 1], 0.5, 3.0, dt), x=f([5], 0.1, 4.0, dt))
        add("RandomGammaGrad", alpha=f([4, 5], 0.3, 6.0, dt), sample=f([4, 5], 0.05, 8.0, dt))
        add("RandomGammaGrad", alpha=f([3], 0.5, 3.0, dt), sample=f([2, 3], 0.1, 4.0, dt))
        for n, batch in [(4, [2]), (40, [])]:
            m = rng.uniform(-1.0, 1.0, size=batch + [n, n])
            spd = m @ np.swapaxes(m, -1, -2) + n * np.eye(n)
            add("CholeskyGrad", l=tf.constant(np.linalg.cholesky(spd).astype(dt)),
                grad=f(batch + [n, n], -1.0, 1.0, dt))
    a = f([3, 4], -1.0, 1.0)
    b = f([4, 5], -1.0, 1.0)
    a_bf = tf.constant(a.numpy(), tf.bfloat16)
    add("SparseMatMul", a=a, b=b)
    add("SparseMatMul", a=a_bf, b=b, a_is_sparse=True)
    add("SparseMatMul", a=tf.transpose(a), b=tf.constant(tf.transpose(b).numpy(), tf.bfloat16),
        transpose_a=True, transpose_b=True, b_is_sparse=True)
    vol = tf.constant(rng.permutation(3 * 4 * 5 * 2).reshape([1, 3, 4, 5, 2]).astype(np.float32))
    for k, st, pad in [([1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "VALID"),
                       ([1, 2, 3, 2, 1], [1, 2, 1, 2, 1], "SAME"),
                       ([1, 3, 3, 3, 1], [1, 2, 2, 2, 1], "SAME")]:
        add("ExtractVolumePatches", input=vol, ksizes=k, strides=st, padding=pad)
        pooled = tf.nn.max_pool3d(vol, k, st, pad)
        add("MaxPool3DGradGrad", orig_input=vol, orig_output=pooled,
            grad=f([1, 3, 4, 5, 2], -1.0, 1.0), ksize=k, strides=st, padding=pad)
    add("ExtractVolumePatches", input=tf.constant(np.arange(60, dtype=np.int32).reshape([1, 3, 4, 5, 1])),
        ksizes=[1, 2, 2, 3, 1], strides=[1, 1, 2, 2, 1], padding="SAME")
    for dt in [np.float32, np.float64]:
        for lower, adjoint, bands in [(True, False, 3), (False, False, 2), (True, True, 1),
                                      (False, True, 4)]:
            m = rng.uniform(-1.0, 1.0, size=[2, bands, 5])
            m[:, 0 if lower else bands - 1, :] += np.sign(m[:, 0 if lower else bands - 1, :]) * 3
            add("BandedTriangularSolve", matrix=tf.constant(m.astype(dt)),
                rhs=f([2, 5, 3], -2.0, 2.0, dt), lower=lower, adjoint=adjoint)
        m = rng.uniform(1.0, 2.0, size=[1, 2, 4])
        add("BandedTriangularSolve", matrix=tf.constant(m.astype(dt)), rhs=f([3, 4, 2], -2.0, 2.0, dt))
    js = ['{"features": {"feature": {"age": {"int64List": {"value": ["35", "7"]}}, '
          '"name": {"bytesList": {"value": ["Ym9i"]}}}}}',
          '{"features": {"feature": {"w": {"floatList": {"value": [0.5, -1.25]}}}}}',
          '{}']
    add("DecodeJSONExample", json_examples=tf.constant(np.array(js, dtype=object).reshape([3])))
    for dt in [np.float32, np.float64, np.float16, np.int32, np.int8]:
        v = rng.integers(-5, 6, size=[3, 7]).astype(dt) if dt in (np.int32, np.int8) else \
            f([3, 7], -3.0, 3.0, dt).numpy()
        out = {np.int32: tf.float64, np.int8: tf.float32}.get(dt, tf.as_dtype(dt))
        add("IsotonicRegression", input=tf.constant(v), output_dtype=out)
    add("IsotonicRegression", input=tf.constant([[1.0, 1.0, 2.0, 0.0, 0.0, 3.0]], tf.float32),
        output_dtype=tf.float32)
    dist = f([20], 0.0, 4.0)
    for seed in [1, 7, 123456789]:
        add("KMC2ChainInitialization", distances=dist, seed=tf.constant(np.int64(seed)))
    pts = tf.constant(np.concatenate([rng.normal(c, 0.1, size=[6, 2]) for c in
                                      [(0, 0), (3, 3), (-3, 2), (2, -3)]]).astype(np.float32))
    for k, seed, retries in [(4, 5, -1), (3, 11, 0), (5, 2, 2)]:
        add("KmeansPlusPlusInitialization", points=pts, num_to_sample=tf.constant(np.int64(k)),
            seed=tf.constant(np.int64(seed)), num_retries_per_sample=tf.constant(np.int64(retries)))
    truth = tf.constant(np.array([[1, 5], [7, 2], [3, 3]], np.int64))
    for op, extra in [("UniformCandidateSampler", dict(range_max=20)),
                      ("LogUniformCandidateSampler", dict(range_max=50)),
                      ("FixedUnigramCandidateSampler",
                       dict(range_max=8, unigrams=[5.0, 1.0, 0.5, 3.0, 2.0, 0.25, 4.0, 1.5],
                            distortion=0.75)),
                      ("FixedUnigramCandidateSampler",
                       dict(range_max=5, unigrams=[5.0, 1.0, 0.5, 3.0, 2.0, 0.25, 4.0],
                            num_reserved_ids=3, num_shards=2, shard=1))]:
        for unique in [True, False]:
            t = truth if extra["range_max"] > 7 else truth % extra["range_max"]
            add(op, true_classes=t, num_true=2, num_sampled=4, unique=unique, seed=17,
                seed2=5, **extra)
    add("AllCandidateSampler", true_classes=truth, num_true=2, num_sampled=8, unique=True,
        seed=1, seed2=2)
    for op in ["LearnedUnigramCandidateSampler", "ThreadUnsafeUnigramCandidateSampler"]:
        for unique in [True, False]:
            add(op, true_classes=truth, num_true=2, num_sampled=5, unique=unique, range_max=9,
                seed=3, seed2=4)
    add("ComputeAccidentalHits", true_classes=truth,
        sampled_candidates=tf.constant(np.array([3, 9, 7, 3, 1], np.int64)), num_true=2)
    rowids = tf.constant(np.array([0, 0, 2, 2, 5], np.int64))
    add("RaggedFillEmptyRows", value_rowids=rowids, values=f([5], -2.0, 2.0),
        nrows=tf.constant(np.int64(7)), default_value=tf.constant(np.float32(-1)))
    add("RaggedFillEmptyRows", value_rowids=rowids,
        values=tf.constant(np.array([b"a", b"b", b"c", b"d", b"e"], dtype=object)),
        nrows=tf.constant(np.int64(6)), default_value=tf.constant(b"?"))
    add("RaggedFillEmptyRowsGrad", reverse_index_map=tf.constant(np.array([0, 1, 3, 4, 7], np.int64)),
        grad_values=f([10], -1.0, 1.0))
    # Stateful draws in half precision (TF's distributions for half and bfloat16), first call.
    for dt in [tf.float16, tf.bfloat16]:
        for op in ["RandomUniform", "RandomStandardNormal", "TruncatedNormal"]:
            add(op, shape=tf.constant(np.array([3, 5], np.int32)), dtype=dt, seed=42, seed2=7)
    # The image-transform convolutions: TF's window placement (a stride that leaves a remainder
    # shifts it) and its row cache (every image of a batch gives the first image's result).
    img = f([3, 5, 6, 2], -2.0, 2.0)
    filt = f([3, 2, 2, 3], -1.0, 1.0)
    pads = tf.constant(np.array([[0, 0], [1, 2], [2, 1], [0, 0]], np.int32))
    for mode, pad, s in [("REFLECT", "SAME", 5), ("SYMMETRIC", "VALID", 4), ("REFLECT", "VALID", 1)]:
        add("FusedPadConv2D", input=img, paddings=pads, filter=filt, mode=mode,
            strides=[1, s, s, 1], padding=pad)
    for align, size in [(False, [7, 9]), (True, [4, 3])]:
        add("FusedResizeAndPadConv2D", input=img, size=tf.constant(np.array(size, np.int32)),
            paddings=pads, filter=filt, mode="SYMMETRIC", strides=[1, 2, 2, 1], padding="SAME",
            resize_align_corners=align)
    # ScaleAndTranslateGrad: TF's spans of the adjoint.
    for kernel, antialias, scale, shift in [("lanczos3", True, [0.6, 0.7], [0.0, 0.0]),
                                            ("keyscubic", False, [1.5, 1.2], [0.5, -1.0]),
                                            ("box", True, [0.5, 2.0], [2.0, 0.0])]:
        add("ScaleAndTranslateGrad", grads=f([2, 4, 6, 3], -1.0, 1.0),
            original_image=f([2, 7, 5, 3], 0.0, 1.0),
            scale=tf.constant(np.array(scale, np.float32)),
            translation=tf.constant(np.array(shift, np.float32)), kernel_type=kernel,
            antialias=antialias)
    # ExtractGlimpse with zero noise (its other noises are unseeded draws).
    for op, normalized, centered in [("ExtractGlimpse", True, True),
                                     ("ExtractGlimpseV2", True, False),
                                     ("ExtractGlimpseV2", False, True)]:
        add(op, input=f([2, 6, 7, 2], -1.0, 1.0), size=tf.constant(np.array([3, 4], np.int32)),
            offsets=tf.constant(np.array([[0.3, -0.8], [-0.9, 0.5]], np.float32)),
            centered=centered, normalized=normalized, uniform_noise=False, noise="zero")
    # Conv: flattened batch dims, 3-D, and the flattened shape TF keeps for an empty input.
    add("Conv", input=f([2, 3, 5, 6, 3], -1.0, 1.0), filter=f([3, 2, 3, 4], -1.0, 1.0),
        strides=[1, 1, 2, 1], padding="SAME", batch_dims=2)
    add("Conv", input=f([2, 4, 5, 6, 3], -1.0, 1.0), filter=f([2, 2, 3, 3, 4], -1.0, 1.0),
        strides=[1, 1, 2, 1, 1], padding="VALID")
    add("Conv", input=tf.zeros([2, 3, 0, 6, 3]), filter=f([3, 2, 3, 4], -1.0, 1.0),
        strides=[1, 1, 1, 1], padding="EXPLICIT", explicit_paddings=[0, 0, 2, 2, 0, 0, 0, 0],
        batch_dims=2)
    _rnn_grad_cases(tf, add)
    # StochasticCastToInt: TF's draws (vectorised from float32/float64 to int32, scalar
    # otherwise: 45 elements leave a tail of 5), its bounds, NaN and infinities.
    special = [0.5, -0.5, 2.0, -3.0, np.nan, np.inf, -np.inf, 3e9, -3e9, 127.5, -128.5, 32767.5,
               -32768.5, 40000.5]
    key = tf.constant(np.array([987654321], np.uint64))
    counter = tf.constant(np.array([123456789, 5], np.uint64))
    for dt in [tf.float32, tf.float64, tf.float16, tf.bfloat16]:
        for out in [tf.int8, tf.int16, tf.int32]:
            v = np.concatenate([rng.uniform(-300.0, 300.0, 31), special])
            with np.errstate(over="ignore"):
                add("StochasticCastToInt", input=tf.constant(v, dt), key=key, counter=counter,
                    alg=tf.constant(np.int32(1)), Tout=out)
    for dt in [tf.float32, tf.float64]:
        add("StochasticCastToInt", input=tf.constant(rng.uniform(-5.0, 5.0, [5, 14]), dt),
            key=tf.constant(np.array([2**40 + 12345], np.uint64)),
            counter=tf.constant(np.array([2**50 + 3], np.uint64)), alg=tf.constant(np.int32(3)),
            Tout=tf.int32)
        add("StochasticCastToInt", input=tf.constant(np.arange(-8.0, 8.0), dt), key=key,
            counter=counter, alg=tf.constant(np.int32(1)), Tout=tf.int32)
    add("StochasticCastToInt", input=tf.constant(np.float32(-7.25)), key=key, counter=counter,
        alg=tf.constant(np.int32(1)), Tout=tf.int16)
    return cases


def _rnn_grad_cases(tf, add):
    """The fused recurrent cells' gradients on a forward run's gates, with and without
    peepholes (BlockLSTMGrad(V2) also past seq_len_max), in float and half. A generator of
    their own keeps the cases above unchanged."""
    rng = np.random.default_rng(2127)

    def u(shape, lo, hi, dt=np.float32):
        return tf.constant(rng.uniform(lo, hi, size=shape).astype(dt))

    def lstm_params(dt, x_shape, cell):
        n = x_shape[-1]
        return dict(x=u(x_shape, -1, 1, dt), cs_prev=u([x_shape[-2], cell], -2, 2, dt),
                    h_prev=u([x_shape[-2], cell], -1, 1, dt),
                    w=u([n + cell, 4 * cell], -0.5, 0.5, dt), wci=u([cell], -1, 1, dt),
                    wcf=u([cell], -1, 1, dt), wco=u([cell], -1, 1, dt), b=u([4 * cell], -1, 1, dt))

    gates = ["i", "cs", "f", "o", "ci", "co", "h"]
    time, steps, batch, n, cell = 3, 2, 2, 3, 4  # BlockLSTMGrad's x and cell
    for dt in [np.float32, np.float16]:
        for peephole in [False, True]:
            p = lstm_params(dt, [3, 4], 5)
            fwd = tf.raw_ops.LSTMBlockCell(**p, forget_bias=0.8, cell_clip=-1.0,
                                           use_peephole=peephole)
            add("LSTMBlockCellGrad", **p, **dict(zip(gates[:6], fwd[:6])),
                cs_grad=u([3, 5], -1, 1, dt), h_grad=u([3, 5], -1, 1, dt), use_peephole=peephole)
            for op, fwd_op, extra in [("BlockLSTMGrad", "BlockLSTM", dict(forget_bias=0.8)),
                                      ("BlockLSTMGradV2", "BlockLSTMV2", {})]:
                p = lstm_params(dt, [time, batch, n], cell)
                seq = tf.constant(np.int64(steps))
                fwd = getattr(tf.raw_ops, fwd_op)(seq_len_max=seq, **p, cell_clip=2.5,
                                                  use_peephole=peephole, **extra)
                add(op, seq_len_max=seq, **p, **dict(zip(gates, fwd)),
                    cs_grad=u([time, batch, cell], -1, 1, dt),
                    h_grad=u([time, batch, cell], -1, 1, dt), use_peephole=peephole)
    for batch, n, cell in [(3, 4, 5), (2, 3, 6)]:
        p = dict(x=u([batch, n], -1, 1), h_prev=u([batch, cell], -1, 1),
                 w_ru=u([n + cell, 2 * cell], -0.5, 0.5), w_c=u([n + cell, cell], -0.5, 0.5),
                 b_ru=u([2 * cell], -1, 1), b_c=u([cell], -1, 1))
        r, z, c, _ = tf.raw_ops.GRUBlockCell(**p)
        add("GRUBlockCellGrad", **p, r=r, u=z, c=c, d_h=u([batch, cell], -1, 1))


def main():
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
    import tensorflow as tf
    from tensorflow.python.framework import op_def_registry
    # TF 2.21 registers StochasticCastToInt without a tf.raw_ops wrapper: _run gets one.
    if not hasattr(tf.raw_ops, "StochasticCastToInt"):
        from tensorflow.python.framework import op_def_library

        def stochastic_cast_to_int(**kw):
            return op_def_library._apply_op_helper("StochasticCastToInt", **kw)[2].outputs[0]
        tf.raw_ops.StochasticCastToInt = stochastic_cast_to_int
    rng = np.random.default_rng(2026)
    lines = ["// Generated by tests/ops/record_tf_cases.py from TensorFlow 2.21's results;",
             "// do not edit. One RecordedCase per call: op, attrs, inputs, TF's outputs.", ""]
    for op, kw in _cases(tf, rng):
        tensors = {k: (v.numpy(), v.dtype) for k, v in kw.items() if isinstance(v, tf.Tensor)}
        attrs = {k: v for k, v in kw.items() if not isinstance(v, tf.Tensor)}
        node, outs = _run(tf, op, tensors, attrs)
        order = [a.name for a in op_def_registry.get(op).input_arg]
        ins = [_tensor(tf, tf.constant(a, dtype=d))
               for _, (a, d) in sorted(tensors.items(), key=lambda kv: order.index(kv[0]))]
        attrs_cxx = ", ".join('{"%s", "%s", "%s"s}' % tuple(a) for a in _attrs_of(tf, node))
        lines.append('{"%s",\n    {%s},\n    {%s},\n    {%s}},' % (
            op, attrs_cxx, ",\n      ".join(_cxx_tensor(t) for t in ins),
            ",\n      ".join(_cxx_tensor(_tensor(tf, o)) for o in outs)))
    with open(OUT, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("wrote", len(lines) - 3, "cases to", OUT)


if __name__ == "__main__":
    main()
