"""Records TensorFlow 2.21's own results for the quantized ops into
tests/ops/cases_quantized_recorded.inc, the op tester's references for them (cases_quantized.cc).

TF's quantized kernels mix two rounding families, read qint32 through float and flush denormals,
so a hand-written reference would only restate our kernels; TF's numbers are the reference.
  - The reference kernels (QuantizeV2, Dequantize, Requantize, QuantizedMatMul, QuantizedConv2D,
    QuantizedAdd, ...) run eagerly with TF_ENABLE_ONEDNN_OPTS=0.
  - The oneDNN-only fused forms (QuantizedConv2DWithBias..., QuantizedMatMulWithBias...) run with
    TF_ENABLE_ONEDNN_OPTS=1 inside a tf.function with constant operands (TF's rewrite needs a
    constant filter). On CPUs without VNNI oneDNN saturates pairs of u8 x s8 products to int16 and
    halves s8-input weights, so the weights here are small (|w| <= 60) and even for s8 inputs:
    then every CPU's result is the exact integer arithmetic kiln implements.

Run: .venv-oracle/bin/python tests/ops/record_quantized_cases.py
"""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "cases_quantized_recorded.inc")


def _cases_reference(tf, rng):
    raw = tf.raw_ops
    q = {"quint8": (tf.quint8, np.uint8, 0, 255), "qint8": (tf.qint8, np.int8, -128, 127),
         "quint16": (tf.quint16, np.uint16, 0, 65535), "qint16": (tf.qint16, np.int16, -32768, 32767),
         "qint32": (tf.qint32, np.int32, -2**31, 2**31 - 1)}

    def qt(name, shape, lo=None, hi=None):
        dt, npt, qlo, qhi = q[name]
        lo = qlo if lo is None else lo
        hi = qhi if hi is None else hi
        return tf.constant(rng.integers(lo, hi, size=shape, endpoint=True).astype(npt), dtype=dt)

    def f(shape, lo, hi):
        return tf.constant(rng.uniform(lo, hi, size=shape).astype(np.float32))

    def s(v):
        return tf.constant(np.float32(v))

    cases = []

    def add(op, **kw):
        cases.append((op, kw))

    x = f([3, 5], -2.0, 3.0)
    for t in ["quint8", "qint8", "quint16", "qint16", "qint32"]:
        T = q[t][0]
        add("QuantizeV2", input=x, min_range=s(-1.5), max_range=s(2.5), T=T)
        add("QuantizeV2", input=x, min_range=s(-1.5), max_range=s(2.5), T=T, mode="MIN_FIRST")
        add("QuantizeV2", input=x, min_range=s(-1.5), max_range=s(2.5), T=T, mode="SCALED")
        add("QuantizeV2", input=x, min_range=s(-1.5), max_range=s(2.5), T=T, mode="SCALED",
            round_mode="HALF_TO_EVEN", narrow_range=True)
        add("QuantizeV2", input=x, min_range=s(1.0), max_range=s(5.0), T=T)
        v = qt(t, [2, 6])
        for mode in ["MIN_COMBINED", "MIN_FIRST", "SCALED"]:
            add("Dequantize", input=v, min_range=s(-2.0), max_range=s(3.0), mode=mode)
    add("QuantizeV2", input=f([2, 3, 4], -3.0, 3.0), min_range=tf.constant([-1.0, -2.0, 0.0]),
        max_range=tf.constant([1.0, 2.5, 3.0]), T=tf.qint8, mode="SCALED", axis=1)
    add("QuantizeV2", input=x, min_range=s(0.0), max_range=s(0.0), T=tf.quint8,
        ensure_minimum_range=0.5)
    add("Dequantize", input=qt("qint8", [2, 3]), min_range=tf.constant([-1.0, -2.0, -0.5]),
        max_range=tf.constant([1.0, 2.0, 3.0]), mode="SCALED", axis=1)
    add("Dequantize", input=qt("quint8", [4, 3]), min_range=s(-1.0), max_range=s(2.0),
        dtype=tf.bfloat16)
    add("Dequantize", input=qt("quint8", [4, 3]), min_range=s(-1.0), max_range=s(2.0),
        mode="SCALED", narrow_range=True)

    acc = qt("qint32", [3, 4], -2**28, 2**28)
    for out in [tf.quint8, tf.qint8]:
        add("Requantize", input=acc, input_min=s(-40.0), input_max=s(40.0),
            requested_output_min=s(-6.0), requested_output_max=s(6.0), out_type=out)
    add("RequantizationRange", input=acc, input_min=s(-40.0), input_max=s(40.0))
    add("QuantizeDownAndShrinkRange", input=acc, input_min=s(-40.0), input_max=s(40.0),
        out_type=tf.quint8)

    a8 = qt("quint8", [3, 4])
    b8 = qt("quint8", [4, 5])
    for r in [(-1.0, 2.0, -0.5, 1.5), (0.5, 2.0, -3.0, -1.0)]:
        add("QuantizedMatMul", a=a8, b=b8, min_a=s(r[0]), max_a=s(r[1]), min_b=s(r[2]),
            max_b=s(r[3]), Toutput=tf.qint32)
    add("QuantizedMatMul", a=qt("quint8", [4, 3]), b=qt("quint8", [5, 4]), min_a=s(-1.0),
        max_a=s(2.0), min_b=s(-0.5), max_b=s(1.5), transpose_a=True, transpose_b=True)
    img = qt("quint8", [2, 5, 6, 3])
    filt = qt("quint8", [3, 2, 3, 4])
    for padding, stride, rng_in in [("SAME", 1, (-1.0, 2.0)), ("VALID", 1, (-1.0, 2.0)),
                                    ("SAME", 2, (0.5, 3.0)), ("SAME", 2, (-3.0, -1.0))]:
        add("QuantizedConv2D", input=img, filter=filt, min_input=s(rng_in[0]),
            max_input=s(rng_in[1]), min_filter=s(-0.7), max_filter=s(0.9),
            strides=[1, stride, stride, 1], padding=padding)

    for t in ["quint8", "qint8"]:
        add("QuantizedBiasAdd", input=qt(t, [2, 3, 4]), bias=qt(t, [4]), min_input=s(-1.0),
            max_input=s(2.0), min_bias=s(-0.5), max_bias=s(0.25), out_type=tf.qint32)
        add("QuantizedMaxPool", input=qt(t, [1, 5, 5, 2]), min_input=s(-1.0), max_input=s(1.0),
            ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME")
        add("QuantizedAvgPool", input=qt(t, [1, 5, 5, 2]), min_input=s(-1.0), max_input=s(1.0),
            ksize=[1, 2, 3, 1], strides=[1, 2, 2, 1], padding="SAME")
        add("QuantizedAvgPool", input=qt(t, [2, 4, 4, 1]), min_input=s(-1.0), max_input=s(1.0),
            ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], padding="VALID")
    for t, out in [("quint8", tf.quint8), ("qint32", tf.qint32)]:
        feat = qt(t, [2, 5])
        add("QuantizedRelu", features=feat, min_features=s(-3.0), max_features=s(9.0),
            out_type=out)
        add("QuantizedRelu6", features=feat, min_features=s(-3.0), max_features=s(9.0),
            out_type=out)
        add("QuantizedReshape", tensor=feat, shape=tf.constant([5, -1]), input_min=s(-1.0),
            input_max=s(1.0))
        add("QuantizedConcat", concat_dim=tf.constant(1), values=[qt(t, [2, 3]), qt(t, [2, 2])],
            input_mins=[s(-1.0), s(-0.5)], input_maxes=[s(1.0), s(3.0)])
        add("QuantizedConcat", concat_dim=tf.constant(0), values=[qt(t, [1, 3]), qt(t, [2, 3])],
            input_mins=[s(-1.0), s(-1.0)], input_maxes=[s(2.0), s(2.0)])
    for xs, ys in [([2, 3], [2, 3]), ([2, 3], []), ([], [4]), ([2, 3], [3]), ([4], [2, 4])]:
        xa, ya = qt("quint8", xs), qt("quint8", ys)
        for op in ["QuantizedAdd", "QuantizedMul"]:
            add(op, x=xa, y=ya, min_x=s(-1.0), max_x=s(2.0), min_y=s(-0.5), max_y=s(0.75),
                Toutput=tf.qint32)

    xf = f([2, 3, 4], -4.0, 4.0)
    for out, lo, hi in [(tf.qint8, -128, 127), (tf.quint8, 0, 255), (tf.qint32, -2**31, 2**31 - 1)]:
        add("UniformQuantize", input=xf, scales=s(0.05), zero_points=tf.constant(3),
            Tout=out, quantization_min_val=lo, quantization_max_val=hi)
    add("UniformQuantize", input=xf, scales=tf.constant([0.5, 0.03, 0.2]),
        zero_points=tf.constant([-2, 0, 7]), Tout=tf.qint8, quantization_axis=1,
        quantization_min_val=-127, quantization_max_val=127)
    for t, lo, hi in [("qint8", -128, 127), ("quint8", 0, 255), ("qint32", -2**20, 2**20)]:
        add("UniformDequantize", input=qt(t, [3, 4], lo, hi), scales=s(0.25),
            zero_points=tf.constant(-5), Tout=tf.float32, quantization_min_val=lo,
            quantization_max_val=hi)
    add("UniformDequantize", input=qt("qint8", [3, 4]), scales=tf.constant([0.5, 0.1, 0.2, 2.0]),
        zero_points=tf.constant([1, 0, -3, 4]), Tout=tf.float32, quantization_axis=1,
        quantization_min_val=-128, quantization_max_val=127)
    big = qt("qint32", [3, 4], -2**20, 2**20)
    add("UniformRequantize", input=big, input_scales=s(0.001), input_zero_points=tf.constant(2),
        output_scales=s(0.3), output_zero_points=tf.constant(-4), Tout=tf.qint8,
        input_quantization_min_val=-2**31, input_quantization_max_val=2**31 - 1,
        output_quantization_min_val=-128, output_quantization_max_val=127)
    add("UniformRequantize", input=big, input_scales=tf.constant([0.001, 0.002, 0.0005, 0.01]),
        input_zero_points=tf.constant([0, 1, 2, 3]), output_scales=s(0.5),
        output_zero_points=tf.constant(0), Tout=tf.qint8, input_quantization_axis=1,
        input_quantization_min_val=-2**31, input_quantization_max_val=2**31 - 1,
        output_quantization_min_val=-127, output_quantization_max_val=127)
    add("UniformRequantize", input=qt("qint8", [3, 4]), input_scales=s(0.1),
        input_zero_points=tf.constant(-1), output_scales=s(0.07), output_zero_points=tf.constant(5),
        Tout=tf.qint8, input_quantization_min_val=-128, input_quantization_max_val=127,
        output_quantization_min_val=-128, output_quantization_max_val=127)
    clip_x = qt("qint32", [3, 4], -1000, 1000)
    add("UniformQuantizedClipByValue", operand=clip_x, min=tf.constant(-300, tf.qint32),
        max=tf.constant(500, tf.qint32), scales=s(0.5), zero_points=tf.constant(0),
        quantization_min_val=-2**31, quantization_max_val=2**31 - 1)
    add("UniformQuantizedClipByValue", operand=clip_x,
        min=tf.constant([-300, 0, -900, 10], tf.qint32),
        max=tf.constant([500, 20, 900, 11], tf.qint32), scales=tf.constant([0.5] * 4),
        zero_points=tf.constant([0] * 4), quantization_axis=1,
        quantization_min_val=-2**31, quantization_max_val=2**31 - 1)

    for t in ["quint8", "qint32", "float32"]:
        img = qt(t, [1, 3, 4, 2], -2**20, 2**20) if t == "qint32" else (
            f([1, 3, 4, 2], -1.0, 1.0) if t == "float32" else qt(t, [1, 3, 4, 2]))
        for size, ac, hp in [([5, 7], False, False), ([2, 3], True, False), ([6, 5], False, True)]:
            add("QuantizedResizeBilinear", images=img, size=tf.constant(size, tf.int32),
                min=s(-1.0), max=s(1.0), align_corners=ac, half_pixel_centers=hp)
    bn = dict(t=qt("quint8", [1, 2, 3, 4]), t_min=s(-1.0), t_max=s(2.0), m=qt("quint8", [4]),
              m_min=s(-0.5), m_max=s(0.5), v=qt("quint8", [4]), v_min=s(0.0), v_max=s(2.0),
              beta=qt("quint8", [4]), beta_min=s(-1.0), beta_max=s(1.0), gamma=qt("quint8", [4]),
              gamma_min=s(0.0), gamma_max=s(3.0), out_type=tf.qint32, variance_epsilon=0.001)
    for after in [False, True]:
        add("QuantizedBatchNormWithGlobalNormalization", scale_after_normalization=after, **bn)
    for given in [False, True]:
        add("QuantizedInstanceNorm", x=qt("quint8", [2, 3, 4, 3]), x_min=s(-1.0), x_max=s(2.0),
            output_range_given=given, given_y_min=-3.0, given_y_max=3.0)
    l32 = qt("qint32", [2, 3], -5000, 5000)
    r32 = qt("qint32", [3], -5000, 5000)
    add("UniformQuantizedAdd", lhs=l32, rhs=r32, lhs_scales=s(0.2), lhs_zero_points=tf.constant(3),
        rhs_scales=s(0.3), rhs_zero_points=tf.constant(-1), output_scales=s(0.5),
        output_zero_points=tf.constant(5), lhs_quantization_min_val=-2**31,
        lhs_quantization_max_val=2**31 - 1, rhs_quantization_min_val=-2**31,
        rhs_quantization_max_val=2**31 - 1, output_quantization_min_val=-2000,
        output_quantization_max_val=2000)
    add("UniformQuantizedAdd", lhs=l32, rhs=r32, lhs_scales=tf.constant([0.2, 0.1, 0.4]),
        lhs_zero_points=tf.constant([3, 0, 1]), rhs_scales=tf.constant([0.3, 0.2, 0.1]),
        rhs_zero_points=tf.constant([-1, 2, 0]), output_scales=tf.constant([0.5, 0.6, 0.7]),
        output_zero_points=tf.constant([5, 0, -5]), lhs_quantization_axis=1,
        rhs_quantization_axis=0, output_quantization_axis=1, lhs_quantization_min_val=-2**31,
        lhs_quantization_max_val=2**31 - 1, rhs_quantization_min_val=-2**31,
        rhs_quantization_max_val=2**31 - 1, output_quantization_min_val=-2**31,
        output_quantization_max_val=2**31 - 1)
    lq = qt("qint8", [3, 5])
    rq = qt("qint8", [5, 4], -127, 127)
    dot = dict(lhs=lq, rhs=rq, lhs_scales=s(0.05), lhs_zero_points=tf.constant(2), Tout=tf.qint32,
               lhs_quantization_min_val=-128, lhs_quantization_max_val=127,
               rhs_quantization_min_val=-127, rhs_quantization_max_val=127,
               output_quantization_min_val=-2000, output_quantization_max_val=2000)
    add("UniformQuantizedDot", rhs_scales=s(0.02), rhs_zero_points=tf.constant(0),
        output_scales=s(0.01), output_zero_points=tf.constant(-3), **dot)
    add("UniformQuantizedDot", rhs_scales=tf.constant([0.02, 0.01, 0.03, 0.05]),
        rhs_zero_points=tf.constant([0, 0, 0, 0]), output_scales=tf.constant([0.01, 0.02, 0.01, 0.04]),
        output_zero_points=tf.constant([0, 1, -1, 3]), rhs_quantization_axis=1,
        output_quantization_axis=1, **dot)
    for rsc, rzp, axis in [(s(0.02), tf.constant(0), -1),
                           (tf.constant([0.02, 0.01, 0.03, 0.05]), tf.constant([0, 1, 0, -2]), 1)]:
        add("UniformQuantizedDotHybrid", lhs=f([3, 5], -2.0, 3.0), rhs=rq, rhs_scales=rsc,
            rhs_zero_points=rzp, Tout=tf.float32, rhs_quantization_axis=axis,
            rhs_quantization_min_val=-127, rhs_quantization_max_val=127)
    # Rows whose range is symmetric (max == -min): the zero point is -0.5 in exact arithmetic,
    # 0 from TF's float scale.
    add("UniformQuantizedDotHybrid",
        lhs=tf.constant([[100.0, -100.0, 3.0, 0.5, -7.0], [1.0, -1.0, 0.25, 0.5, -0.75]]),
        rhs=rq, rhs_scales=s(0.02), rhs_zero_points=tf.constant(0), Tout=tf.float32,
        rhs_quantization_min_val=-127, rhs_quantization_max_val=127)

    from tensorflow.core.util.quantization import uniform_quant_ops_attr_pb2 as uq_pb2
    nhwc = uq_pb2.UniformQuantizedConvolutionDimensionNumbersAttr(
        input_batch_dimension=0, input_feature_dimension=3, input_spatial_dimensions=[1, 2],
        kernel_input_feature_dimension=2, kernel_output_feature_dimension=3,
        kernel_spatial_dimensions=[0, 1], output_batch_dimension=0, output_feature_dimension=3,
        output_spatial_dimensions=[1, 2]).SerializeToString()
    conv_q = dict(lhs_quantization_min_val=-128, lhs_quantization_max_val=127,
                  rhs_quantization_min_val=-127, rhs_quantization_max_val=127,
                  output_quantization_min_val=-100000, output_quantization_max_val=100000)
    lhs4 = qt("qint8", [2, 4, 5, 6])
    rhs4 = qt("qint8", [6, 4, 3, 2], -127, 127)
    per_ch = dict(rhs_scales=tf.constant([0.02, 0.01, 0.03, 0.05, 0.04, 0.02]),
                  rhs_zero_points=tf.constant([0, 1, 0, -2, 0, 0]),
                  output_scales=tf.constant([0.01, 0.02, 0.01, 0.04, 0.03, 0.02]),
                  output_zero_points=tf.constant([0, 1, -1, 3, 0, 2]),
                  rhs_quantization_axis=0, output_quantization_axis=1)
    for extra in [dict(padding="VALID"), dict(padding="SAME", window_strides=[2, 1]),
                  dict(padding="EXPLICIT", explicit_padding=[1, 0, 2, 1], lhs_dilation=[2, 1],
                       rhs_dilation=[1, 2])]:
        add("UniformQuantizedConvolution", lhs=lhs4, rhs=rhs4, lhs_scales=s(0.05),
            lhs_zero_points=tf.constant(2), rhs_scales=s(0.02), rhs_zero_points=tf.constant(1),
            output_scales=s(0.01), output_zero_points=tf.constant(-3), Tout=tf.qint32,
            **conv_q, **extra)
    add("UniformQuantizedConvolution", lhs=lhs4, rhs=rhs4, lhs_scales=s(0.05),
        lhs_zero_points=tf.constant(2), Tout=tf.qint32, padding="SAME", **conv_q, **per_ch)
    add("UniformQuantizedConvolution", lhs=lhs4, rhs=qt("qint8", [6, 2, 3, 2], -127, 127),
        lhs_scales=s(0.05), lhs_zero_points=tf.constant(0), rhs_scales=s(0.02),
        rhs_zero_points=tf.constant(0), output_scales=s(0.01), output_zero_points=tf.constant(0),
        Tout=tf.qint32, padding="VALID", feature_group_count=2, **conv_q)
    add("UniformQuantizedConvolution", lhs=qt("qint8", [2, 5, 6, 4]),
        rhs=qt("qint8", [3, 2, 4, 5], -127, 127), lhs_scales=s(0.05),
        lhs_zero_points=tf.constant(-1), rhs_scales=s(0.02), rhs_zero_points=tf.constant(0),
        output_scales=s(0.01), output_zero_points=tf.constant(4), Tout=tf.qint32,
        padding="SAME", dimension_numbers=nhwc, **conv_q)
    hyb = dict(rhs_quantization_min_val=-127, rhs_quantization_max_val=127, Tout=tf.float32)
    add("UniformQuantizedConvolutionHybrid", lhs=f([2, 4, 5, 6], -2.0, 3.0), rhs=rhs4,
        rhs_scales=s(0.02), rhs_zero_points=tf.constant(0), padding="SAME", **hyb)
    add("UniformQuantizedConvolutionHybrid", lhs=f([2, 4, 5, 6], -1.0, 1.0), rhs=rhs4,
        rhs_scales=tf.constant([0.02, 0.01, 0.03, 0.05, 0.04, 0.02]),
        rhs_zero_points=tf.constant([0, 1, 0, -2, 0, 0]), rhs_quantization_axis=0,
        padding="VALID", window_strides=[1, 2], **hyb)

    acc4 = qt("qint32", [1, 2, 3, 4], -2**30, 2**30)
    for out in [tf.qint8, tf.quint8]:
        add("RequantizePerChannel", input=acc4, input_min=tf.constant([-10.0, -5.0, -2.0, -1.0]),
            input_max=tf.constant([10.0, 6.0, 2.5, 1.0]), requested_output_min=s(-3.0),
            requested_output_max=s(3.0), out_type=out)
    for clip in [2.0, 100.0]:
        add("RequantizationRangePerChannel", input=acc4,
            input_min=tf.constant([-10.0, -5.0, -2.0, -1.0]),
            input_max=tf.constant([10.0, 6.0, 2.5, 1.0]), clip_value_max=clip)
    return cases


def _cases_onednn(tf, rng):
    def u8(shape, hi=255):
        return rng.integers(0, hi, size=shape, endpoint=True).astype(np.uint8)

    def s8(shape, lim=60, even=False):
        v = rng.integers(-lim, lim, size=shape, endpoint=True)
        return (v - v % 2 if even else v).astype(np.int8)

    cases = []

    def add(op, **kw):
        cases.append((op, kw))

    x = u8([1, 5, 6, 3])
    xs8 = rng.integers(-128, 127, size=[1, 5, 6, 3], endpoint=True).astype(np.int8)
    w = s8([3, 2, 3, 4])
    we = s8([3, 2, 3, 4], even=True)
    wd = s8([2, 2, 3, 2])
    bias = rng.uniform(-2, 2, size=[4]).astype(np.float32)
    bias_q = rng.integers(-5000, 5000, size=[4]).astype(np.int32)
    common = dict(min_input=np.float32(-1.0), max_input=np.float32(2.0),
                  min_filter=np.float32(-0.8), max_filter=np.float32(0.6))
    per_ch = dict(min_input=np.float32(0.0), max_input=np.float32(3.0),
                  min_filter=np.array([-0.8, -0.2, -1.0, -0.3], np.float32),
                  max_filter=np.array([0.6, 0.3, 0.9, 0.5], np.float32))
    frozen = dict(min_freezed_output=np.float32(-4.0), max_freezed_output=np.float32(5.0))
    geo = dict(strides=[1, 1, 1, 1], padding="SAME")
    geo2 = dict(strides=[1, 2, 2, 1], padding="VALID", dilations=[1, 1, 1, 1])
    u8_types = dict(Tinput="quint8", Tfilter="qint8")
    add("QuantizedConv2DPerChannel", input=x, filter=w, out_type="qint32", **u8_types, **per_ch,
        **geo)
    add("QuantizedConv2DAndRelu", input=x, filter=w, out_type="qint32", **u8_types, **common,
        **geo2)
    add("QuantizedConv2DAndRequantize", input=x, filter=w, out_type="qint8", **u8_types, **common,
        **frozen, **geo)
    add("QuantizedConv2DAndReluAndRequantize", input=x, filter=w, out_type="quint8", **u8_types,
        **per_ch, **frozen, **geo)
    add("QuantizedConv2DWithBias", input=x, filter=w, bias=bias, out_type="qint32", **u8_types,
        **common, strides=[1, 1, 1, 1], padding="VALID", padding_list=[0, 0, 1, 2, 0, 1, 0, 0])
    add("QuantizedConv2DWithBias", input=xs8, filter=we, bias=bias, out_type="qint32",
        Tinput="qint8", Tfilter="qint8", **common, **geo)
    add("QuantizedConv2DWithBiasAndRelu", input=x, filter=w, bias=bias, out_type="qint32",
        **u8_types, **per_ch, strides=[1, 1, 1, 1], padding="SAME", dilations=[1, 2, 2, 1])
    for tb, b in [("float32", bias), ("qint32", bias_q)]:
        add("QuantizedConv2DWithBiasAndRequantize", input=x, filter=w, bias=b, Tbias=tb,
            out_type="qint8", **u8_types, **common, **frozen, **geo)
        add("QuantizedConv2DWithBiasAndReluAndRequantize", input=x, filter=w, bias=b, Tbias=tb,
            out_type="quint8", **u8_types, **per_ch, **frozen, **geo2)
    add("QuantizedConv2DWithBiasAndRequantize", input=xs8, filter=we, bias=bias, Tbias="float32",
        out_type="qint8", Tinput="qint8", Tfilter="qint8", **common, **frozen, **geo)
    add("QuantizedConv2DWithBiasSumAndRelu", input=x, filter=w, bias=bias, out_type="qint32",
        summand=rng.uniform(-3, 3, size=[1, 5, 6, 4]).astype(np.float32), **u8_types, **common,
        **geo)
    add("QuantizedConv2DWithBiasSumAndReluAndRequantize", input=x, filter=w, bias=bias,
        Tbias="float32", Tsummand="quint8", out_type="quint8", summand=u8([1, 5, 6, 4]),
        min_summand=np.float32(0.0), max_summand=np.float32(2.0), **u8_types, **common, **frozen,
        **geo)
    add("QuantizedConv2DWithBiasSignedSumAndReluAndRequantize", input=x, filter=w, bias=bias_q,
        Tbias="qint32", Tsummand="qint8", out_type="quint8",
        summand=rng.integers(-128, 127, size=[1, 5, 6, 4], endpoint=True).astype(np.int8),
        min_summand=np.float32(-1.0), max_summand=np.float32(2.0), **u8_types, **common,
        **frozen, **geo)
    dw_common = dict(min_input=np.float32(-1.0), max_input=np.float32(2.0),
                     min_filter=np.float32(-0.8), max_filter=np.float32(0.6))
    dw_bias = rng.uniform(-2, 2, size=[6]).astype(np.float32)
    add("QuantizedDepthwiseConv2D", input=x, filter=wd, out_type="qint32", **u8_types,
        **dw_common, **geo)
    add("QuantizedDepthwiseConv2DWithBias", input=x, filter=wd, bias=dw_bias, out_type="qint32",
        **u8_types, **dw_common, **geo2)
    add("QuantizedDepthwiseConv2DWithBiasAndRelu", input=x, filter=wd, bias=dw_bias,
        out_type="qint32", **u8_types, **dw_common, **geo)
    add("QuantizedDepthwiseConv2DWithBiasAndReluAndRequantize", input=x, filter=wd, bias=dw_bias,
        Tbias="float32", out_type="quint8", **u8_types, **dw_common, **frozen, **geo)

    a = u8([3, 5])
    b = s8([5, 4])
    mm = dict(min_a=np.float32(-1.0), max_a=np.float32(2.0), min_b=np.float32(-0.5),
              max_b=np.float32(0.7))
    mm_types = dict(T1="quint8", T2="qint8")
    for mode in ["MIN_FIRST", "SCALED"]:
        if mode == "SCALED":  # a quint8 input in SCALED mode holds [0, max_a]
            mm = dict(mm, min_a=np.float32(0.0))
        for tb, bb in [("float32", bias), ("qint32", bias_q)]:
            add("QuantizedMatMulWithBias", a=a, b=b, bias=bb, Tbias=tb, Toutput="qint32",
                input_quant_mode=mode, **mm_types, **mm)
            add("QuantizedMatMulWithBiasAndRequantize", a=a, b=b, bias=bb, Tbias=tb,
                Toutput="quint8", input_quant_mode=mode, **mm_types, **mm, **frozen)
        add("QuantizedMatMulWithBiasAndRelu", a=a, b=b, bias=bias, Toutput="qint32",
            input_quant_mode=mode, **mm_types, **mm)
        add("QuantizedMatMulWithBiasAndReluAndRequantize", a=a, b=b, bias=bias_q, Tbias="qint32",
            Toutput="quint8", input_quant_mode=mode, **mm_types, **mm, **frozen)
        add("QuantizedMatMulWithBiasAndDequantize", a=a, b=b, bias=bias, Tbias="float32",
            Toutput="float32", input_quant_mode=mode, **mm_types, **mm, **frozen)
    return cases


# Which inputs of each oneDNN op hold which quantized dtype attr.
_INPUT_TYPE_ATTR = {"input": "Tinput", "filter": "Tfilter", "a": "T1", "b": "T2",
                    "bias": "Tbias", "summand": "Tsummand"}
_TYPE_ATTRS = ("Tinput", "Tfilter", "T1", "T2", "Tbias", "Tsummand", "out_type", "Toutput", "T")


def _run(tf, op, tensors, attrs):
    """Runs op in a tf.function whose operands are constants in it (TF's oneDNN rewrite needs
    a constant filter); returns the node's full attrs and the outputs. A summand comes in as an
    argument and through a fresh buffer: TF's Sum fusions write into it (a constant crashes)."""
    summand = tensors.get("summand")
    arg = tf.constant(summand[0]) if summand is not None else tf.constant(0.0)

    @tf.function
    def run(sin):
        kw = {}
        for k, v in tensors.items():
            kw[k] = [tf.constant(a, dtype=d) for a, d in v] if isinstance(v, list) else \
                tf.constant(v[0], dtype=v[1])
        if summand is not None and summand[1] == tf.float32:
            kw["summand"] = sin + 0.0 * tf.reduce_max(sin)
        elif summand is not None:
            fresh = tf.bitwise.bitwise_xor(sin, tf.zeros_like(sin))
            kw["summand"] = tf.bitcast(fresh, summand[1])
        return getattr(tf.raw_ops, op)(**kw, **attrs)
    graph = run.get_concrete_function(arg).graph
    node = [o for o in graph.get_operations() if o.type == op][0].node_def
    outs = run(arg)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    return node, outs


def _attrs_of(tf, node):
    attrs = []
    for name in sorted(node.attr):
        v = node.attr[name]
        kind = v.WhichOneof("value")
        if kind == "type":
            attrs.append([name, "type", tf.as_dtype(v.type).name])
        elif kind == "b":
            attrs.append([name, "bool", "true" if v.b else "false"])
        elif kind == "i":
            attrs.append([name, "int", str(v.i)])
        elif kind == "f":
            attrs.append([name, "float", repr(float(v.f))])
        elif kind == "s":
            attrs.append([name, "string", _cxx_bytes(v.s)])
        elif kind == "list" and len(v.list.f):
            attrs.append([name, "floats", ",".join(repr(float(e)) for e in v.list.f)])
        elif kind == "list" and len(v.list.i):
            attrs.append([name, "ints", ",".join(str(e) for e in v.list.i)])
        elif kind == "list" and not len(v.list.type) and not len(v.list.s):
            attrs.append([name, "ints", ""])
    return attrs


def _record(mode):
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1" if mode == "onednn" else "0"
    import tensorflow as tf
    rng = np.random.default_rng(2112)
    records = []
    cases = _cases_reference(tf, rng) if mode == "reference" else _cases_onednn(tf, rng)
    for op, kw in cases:
        tensors, attrs = {}, {}
        for k, v in kw.items():
            if isinstance(v, (np.ndarray, np.generic)):
                v = np.asarray(v)
                attr = _INPUT_TYPE_ATTR.get(k)
                dt = tf.as_dtype(kw[attr]) if attr in kw else tf.as_dtype(v.dtype)
                tensors[k] = (v, dt)
            elif isinstance(v, tf.Tensor):
                tensors[k] = (v.numpy(), v.dtype)
            elif isinstance(v, list) and v and isinstance(v[0], tf.Tensor):
                tensors[k] = [(e.numpy(), e.dtype) for e in v]
            elif k in _INPUT_TYPE_ATTR.values():
                continue  # inferred from the operand's dtype
            elif k in _TYPE_ATTRS and isinstance(v, str):
                attrs[k] = tf.as_dtype(v)
            else:
                attrs[k] = v
        node, outs = _run(tf, op, tensors, attrs)
        inputs = []
        from tensorflow.python.framework import op_def_registry
        order = [a.name for a in op_def_registry.get(op).input_arg]
        for k, v in sorted(tensors.items(), key=lambda kv: order.index(kv[0])):
            for a, d in (v if isinstance(v, list) else [v]):
                inputs.append(_tensor(tf, tf.constant(a, dtype=d)))
        records.append({"op": op, "attrs": _attrs_of(tf, node), "inputs": inputs,
                        "outputs": [_tensor(tf, o) for o in outs]})
    return records


def _tensor(tf, t):
    """A tensor as the .inc records it: numbers (complex ones as re, im pairs) or strings."""
    dt = t.dtype.name
    arr = np.asarray(t.numpy())
    if dt == "string":
        return {"dtype": dt, "shape": list(t.shape), "values": [], "strings": arr.ravel().tolist()}
    if dt.startswith("complex"):
        arr = np.stack([arr.real, arr.imag], axis=-1)
    vals = (arr.astype(np.float32) if dt == "bfloat16" else arr).ravel().tolist()
    return {"dtype": dt, "shape": list(t.shape), "values": vals}


def _cxx_bytes(b):
    """C++ literal text of bytes: octal escapes for anything but plain ASCII."""
    return "".join(chr(c) if 32 <= c < 127 and chr(c) not in '"\\?' else "\\%03o" % c for c in b)


def _cxx_float(v):
    """C++ text of a double: NAN and INFINITY (<cmath>) where repr would say nan or inf."""
    v = float(v)
    if v != v:
        return "NAN"
    if v in (float("inf"), float("-inf")):
        return "INFINITY" if v > 0 else "-INFINITY"
    return repr(v)


def _cxx_tensor(t):
    vals = ", ".join(
        _cxx_float(v) if t["dtype"] in ("float16", "float32", "bfloat16", "float64", "complex64",
                                        "complex128") else str(int(v))
        for v in t["values"])
    shape = ", ".join(str(d) for d in t["shape"])
    if t["dtype"] == "string":
        strs = ", ".join('"%s"s' % _cxx_bytes(b) for b in t["strings"])
        return '{"%s", {%s}, {}, {%s}}' % (t["dtype"], shape, strs)
    return '{"%s", {%s}, {%s}}' % (t["dtype"], shape, vals)


def main():
    if len(sys.argv) > 1:
        print(json.dumps(_record(sys.argv[1])))
        return
    records = []
    for mode in ["reference", "onednn"]:
        out = subprocess.run([sys.executable, __file__, mode], check=True, capture_output=True,
                             text=True).stdout
        records += json.loads(out.strip().splitlines()[-1])
    lines = ["// Generated by tests/ops/record_quantized_cases.py from TensorFlow 2.21's results;",
             "// do not edit. One RecordedCase per call: op, attrs, inputs, TF's outputs.", ""]
    for r in records:
        attrs = ", ".join('{"%s", "%s", "%s"s}' % tuple(a) for a in r["attrs"])
        ins = ",\n      ".join(_cxx_tensor(t) for t in r["inputs"])
        outs = ",\n      ".join(_cxx_tensor(t) for t in r["outputs"])
        lines.append('{"%s",\n    {%s},\n    {%s},\n    {%s}},' % (r["op"], attrs, ins, outs))
    with open(OUT, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("wrote", len(records), "cases to", OUT)


if __name__ == "__main__":
    main()
