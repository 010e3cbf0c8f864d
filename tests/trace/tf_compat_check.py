"""Checks kiln-written SavedModels with real TensorFlow (not part of CI: needs tensorflow).

    python3 tests/trace/tf_compat_check.py demo DEMO_DIR       # from samples/demo_module_export
    python3 tests/trace/tf_compat_check.py mlp BUNDLE DATA_DIR  # from samples/mlp_export

demo: tf.saved_model.load, serving_default(a=5) and the restored method, the TF1 Session loader
(restore through the SaverDef), the SaverDef save function, and a re-save by TensorFlow.
mlp: serving_default and the restored `predict` on the saved inputs vs the eager outputs.
Exits 1 on any mismatch.
"""
import sys
import tempfile

import numpy as np
import tensorflow as tf


def check_demo(d):
    m = tf.saved_model.load(d)
    x0 = float(m.x.numpy())
    out = m.signatures["serving_default"](a=tf.constant(5.0))["output_0"].numpy()
    assert out == x0 + 5, (out, x0)
    assert float(m.addprint(tf.constant(5.0)).numpy()) == x0 + 10
    with tf.compat.v1.Session(graph=tf.Graph()) as sess:
        mg = tf.compat.v1.saved_model.loader.load(sess, ["serve"], d)
        sig = mg.signature_def["serving_default"]
        r = sess.run(sig.outputs["output_0"].name, {sig.inputs["a"].name: 5.0})
        assert r == x0 + 5, r
        with tempfile.TemporaryDirectory() as tmp:
            sd = mg.saver_def
            sess.run(sd.save_tensor_name, {sd.filename_tensor_name: tmp + "/ckpt"})
            reader = tf.train.load_checkpoint(tmp + "/ckpt")
            assert reader.get_tensor("x/.ATTRIBUTES/VARIABLE_VALUE") == x0 + 5
    with tempfile.TemporaryDirectory() as tmp:
        tf.saved_model.save(m, tmp + "/resaved")
    print("demo: OK")


def check_mlp(d, data):
    m = tf.saved_model.load(d)
    for b in (1, 7, 256):
        x = np.load(f"{data}/x_{b}.npy")
        y = np.load(f"{data}/y_{b}.npy")
        out = m.signatures["serving_default"](x=tf.constant(x))["output_0"].numpy()
        err = float(np.abs(out - y).max())
        err2 = float(np.abs(m.predict(tf.constant(x)).numpy() - y).max())
        print(f"mlp batch {b}: max abs error {err} (signature), {err2} (method)")
        assert err <= 1e-5 and err2 <= 1e-5
    print("mlp: OK")


if __name__ == "__main__":
    if sys.argv[1] == "demo":
        check_demo(sys.argv[2])
    else:
        check_mlp(sys.argv[2], sys.argv[3])
