"""Models as users save them (Keras 3 export with odd output keys, tf.Module signatures with
RaggedTensor/SparseTensor outputs, methods with Python defaults, stateful signatures) that once
failed here: each test writes one bundle and compares `savedmodel-cli run`, `kiln-run` or
repeated calls on one load (kiln_call) with what TensorFlow computes."""
import os
import shutil

import numpy as np

import oracle

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _module(tmp_path, fn, signature, name="model"):
    import tensorflow as tf
    module = tf.Module()
    module.f = tf.function(fn, input_signature=signature)
    d = tmp_path / name
    tf.saved_model.save(module, str(d), signatures=module.f.get_concrete_function())
    return d


def _tf_outputs(d, inputs, key="serving_default"):
    import tensorflow as tf
    sig = tf.saved_model.load(str(d)).signatures[key]
    return sig(**{k: tf.constant(v) for k, v in inputs.items()})


def _npys(outdir):
    return {str(p.relative_to(outdir))[:-4]: np.load(p) for p in outdir.rglob("*.npy")}


def _kiln_run(d, inputs, outdir, signature="serving_default"):
    arg = ";".join(f"{k}={v}" for k, v in sorted(inputs.items()))
    cmd = [oracle.KILN_RUN, "--dir", d, "--signature_def", signature, "--outdir", outdir]
    if arg:
        cmd += ["--inputs", arg]
    oracle.run(cmd)
    return _npys(outdir)


def test_ragged_and_sparse_outputs_are_served_as_components(tmp_path):
    """A signature returning a RaggedTensor or SparseTensor (TF's SignatureDef stores a
    composite TensorInfo) serves its components: `<key>.flat_values`, `<key>.row_splits`
    (`<key>.nested_row_splits_<i>` for ragged_rank > 1), `<key>.indices`, `.values`,
    `.dense_shape`, the order TF's signature function returns them."""
    import tensorflow as tf

    def fn(words, lens, sp_i, sp_v, sp_s):
        r = tf.RaggedTensor.from_row_lengths(words, lens)
        sp = tf.SparseTensor(sp_i, sp_v, sp_s)
        return {"chars": tf.strings.bytes_split(r), "words": r,
                "sp2": tf.sparse.map_values(tf.multiply, sp, 2.0),
                "n": r.row_lengths()}

    d = _module(tmp_path, fn, [tf.TensorSpec([None], tf.string, name="words"),
                               tf.TensorSpec([None], tf.int64, name="lens"),
                               tf.TensorSpec([None, 2], tf.int64, name="sp_i"),
                               tf.TensorSpec([None], tf.float32, name="sp_v"),
                               tf.TensorSpec([2], tf.int64, name="sp_s")])
    inputs = {"words": np.array([b"ab", b"c", b"", b"def"]), "lens": np.array([2, 0, 2], np.int64),
              "sp_i": np.array([[0, 1], [2, 3]], np.int64), "sp_v": np.array([1.5, -2], np.float32),
              "sp_s": np.array([3, 4], np.int64)}
    theirs = _tf_outputs(d, inputs)
    want = {"n": theirs["n"].numpy(),
            "chars.flat_values": theirs["chars"].flat_values.numpy(),
            "chars.nested_row_splits_0": theirs["chars"].nested_row_splits[0].numpy(),
            "chars.nested_row_splits_1": theirs["chars"].nested_row_splits[1].numpy(),
            "words.flat_values": theirs["words"].flat_values.numpy(),
            "words.row_splits": theirs["words"].row_splits.numpy(),
            "sp2.indices": theirs["sp2"].indices.numpy(),
            "sp2.values": theirs["sp2"].values.numpy(),
            "sp2.dense_shape": theirs["sp2"].dense_shape.numpy()}
    want = {k: v.astype("S") if v.dtype == object else v for k, v in want.items()}
    files = {}
    for k, v in inputs.items():
        files[k] = tmp_path / f"{k}.npy"
        np.save(files[k], v.astype(np.int64) if v.dtype.kind == "i" else v)
    ours = oracle.kiln_call_signature(d, "serving_default", files, tmp_path / "out")
    oracle.assert_outputs(ours, want, "ragged/sparse outputs")
    # show lists the composite TensorInfos as TF does; the server's outputs are the components
    shown = oracle.run([oracle.KILN_CLI, "show", "--dir", d, "--all"]).stdout
    assert "outputs['sp2'] tensor_info:" in shown


def test_unsupported_composite_output_names_the_output(tmp_path):
    """An output TypeSpec other than RaggedTensorSpec/SparseTensorSpec is refused naming the
    output and its spec class."""
    import tensorflow as tf

    def fn(x):
        return {"slices": tf.IndexedSlices(x, tf.range(tf.shape(x)[0])), "y": x}

    d = _module(tmp_path, fn, [tf.TensorSpec([None], tf.float32, name="x")])
    proc = oracle.run([oracle.KILN_CLI, "run", "--dir", d, "--tag_set", "serve",
                       "--signature_def", "serving_default", "--input_exprs", "x=[1.0]"],
                      check=False)
    assert proc.returncode == 1
    assert "'slices' is a IndexedSlicesSpec" in proc.stderr, proc.stderr


def test_method_with_python_default_keeps_plan_self_contained(tmp_path):
    """A tf.Module method whose concrete functions take a Python default (`bias=3.0`) has no
    tensor-only concrete function; compile must still write the model section, so that
    kiln-run serves the signature without saved_model.pb."""
    import tensorflow as tf

    class Mod(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="x")])
        def f(self, x, scale=None, bias=3.0):
            return {"y": x * (2.0 if scale is None else scale) + bias}

    m = Mod()
    d = tmp_path / "model"
    tf.saved_model.save(m, str(d), signatures=m.f.get_concrete_function())
    x = np.array([1.0, -2.5], np.float32)
    theirs = {k: v.numpy() for k, v in _tf_outputs(d, {"x": x}).items()}
    proc = oracle.run([oracle.KILN_CLI, "compile", "--dir", d])
    assert "loads need not read saved_model.pb" in proc.stdout + proc.stderr, proc.stdout
    np.save(tmp_path / "x.npy", x)
    ours = _kiln_run(d, {"x": tmp_path / "x.npy"}, tmp_path / "out")
    oracle.assert_outputs(ours, theirs, "kiln-run of a module with a defaulted method")


def test_outdir_made_and_output_keys_with_slash(tmp_path):
    """Keras allows output keys such as "out/a": `run --outdir` and `kiln-run --outdir` write
    OUT/out/a.npy (kiln-run also makes OUT, as savedmodel-cli does); a key that would leave
    OUT is refused before the model runs."""
    import tensorflow as tf

    def fn(x):
        return {"out/a": x * 2, "b:0": x + 1, "ünï": -x}

    d = _module(tmp_path, fn, [tf.TensorSpec([None], tf.float32, name="x")])
    x = np.array([1.0, 2.0], np.float32)
    theirs = {k: v.numpy() for k, v in _tf_outputs(d, {"x": x}).items()}
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "cli"
    oracle.run([oracle.KILN_CLI, "run", "--dir", d, "--tag_set", "serve", "--signature_def",
                "serving_default", "--inputs", f"x={tmp_path / 'x.npy'}", "--outdir", out])
    oracle.assert_outputs(_npys(out), theirs, "savedmodel-cli run --outdir")
    compiled = tmp_path / "compiled"
    shutil.copytree(d, compiled)
    oracle.run([oracle.KILN_CLI, "compile", "--dir", compiled])
    ours = _kiln_run(compiled, {"x": tmp_path / "x.npy"}, tmp_path / "new" / "dir")
    oracle.assert_outputs(ours, theirs, "kiln-run --outdir")

    bad = _module(tmp_path, lambda x: {"../escape": x},
                  [tf.TensorSpec([None], tf.float32, name="x")], name="bad")
    proc = oracle.run([oracle.KILN_CLI, "run", "--dir", bad, "--tag_set", "serve",
                       "--signature_def", "serving_default", "--inputs", f"x={tmp_path / 'x.npy'}",
                       "--outdir", tmp_path / "o2"], check=False)
    assert proc.returncode == 1 and "'../escape'" in proc.stderr, proc.stderr
    assert not (tmp_path / "escape.npy").exists()


def test_stateful_signature_calls_evolve_as_in_tf(tmp_path):
    """Counter, running mean, scatter updates and a MutableHashTable / DenseHashTable: several
    calls on one load give TF's outputs call after call."""
    import tensorflow as tf

    class Mod(tf.Module):
        def __init__(self):
            self.count = tf.Variable(0, dtype=tf.int64)
            self.mean = tf.Variable(tf.zeros([2]))
            self.v = tf.Variable(tf.zeros([4]))
            self.t = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
            self.dt = tf.lookup.experimental.DenseHashTable(
                tf.int64, tf.float32, default_value=-1.0, empty_key=-1, deleted_key=-2)

        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32, name="x"),
                                      tf.TensorSpec([None], tf.string, name="keys")])
        def update(self, x, keys):
            n = self.count.assign_add(tf.cast(tf.shape(x)[0], tf.int64))
            w = tf.cast(tf.shape(x)[0], tf.float32) / tf.cast(n, tf.float32)
            self.mean.assign(self.mean * (1 - w) + tf.reduce_mean(x, 0) * w)
            self.v.scatter_add(tf.IndexedSlices(tf.ones_like(keys, tf.float32),
                                                tf.strings.to_hash_bucket_fast(keys, 4)))
            self.t.insert(keys, tf.fill(tf.shape(keys), n))
            self.dt.insert(tf.fill([1], n), tf.reduce_sum(x, keepdims=True)[0])
            return {"count": n, "mean": self.mean.read_value(), "v": self.v.read_value(),
                    "found": self.t.lookup(tf.constant(["a", "b", "zz"])),
                    "dense": self.dt.lookup(tf.constant([1, 2, 3, 5], tf.int64))}

    m = Mod()
    d = tmp_path / "model"
    tf.saved_model.save(m, str(d), signatures={"serving_default": m.update})
    rng = np.random.default_rng(0)
    calls = [{"x": rng.normal(size=(n, 2)).astype(np.float32), "keys": np.array(k, "S")}
             for n, k in ((1, [b"a"]), (2, [b"b", b"a"]), (2, [b"c"]))]
    sig = tf.saved_model.load(str(d)).signatures["serving_default"]
    args = []
    theirs = []
    for i, c in enumerate(calls):
        got = sig(**{k: tf.constant(v) for k, v in c.items()})
        theirs.append({k: v.numpy() for k, v in got.items()})
        for k, v in c.items():
            np.save(tmp_path / f"{k}{i}.npy", v)
            args.append(f"{k}={tmp_path / f'{k}{i}.npy'}")
    out = tmp_path / "out"
    oracle.run([oracle.KILN_CALL, d, "calls", "signature", "serving_default", len(calls), out]
               + args)
    for i, want in enumerate(theirs):
        ours = {p.stem: np.load(p) for p in (out / str(i)).glob("*.npy")
                if not p.stem.startswith("var_")}
        oracle.assert_outputs(ours, want, f"call {i}")
