"""TensorFlow as the oracle for the string, lookup-table and train-step ops: bundles exported by
TF 2.21 at test time run on our loader (tests/tf/kiln_call.cc) and give TF's outputs; a train
step run by our runtime and saved with the bundle's own save function is read back by TF."""
import shutil

import numpy as np
import pytest

import oracle

WORDS = [b"", b"a", b"hello", "Stra\u00dfe".encode(), "\u01c6emal".encode(),
         "\u039f\u0394\u039f\u03a3 \u03a3\u0391".encode(), b" padded \t", b"x" * 17, b"y" * 33,
         b"z" * 65, b"w" * 200, b"a\xffb", b"caf\xc3\xa9 123", b"\xe2\x82", b"A,b,,c d"]
NUMBERS = [b"1.5", b" 2 ", b"-inf", b"1e3", b"0x1p3", b"-0", b".5", b"1e400", b"nan"]


def _strings_module(vocab):
    import tensorflow as tf

    class StringsAndTables(tf.Module):
        def __init__(self):
            super().__init__()
            self.table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(
                    tf.constant([b"a", b"hello", b"caf\xc3\xa9 123"]),
                    tf.constant([1, 2, 3], tf.int64)), -1)
            self.vocab = tf.lookup.StaticHashTable(
                tf.lookup.TextFileInitializer(
                    vocab, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
                    tf.lookup.TextFileIndex.LINE_NUMBER), -7)
            # Saved through its save/restore functions: the loader must restore its entries.
            self.weights = tf.lookup.experimental.MutableHashTable(tf.string, tf.float32, -1.0)
            self.weights.insert(tf.constant([b"hello", b"x" * 17]), tf.constant([0.5, 1.5]))

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def strings(self, s):
            dynamic = tf.strings.join(["[0-9]", "+"])  # not a constant: RegexReplace
            return {
                "fast": tf.strings.to_hash_bucket_fast(s, 2**63 - 1),
                "strong": tf.strings.to_hash_bucket_strong(s, 2**63 - 1, [7, 11]),
                "strong_neg": tf.strings.to_hash_bucket_strong(s, 1000, [-3, 2**62]),
                "len": tf.strings.length(s),
                "len_utf8": tf.strings.length(s, unit="UTF8_CHAR"),
                "upper": tf.strings.upper(s, encoding="utf-8"),
                "lower": tf.strings.lower(s, encoding="utf-8"),
                "lower_ascii": tf.strings.lower(s),
                "strip": tf.strings.strip(s),
                "b64": tf.io.encode_base64(s, pad=True),
                "b64_back": tf.io.decode_base64(tf.io.encode_base64(s)),
                "regex": tf.strings.regex_replace(s, "[aeiou]+", r"<\0>"),
                "regex_first": tf.strings.regex_replace(s, "(.)(.)", r"\2\1", replace_global=False),
                "regex_dynamic": tf.strings.regex_replace(s, dynamic, "#"),
                "full_match": tf.strings.regex_full_match(s, "[a-z]+"),
                "full_match_dynamic": tf.strings.regex_full_match(s, tf.strings.join(["[a-z", "]+"])),
                "substr": tf.strings.substr(s, 0, 3, unit="UTF8_CHAR"),
                "substr_bytes": tf.strings.substr(s, 0, -1),
                "lookup": self.table.lookup(s),
                "vocab": self.vocab.lookup(s),
                "size": self.table.size() + self.vocab.size(),
                "weights": self.weights.lookup(s),
            }

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def split(self, s):
            ws = tf.raw_ops.StringSplitV2(input=s, sep="")
            comma = tf.raw_ops.StringSplitV2(input=s, sep=",", maxsplit=2)
            dec = tf.raw_ops.UnicodeDecode(input=s, input_encoding="UTF-8")
            ign = tf.raw_ops.UnicodeDecode(input=s, input_encoding="UTF-8", errors="ignore",
                                           replace_control_characters=True, Tsplits=tf.int32)
            return {"ws_indices": ws.indices, "ws_values": ws.values, "ws_shape": ws.shape,
                    "c_indices": comma.indices, "c_values": comma.values, "c_shape": comma.shape,
                    "splits": dec.row_splits, "chars": dec.char_values,
                    "splits_ignore": ign.row_splits, "chars_ignore": ign.char_values,
                    "scripts": tf.strings.unicode_script(dec.char_values),
                    **{f"v1_{k}": v for k, v in zip(
                        ("indices", "values", "shape"),
                        tf.raw_ops.StringSplit(input=s, delimiter=" ,", skip_empty=False))},
                    **{f"v1skip_{k}": v for k, v in zip(
                        ("indices", "values", "shape"),
                        tf.raw_ops.StringSplit(input=s, delimiter=" ,"))}}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32),
                                      tf.TensorSpec([None], tf.string)])
        def numbers(self, x, text):
            with tf.control_dependencies([tf.debugging.Assert(tf.size(x) >= 0, ["size", tf.size(x)])]):
                return {
                    "f": tf.strings.as_string(x),
                    "g": tf.strings.as_string(x, shortest=True),
                    "e": tf.strings.as_string(x, precision=3, scientific=True),
                    "w": tf.strings.as_string(x, width=12, fill="0", precision=2),
                    "i": tf.strings.as_string(tf.cast(x * 1000, tf.int64), width=9, fill="-"),
                    "parsed": tf.strings.to_number(text, tf.float32),
                    "parsed64": tf.strings.to_number(text, tf.float64),
                }

        @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
        def check(self, x):
            with tf.control_dependencies([tf.debugging.Assert(x > 0, ["x must be positive:", x,
                                                                      tf.constant([b"a\n", b"b"])])]):
                return tf.identity(x)

    return StringsAndTables()


def _train_module():
    import tensorflow as tf
    rng = np.random.default_rng(3)

    def var(name, lo=-1.0, hi=1.0, shape=(3, 4)):
        return tf.Variable(rng.uniform(lo, hi, shape).astype(np.float32), name=name)

    class Trainer(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = {k: var(k) for k in ("gd", "mom", "kmom", "adagrad", "adam", "rms")}
            self.slots = {"mom": var("mom_acc"), "kmom": var("kmom_acc"),
                          "adagrad": var("ada_acc", 0.1, 1.0), "adam_m": var("adam_m"),
                          "adam_v": var("adam_v", 0.0, 1.0), "rms_ms": var("rms_ms", 0.0, 1.0),
                          "rms_mom": var("rms_mom")}
            self.emb = var("emb", shape=(5, 2))
            self.grid = var("grid", shape=(4, 3))

        @tf.function(input_signature=[tf.TensorSpec([3, 4], tf.float32),
                                      tf.TensorSpec([3], tf.int32)])
        def step(self, g, ids):
            w, s, raw = self.w, self.slots, tf.raw_ops
            raw.ResourceApplyGradientDescent(var=w["gd"].handle, alpha=0.1, delta=g)
            raw.ResourceApplyMomentum(var=w["mom"].handle, accum=s["mom"].handle, lr=0.05, grad=g,
                                      momentum=0.9, use_nesterov=True)
            raw.ResourceApplyKerasMomentum(var=w["kmom"].handle, accum=s["kmom"].handle, lr=0.05,
                                           grad=g, momentum=0.9)
            raw.ResourceApplyAdagradV2(var=w["adagrad"].handle, accum=s["adagrad"].handle, lr=0.1,
                                       epsilon=1e-7, grad=g)
            raw.ResourceApplyAdam(var=w["adam"].handle, m=s["adam_m"].handle,
                                  v=s["adam_v"].handle, beta1_power=0.81, beta2_power=0.998,
                                  lr=0.01, beta1=0.9, beta2=0.999, epsilon=1e-7, grad=g)
            raw.ResourceApplyRMSProp(var=w["rms"].handle, ms=s["rms_ms"].handle,
                                     mom=s["rms_mom"].handle, lr=0.01, rho=0.9, momentum=0.5,
                                     epsilon=1e-7, grad=g)
            # VariableShape (what tf.shape of a variable of unknown shape gives): 5 rows, so 0.5.
            rows = tf.cast(raw.VariableShape(input=self.emb.handle)[0], tf.float32)
            raw.ResourceScatterAdd(resource=self.emb.handle, indices=ids,
                                   updates=tf.ones([3, 2]) * rows * 0.1)
            raw.ResourceScatterUpdate(resource=self.emb.handle, indices=ids[:1],
                                      updates=tf.fill([1, 2], 7.0))
            half = tf.fill([3, 2], 0.5)
            raw.ResourceScatterSub(resource=self.emb.handle, indices=ids, updates=half * 0.25)
            raw.ResourceScatterMul(resource=self.emb.handle, indices=ids, updates=half * 3.0)
            raw.ResourceScatterDiv(resource=self.emb.handle, indices=ids[1:], updates=half[1:] + 1)
            raw.ResourceScatterMax(resource=self.emb.handle, indices=ids, updates=half + 0.5)
            raw.ResourceScatterMin(resource=self.emb.handle, indices=ids[:2],
                                   updates=half[:2] + 1.5)
            # The N-d scatters, a strided-slice assignment and ResourceGatherNd on a variable.
            nd = tf.stack([ids % 4, ids % 3], axis=1)
            grid = self.grid.handle
            raw.ResourceScatterNdAdd(ref=grid, indices=nd, updates=tf.ones([3]) * 0.5)
            raw.ResourceScatterNdSub(ref=grid, indices=nd[:, :1], updates=tf.ones([3, 3]) * 0.25)
            raw.ResourceScatterNdMax(ref=grid, indices=nd, updates=tf.fill([3], 0.3))
            raw.ResourceScatterNdMin(ref=grid, indices=nd, updates=tf.fill([3], 0.9))
            raw.ResourceScatterNdUpdate(ref=grid, indices=[[3, 2]], updates=tf.reshape(rows, [1]))
            self.grid[1:3, ::2].assign(tf.fill([2, 2], -1.0))
            self.grid[0].assign(g[0, :3])
            picked = raw.ResourceGatherNd(resource=grid, indices=nd, dtype=tf.float32)
            raw.ResourceScatterNdAdd(ref=grid, indices=[[2, 1]], updates=picked[:1] * 2.0)
            return raw.ResourceGather(resource=self.emb.handle, indices=ids, dtype=tf.float32)

    return Trainer()


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    import tensorflow as tf
    d = tmp_path_factory.mktemp("string_ops")
    vocab = d / "vocab.txt"
    vocab.write_bytes(b"hello\n" + "Stra\u00dfe".encode() + b"\na\n")
    m = _strings_module(str(vocab))
    tf.saved_model.save(m, str(d / "strings"), signatures={
        "strings": m.strings, "split": m.split, "numbers": m.numbers, "check": m.check})
    t = _train_module()
    tf.saved_model.save(t, str(d / "train"), signatures={"step": t.step})
    return d


def _npy(path, values, dtype):
    np.save(path, np.array(values, dtype=dtype))
    return path


def _tf_signature(d, key, **feeds):
    import tensorflow as tf
    fn = tf.saved_model.load(str(d)).signatures[key]
    return {k: v.numpy() for k, v in fn(**{k: tf.constant(v) for k, v in feeds.items()}).items()}


def _compare(mine, theirs, what):
    assert sorted(mine) == sorted(theirs), what
    for k in theirs:
        oracle.assert_same(np.asarray(mine[k]).tolist() if np.asarray(theirs[k]).dtype.kind in "SO"
                           else mine[k],
                           theirs[k].tolist() if theirs[k].dtype.kind in "SO" else theirs[k],
                           f"{what} output {k!r}")


def test_string_ops_and_tables_give_tf_outputs(bundles, tmp_path):
    d = bundles / "strings"
    theirs = _tf_signature(d, "strings", s=np.array(WORDS, dtype=object))
    s = _npy(tmp_path / "s.npy", WORDS, "S")
    mine = oracle.kiln_call_signature(d, "strings", {"s": s}, tmp_path / "out")
    _compare(mine, theirs, "strings")


def test_split_and_unicode_decode_give_tf_outputs(bundles, tmp_path):
    d = bundles / "strings"
    theirs = _tf_signature(d, "split", s=np.array(WORDS, dtype=object))
    mine = oracle.kiln_call_signature(d, "split", {"s": _npy(tmp_path / "s.npy", WORDS, "S")},
                                      tmp_path / "out")
    _compare(mine, theirs, "split")


def test_number_formatting_and_parsing_give_tf_outputs(bundles, tmp_path):
    d = bundles / "strings"
    x = np.array([0.0, 1.5, -2.25, 1234.5678, 1e-5, 3.0e20, np.inf, -np.nan], np.float32)
    text = np.array(NUMBERS, dtype=object)
    theirs = _tf_signature(d, "numbers", x=x, text=text)
    np.save(tmp_path / "x.npy", x)
    mine = oracle.kiln_call_signature(
        d, "numbers", {"x": tmp_path / "x.npy", "text": _npy(tmp_path / "t.npy", NUMBERS, "S")},
        tmp_path / "out")
    _compare(mine, theirs, "numbers")


def test_assert_fails_with_tfs_message(bundles, tmp_path):
    import tensorflow as tf
    d = bundles / "strings"
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        _tf_signature(d, "check", x=np.float32(-1.5))
    want = str(e.value).split("assertion failed: ", 1)[1].split("\n")[0]
    want = want[:want.rindex("]") + 1]
    np.save(tmp_path / "x.npy", np.float32(-1.5))
    proc = oracle.run([oracle.KILN_CALL, d, "signature", "check", tmp_path / "out",
                       f"x={tmp_path / 'x.npy'}"], check=False)
    assert proc.returncode != 0
    assert "assertion failed: " + want in proc.stderr, (want, proc.stderr)


def test_cli_run_takes_numpy_string_inputs(bundles, tmp_path):
    d = bundles / "strings"
    words = ["hello", "Stra\u00dfe", "a"]
    theirs = _tf_signature(d, "strings", s=np.array([w.encode() for w in words], dtype=object))
    np.save(tmp_path / "s.npy", np.array(words))  # numpy unicode ('<U7')
    out = tmp_path / "out"
    oracle.run([oracle.KILN_CLI, "run", "--dir", d, "--tag_set", "serve", "--signature_def",
                "strings", "--inputs", f"s={tmp_path / 's.npy'}", "--outdir", out])
    mine = {p.stem: np.load(p) for p in out.glob("*.npy")}
    _compare(mine, theirs, "savedmodel-cli run strings")
    # And a string literal list through --input_exprs.
    proc = oracle.run([oracle.KILN_CLI, "run", "--dir", d, "--tag_set", "serve",
                       "--signature_def", "strings", "--input_exprs", "s=['hello', 'a']"])
    assert "Result for output key upper:\n[b'HELLO' b'A']" in proc.stdout, proc.stdout


def test_train_step_matches_tf_and_tf_reads_our_save(bundles, tmp_path):
    import tensorflow as tf
    d = bundles / "train"
    rng = np.random.default_rng(5)
    g = rng.standard_normal((3, 4)).astype(np.float32)
    ids = np.array([4, 0, 4], np.int32)
    steps = 3
    loaded = tf.saved_model.load(str(d))
    for _ in range(steps):
        loaded.step(tf.constant(g), tf.constant(ids))
    theirs_prefix = str(tmp_path / "theirs" / "ckpt")
    tf.train.Checkpoint(loaded).write(theirs_prefix)

    np.save(tmp_path / "g.npy", g)
    np.save(tmp_path / "ids.npy", ids)
    ours = tmp_path / "ours"
    shutil.copytree(d, ours)
    shutil.rmtree(ours / "variables")
    oracle.run([oracle.KILN_CALL, d, "train", "step", steps, ours / "variables" / "variables",
                tmp_path / "g.npy", tmp_path / "ids.npy"])
    # TensorFlow's checkpoint reader reads our files: same keys, values as TF's own steps.
    mine = tf.train.load_checkpoint(str(ours / "variables" / "variables"))
    theirs = tf.train.load_checkpoint(theirs_prefix)
    keys = sorted(k for k in theirs.get_variable_to_shape_map() if "VARIABLE_VALUE" in k)
    assert keys and keys == sorted(k for k in mine.get_variable_to_shape_map()
                                   if "VARIABLE_VALUE" in k)
    for k in keys:
        np.testing.assert_allclose(mine.get_tensor(k), theirs.get_tensor(k), rtol=1e-5,
                                   atol=1e-6, err_msg=k)
    # And TensorFlow loads the bundle with our variables.
    reloaded = tf.saved_model.load(str(ours))
    np.testing.assert_allclose(reloaded.emb.numpy(), loaded.emb.numpy(), rtol=1e-6)


def test_half_plus_two_runs_from_the_cli():
    for name in ("half_plus_two_v1", "half_plus_two_v2"):
        proc = oracle.run([oracle.KILN_CLI, "run", "--dir", oracle.FIXTURES / name, "--tag_set",
                           "serve", "--signature_def", "serving_default", "--input_exprs",
                           "x=[[1],[2],[5]]"])
        assert "[[2.5]\n [3. ]\n [4.5]]" in proc.stdout, proc.stdout


def _tf1_bundle(path, vocab):
    """A TF1 graph saved with SavedModelBuilder: reference variables (one assigned after its
    initializer, so only the restore gives its value), a vocabulary table from an asset filled
    by the main op, and a signature that bumps a counter (AssignAdd)."""
    import tensorflow as tf
    tf1 = tf.compat.v1
    g = tf.Graph()
    with g.as_default():
        vocab_t = tf1.constant(str(vocab), name="vocab_path")
        tf1.add_to_collection(tf1.GraphKeys.ASSET_FILEPATHS, vocab_t)
        table = tf1.lookup.StaticHashTable(
            tf1.lookup.TextFileInitializer(vocab_t, tf.string, tf1.lookup.TextFileIndex.WHOLE_LINE,
                                           tf.int64, tf1.lookup.TextFileIndex.LINE_NUMBER), -1)
        x = tf1.placeholder(tf.string, [None], name="x")
        base = tf1.Variable(10, dtype=tf.int64, use_resource=False, name="base")
        counter = tf1.Variable(0, dtype=tf.int64, use_resource=False, name="counter")
        # A TF 1 reference table (HashTable, InitializeTable, LookupTableFind: Ref(string)).
        v1 = tf.raw_ops.HashTable(key_dtype=tf.string, value_dtype=tf.int64, shared_name="v1")
        tf1.add_to_collection(tf1.GraphKeys.TABLE_INITIALIZERS, tf.raw_ops.InitializeTable(
            table_handle=v1, keys=tf.constant(["apple", "kiwi"]),
            values=tf.constant([7, 8], tf.int64)))
        old = tf.raw_ops.LookupTableFind(table_handle=v1, keys=x,
                                         default_value=tf.constant(0, tf.int64))
        y = tf.identity(table.lookup(x) + base + old * 1000, name="y")
        bump = tf1.assign_add(counter, tf.constant(1, tf.int64))
        with tf1.Session(graph=g) as sess:
            sess.run(tf1.global_variables_initializer())
            sess.run(tf1.tables_initializer())
            sess.run(tf1.assign(base, 100))
            builder = tf1.saved_model.Builder(str(path))
            sigs = {"serving_default": tf1.saved_model.predict_signature_def({"x": x}, {"y": y}),
                    "bump": tf1.saved_model.predict_signature_def({"x": x}, {"count": bump})}
            builder.add_meta_graph_and_variables(
                sess, ["serve"], signature_def_map=sigs, main_op=tf1.tables_initializer(),
                assets_collection=tf1.get_collection(tf1.GraphKeys.ASSET_FILEPATHS))
            builder.save()


def test_tf1_bundle_with_reference_variables_and_a_vocabulary_table(tmp_path):
    import tensorflow as tf
    vocab = tmp_path / "words.txt"
    vocab.write_bytes(b"apple\nbanana\ncherry\n")
    d = tmp_path / "tf1"
    _tf1_bundle(d, vocab)
    vocab.unlink()  # the bundle's copy under assets/ must be the one read
    words = [b"cherry", b"kiwi", b"apple"]
    tf1 = tf.compat.v1
    with tf1.Session(graph=tf.Graph()) as sess:  # TF Serving's way: a Session
        tf1.saved_model.loader.load(sess, ["serve"], str(d))
        y, count = sess.run(["y:0", "AssignAdd:0"], {"x:0": words})
    theirs = {"y": y}
    np.testing.assert_array_equal(y, [102, 8099, 7100])
    mine = oracle.kiln_call_signature(d, "serving_default",
                                      {"x": _npy(tmp_path / "x.npy", words, "S")}, tmp_path / "out")
    _compare(mine, theirs, "TF1 serving_default")
    bumped = oracle.kiln_call_signature(d, "bump", {"x": tmp_path / "x.npy"}, tmp_path / "bump")
    assert bumped["count"].tolist() == count == 1, (bumped, count)
