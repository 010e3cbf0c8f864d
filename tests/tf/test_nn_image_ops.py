"""Real TensorFlow as the oracle for the nn, image, detection, codec, sequence and FFT kernels:
one module whose methods call the raw ops (resizes in every coordinate mode, crops, colour ops,
NMS, codecs, FFTs, batch norm and its gradient, convolution and pooling backprops, LSTMBlockCell,
CTC, projective transforms), exported once; each method runs in TensorFlow and through our
loader (kiln_call) on the same inputs, and the outputs must agree (exactly for integers and selections, within float
rounding otherwise)."""
import os

import numpy as np
import pytest

import oracle

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _module():
    import tensorflow as tf
    raw = tf.raw_ops
    f32, i32 = tf.float32, tf.int32

    def spec(shape, dtype=f32):
        return tf.TensorSpec(shape, dtype)

    def resizes(x, size, modes):
        out = []
        for align, half in modes:
            out.append(raw.ResizeNearestNeighbor(images=x, size=size, align_corners=align,
                                                 half_pixel_centers=half))
            out.append(raw.ResizeBilinear(images=x, size=size, align_corners=align,
                                          half_pixel_centers=half))
            out.append(raw.ResizeBicubic(images=x, size=size, align_corners=align,
                                         half_pixel_centers=half))
            if not half:
                out.append(raw.ResizeArea(images=x, size=size, align_corners=align))
        return tuple(out)

    modes = [(False, False), (True, False), (False, True)]

    class NnImageOps(tf.Module):
        @tf.function(input_signature=[spec([2, 5, 7, 3])])
        def resize_up(self, x):
            return resizes(x, [11, 16], modes)

        @tf.function(input_signature=[spec([1, 17, 13, 2])])
        def resize_down(self, x):
            return resizes(x, [7, 5], modes) + resizes(x, [17, 13], modes[:1])

        @tf.function(input_signature=[spec([1, 6, 7, 3], tf.uint8)])
        def resize_uint8(self, x):
            return resizes(x, [9, 4], modes)

        @tf.function(input_signature=[spec([2, 9, 11, 3]), spec([6, 4]), spec([6], i32)])
        def crop(self, image, boxes, ind):
            return (raw.CropAndResize(image=image, boxes=boxes, box_ind=ind, crop_size=[5, 4],
                                      extrapolation_value=-1.0),
                    raw.CropAndResize(image=image, boxes=boxes, box_ind=ind, crop_size=[3, 7],
                                      method="nearest"),
                    raw.CropAndResize(image=image, boxes=boxes, box_ind=ind, crop_size=[1, 1]))

        @tf.function(input_signature=[spec([4, 5, 3])])
        def color(self, img):
            return (raw.RGBToHSV(images=img), raw.HSVToRGB(images=img),
                    raw.AdjustHue(images=img, delta=0.3), raw.AdjustHue(images=img, delta=-0.45),
                    raw.AdjustSaturation(images=img, scale=1.4),
                    raw.AdjustSaturation(images=img, scale=0.3),
                    raw.AdjustContrastv2(images=img, contrast_factor=1.7))

        @tf.function(input_signature=[spec([4, 5, 3], tf.float16)])
        def color_half(self, img):
            return raw.RGBToHSV(images=img), raw.HSVToRGB(images=img)

        @tf.function(input_signature=[spec([40, 4]), spec([40])])
        def nms(self, boxes, scores):
            v4 = raw.NonMaxSuppressionV4(boxes=boxes, scores=scores, max_output_size=25,
                                         iou_threshold=0.5, score_threshold=0.2,
                                         pad_to_max_output_size=True)
            soft = raw.NonMaxSuppressionV5(boxes=boxes, scores=scores, max_output_size=30,
                                           iou_threshold=0.5, score_threshold=0.1,
                                           soft_nms_sigma=0.5)
            hard = raw.NonMaxSuppressionV5(boxes=boxes, scores=scores, max_output_size=10,
                                           iou_threshold=0.3, score_threshold=0.0,
                                           soft_nms_sigma=0.0)
            ymin = tf.minimum(boxes[:, 0], boxes[:, 2])
            xmin = tf.minimum(boxes[:, 1], boxes[:, 3])
            ymax = tf.maximum(boxes[:, 0], boxes[:, 2])
            xmax = tf.maximum(boxes[:, 1], boxes[:, 3])
            inter = (tf.maximum(tf.minimum(ymax[:, None], ymax) - tf.maximum(ymin[:, None], ymin),
                                0.0) *
                     tf.maximum(tf.minimum(xmax[:, None], xmax) - tf.maximum(xmin[:, None], xmin),
                                0.0))
            area = (ymax - ymin) * (xmax - xmin)
            overlaps = inter / (area[:, None] + area - inter)
            return (raw.NonMaxSuppression(boxes=boxes, scores=scores, max_output_size=12,
                                          iou_threshold=0.45),
                    raw.NonMaxSuppressionWithOverlaps(overlaps=overlaps, scores=scores,
                                                      max_output_size=15, overlap_threshold=0.35,
                                                      score_threshold=0.2),
                    raw.NonMaxSuppressionV2(boxes=boxes, scores=scores, max_output_size=10,
                                            iou_threshold=0.5),
                    raw.NonMaxSuppressionV3(boxes=boxes, scores=scores, max_output_size=40,
                                            iou_threshold=0.4, score_threshold=0.3),
                    v4[0], v4[1], soft[0], soft[1], soft[2], hard[0], hard[1])

        @tf.function(input_signature=[spec([2, 30, 3, 4]), spec([2, 30, 3])])
        def combined(self, boxes, scores):
            a = raw.CombinedNonMaxSuppression(
                boxes=boxes, scores=scores, max_output_size_per_class=4, max_total_size=9,
                iou_threshold=0.5, score_threshold=0.2)
            b = raw.CombinedNonMaxSuppression(
                boxes=boxes[:, :, :1], scores=scores, max_output_size_per_class=3,
                max_total_size=20, iou_threshold=0.4, score_threshold=0.1, pad_per_class=True,
                clip_boxes=False)
            return tuple(a) + tuple(b)

        @tf.function(input_signature=[spec([], tf.string), spec([], tf.string)])
        def codecs(self, jpeg, png):
            return (raw.DecodeJpeg(contents=jpeg), raw.DecodeJpeg(contents=jpeg, ratio=4),
                    raw.DecodeJpeg(contents=jpeg, channels=1),
                    raw.DecodeJpeg(contents=jpeg, dct_method="INTEGER_ACCURATE",
                                   fancy_upscaling=False),
                    raw.DecodePng(contents=png), raw.DecodePng(contents=png, channels=1),
                    raw.DecodePng(contents=png, channels=4, dtype=tf.uint16),
                    raw.DecodeJpeg(contents=png),
                    raw.DecodeAndCropJpeg(contents=jpeg, crop_window=[3, 5, 20, 17]),
                    raw.DecodeAndCropJpeg(contents=jpeg, crop_window=[0, 1, 8, 10], channels=1),
                    raw.ExtractJpegShape(contents=jpeg),
                    raw.ExtractJpegShape(contents=jpeg, output_type=tf.int64))

        @tf.function(input_signature=[spec([], tf.string)])
        def truncated(self, jpeg):
            return raw.DecodeJpeg(contents=jpeg, try_recover_truncated=True,
                                  acceptable_fraction=0.2)

        @tf.function(input_signature=[spec([5, 6, 3], tf.uint8), spec([4, 3, 2], tf.uint16)])
        def encode(self, img8, img16):
            return (raw.EncodePng(image=img8), raw.EncodePng(image=img16, compression=9),
                    raw.EncodeJpeg(image=img8, quality=100, chroma_downsampling=False),
                    raw.EncodeJpegVariableQuality(images=img8, quality=60),
                    raw.EncodeJpeg(image=img8[:, :, :1], format="grayscale", progressive=True,
                                   optimize_size=True, xmp_metadata="<x:xmpmeta/>"))

        @tf.function(input_signature=[spec([1, 4, 5, 6, 2]), spec([2, 5, 5, 3]),
                                      spec([2, 5, 5, 3])])
        def grads2(self, x3, x, g):
            k3 = [1, 2, 2, 2, 1]
            y3 = tf.nn.max_pool3d(x3, 2, 2, "VALID")
            g3 = y3 * 0.5 + 1.0
            y = tf.nn.max_pool2d(x, 3, 2, "SAME")
            lrn = tf.nn.local_response_normalization(x, 2, 1.5, 0.2, 0.75)
            stats = dict(scale=[1.0, 2.0, 0.5], reserve_space_1=[0.1, 0.0, -0.2],
                         reserve_space_2=[1.0, 0.5, 2.0], epsilon=0.001)
            return (raw.MaxPool3DGrad(orig_input=x3, orig_output=y3, grad=g3, ksize=k3, strides=k3,
                                      padding="VALID"),
                    raw.AvgPool3DGrad(orig_input_shape=[1, 4, 5, 6, 2], grad=g3, ksize=k3,
                                      strides=k3, padding="VALID"),
                    raw.MaxPoolGradV2(orig_input=x, orig_output=y, grad=y * 2.0,
                                      ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME"),
                    raw.LRNGrad(input_grads=g, input_image=x, output_image=lrn, depth_radius=2,
                                bias=1.5, alpha=0.2, beta=0.75),
                    *raw.FusedBatchNormGrad(y_backprop=g, x=x, is_training=True, **stats)[:3],
                    *raw.FusedBatchNormGradV2(y_backprop=g, x=x, is_training=False, **stats)[:3])

        @tf.function(input_signature=[spec([3, 24], tf.complex64), spec([2, 10, 12]),
                                      spec([2, 37], tf.complex128)])
        def fft(self, xc, xr, xd):
            return (raw.FFT(input=xc), raw.RFFT(input=xr, fft_length=[10]),
                    raw.RFFT2D(input=xr, fft_length=[8, 12]), raw.FFT(input=xd))

        @tf.function(input_signature=[spec([2, 4, 5, 3])] + [spec([3])] * 4)
        def batch_norm(self, x, scale, offset, mean, var):
            train = raw.FusedBatchNormV3(x=x, scale=scale, offset=offset, mean=mean,
                                         variance=var, epsilon=0.01,
                                         exponential_avg_factor=0.3, is_training=True)
            infer = raw.FusedBatchNormV3(x=x, scale=scale, offset=offset, mean=mean,
                                         variance=var, epsilon=0.01, is_training=False)
            nchw = raw.FusedBatchNormV3(x=tf.transpose(x, [0, 3, 1, 2]), scale=scale,
                                        offset=offset, mean=mean, variance=var,
                                        data_format="NCHW", is_training=True)
            dy = x * 0.7 - 0.2
            grad = raw.FusedBatchNormGradV3(y_backprop=dy, x=x, scale=scale,
                                            reserve_space_1=train[3], reserve_space_2=train[4],
                                            reserve_space_3=train[5], epsilon=0.01)
            grad_inf = raw.FusedBatchNormGradV3(y_backprop=dy, x=x, scale=scale,
                                                reserve_space_1=mean, reserve_space_2=var,
                                                reserve_space_3=train[5], epsilon=0.01,
                                                is_training=False)
            return (train[0], train[1], train[2], train[3], train[4], infer[0], nchw[0],
                    nchw[1], nchw[2], grad[0], grad[1], grad[2], grad_inf[0], grad_inf[1],
                    grad_inf[2],
                    raw.LRN(input=x, depth_radius=1, bias=1.5, alpha=0.3, beta=0.75),
                    raw.BiasAddGrad(out_backprop=x),
                    raw.BiasAddGrad(out_backprop=x, data_format="NCHW"))

        @tf.function(input_signature=[spec([2, 7, 6, 3]), spec([3, 3, 3, 4]),
                                      spec([2, 4, 3, 4]), spec([3, 3, 3, 2]),
                                      spec([2, 4, 3, 6]), spec([1, 4, 5, 6, 2]),
                                      spec([2, 3, 2, 2, 3])])
        def conv_grads(self, x, w, dy, wd, dyd, x3, w3):
            s2 = [1, 2, 2, 1]
            return (
                raw.Conv2DBackpropInput(input_sizes=[2, 7, 6, 3], filter=w, out_backprop=dy,
                                        strides=s2, padding="SAME"),
                raw.Conv2DBackpropFilter(input=x, filter_sizes=[3, 3, 3, 4], out_backprop=dy,
                                         strides=s2, padding="SAME"),
                raw.DepthwiseConv2dNativeBackpropInput(input_sizes=[2, 7, 6, 3], filter=wd,
                                                       out_backprop=dyd, strides=s2,
                                                       padding="SAME"),
                raw.DepthwiseConv2dNativeBackpropFilter(input=x, filter_sizes=[3, 3, 3, 2],
                                                        out_backprop=dyd, strides=s2,
                                                        padding="SAME"),
                raw.Conv3D(input=x3, filter=w3, strides=[1, 1, 2, 1, 1], padding="SAME"),
                raw.Conv3DBackpropInputV2(
                    input_sizes=[1, 4, 5, 6, 2], filter=w3,
                    out_backprop=raw.Conv3D(input=x3, filter=w3, strides=[1, 1, 2, 1, 1],
                                            padding="SAME"),
                    strides=[1, 1, 2, 1, 1], padding="SAME"),
                # Conv2DTranspose as Keras builds it: VALID, stride 2, output size 2n + 1.
                raw.Conv2DBackpropInput(input_sizes=[2, 9, 7, 3], filter=w, out_backprop=dy,
                                        strides=s2, padding="VALID"))

        @tf.function(input_signature=[spec([2, 7, 6, 3]), spec([1, 4, 5, 6, 2]),
                                      spec([1, 4, 4, 2]), spec([1, 2, 2, 2])])
        def pools(self, x, x3, x4, g4):
            k3, s2 = [1, 3, 3, 1], [1, 2, 2, 1]
            y = raw.MaxPool(input=x, ksize=k3, strides=s2, padding="SAME")
            arg = raw.MaxPoolWithArgmax(input=x, ksize=k3, strides=s2, padding="SAME",
                                        include_batch_in_index=True)
            return (
                raw.MaxPool3D(input=x3, ksize=[1, 2, 3, 2, 1], strides=[1, 2, 2, 2, 1],
                              padding="SAME"),
                raw.AvgPool3D(input=x3, ksize=[1, 3, 2, 2, 1], strides=[1, 1, 2, 2, 1],
                              padding="SAME"),
                raw.MaxPoolV2(input=x, ksize=[1, 2, 3, 1], strides=[1, 2, 1, 1], padding="VALID"),
                arg[0], arg[1],
                raw.MaxPoolGrad(orig_input=x, orig_output=y, grad=y * 0.5 + 0.1, ksize=k3,
                                strides=s2, padding="SAME"),
                raw.AvgPoolGrad(orig_input_shape=[2, 7, 6, 3], grad=y * 0.5 + 0.1, ksize=k3,
                                strides=s2, padding="SAME"),
                # A window that starts in the padding and ends past the input: TF's oneDNN
                # kernel spreads the gradient over the window's real elements, as we do (the
                # test compares this output with _avg_pool_grad_same).
                raw.AvgPoolGrad(orig_input_shape=[1, 4, 4, 2], grad=g4, ksize=[1, 5, 5, 1],
                                strides=[1, 3, 3, 1], padding="SAME"))

        @tf.function(input_signature=[spec([3, 4]), spec([3, 5]), spec([3, 5]), spec([9, 20]),
                                      spec([5]), spec([5]), spec([5]), spec([20])])
        def lstm(self, x, cs, h, w, wci, wcf, wco, b):
            a = raw.LSTMBlockCell(x=x, cs_prev=cs, h_prev=h, w=w, wci=wci, wcf=wcf, wco=wco,
                                  b=b, forget_bias=0.7, cell_clip=0.5, use_peephole=True)
            n = raw.LSTMBlockCell(x=x, cs_prev=cs, h_prev=h, w=w, wci=wci, wcf=wcf, wco=wco,
                                  b=b)
            return tuple(a) + tuple(n)

        @tf.function(input_signature=[spec([2, 6, 7, 3]), spec([2, 8]), spec([1, 6, 5, 2], tf.uint8),
                                      spec([1, 6, 5, 2], tf.float16)])
        def projective(self, x, transforms, x8, x16):
            out = []
            for interpolation in ("NEAREST", "BILINEAR"):
                for mode in ("REFLECT", "WRAP", "CONSTANT", "NEAREST"):
                    out.append(raw.ImageProjectiveTransformV3(
                        images=x, transforms=transforms, output_shape=[8, 5], fill_value=-2.5,
                        interpolation=interpolation, fill_mode=mode))
                out.append(raw.ImageProjectiveTransformV2(
                    images=x, transforms=transforms[:1], output_shape=[6, 7],
                    interpolation=interpolation))
                for img in (x8, x16):
                    out.append(raw.ImageProjectiveTransformV3(
                        images=img, transforms=transforms[1:], output_shape=[7, 4],
                        fill_value=3.0, interpolation=interpolation, fill_mode="REFLECT"))
            return tuple(out)

        @tf.function(input_signature=[spec([7, 3, 5]), spec([3], i32)])
        def ctc(self, logits, lengths):
            a = raw.CTCGreedyDecoder(inputs=logits, sequence_length=lengths, merge_repeated=True)
            b = raw.CTCGreedyDecoder(inputs=logits, sequence_length=lengths, blank_index=0)
            return tuple(a) + tuple(b)

    return NnImageOps()


def _inputs():
    """{method: [arrays]} fed to both TensorFlow and us."""
    import tensorflow as tf
    rng = np.random.default_rng(21)

    def f32(*shape, lo=-1.0, hi=1.0):
        return (rng.random(shape) * (hi - lo) + lo).astype(np.float32)

    y, x = np.mgrid[0:32, 0:40]
    photo = np.clip(np.stack([x * 6, y * 7, 255 - x * 3 - y * 2], -1) +
                    rng.integers(0, 40, (32, 40, 3)), 0, 255).astype(np.uint8)
    jpeg = tf.io.encode_jpeg(photo, quality=80).numpy()
    png = tf.io.encode_png(photo[:9, :13]).numpy()
    boxes = np.concatenate([rng.random((40, 2)) * 0.7, rng.random((40, 2)) * 0.7 + 0.2], 1)
    boxes[::5] = boxes[::5][:, [2, 3, 0, 1]]  # some given as (ymax, xmax, ymin, xmin)
    cboxes = np.concatenate([rng.random((2, 30, 3, 2)) * 0.8 - 0.1,
                             rng.random((2, 30, 3, 2)) * 0.6 + 0.3], -1)
    return {
        "resize_up": [f32(2, 5, 7, 3, lo=0, hi=255)],
        "resize_down": [f32(1, 17, 13, 2, lo=0, hi=255)],
        "resize_uint8": [rng.integers(0, 256, (1, 6, 7, 3)).astype(np.uint8)],
        "crop": [f32(2, 9, 11, 3, lo=0, hi=100),
                 np.array([[0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1], [0.9, 0.7, 0.2, 0.1],
                           [-0.3, 0.2, 0.5, 1.3], [0.4, 0.4, 0.4, 0.6], [0.2, 0.3, 0.7, 0.35]],
                          np.float32),
                 np.array([0, 1, 1, 0, 1, 0], np.int32)],
        "color": [f32(4, 5, 3, lo=0, hi=1)],
        "color_half": [f32(4, 5, 3, lo=0, hi=1).astype(np.float16)],
        "nms": [boxes.astype(np.float32), rng.permutation(40).astype(np.float32) / 40 + 0.01],
        "combined": [cboxes.astype(np.float32),
                     (rng.permutation(180).reshape(2, 30, 3) / 180).astype(np.float32)],
        "codecs": [np.array(jpeg, dtype=object), np.array(png, dtype=object)],
        "truncated": [np.array(jpeg[:len(jpeg) * 2 // 3], dtype=object)],
        "encode": [rng.integers(0, 256, (5, 6, 3)).astype(np.uint8),
                   rng.integers(0, 65536, (4, 3, 2)).astype(np.uint16)],
        "grads2": [f32(1, 4, 5, 6, 2), f32(2, 5, 5, 3), f32(2, 5, 5, 3)],
        "fft": [(f32(3, 24) + 1j * f32(3, 24)).astype(np.complex64), f32(2, 10, 12),
                rng.random((2, 37)) + 1j * rng.random((2, 37))],
        "batch_norm": [f32(2, 4, 5, 3, lo=-2, hi=3), f32(3, lo=0.5, hi=2), f32(3),
                       f32(3), f32(3, lo=0.5, hi=2)],
        "conv_grads": [f32(2, 7, 6, 3), f32(3, 3, 3, 4), f32(2, 4, 3, 4), f32(3, 3, 3, 2),
                       f32(2, 4, 3, 6), f32(1, 4, 5, 6, 2), f32(2, 3, 2, 2, 3)],
        "pools": [f32(2, 7, 6, 3), f32(1, 4, 5, 6, 2), f32(1, 4, 4, 2), f32(1, 2, 2, 2)],
        "lstm": [f32(3, 4), f32(3, 5, lo=-2, hi=2), f32(3, 5), f32(9, 20, lo=-0.5, hi=0.5),
                 f32(5), f32(5), f32(5), f32(20)],
        "ctc": [np.round(f32(7, 3, 5, lo=0, hi=3)), np.array([7, 0, 5], np.int32)],
        # A rotation about the centre with a shift (points fall outside), and a projective map
        # (c0, c1 != 0) that also scales.
        "projective": [f32(2, 6, 7, 3, lo=0, hi=10),
                       np.array([[0.866, -0.5, 2.1, 0.5, 0.866, -1.3, 0, 0],
                                 [1.3, 0.2, -1.7, -0.1, 1.4, -2.2, 0.05, -0.03]], np.float32),
                       rng.integers(0, 256, (1, 6, 5, 2)).astype(np.uint8),
                       f32(1, 6, 5, 2, lo=-4, hi=4).astype(np.float16)],
    }


# Relative tolerances where the kernels' summation order or float formulas differ from TF's.
TOLERANCE = {"grads2": 2e-5, "fft": 2e-5, "batch_norm": 2e-4, "conv_grads": 2e-5, "lstm": 2e-6,
             "color": 2e-6, "color_half": 1e-3, "resize_up": 2e-6, "resize_down": 2e-6,
             "resize_uint8": 2e-6, "crop": 2e-6, "nms": 1e-6, "combined": 1e-6, "pools": 2e-6,
             "ctc": 1e-6, "projective": 2e-6}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    import tensorflow as tf
    d = tmp_path_factory.mktemp("nn_image")
    module = _module()
    tf.saved_model.save(module, str(d / "bundle"))
    inputs = _inputs()
    files = {}
    for name, arrays in inputs.items():
        files[name] = [oracle.save_value(d / f"{name}_in{i}", a) for i, a in enumerate(arrays)]
    return module, d, inputs, files


METHODS = ["resize_up", "resize_down", "resize_uint8", "crop", "color", "color_half", "nms",
           "combined", "codecs", "truncated", "encode", "grads2", "fft", "batch_norm", "conv_grads",
           "pools", "lstm", "ctc", "projective"]


def _avg_pool_grad_same(orig_shape, grad, ksize, strides):
    """AvgPoolGrad (NHWC, SAME) as TensorFlow's oneDNN kernel computes it: each window's
    gradient is spread evenly over the window's real (unpadded) elements."""
    n, h, w, c = orig_shape
    out = np.zeros(orig_shape, np.float64)
    oh, ow = grad.shape[1], grad.shape[2]
    pad_h = max((oh - 1) * strides[1] + ksize[1] - h, 0) // 2
    pad_w = max((ow - 1) * strides[2] + ksize[2] - w, 0) // 2
    for i in range(oh):
        r0 = max(i * strides[1] - pad_h, 0)
        r1 = min(i * strides[1] - pad_h + ksize[1], h)
        for j in range(ow):
            c0 = max(j * strides[2] - pad_w, 0)
            c1 = min(j * strides[2] - pad_w + ksize[2], w)
            out[:, r0:r1, c0:c1, :] += grad[:, i:i + 1, j:j + 1, :] / ((r1 - r0) * (c1 - c0))
    return out.astype(grad.dtype)


@pytest.mark.parametrize("method", METHODS)
def test_kernels_match_tensorflow(exported, method, tmp_path):
    import tensorflow as tf
    module, d, inputs, files = exported
    theirs = getattr(module, method)(*[tf.constant(a) for a in inputs[method]])
    theirs = [t.numpy() for t in (theirs if isinstance(theirs, (tuple, list)) else [theirs])]
    ours = oracle.kiln_call_function(d / "bundle", method, files[method], tmp_path / "out")
    assert len(ours) == len(theirs), f"{method}: {len(ours)} outputs, TF {len(theirs)}"
    if method == "pools":
        # TensorFlow's own kernels disagree on the last AvgPoolGrad (a window that starts in the
        # padding and ends past the input): its oneDNN kernel, which TF runs by default on CPUs
        # with AVX512_VNNI/BF16/AMX, spreads the gradient over the window's real elements, as
        # we do; its Eigen kernel (TF_ENABLE_ONEDNN_OPTS=0, the test command's setting, and
        # other CPUs) does not. The oneDNN semantics, computed here, are the oracle on every
        # machine.
        theirs[7] = _avg_pool_grad_same([1, 4, 4, 2], inputs[method][3], [1, 5, 5, 1],
                                        [1, 3, 3, 1])
    tol = TOLERANCE.get(method, 0)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        what = f"{method} output {i}"
        if method == "encode" and i < 2:
            # Our PNG bytes may differ from TF's (zlib builds); TF must decode them to the image.
            a = tf.io.decode_png(a.item(), dtype=tf.as_dtype(inputs[method][i].dtype)).numpy()
            np.testing.assert_array_equal(a, inputs[method][i], err_msg=what)
            continue
        if method == "encode":
            # JPEG bytes may differ from TF's (libjpeg builds): TF decodes ours to the pixels it
            # decodes its own to, within one level.
            item = lambda v: v if isinstance(v, bytes) else np.asarray(v).item()  # noqa: E731
            mine = tf.io.decode_jpeg(item(a)).numpy().astype(int)
            tfs = tf.io.decode_jpeg(item(b)).numpy().astype(int)
            assert mine.shape == tfs.shape, f"{what}: {mine.shape} vs TF {tfs.shape}"
            assert np.abs(mine - tfs).max() <= 1, f"{what}: decoded pixels differ"
            continue
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, \
            f"{what}: ours {a.dtype}{a.shape}, TF {b.dtype}{b.shape}"
        if b.dtype.kind in "fc" and tol:
            scale = max(1.0, float(np.max(np.abs(b)))) if b.size else 1.0
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol * scale, err_msg=what)
        else:
            np.testing.assert_array_equal(a, b, err_msg=what)
