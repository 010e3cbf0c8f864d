"""The math ops against TensorFlow 2.21: one module whose methods use the element-wise math,
reduction, scan, counting, matrix, segment, loss, fake-quantisation and Multinomial ops with
inputs that reach their subtle corners (ties, NaN, zero divisors, alignments of diagonals,
empty segments, seeded sampling). TensorFlow saves it and computes every method on a fresh load;
our loader calls each restored method by name (tests/tf/kiln_call.cc) and must agree."""
import os

import numpy as np
import pytest

import oracle

NAN = np.float32(np.nan)
INF = np.float32(np.inf)


def _module():
    import tensorflow as tf
    raw = tf.raw_ops
    f32 = tf.float32

    class MathOps(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], f32)])
        def unary(self, x):
            pos = tf.abs(x) + 0.25
            unit = tf.tanh(x) * 0.9
            return (tf.sin(x), tf.cos(x), tf.tan(unit), tf.asin(unit), tf.acos(unit), tf.atan(x),
                    tf.sinh(x), tf.cosh(x), tf.asinh(x), tf.acosh(pos + 1), tf.atanh(unit),
                    tf.math.expm1(x), tf.math.log1p(pos), tf.math.erf(x), tf.math.erfc(x),
                    tf.math.lgamma(pos), tf.math.digamma(pos), tf.floor(x), tf.math.ceil(x),
                    tf.math.rint(x * 2), tf.round(x * 2), tf.sign(x), tf.nn.softplus(x * 10),
                    tf.nn.softsign(x), tf.nn.selu(x), tf.nn.leaky_relu(x, alpha=0.3),
                    raw.LeakyRelu(features=x, alpha=1.5), tf.math.is_nan(x),
                    tf.math.is_inf(x), tf.math.is_finite(x))

        @tf.function(input_signature=[tf.TensorSpec([None], f32), tf.TensorSpec([None], f32)])
        def binary(self, x, y):
            return (tf.atan2(x, y), raw.Div(x=x, y=y), tf.math.divide_no_nan(x, y),
                    tf.math.multiply_no_nan(x, y), tf.math.xdivy(x, y),
                    tf.math.xlogy(x, tf.abs(y)), tf.math.squared_difference(x, y),
                    raw.TruncateMod(x=x, y=y), raw.TruncateDiv(x=x, y=y), raw.Mod(x=x, y=y),
                    tf.clip_by_value(x, -1.5, 2.0),
                    raw.ClipByValue(t=x, clip_value_min=y, clip_value_max=tf.constant(1.0)),
                    raw.ReluGrad(gradients=y, features=x), raw.Relu6Grad(gradients=y, features=x * 4),
                    raw.SigmoidGrad(y=tf.sigmoid(x), dy=y), raw.TanhGrad(y=tf.tanh(x), dy=y))

        @tf.function(input_signature=[tf.TensorSpec([None], f32), tf.TensorSpec([None], f32)])
        def special(self, x, y):
            sp = tf.math.special
            pos = tf.abs(x) + 0.25
            unit = tf.tanh(x) * 0.9
            d = tf.cast(x, tf.float64)
            return (sp.bessel_i0(x), sp.bessel_i0e(x), sp.bessel_i1(x), sp.bessel_i1e(x),
                    sp.bessel_j0(x), sp.bessel_j1(x), sp.bessel_k0(pos), sp.bessel_k0e(pos),
                    sp.bessel_k1(pos), sp.bessel_k1e(pos), sp.bessel_y0(pos), sp.bessel_y1(pos),
                    tf.math.erfinv(unit), tf.math.ndtri(unit * 0.5 + 0.5),
                    tf.math.igamma(pos, tf.abs(y)), tf.math.igammac(pos, tf.abs(y)),
                    tf.math.zeta(pos + 1.0, tf.abs(y) + 0.5),
                    tf.math.polygamma(tf.round(tf.abs(y)), pos), tf.math.xlog1py(x, tf.abs(y)),
                    tf.math.nextafter(x, y), tf.math.nextafter(d, -d),
                    sp.bessel_j0(d), tf.math.igamma(tf.abs(d) + 0.5, tf.abs(d)),
                    raw.ReciprocalGrad(y=x, dy=y), raw.InvGrad(y=x, dy=y),
                    raw.SqrtGrad(y=pos, dy=y), raw.RsqrtGrad(y=pos, dy=y),
                    raw.EluGrad(gradients=y, outputs=tf.nn.elu(x)),
                    raw.SeluGrad(gradients=y, outputs=tf.nn.selu(x)),
                    raw.SoftplusGrad(gradients=y, features=x),
                    raw.SoftsignGrad(gradients=y, features=x),
                    raw.LeakyReluGrad(gradients=y, features=x, alpha=0.3),
                    raw.ApproximateEqual(x=x, y=x + y * 1e-6, tolerance=2e-6),
                    tf.math.betainc(pos, tf.abs(y) + 0.5, tf.sigmoid(x)),
                    tf.math.betainc(tf.constant(2.0), tf.abs(y) + 0.5, tf.constant(0.3)))

        @tf.function(input_signature=[tf.TensorSpec([None, 6], f32), tf.TensorSpec([None], tf.int32)])
        def positions(self, x, ids):
            srt = tf.sort(x, axis=1)
            y, idx, count = raw.UniqueWithCountsV2(x=tf.reshape(ids, [-1, 2]),
                                                   axis=tf.constant([0], tf.int64))
            diff, diff_idx = tf.compat.v1.setdiff1d(ids, tf.constant([3, 5, 7], tf.int32))
            return (tf.searchsorted(srt, x[:, :4]), tf.searchsorted(srt, x[:, 1:], side="right"),
                    tf.searchsorted(tf.cast(srt, tf.float64), tf.cast(x, tf.float64),
                                    out_type=tf.int64),
                    tf.unravel_index(tf.abs(ids) % 24, tf.constant([2, 3, 4])),
                    tf.unravel_index(tf.constant(17, tf.int64), tf.constant([4, 5], tf.int64)),
                    diff, diff_idx, y, idx, count,
                    tf.linalg.tensor_diag(x[0]), tf.linalg.tensor_diag(tf.reshape(ids[:6], [2, 3])),
                    tf.linalg.tensor_diag_part(tf.linalg.tensor_diag(x[:2, :3])),
                    raw.Reverse(tensor=x, dims=tf.constant([True, False])),
                    raw.Reverse(tensor=x, dims=tf.constant([False, True])),
                    tf.math.reduce_euclidean_norm(x, 1), tf.math.reduce_euclidean_norm(x),
                    tf.math.reduce_euclidean_norm(tf.cast(x, tf.float64), 0, keepdims=True),
                    raw.PopulationCount(x=ids), raw.PopulationCount(x=
                        tf.cast(ids, tf.int64) * -1), raw.Inv(x=x), tf.nn.l2_loss(x),
                    tf.math.in_top_k(tf.abs(ids[:4]) % 6, x, 2),
                    raw.InTopK(predictions=x, targets=tf.abs(ids[:4]) % 6, k=3),
                    tf.nn.l2_loss(tf.cast(x, tf.float64)),
                    raw.NthElement(input=x, n=tf.constant(2)),
                    raw.NthElement(input=x, n=tf.constant(0), reverse=True))

        @tf.function(input_signature=[tf.TensorSpec([None], tf.int32),
                                      tf.TensorSpec([None], tf.int32)])
        def integers(self, a, b):
            a8 = tf.cast(a, tf.int8)
            return (tf.bitwise.bitwise_and(a, b), tf.bitwise.bitwise_or(a, b),
                    tf.bitwise.bitwise_xor(a, b), tf.bitwise.invert(a),
                    tf.bitwise.left_shift(a, b), tf.bitwise.right_shift(a, b),
                    tf.bitwise.left_shift(a8, tf.cast(b, tf.int8)),
                    tf.bitwise.right_shift(tf.cast(a * 9, tf.int8), tf.cast(b, tf.int8)),
                    raw.Div(x=a, y=b + 100), raw.TruncateDiv(x=a, y=b + 100),
                    raw.TruncateMod(x=a, y=b + 100), raw.Mod(x=a, y=b - 200),
                    tf.math.squared_difference(a, b), tf.sign(a), tf.round(tf.cast(a, f32) / 4))

        @tf.function(input_signature=[tf.TensorSpec([None, 4, 5], f32)])
        def reductions(self, x):
            b = x > 0
            return (tf.reduce_sum(x, [0, 2]), tf.reduce_mean(x, 1, keepdims=True),
                    tf.reduce_max(x, [1]), tf.reduce_min(x, -1), tf.reduce_prod(x, [0, 1]),
                    tf.reduce_all(b, 1), tf.reduce_any(b, [0, 2]), tf.argmax(x, 1),
                    tf.argmin(x, 2, output_type=tf.int32),
                    tf.reduce_mean(tf.cast(x * 10, tf.int32), 2), tf.reduce_sum(x))

        @tf.function(input_signature=[tf.TensorSpec([None, 6], f32)])
        def scans(self, x):
            return (tf.cumsum(x, 1), tf.cumsum(x, 0, exclusive=True, reverse=True),
                    tf.math.cumprod(x, -1, exclusive=True), tf.math.cumprod(x, 1, reverse=True),
                    tf.cumsum(tf.cast(x * 4, tf.int64), 1, reverse=True),
                    raw.LinSpace(start=x[0, 0], stop=x[0, 1], num=tf.constant(7)),
                    raw.LinSpace(start=x[1, 0], stop=x[1, 1], num=tf.constant(1)))

        @tf.function(input_signature=[tf.TensorSpec([None], tf.int32),
                                      tf.TensorSpec([None, None], tf.int32),
                                      tf.TensorSpec([None], f32)])
        def counts(self, v, m, w):
            y, idx = tf.unique(v)
            yc, idxc, count = tf.unique_with_counts(w)
            y2, idx2 = raw.UniqueV2(x=m, axis=tf.constant([1], tf.int64))
            return (raw.Bincount(arr=v, size=tf.constant(5), weights=tf.zeros([0])),
                    raw.Bincount(arr=v, size=tf.constant(4), weights=w),
                    raw.DenseBincount(input=m, size=tf.constant(3), weights=tf.zeros([0]),
                                      binary_output=False),
                    raw.DenseBincount(input=m, size=tf.constant(3), weights=tf.zeros([0]),
                                      binary_output=True),
                    y, idx, yc, idxc, count, y2, idx2)

        # A known batch: TF's shape function of MatrixSetDiagV3 fails on an unknown one.
        @tf.function(input_signature=[tf.TensorSpec([2, 4, 5], f32),
                                      tf.TensorSpec([None, 3, 3], tf.float64)])
        def matrices(self, x, sq):
            outs = [tf.linalg.band_part(x, 1, -1), tf.linalg.band_part(x, -1, 0),
                    tf.linalg.det(sq), raw.MatrixDiag(diagonal=x[:, 0]),
                    raw.MatrixDiagPart(input=x)]
            for align in ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"):
                part = raw.MatrixDiagPartV3(input=x, k=tf.constant([-2, 1]), padding_value=9.0,
                                            align=align)
                outs.append(part)
                outs.append(raw.MatrixDiagV3(diagonal=part, k=tf.constant([-2, 1]), num_rows=-1,
                                             num_cols=5, padding_value=-1.0, align=align))
                outs.append(raw.MatrixSetDiagV3(input=x, diagonal=part * 2,
                                                k=tf.constant([-2, 1]), align=align))
            outs.append(raw.MatrixDiagPartV2(input=x, k=tf.constant([-1, 2]), padding_value=7.0))
            outs.append(raw.MatrixDiagV2(diagonal=x[:, 1:3, :4], k=tf.constant([0, 1]),
                                         num_rows=-1, num_cols=-1, padding_value=0.0))
            outs.append(raw.MatrixDiagV3(diagonal=x[:, 0, :3], k=tf.constant(2), num_rows=-1,
                                         num_cols=-1, padding_value=0.0))
            return tuple(outs)

        @tf.function(input_signature=[tf.TensorSpec([7, 3], f32), tf.TensorSpec([7], tf.int32),
                                      tf.TensorSpec([7], tf.int32)])
        def segments(self, data, sorted_ids, any_ids):
            idx = tf.constant([6, 0, 3, 3, 1], tf.int64)
            seg = tf.constant([0, 0, 2, 3, 3], tf.int32)
            return (tf.math.segment_sum(data, sorted_ids), tf.math.segment_mean(data, sorted_ids),
                    tf.math.segment_max(data, sorted_ids), tf.math.segment_min(data, sorted_ids),
                    tf.math.segment_prod(data, sorted_ids),
                    tf.math.unsorted_segment_sum(data, any_ids, 6),
                    tf.math.unsorted_segment_max(data, any_ids, 6),
                    tf.math.unsorted_segment_min(data, any_ids, 6),
                    tf.math.unsorted_segment_prod(data, any_ids, 6),
                    raw.SparseSegmentSum(data=data, indices=idx, segment_ids=seg),
                    raw.SparseSegmentMean(data=data, indices=idx, segment_ids=seg),
                    raw.SparseSegmentSqrtN(data=data, indices=idx, segment_ids=seg),
                    raw.SparseSegmentSumWithNumSegments(data=data, indices=idx, segment_ids=seg,
                                                        num_segments=6),
                    raw.SparseSegmentMeanWithNumSegments(data=data, indices=idx, segment_ids=seg,
                                                         num_segments=6),
                    raw.SparseSegmentSqrtNWithNumSegments(data=data, indices=idx,
                                                          segment_ids=seg, num_segments=6))

        @tf.function(input_signature=[tf.TensorSpec([None, 5], f32), tf.TensorSpec([None, 5], f32),
                                      tf.TensorSpec([None], tf.int64)])
        def losses(self, logits, labels, ids):
            loss, backprop = raw.SoftmaxCrossEntropyWithLogits(features=logits, labels=labels)
            bloss, bbackprop = raw.SoftmaxCrossEntropyWithLogits(features=logits,
                                                                 labels=labels[:1])
            sloss, sbackprop = raw.SparseSoftmaxCrossEntropyWithLogits(features=logits,
                                                                       labels=ids)
            return loss, backprop, bloss, bbackprop, sloss, sbackprop

        @tf.function(input_signature=[tf.TensorSpec([None], f32)])
        def quantize(self, x):
            return (tf.quantization.fake_quant_with_min_max_args(x),
                    tf.quantization.fake_quant_with_min_max_args(x, -1.0, 5.0, 4, True),
                    tf.quantization.fake_quant_with_min_max_args(x, 0.5, 3.0),
                    tf.quantization.fake_quant_with_min_max_vars(x, -2.3, 1.7, num_bits=3),
                    tf.quantization.fake_quant_with_min_max_vars(x, -0.0, 0.0),
                    tf.quantization.fake_quant_with_min_max_vars(x, -7.0, -0.5, 16, True))

        @tf.function(input_signature=[tf.TensorSpec([None, 6, 8], f32)])
        def spectral(self, x):
            z = tf.complex(x, tf.reverse(x, [2]) * 0.5)
            z128 = tf.cast(z, tf.complex128)
            return (tf.signal.fft2d(z), tf.signal.ifft(z), tf.signal.ifft2d(z128),
                    tf.signal.fft3d(z), tf.signal.ifft3d(z),
                    raw.RFFT3D(input=x, fft_length=tf.constant([2, 6, 8])),
                    raw.IRFFT(input=z, fft_length=tf.constant([14])),
                    raw.IRFFT(input=z, fft_length=tf.constant([13])),
                    raw.IRFFT2D(input=z128, fft_length=tf.constant([5, 9]), Treal=tf.float64),
                    raw.IRFFT3D(input=z, fft_length=tf.constant([2, 4, 6])),
                    tf.math.conj(z), tf.linalg.adjoint(z), raw.Conj(input=z128))

        @tf.function(input_signature=[tf.TensorSpec([None, 4], f32), tf.TensorSpec([None], tf.int32)])
        def arrays(self, x, ids):
            n = tf.shape(x)[0]
            v3 = tf.reshape(x[:, :3], [-1, 3])
            grad = raw.StridedSliceGrad(shape=tf.shape(x), begin=[1, 0], end=[-1, 4],
                                        strides=[1, 3], dy=x[1:-1, ::3])
            upd = raw.TensorStridedSliceUpdate(input=x, begin=[0, 1], end=[n, 4], strides=[2, 2],
                                               value=tf.constant([7.0, 8.0]))
            img = tf.reshape(x[:4], [1, 4, 4, 1])
            s2b = raw.SpaceToBatch(input=img, paddings=tf.constant([[0, 2], [2, 0]]), block_size=2)
            b2s = raw.BatchToSpace(input=s2b, crops=tf.constant([[0, 2], [2, 0]]), block_size=2)
            sq = tf.reshape(x[:4], [4, 4])
            return (tf.linalg.cross(v3, tf.reverse(v3, [0])), grad, upd, s2b, b2s,
                    tf.bitcast(x, tf.int32), tf.bitcast(x, tf.uint8),
                    raw.DataFormatDimMap(x=ids % 4), raw.DataFormatVecPermute(x=ids[:4]),
                    tf.histogram_fixed_width(tf.where(tf.math.is_nan(x), 0.0, x), [-2.0, 2.0], nbins=7),
                    raw.ConcatOffset(concat_dim=1, shape=[tf.shape(x), tf.shape(x[:, :2])]),
                    # TF's Inplace kernels write their input's buffer: each gets its own.
                    raw.InplaceAdd(x=x + 1.0, i=ids[:2] % n, v=x[:2]),
                    raw.InplaceUpdate(x=x + 2.0, i=[1], v=x[:1] * 3),
                    raw.InplaceSub(x=x + 3.0, i=[0, 0], v=x[:2]),
                    raw.ScatterNdNonAliasingAdd(input=x, indices=[[1], [1]], updates=x[:2]),
                    raw.MatrixSetDiag(input=sq, diagonal=sq[0]),
                    raw.MatrixSetDiagV2(input=sq, diagonal=sq[:2], k=[-1, 0]),
                    raw.Empty(shape=[2, 3], dtype=tf.float32, init=True),
                    raw.ToBool(input=x[0, 0]), raw.DeepCopy(x=x), raw.GuaranteeConst(input=x),
                    raw.ParallelConcat(values=[tf.ensure_shape(x[:1], [1, 4]), tf.ensure_shape(x[1:2], [1, 4])], shape=[2, 4]))

        @tf.function(input_signature=[tf.TensorSpec([None, 4], f32), tf.TensorSpec([None], tf.int32)])
        def lists(self, x, ids):
            n = tf.shape(x)[0]
            lengths = tf.cast(tf.stack([1, n - 3, 2]), tf.int64)
            scattered = raw.TensorListScatterV2(tensor=x[:3], indices=[4, 0, 2],
                                                element_shape=[4], num_elements=6)
            split = raw.TensorListSplit(tensor=x, element_shape=[-1, 4], lengths=lengths)
            cat, cat_lengths = raw.TensorListConcat(input_handle=split, element_dtype=f32,
                                                    element_shape=[None, 4])
            v1 = raw.TensorListScatter(tensor=x[:2], indices=[1, 0], element_shape=[4])
            ta, flow = raw.TensorArrayV3(size=3, dtype=f32, clear_after_read=False)
            flow = raw.TensorArraySplitV3(handle=ta, value=x * 2.0, lengths=lengths, flow_in=flow)
            tcat, tlen = raw.TensorArrayConcatV3(handle=ta, flow_in=flow, dtype=f32)
            return (raw.TensorListStack(input_handle=scattered, element_shape=[4],
                                        element_dtype=f32, num_elements=6),
                    cat, cat_lengths,
                    raw.TensorListStack(input_handle=v1, element_shape=[4], element_dtype=f32),
                    tcat, tlen)

        @tf.function(input_signature=[tf.TensorSpec([3, 4], f32), tf.TensorSpec([3, 4], f32)])
        def sparse(self, x, y):
            sp = tf.sparse.from_dense(x)
            sq = tf.sparse.from_dense(y)
            ints = tf.sparse.from_dense(tf.cast(tf.round(x * 2), tf.int64))
            shuffled = tf.SparseTensor(tf.reverse(sp.indices, [0]), tf.reverse(sp.values, [0]),
                                       sp.dense_shape)
            parts = tf.sparse.split(sp_input=sp, num_split=3, axis=1)
            cat = tf.sparse.concat(1, [sp, sq])
            sl = tf.sparse.slice(sp, [1, 1], [5, 2])
            total = tf.sparse.add(sp, sq, threshold=0.5)
            d_a, d_b = raw.SparseAddGrad(backprop_val_grad=total.values * 3.0, a_indices=sp.indices,
                                         b_indices=sq.indices, sum_indices=total.indices)
            cube = tf.sparse.reshape(sp, [3, 2, 2])
            flat = lambda t: (t.indices, t.values, t.dense_shape)  # noqa: E731
            return (*flat(tf.sparse.reorder(shuffled)), *flat(cat), *flat(sl),
                    *[c for p in parts for c in flat(p)],
                    tf.sparse.sparse_dense_matmul(sp, y, adjoint_b=True),
                    tf.sparse.sparse_dense_matmul(sp, x, adjoint_a=True),
                    tf.sparse.add(sp, y), *flat(total), d_a, d_b,
                    (sp * y[0]).values, (sp / (y + 5.0)).values,
                    raw.SparseDenseCwiseAdd(sp_indices=sp.indices, sp_values=sp.values,
                                            sp_shape=sp.dense_shape, dense=y[:, :1]),
                    tf.sparse.reduce_sum(sp, axis=1), tf.sparse.reduce_max(sp, axis=0),
                    tf.sparse.reduce_sum(sp, axis=1, keepdims=True),
                    *flat(tf.sparse.reduce_sum(sp, axis=0, output_is_sparse=True)),
                    *flat(tf.sparse.reduce_max(sp, axis=[0, 1], output_is_sparse=True)),
                    tf.sparse.softmax(cube).values,
                    *flat(tf.sparse.maximum(sp, sq)), *flat(tf.sparse.minimum(sp, sq)),
                    *flat(tf.sets.difference(tf.cast(tf.round(y), tf.int64), ints)),
                    *flat(tf.sets.union(ints, ints)), tf.sets.size(ints),
                    raw.SparseSliceGrad(backprop_val_grad=sl.values, input_indices=sp.indices,
                                        input_start=[1, 1], output_indices=sl.indices),
                    *raw.SparseFillEmptyRowsGrad(reverse_index_map=[0, 2], grad_values=x[0]))

        @tf.function(input_signature=[tf.TensorSpec([2, 4, 4], tf.float64),
                                      tf.TensorSpec([2, 5, 3], tf.float64),
                                      tf.TensorSpec([2, 3, 5], tf.float64)])
        def linalg2(self, a, tall, diags):
            spd = tf.matmul(a, a, transpose_b=True) + 4.0 * tf.eye(4, dtype=tf.float64)
            rhs = tall[:, :, :2]
            return (tf.linalg.sqrtm(spd), tf.linalg.sqrtm(tf.cast(spd, tf.float32)),
                    tf.linalg.logm(tf.cast(spd, tf.complex128)),
                    tf.linalg.lstsq(tall, rhs, l2_regularizer=0.3),
                    tf.linalg.lstsq(tf.transpose(tall, [0, 2, 1])[:, :2], tall[:, :2, :1],
                                    l2_regularizer=0.1),
                    tf.linalg.lstsq(tall, rhs, fast=False),
                    tf.linalg.tridiagonal_solve(diags, tall[:, :, :2]),
                    tf.linalg.tridiagonal_solve(diags + 3.0, tall[:, :, :2],
                                                partial_pivoting=False),
                    tf.linalg.tridiagonal_matmul(diags, tall[:, :, :2]))

        @tf.function(input_signature=[tf.TensorSpec([None, None], f32)])
        def sample(self, logits):
            return (raw.TruncatedNormal(shape=[3, 7], dtype=f32, seed=5, seed2=7),
                    raw.TruncatedNormal(shape=[5], dtype=tf.float64, seed=1, seed2=0),
                    raw.RandomShuffle(value=logits, seed=3, seed2=1),
                    raw.RandomShuffle(value=tf.range(10), seed=4, seed2=4),
                    raw.Multinomial(logits=logits, num_samples=tf.constant(9), seed=5, seed2=7),
                    raw.Multinomial(logits=tf.cast(logits, tf.float64), num_samples=tf.constant(4),
                                    seed=11, seed2=0, output_dtype=tf.int32))

    return MathOps()


OPS = {"Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh", "Digamma",
       "Erf", "Erfc", "Expm1", "Floor", "Invert", "IsFinite", "IsInf", "IsNan", "Lgamma",
       "Log1p", "Rint", "Round", "Selu", "Sign", "Sin", "Sinh", "Softplus", "Softsign", "Tan",
       "LeakyRelu", "Atan2", "Div", "DivNoNan", "LeftShift", "RightShift", "BitwiseAnd",
       "BitwiseOr", "BitwiseXor", "Mod", "MulNoNan", "SquaredDifference", "TruncateDiv",
       "TruncateMod", "Xdivy", "Xlogy", "ReluGrad", "Relu6Grad", "SigmoidGrad", "TanhGrad",
       "ClipByValue", "All", "Any", "ArgMax", "ArgMin", "Sum", "Mean", "Max", "Min", "Prod",
       "Cumsum", "Cumprod", "LinSpace", "Bincount", "DenseBincount", "Unique", "UniqueV2",
       "UniqueWithCounts", "MatrixBandPart", "MatrixDeterminant", "MatrixDiag", "MatrixDiagPart",
       "MatrixDiagPartV2", "MatrixDiagPartV3", "MatrixDiagV2", "MatrixDiagV3", "MatrixSetDiagV3",
       "SegmentMax", "SegmentMean", "SegmentMin", "SegmentProd", "SegmentSum",
       "SparseSegmentMean", "SparseSegmentMeanWithNumSegments", "SparseSegmentSqrtN",
       "SparseSegmentSqrtNWithNumSegments", "SparseSegmentSum", "SparseSegmentSumWithNumSegments",
       "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd", "UnsortedSegmentSum",
       "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits", "Multinomial",
       "FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxVars", "BesselI0", "BesselI0e",
       "BesselI1", "BesselI1e", "BesselJ0", "BesselJ1", "BesselK0", "BesselK0e", "BesselK1",
       "BesselK1e", "BesselY0", "BesselY1", "Erfinv", "Ndtri", "Igamma", "Igammac", "Zeta",
       "Polygamma", "Xlog1py", "NextAfter", "ReciprocalGrad", "InvGrad", "SqrtGrad", "RsqrtGrad",
       "LowerBound", "UpperBound", "UnravelIndex", "ListDiff", "UniqueWithCountsV2", "Diag",
       "DiagPart", "Reverse", "EuclideanNorm", "PopulationCount", "Inv", "EluGrad", "SeluGrad",
       "SoftplusGrad", "SoftsignGrad", "LeakyReluGrad", "L2Loss", "InTopKV2", "InTopK",
       "NthElement", "ApproximateEqual", "Betainc", "FFT2D", "FFT3D", "IFFT", "IFFT2D",
       "IFFT3D", "RFFT3D", "IRFFT", "IRFFT2D", "IRFFT3D", "Conj", "ConjugateTranspose", "Cross",
       "StridedSliceGrad", "TensorStridedSliceUpdate", "SpaceToBatch", "BatchToSpace", "Bitcast",
       "DataFormatDimMap", "DataFormatVecPermute", "HistogramFixedWidth", "ConcatOffset",
       "InplaceAdd", "InplaceUpdate", "InplaceSub", "ScatterNdNonAliasingAdd", "MatrixSetDiag",
       "MatrixSetDiagV2", "Empty", "ToBool", "DeepCopy", "GuaranteeConst", "ParallelConcat",
       "TensorListScatterV2", "TensorListSplit", "TensorListConcat", "TensorListScatter",
       "TensorArraySplitV3", "TensorArrayConcatV3", "SparseReorder", "SparseConcat",
       "SparseSlice", "SparseSplit", "SparseTensorDenseMatMul", "SparseTensorDenseAdd",
       "SparseAdd", "SparseAddGrad", "SparseDenseCwiseMul", "SparseDenseCwiseDiv",
       "SparseDenseCwiseAdd", "SparseReduceSum", "SparseReduceMax", "SparseReduceSumSparse",
       "SparseReduceMaxSparse", "SparseSoftmax", "SparseSparseMaximum", "SparseSparseMinimum",
       "DenseToSparseSetOperation", "SparseToSparseSetOperation", "SetSize", "SparseSliceGrad",
       "SparseFillEmptyRowsGrad", "TruncatedNormal", "RandomShuffle", "MatrixSquareRoot",
       "MatrixLogarithm", "MatrixSolveLs", "TridiagonalSolve", "TridiagonalMatMul"}


def _inputs():
    rng = np.random.default_rng(9)
    f = lambda *s: rng.uniform(-3, 3, s).astype(np.float32)  # noqa: E731
    x = np.concatenate([f(40), np.array([0.5, -1.5, 2.5, -0.25, 0.0, -0.0, NAN, INF, -INF],
                                        np.float32)])
    y = np.concatenate([f(40), np.array([0.0, 2.0, -0.0, 1.0, 0.0, 3.0, 1.0, 0.0, 2.0],
                                        np.float32)])
    a = rng.integers(-1000, 1000, 30).astype(np.int32)
    b = np.concatenate([rng.integers(-3, 40, 29), [100]]).astype(np.int32)
    red = f(3, 4, 5)
    red[0, 1, 2] = NAN
    q = rng.uniform(-8, 8, 200).astype(np.float32)
    labels = rng.uniform(0.1, 1, (4, 5)).astype(np.float32)
    return {
        "unary": [x],
        "binary": [x, y],
        "special": [x, y],
        "positions": [f(4, 6), np.array([3, -7, 5, 12, 3, 0, 23, 5, 3, -7, 40, 1], np.int32)],
        "integers": [a, b],
        "reductions": [red],
        "scans": [rng.uniform(0.5, 1.5, (3, 6)).astype(np.float32)],
        "counts": [rng.integers(0, 6, 25).astype(np.int32),
                   rng.integers(0, 4, (3, 5)).astype(np.int32),
                   np.array([1, 2, 1, 3, NAN, NAN, 2, 1, 0.0, -0.0] * 2 + [5] * 5, np.float32)],
        "matrices": [f(2, 4, 5), rng.uniform(-2, 2, (3, 3, 3))],
        "segments": [f(7, 3), np.array([0, 0, 1, 3, 3, 3, 4], np.int32),
                     np.array([4, -1, 0, 4, 2, 0, 5], np.int32)],
        "losses": [f(4, 5), labels / labels.sum(1, keepdims=True),
                   np.array([0, 4, 2, 2], np.int64)],
        "quantize": [q],
        "spectral": [f(2, 6, 8)],
        "linalg2": [rng.uniform(-1, 1, (2, 4, 4)), rng.uniform(-1, 1, (2, 5, 3)),
                    rng.uniform(-2, 2, (2, 3, 5))],
        "lists": [f(7, 4), np.array([3, 1, 0, 2, 5, -1], np.int32)],
        "sparse": [np.where(f(3, 4) > 0.5, f(3, 4), 0).astype(np.float32),
                   np.where(f(3, 4) > 0.0, f(3, 4), 0).astype(np.float32)],
        "arrays": [np.concatenate([f(6, 4), [[NAN, 0.0, -0.0, 1.0]]]).astype(np.float32),
                   np.array([3, 1, 0, 2, 5, -1], np.int32)],
        "sample": [np.array([[0.0, 1.0, 2.0], [2.0, 1.0, -np.inf], [0.5, 0.5, 0.5]],
                            np.float32)],
    }


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """(bundle dir, {method: (input files, TensorFlow's outputs)})."""
    import tensorflow as tf
    d = tmp_path_factory.mktemp("math_ops")
    module = _module()
    inputs = _inputs()
    seen = set()
    for name in inputs:
        graph = getattr(module, name).get_concrete_function().graph
        seen |= {op.type for op in graph.get_operations()}
    assert OPS <= seen, f"the module does not use {sorted(OPS - seen)}"
    tf.saved_model.save(module, str(d / "bundle"))
    loaded = tf.saved_model.load(str(d / "bundle"))  # fresh generator state, as ours on load
    calls = {}
    for name, args in inputs.items():
        files = [oracle.save_value(d / f"{name}.arg{i}", a) for i, a in enumerate(args)]
        out = getattr(loaded, name)(*[tf.constant(a) for a in args])
        calls[name] = (files, [np.asarray(o.numpy()) for o in tf.nest.flatten(out)])
    return d / "bundle", calls


@pytest.mark.parametrize("method", sorted(_inputs()))
def test_math_method_gives_tf_outputs(bundle, method, tmp_path):
    d, calls = bundle
    files, theirs = calls[method]
    mine = oracle.kiln_call_function(d, method, files, tmp_path / "out")
    assert len(mine) == len(theirs), f"{method}: {len(mine)} outputs, TF {len(theirs)}"
    for i, (a, b) in enumerate(zip(mine, theirs)):
        oracle.assert_same(a, b, f"{method} output {i}")
