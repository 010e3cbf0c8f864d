"""Real TensorFlow as the oracle for the gradient and optimizer kernels that training graphs hold:
the sparse segment gradients (V1 and V2), the resize and CropAndResize gradients,
DrawBoundingBoxes(V2), Dilation2D and its gradients, MirrorPadGrad, the max-pool gradients and
the Adagrad / AdaMax / AdamWithAmsgrad updates. One module whose methods call the raw ops,
exported once; each method runs in TensorFlow and through our loader (kiln_call) on the same
inputs, and the outputs must agree (exactly for integers, within float rounding otherwise)."""
import os

import numpy as np
import pytest

import oracle

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

MODES = [(False, False), (True, False), (False, True)]
BOXES = np.array([[0.1, 0.2, 0.8, 0.9], [-0.2, 0.1, 0.6, 1.3], [0.5, 0.5, 0.2, 0.1],
                  [0.3, 0.3, 0.3, 0.3]], np.float32)
BOX_IND = np.array([1, 0, 1, 0], np.int32)


def _module():
    import tensorflow as tf
    raw = tf.raw_ops
    f32, f16, i32 = tf.float32, tf.float16, tf.int32

    def spec(shape, dtype=f32):
        return tf.TensorSpec(shape, dtype)

    class GradOps(tf.Module):
        def __init__(self):
            super().__init__()
            rng = np.random.default_rng(3)
            # Optimizer slots: var, accum / m, v, vhat (positive, as after a few steps).
            self.slots = [tf.Variable(rng.random((3, 4)).astype(np.float32) + 0.1)
                          for _ in range(9)]

        @tf.function(input_signature=[spec([2, 7, 5, 3]), spec([2, 4, 9, 3]),
                                      spec([2, 4, 9, 3], f16), spec([2, 7, 5, 3], i32)])
        def resize_grads(self, grads, orig, orig_half, grads_int):
            out = []
            for align, half in MODES:
                kw = dict(align_corners=align, half_pixel_centers=half)
                out += [raw.ResizeBilinearGrad(grads=grads, original_image=orig, **kw),
                        raw.ResizeBilinearGrad(grads=grads, original_image=orig_half, **kw),
                        raw.ResizeBicubicGrad(grads=grads, original_image=orig, **kw),
                        raw.ResizeNearestNeighborGrad(grads=grads, size=[4, 9], **kw),
                        raw.ResizeNearestNeighborGrad(grads=grads_int, size=[11, 13], **kw)]
            return tuple(out)

        @tf.function(input_signature=[spec([5, 3, 2])])
        def segment_grads(self, grad):
            idx = tf.constant([5, 1, 5, 0, 3, 3, 3])
            seg = tf.constant([0, 0, 1, 1, 1, 3, 4])
            out = []
            for op in ["SparseSegmentSumGrad", "SparseSegmentMeanGrad", "SparseSegmentSqrtNGrad"]:
                out.append(getattr(raw, op)(grad=grad, indices=idx, segment_ids=seg,
                                            output_dim0=7))
                out += list(getattr(raw, op + "V2")(grad=grad, indices=idx, segment_ids=seg,
                                                    dense_output_dim0=7))
            return tuple(out)

        @tf.function(input_signature=[spec([4, 3, 5, 2]), spec([2, 6, 7, 2]),
                                      spec([4, 1, 1, 2])])
        def crop_grads(self, grads, image, grads1):
            out = []
            for method in ["bilinear", "nearest"]:
                for t in [f32, f16]:
                    out.append(raw.CropAndResizeGradImage(
                        grads=grads, boxes=BOXES, box_ind=BOX_IND, image_size=[2, 6, 7, 2], T=t,
                        method=method))
            out.append(raw.CropAndResizeGradBoxes(grads=grads, image=image, boxes=BOXES,
                                                  box_ind=BOX_IND))
            out.append(raw.CropAndResizeGradBoxes(grads=grads1, image=image, boxes=BOXES,
                                                  box_ind=BOX_IND))
            return tuple(out)

        @tf.function(input_signature=[spec([2, 9, 10, 3]), spec([2, 9, 10, 4])])
        def draw(self, rgb, rgba):
            boxes = tf.constant([[[0.1, 0.2, 0.9, 0.8], [-0.5, -0.5, 0.5, 0.5],
                                  [0.0, 0.0, 1.0, 1.0]]] * 2)
            return (raw.DrawBoundingBoxes(images=rgb, boxes=boxes),
                    raw.DrawBoundingBoxesV2(images=rgba, boxes=boxes,
                                            colors=tf.constant([[0.1, 0.2, 0.3, 1.0]])))

        @tf.function(input_signature=[spec([2, 7, 8, 3]), spec([3, 2, 3]), spec([2, 7, 8, 3]),
                                      spec([2, 4, 4, 3]), spec([8, 3, 7])])
        def dilation_pad(self, x, w, ob_same, ob_strided, padded):
            out = []
            for pad, st, rt, ob in [("SAME", [1, 1, 1, 1], [1, 1, 1, 1], ob_same),
                                    ("SAME", [1, 2, 2, 1], [1, 1, 2, 1], ob_strided)]:
                kw = dict(strides=st, rates=rt, padding=pad)
                out += [raw.Dilation2D(input=x, filter=w, **kw),
                        raw.Dilation2DBackpropInput(input=x, filter=w, out_backprop=ob, **kw),
                        raw.Dilation2DBackpropFilter(input=x, filter=w, out_backprop=ob, **kw)]
            for mode in ["REFLECT", "SYMMETRIC"]:
                out.append(raw.MirrorPadGrad(input=padded, paddings=[[1, 2], [0, 0], [2, 1]],
                                             mode=mode))
            return tuple(out)

        @tf.function(input_signature=[spec([2, 7, 6, 3]), spec([2, 7, 6, 3]),
                                      spec([2, 4, 3, 3])])
        def pool_grads(self, x, g, g_pooled):
            out = []
            for pad in ["SAME", "VALID"]:
                kw = dict(ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding=pad)
                y, am = raw.MaxPoolWithArgmax(input=x, **kw)
                out += [raw.MaxPoolGradGrad(orig_input=x, orig_output=y, grad=g, **kw),
                        raw.MaxPoolGradGradV2(orig_input=x, orig_output=y, grad=g, **kw)]
                if pad == "SAME":
                    out.append(raw.MaxPoolGradWithArgmax(input=x, grad=g_pooled, argmax=am, **kw))
            return tuple(out)

        @tf.function(input_signature=[spec([3, 4])])
        def optimizers(self, g):
            s = self.slots
            c = tf.constant
            raw.ResourceApplyAdagrad(var=s[0].handle, accum=s[1].handle, lr=c(0.1), grad=g)
            raw.ResourceApplyAdaMax(var=s[2].handle, m=s[3].handle, v=s[4].handle,
                                    beta1_power=c(0.81), lr=c(0.01), beta1=c(0.9),
                                    beta2=c(0.999), epsilon=c(1e-7), grad=g)
            raw.ResourceApplyAdamWithAmsgrad(
                var=s[5].handle, m=s[6].handle, v=s[7].handle, vhat=s[8].handle,
                beta1_power=c(0.81), beta2_power=c(0.998), lr=c(0.01), beta1=c(0.9),
                beta2=c(0.999), epsilon=c(1e-7), grad=g)
            return tuple(v.read_value() for v in s)

    return GradOps()


def _inputs():
    rng = np.random.default_rng(7)

    def f32(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    return {
        "resize_grads": [f32(2, 7, 5, 3), f32(2, 4, 9, 3), f32(2, 4, 9, 3).astype(np.float16),
                         np.round(f32(2, 7, 5, 3) * 10).astype(np.int32)],
        "segment_grads": [f32(5, 3, 2)],
        "crop_grads": [f32(4, 3, 5, 2), f32(2, 6, 7, 2), f32(4, 1, 1, 2)],
        "draw": [f32(2, 9, 10, 3), f32(2, 9, 10, 4)],
        "dilation_pad": [f32(2, 7, 8, 3), f32(3, 2, 3), f32(2, 7, 8, 3), f32(2, 4, 4, 3),
                         f32(8, 3, 7)],
        "pool_grads": [f32(2, 7, 6, 3), f32(2, 7, 6, 3), f32(2, 4, 3, 3)],
        "optimizers": [f32(3, 4)],
    }


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    import tensorflow as tf
    d = tmp_path_factory.mktemp("grad_ops")
    module = _module()
    tf.saved_model.save(module, str(d / "bundle"))
    inputs = _inputs()
    files = {name: [oracle.save_value(d / f"{name}_in{i}", a) for i, a in enumerate(arrays)]
             for name, arrays in inputs.items()}
    return module, d, inputs, files


@pytest.mark.parametrize("method", list(_inputs().keys()))
def test_grad_kernels_match_tensorflow(exported, method, tmp_path):
    import tensorflow as tf
    module, d, inputs, files = exported
    # TF runs the method on its module after the export, so both start from the same slots.
    theirs = getattr(module, method)(*[tf.constant(a) for a in inputs[method]])
    theirs = [t.numpy() for t in (theirs if isinstance(theirs, (tuple, list)) else [theirs])]
    ours = oracle.kiln_call_function(d / "bundle", method, files[method], tmp_path / "out")
    assert len(ours) == len(theirs), f"{method}: {len(ours)} outputs, TF {len(theirs)}"
    for i, (a, b) in enumerate(zip(ours, theirs)):
        what = f"{method} output {i}"
        assert a.dtype == b.dtype and a.shape == b.shape, \
            f"{what}: {a.dtype}{a.shape} vs TF {b.dtype}{b.shape}"
        if b.dtype.kind in "iu":
            np.testing.assert_array_equal(a, b, err_msg=what)
        else:
            # Half outputs: we compute in float and round once, TF rounds every step.
            rtol = 2e-3 if b.dtype == np.float16 else 1e-5
            np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol,
                                       atol=rtol, err_msg=what)
