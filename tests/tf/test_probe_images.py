"""Image serving functions as TF Serving users write them (encoded bytes in, decode, crop,
resize, post-process): each test saves one tf.Module, runs its serving_default through
`savedmodel-cli run` and compares with what TensorFlow computes."""
import os

import numpy as np

import oracle

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _npy(stem, value):
    """Every input as .npy: strings as an object array, which savedmodel-cli reads."""
    path = stem.parent / (stem.name + ".npy")
    np.save(path, value, allow_pickle=True)
    return path


def _run(tmp_path, fn, signature, inputs):
    return oracle.run_module(tmp_path, fn, signature, inputs, save=_npy)


def test_sample_distorted_bounding_box_crops_as_tf(tmp_path):
    """StatelessSampleDistortedBoundingBox (tf.image.stateless_sample_distorted_bounding_box, the
    random crop of Inception-style preprocessing) draws TF's crop from the seed: the same
    begin, size and box for each seed, with boxes or the whole image, and the crop it cuts."""
    import tensorflow as tf

    def fn(img, seed):
        x = tf.io.decode_png(img, channels=3)
        begin, size, bb = tf.image.stateless_sample_distorted_bounding_box(
            tf.shape(x), tf.constant([[[0.1, 0.1, 0.9, 0.8], [0.3, 0.0, 0.5, 1.0]]]), seed=seed,
            min_object_covered=0.3, aspect_ratio_range=(0.5, 2.0), area_range=(0.1, 1.0))
        b2, s2, bb2 = tf.image.stateless_sample_distorted_bounding_box(
            tf.shape(x, out_type=tf.int64), tf.zeros([1, 0, 4]), seed=seed,
            use_image_if_no_bounding_boxes=True)
        return {"begin": begin, "size": size, "bb": bb, "crop": tf.slice(x, begin, size),
                "begin2": b2, "size2": s2, "bb2": bb2}

    rng = np.random.default_rng(0)
    for h, w in [(40, 30), (129, 257), (1, 1), (3, 200)]:
        png = tf.io.encode_png(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).numpy()
        for seed in ([11, 22], [-5, 7], [0, 0]):
            sub = tmp_path / f"{h}x{w}_{seed[0]}_{seed[1]}"
            sub.mkdir()
            ours, theirs = _run(
                sub, fn, [tf.TensorSpec([], tf.string, "img"), tf.TensorSpec([2], tf.int32, "seed")],
                {"img": np.array(png, dtype="S"), "seed": np.array(seed, np.int32)})
            oracle.assert_outputs(ours, theirs, f"distorted box {h}x{w} seed {seed}")


def test_sample_distorted_bounding_box_stateful_first_call_as_tf(tmp_path):
    """SampleDistortedBoundingBox(V2) with op seeds: a freshly loaded model's first call draws
    TF's crop (the node's Philox stream from seed and seed2, max_attempts blocks per call)."""
    import tensorflow as tf

    def fn(img):
        x = tf.io.decode_png(img, channels=3)
        b, s, bb = tf.image.sample_distorted_bounding_box(
            tf.shape(x), tf.constant([[[0.1, 0.1, 0.9, 0.8]]]), seed=5, min_object_covered=0.2)
        b1, s1, bb1 = tf.raw_ops.SampleDistortedBoundingBox(
            image_size=tf.shape(x), bounding_boxes=tf.constant([[[0.2, 0.2, 0.6, 0.9]]]), seed=3,
            seed2=4, min_object_covered=0.4, area_range=[0.2, 0.9])
        return {"b": b, "s": s, "bb": bb, "crop": tf.slice(x, b, s), "b1": b1, "s1": s1,
                "bb1": bb1}

    png = tf.io.encode_png(np.random.default_rng(1).integers(0, 256, (57, 43, 3),
                                                             dtype=np.uint8)).numpy()
    ours, theirs = _run(tmp_path, fn, [tf.TensorSpec([], tf.string, "img")],
                        {"img": np.array(png, dtype="S")})
    oracle.assert_outputs(ours, theirs, "stateful distorted box")


def test_object_npy_of_image_bytes_feeds_a_string_input(tmp_path):
    """An object .npy of bytes (what TF's saved_model_cli takes for encoded images: np.load
    with allow_pickle) feeds a string input with every byte, trailing NULs included (a
    fixed-width 'S' array drops them, cutting BMP rows and WebP files); str elements are their
    UTF-8 bytes. Read by savedmodel-cli and kiln-run without running the pickle."""
    import tensorflow as tf

    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="x")])
        def f(self, x):
            return {"n": tf.strings.length(x), "h": tf.strings.to_hash_bucket_fast(x, 1 << 20)}

    m = M()
    d = tmp_path / "m"
    tf.saved_model.save(m, str(d), signatures={"serving_default": m.f})
    values = [b"BM\x00\x01\x00\x00", "h\u00e9llo", b""]
    np.save(tmp_path / "x.npy", np.array(values, dtype=object), allow_pickle=True)
    theirs = m.f(tf.constant([v.encode() if isinstance(v, str) else v for v in values]))
    ours = oracle.kiln_run(d, "serving_default", {"x": tmp_path / "x.npy"}, tmp_path / "out")
    for k in ("n", "h"):
        np.testing.assert_array_equal(ours[k], theirs[k].numpy())
    np.testing.assert_array_equal(ours["n"], [6, 6, 0])

    class Echo(tf.Module):  # ops kiln-run has
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="x")])
        def f(self, x):
            return {"y": tf.identity(x)}

    e = Echo()
    d = tmp_path / "echo"
    tf.saved_model.save(e, str(d), signatures={"serving_default": e.f})
    oracle.run([oracle.KILN_CLI, "compile", "--dir", d])
    minimal = tmp_path / "minimal"
    oracle.run([oracle.KILN_RUN, "--dir", d, "--inputs", f"x={tmp_path / 'x.npy'}", "--outdir",
                minimal])
    # Written as a fixed-width 'S' array, which numpy reads without its trailing NULs.
    np.testing.assert_array_equal(np.load(minimal / "y.npy"),
                                  np.array([b"BM\x00\x01", "h\u00e9llo".encode(), b""]))


def _webp(arr, mode, **kw):
    """WebP bytes of `arr` (Pillow, which TensorBoard and so TensorFlow install)."""
    import io
    from PIL import Image
    b = io.BytesIO()
    Image.fromarray(arr, mode).save(b, "WEBP", **kw)
    return b.getvalue()


def _outputs_of(fn):
    return lambda x: {"out": fn(x)}


def test_webp_decodes_as_tf(tmp_path):
    """WebP (lossy and lossless, with and without alpha) through tf.io.decode_webp and
    tf.io.decode_image (TF 2.21 decodes it; kiln refused it): the same pixels and shapes as TF
    ([1, h, w, c], or [h, w, c] without expand_animations), and TF's errors for channels that
    are not the file's and for another dtype than uint8."""
    import tensorflow as tf
    rng = np.random.RandomState(0)
    rgb = rng.randint(0, 255, (17, 23, 3)).astype(np.uint8)
    rgba = rng.randint(0, 255, (7, 9, 4)).astype(np.uint8)
    images = {"lossy_rgb": _webp(rgb, "RGB", quality=80),
              "lossless_rgb": _webp(rgb, "RGB", lossless=True),
              "lossless_rgba": _webp(rgba, "RGBA", lossless=True),
              "lossy_rgba": _webp(rgba, "RGBA", quality=90)}
    fns = {"webp": lambda x: tf.io.decode_webp(x),
           "image": lambda x: tf.io.decode_image(x),
           "image_3d": lambda x: tf.io.decode_image(x, expand_animations=False),
           "image_c3": lambda x: tf.io.decode_image(x, channels=3, expand_animations=False),
           "image_f32": lambda x: tf.io.decode_image(x, dtype=tf.float32)}
    for name, data in images.items():
        for fname, fn in fns.items():
            sub = tmp_path / f"{name}_{fname}"
            sub.mkdir()
            try:
                theirs = fn(tf.constant(data)).numpy()
            except tf.errors.InvalidArgumentError as e:
                theirs = e.message
            if isinstance(theirs, str):
                d = oracle.save_module(sub / "model", _outputs_of(fn),
                                       [tf.TensorSpec([], tf.string)])
                np.save(sub / "x.npy", np.array(data, dtype=object), allow_pickle=True)
                proc = oracle.run([oracle.KILN_CLI, "run", "--dir", d, "--tag_set", "serve",
                                   "--signature_def", "serving_default", "--inputs",
                                   f"x={sub / 'x.npy'}"], check=False)
                assert proc.returncode == 1, f"{name} {fname}: kiln ran where TF failed: {theirs}"
                want = theirs.split("}}")[-1].split(" [")[0].strip()
                assert want in proc.stderr, (name, fname, proc.stderr)
                continue
            ours, tf_out = _run(sub, _outputs_of(fn), [tf.TensorSpec([], tf.string)],
                                {"x": np.array(data, dtype=object)})
            np.testing.assert_array_equal(ours["out"], tf_out["out"], err_msg=f"{name} {fname}")


def test_animated_webp_decodes_every_frame(tmp_path):
    """An animated WebP (TF 2.21's own decoder aborts the process on one, so Pillow is the
    oracle): decode_webp gives every frame as a whole RGBA canvas, [frames, h, w, 4];
    decode_image without expand_animations the first frame."""
    import io

    import tensorflow as tf
    from PIL import Image
    rng = np.random.RandomState(1)
    frames = [rng.randint(0, 255, (6, 5, 3)).astype(np.uint8) for _ in range(3)]
    b = io.BytesIO()
    Image.fromarray(frames[0]).save(b, "WEBP", save_all=True, lossless=True, duration=40,
                                    append_images=[Image.fromarray(f) for f in frames[1:]])
    data = np.array(b.getvalue(), dtype=object)
    for name, fn, want in [
            ("all", lambda x: {"out": tf.io.decode_webp(x)}, (3, 6, 5, 4)),
            ("first", lambda x: {"out": tf.io.decode_image(x, expand_animations=False)}, (6, 5, 4))]:
        d = oracle.save_module(tmp_path / name, fn, [tf.TensorSpec([], tf.string)])
        np.save(tmp_path / "x.npy", data, allow_pickle=True)
        out = oracle.kiln_run(d, "serving_default", {"x": tmp_path / "x.npy"},
                              tmp_path / f"out_{name}")["out"]
        assert out.shape == want, (name, out.shape)
        got = out if out.ndim == 4 else out[None]
        for i in range(got.shape[0]):
            np.testing.assert_array_equal(got[i, ..., :3], frames[i], err_msg=f"{name} frame {i}")
            assert (got[i, ..., 3] == 255).all()
