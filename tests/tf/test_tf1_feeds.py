"""TF1 SavedModels whose signatures feed what TF Serving's Session feeds (docs/tf-compat.md,
"TF1 bundles"): output 0 of a node whose other outputs the graph still computes, an output other
than 0, a cond of control flow v2 whose branches pass intermediates as Optionals, and signatures
of sparse tensors, which are not served while the model's other signatures are. TensorFlow's
reference is its TF1 Session loader (tf.compat.v1.saved_model.loader.load), as TF Serving runs
these bundles; TF 2's tf.saved_model.load cannot load a bundle that feeds `split:0`."""
import numpy as np

import oracle


def _make(bundle):
    import tensorflow as tf
    v1 = tf.compat.v1
    v1.enable_control_flow_v2()
    with tf.Graph().as_default(), v1.Session() as sess:
        x = v1.placeholder(tf.float32, [None, 4], name="x")
        a, b = tf.split(x, 2, axis=1, name="split")
        y = a * 2.0 + b
        training = v1.placeholder_with_default(False, [], name="training")

        def normalise():
            m, v = tf.nn.moments(x, [0])
            return (x - m) * tf.math.rsqrt(v + 1e-3)
        z = tf.cond(training, normalise, lambda: x * 0.5)
        tf.gradients(z, x)  # gives the cond's branches Optional outputs
        sp = v1.sparse_placeholder(tf.float32, [None, 4], name="sp")
        build = v1.saved_model.build_tensor_info
        sig = v1.saved_model.signature_def_utils.build_signature_def
        predict = "tensorflow/serving/predict"
        sigs = {"feed_first": sig({"a": build(a), "x": build(x)}, {"y": build(y), "b": build(b)},
                                  predict),
                "feed_second": sig({"b": build(b), "x": build(x)}, {"y": build(y)}, predict),
                "cond": sig({"x": build(x), "training": build(training)}, {"z": build(z)},
                            predict),
                "sparse_in": sig({"sp": build(sp)}, {"d": build(v1.sparse.to_dense(sp))}, predict),
                "sparse_out": sig({"x": build(x)}, {"s": build(v1.sparse.from_dense(y))}, predict)}
        builder = v1.saved_model.Builder(bundle)
        builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map=sigs)
        builder.save()


def _session_run(bundle, signature, feed):
    import tensorflow as tf
    v1 = tf.compat.v1
    with tf.Graph().as_default(), v1.Session() as sess:
        mg = v1.saved_model.loader.load(sess, ["serve"], bundle)
        sd = mg.signature_def[signature]
        fetch = {k: ti.name for k, ti in sd.outputs.items()}
        return sess.run(fetch, {sd.inputs[k].name: v for k, v in feed.items()})


def test_tf1_feeds_and_sparse_signatures(tmp_path):
    bundle = str(tmp_path / "tf1_feeds")
    _make(bundle)
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    half = np.full((2, 2), 10.0, np.float32)
    feeds = {"feed_first": {"x": x, "a": half}, "feed_second": {"x": x, "b": half},
             "cond": {"x": x, "training": np.bool_(True)}}
    for signature, feed in feeds.items():
        files = {}
        for k, v in feed.items():
            files[k] = tmp_path / f"{signature}_{k}.npy"
            np.save(files[k], v)
        want = _session_run(bundle, signature, feed)
        got = oracle.kiln_run(bundle, signature, files, tmp_path / signature)
        assert sorted(got) == sorted(want), signature
        for k in want:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{signature} {k}")
    # Fed split:0, computed split:1: y = 2 * 10 + x[:, 2:], b = x[:, 2:].
    np.testing.assert_array_equal(_session_run(bundle, "feed_first", feeds["feed_first"])["b"],
                                  x[:, 2:])
    # The sparse signatures are named as not served; the model's others load beside them.
    for signature in ("sparse_in", "sparse_out"):
        proc = oracle.run([oracle.KILN_CLI, "run", "--dir", bundle, "--tag_set", "serve",
                           "--signature_def", signature, "--outdir", tmp_path / signature],
                          check=False)
        assert proc.returncode != 0
        assert "sparse (coo_sparse) tensor" in proc.stderr, proc.stderr


def _make_partitioned(bundle):
    """Partitioned variables (TF1's fixed_size_partitioner and min_max_variable_partitioner, ref
    and resource variables): the checkpoint holds each in slices, RestoreV2 reads them by spec."""
    import tensorflow as tf
    v1 = tf.compat.v1
    with tf.Graph().as_default(), v1.Session() as sess:
        ids = v1.placeholder(tf.int64, [None], name="ids")
        x = v1.placeholder(tf.float32, [None, 6], name="x")
        emb = v1.get_variable("emb", [10, 6], initializer=v1.random_normal_initializer(seed=4),
                              partitioner=v1.fixed_size_partitioner(3), use_resource=False)
        w = v1.get_variable("w", [6, 4], initializer=v1.random_uniform_initializer(-1, 1, seed=5),
                            partitioner=v1.fixed_size_partitioner(2, axis=1), use_resource=False)
        w_res = v1.get_variable("w_res", [9, 2],
                                initializer=v1.random_uniform_initializer(-1, 1, seed=6),
                                partitioner=v1.min_max_variable_partitioner(max_partitions=3,
                                                                            min_slice_size=8),
                                use_resource=True)
        looked = tf.nn.embedding_lookup(emb, ids)
        y = tf.matmul(x + looked, tf.concat(list(w), axis=1))
        r = tf.matmul(y[:, :2], tf.transpose(tf.concat(list(w_res), axis=0)))
        sess.run(v1.global_variables_initializer())
        build = v1.saved_model.build_tensor_info
        sig = v1.saved_model.signature_def_utils.build_signature_def(
            {"ids": build(ids), "x": build(x)}, {"y": build(y), "r": build(r)},
            "tensorflow/serving/predict")
        builder = v1.saved_model.Builder(bundle)
        builder.add_meta_graph_and_variables(sess, ["serve"],
                                             signature_def_map={"serving_default": sig},
                                             saver=v1.train.Saver(sharded=True))
        builder.save()


def test_tf1_partitioned_variables(tmp_path):
    bundle = str(tmp_path / "partitioned")
    _make_partitioned(bundle)
    feed = {"ids": np.array([0, 9, 4], np.int64),
            "x": np.linspace(-1, 1, 18, dtype=np.float32).reshape(3, 6)}
    files = {}
    for k, v in feed.items():
        files[k] = tmp_path / f"{k}.npy"
        np.save(files[k], v)
    want = _session_run(bundle, "serving_default", feed)
    got = oracle.kiln_run(bundle, "serving_default", files, tmp_path / "out")
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)
