"""TensorFlow as the oracle for tf.train.SequenceExample parsing and tensor serialization: a
module exported by TF 2.21 at test time (tf.io.parse_sequence_example and
parse_single_sequence_example with context dense / sparse / ragged features and dense / sparse /
ragged feature lists; serialize_tensor, parse_tensor, decode_compressed, and the sparse
serialize / deserialize ops) runs on our loader
(tests/tf/kiln_call.cc) and must give TF's outputs. Records travel as web-safe base64 (decoded in
the graph), since NumPy's 'S' arrays drop trailing zero bytes."""
import base64
import gzip
import zlib

import numpy as np
import pytest

import oracle


def _feature(tf, kind, values):
    f = tf.train.Feature()
    if kind == "f":
        f.float_list.value.extend(values)
    elif kind == "i":
        f.int64_list.value.extend(values)
    elif kind == "b":
        f.bytes_list.value.extend(values)
    return f


def _record(tf, context, lists):
    se = tf.train.SequenceExample()
    for key, (kind, values) in context.items():
        se.context.feature[key].CopyFrom(_feature(tf, kind, values))
    for key, (kind, steps) in lists.items():
        fl = se.feature_lists.feature_list[key]
        fl.SetInParent()
        for values in steps:
            fl.feature.add().CopyFrom(_feature(tf, kind, values))
    return se.SerializeToString()


def _records(tf):
    return [
        _record(tf, {"c_f": ("f", [1.5, 2.0]), "c_i": ("i", [7]), "c_s": ("b", [b"a", b"b"]),
                     "c_r": ("i", [1, 2, 3])},
                {"fl_d": ("f", [[1, 2], [3, 4], [0, 0]]), "fl_s": ("i", [[1], [2, 3], []]),
                 "fl_r": ("b", [[b"x"], [b"y", b"z"]])}),
        _record(tf, {"c_f": ("f", [0.5, -1.0]), "c_s": ("b", [])},
                {"fl_d": ("f", [[5, 6]]), "fl_r": ("b", [])}),
        _record(tf, {"c_f": ("f", [3.0, 0.0]), "c_i": ("i", [-9]), "c_s": ("b", [b"c"]),
                     "c_r": ("i", [4])},
                {"fl_s": ("i", [[4], [], [5, 6, 7]]), "fl_r": ("b", [[b"w"], [], [b""]])}),
    ]


def _module():
    import tensorflow as tf

    context = {
        "c_f": tf.io.FixedLenFeature([2], tf.float32),
        "c_i": tf.io.FixedLenFeature([1], tf.int64, default_value=[0]),
        "c_s": tf.io.VarLenFeature(tf.string),
        "c_r": tf.io.RaggedFeature(tf.int64),
    }
    sequence = {
        "fl_d": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
        "fl_s": tf.io.VarLenFeature(tf.int64),
        "fl_r": tf.io.RaggedFeature(tf.string, row_splits_dtype=tf.int32),
    }

    def flat(prefix, parsed):
        out = {}
        for k, v in parsed.items():
            if isinstance(v, tf.SparseTensor):
                out.update({f"{prefix}{k}_indices": v.indices, f"{prefix}{k}_values": v.values,
                            f"{prefix}{k}_shape": v.dense_shape})
            elif isinstance(v, tf.RaggedTensor):
                out[f"{prefix}{k}_values"] = v.flat_values
                for i, s in enumerate(v.nested_row_splits):
                    out[f"{prefix}{k}_splits{i}"] = s
            else:
                out[f"{prefix}{k}"] = v
        return out

    class Sequences(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def parse(self, b64):
            ctx, seq, lengths = tf.io.parse_sequence_example(
                tf.io.decode_base64(b64), context_features=context, sequence_features=sequence)
            return {**flat("c_", ctx), **flat("s_", seq), **flat("len_", lengths)}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def strings(self, b64):
            # String feature lists padded with "", int32 splits, a default for every context
            # feature (records without any may come).
            ctx, seq, lengths = tf.io.parse_sequence_example(
                tf.io.decode_base64(b64),
                context_features={
                    "c_s": tf.io.FixedLenFeature([2], tf.string, default_value=["?", "!"]),
                    "c_r": tf.io.RaggedFeature(tf.float32, row_splits_dtype=tf.int32)},
                sequence_features={
                    "fl_b": tf.io.FixedLenSequenceFeature([1], tf.string, allow_missing=True),
                    "fl_i": tf.io.RaggedFeature(tf.int64, row_splits_dtype=tf.int64)})
            return {**flat("c_", ctx), **flat("s_", seq), **flat("len_", lengths)}

        @tf.function(input_signature=[tf.TensorSpec([], tf.string)])
        def single(self, b64):
            ctx, seq = tf.io.parse_single_sequence_example(
                tf.io.decode_base64(b64), context_features=context, sequence_features=sequence)
            return {**flat("c_", ctx), **flat("s_", seq)}

        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32),
                                      tf.TensorSpec([None], tf.string)])
        def tensors(self, x, packed):
            words = tf.strings.as_string(x)
            back = tf.io.parse_tensor(tf.io.serialize_tensor(x), tf.float32)
            return {
                "serialized": tf.io.encode_base64(tf.io.serialize_tensor(x)),
                "serialized_words": tf.io.encode_base64(tf.io.serialize_tensor(words)),
                "back": back * 2.0,
                "words_back": tf.io.parse_tensor(tf.io.serialize_tensor(words), tf.string),
                "zlib": tf.io.decode_compressed(tf.io.decode_base64(packed[:1]), "ZLIB"),
                "gzip": tf.io.decode_compressed(tf.io.decode_base64(packed[1:]), "GZIP"),
                **self._sparse(tf.sparse.from_dense(x), "f_"),
                **self._sparse(tf.sparse.from_dense(tf.where(x > 0, words, "")), "s_"),
            }

        @staticmethod
        def _sparse(sp, prefix):
            one = tf.io.serialize_sparse(sp)
            many = tf.io.serialize_many_sparse(sp)
            back = tf.io.deserialize_many_sparse(many, sp.dtype)
            single = tf.raw_ops.DeserializeSparse(serialized_sparse=one, dtype=sp.dtype)
            return {f"{prefix}one": tf.io.encode_base64(one),
                    f"{prefix}many": tf.io.encode_base64(many),
                    f"{prefix}back_indices": back.indices, f"{prefix}back_values": back.values,
                    f"{prefix}back_shape": back.dense_shape,
                    f"{prefix}single_indices": single.sparse_indices,
                    f"{prefix}single_values": single.sparse_values}

    return Sequences()


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    import tensorflow as tf
    d = tmp_path_factory.mktemp("sequence_example") / "m"
    m = _module()
    tf.saved_model.save(m, str(d), signatures={
        "parse": m.parse, "single": m.single, "strings": m.strings, "tensors": m.tensors})
    return d


def _b64(records):
    return [base64.urlsafe_b64encode(r) for r in records]


def _tf_signature(d, key, **feeds):
    import tensorflow as tf
    fn = tf.saved_model.load(str(d)).signatures[key]
    return {k: v.numpy() for k, v in fn(**{k: tf.constant(v) for k, v in feeds.items()}).items()}


def _compare(mine, theirs, what):
    assert sorted(mine) == sorted(theirs), what
    for k in theirs:
        strings = np.asarray(theirs[k]).dtype.kind in "SO"
        oracle.assert_same(np.asarray(mine[k]).tolist() if strings else mine[k],
                           np.asarray(theirs[k]).tolist() if strings else theirs[k],
                           f"{what} output {k!r}")


def _ops(d):
    from tensorflow.core.protobuf import saved_model_pb2
    sm = saved_model_pb2.SavedModel()
    sm.ParseFromString((d / "saved_model.pb").read_bytes())
    g = sm.meta_graphs[0].graph_def
    nodes = list(g.node) + [n for f in g.library.function for n in f.node_def]
    return {n.op for n in nodes}


def test_bundle_uses_the_ops(bundle):
    ops = _ops(bundle)
    for op in ("ParseSequenceExampleV2", "SerializeTensor", "ParseTensor", "DecodeCompressed",
               "SerializeSparse", "SerializeManySparse", "DeserializeManySparse",
               "DeserializeSparse"):
        assert op in ops, f"{op} not in the exported graph: {sorted(ops)}"


def test_parse_sequence_example_gives_tf_outputs(bundle, tmp_path):
    import tensorflow as tf
    b64 = _b64(_records(tf))
    theirs = _tf_signature(bundle, "parse", b64=np.array(b64, dtype=object))
    np.save(tmp_path / "b64.npy", np.array(b64, dtype="S"))
    mine = oracle.kiln_call_signature(bundle, "parse", {"b64": tmp_path / "b64.npy"},
                                      tmp_path / "out")
    _compare(mine, theirs, "parse")


def test_string_feature_lists_and_empty_records_give_tf_outputs(bundle, tmp_path):
    import tensorflow as tf
    records = [
        _record(tf, {"c_s": ("b", [b"x", b"y"]), "c_r": ("f", [0.5])},
                {"fl_b": ("b", [[b"a"], [b"bc"], [b""]]), "fl_i": ("i", [[], [1, 2]])}),
        b"",  # an empty SequenceExample: every default, no steps
        _record(tf, {}, {"fl_b": ("b", [[b"d"]]), "fl_i": ("i", [])}),
    ]
    b64 = _b64(records)
    theirs = _tf_signature(bundle, "strings", b64=np.array(b64, dtype=object))
    np.save(tmp_path / "b64.npy", np.array(b64, dtype="S"))
    mine = oracle.kiln_call_signature(bundle, "strings", {"b64": tmp_path / "b64.npy"},
                                      tmp_path / "out")
    _compare(mine, theirs, "strings")


def test_parse_single_sequence_example_gives_tf_outputs(bundle, tmp_path):
    import tensorflow as tf
    for i, rec in enumerate(_b64(_records(tf))):
        theirs = _tf_signature(bundle, "single", b64=rec)
        f = oracle.save_value(tmp_path / f"rec{i}", np.array(rec, dtype=object))
        mine = oracle.kiln_call_signature(bundle, "single", {"b64": f}, tmp_path / f"out{i}")
        _compare(mine, theirs, f"single record {i}")


def test_serialize_parse_tensor_and_decode_compressed_give_tf_outputs(bundle, tmp_path):
    text = b"kiln reads what TensorFlow writes " * 3
    packed = _b64([zlib.compress(text), gzip.compress(text) + gzip.compress(b"!")])
    x = np.array([[1.5, -2.0], [0.0, 1e-3], [3.25, 7.0]], dtype=np.float32)
    theirs = _tf_signature(bundle, "tensors", x=x, packed=np.array(packed, dtype=object))
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "packed.npy", np.array(packed, dtype="S"))
    mine = oracle.kiln_call_signature(
        bundle, "tensors", {"x": tmp_path / "x.npy", "packed": tmp_path / "packed.npy"},
        tmp_path / "out")
    _compare(mine, theirs, "tensors")


def test_missing_required_context_feature_is_an_error_as_in_tf(bundle, tmp_path):
    import tensorflow as tf
    # c_f has no default: a record without it fails in TF and here, naming the feature.
    rec = base64.urlsafe_b64encode(_record(tf, {"c_i": ("i", [1])}, {}))
    with pytest.raises(tf.errors.InvalidArgumentError, match="c_f"):
        _tf_signature(bundle, "single", b64=rec)
    f = oracle.save_value(tmp_path / "rec", np.array(rec, dtype=object))
    r = oracle.run([oracle.KILN_CALL, bundle, "signature", "single", tmp_path / "out",
                    f"b64={f}"], check=False)
    assert r.returncode != 0 and "feature c_f" in r.stderr, r.stderr
