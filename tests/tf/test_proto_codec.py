"""TensorFlow as the oracle for tf.io.decode_proto and tf.io.encode_proto (DecodeProtoV2 and
EncodeProto, libexec/kernels/full/proto_codec_ops.cc): a message type of our own, given to both as a
FileDescriptorSet in the graph ("bytes://"), with every field kind (scalars of each wire type,
packed and unpacked repeated fields, proto2 defaults, an enum, a nested message, repeated
messages), and TensorFlow's own tensorflow.Example from "local://". Records travel as web-safe
base64, since NumPy's 'S' arrays drop trailing zero bytes."""
import base64

import numpy as np
import pytest

import oracle

FIELDS = ["a", "b", "s", "c", "e", "flag", "d", "u", "inner", "many", "z", "f64", "dflt"]
TYPES = ["int64", "float32", "string", "int64", "int32", "bool", "float64", "uint32", "string",
         "string", "int32", "uint64", "int32"]


def _descriptor_set():
    from google.protobuf import descriptor_pb2
    fds = descriptor_pb2.FileDescriptorSet()
    f = fds.file.add()
    f.name = "kiln_test/rec.proto"
    f.package = "kiln_test"
    f.syntax = "proto2"
    inner = f.message_type.add()
    inner.name = "Inner"
    inner.field.add(name="x", number=1, type=fld_type("TYPE_INT32"), label=lab("OPTIONAL"))
    en = f.enum_type.add(name="Color")
    en.value.add(name="RED", number=0)
    en.value.add(name="BLUE", number=7)
    rec = f.message_type.add()
    rec.name = "Rec"

    def add(name, number, t, label="OPTIONAL", type_name=None, default=None, packed=None):
        fld = rec.field.add(name=name, number=number, type=fld_type(t), label=lab(label))
        if type_name:
            fld.type_name = type_name
        if default is not None:
            fld.default_value = default
        if packed is not None:
            fld.options.packed = packed
        return fld

    add("a", 1, "TYPE_INT32")
    add("b", 2, "TYPE_FLOAT", "REPEATED", packed=True)
    add("s", 3, "TYPE_STRING", default="none")
    add("c", 4, "TYPE_INT64", "REPEATED", packed=False)
    add("e", 5, "TYPE_ENUM", type_name=".kiln_test.Color", default="BLUE")
    add("flag", 6, "TYPE_BOOL")
    add("d", 7, "TYPE_DOUBLE", default="2.5")
    add("u", 8, "TYPE_UINT32", "REPEATED")
    add("inner", 9, "TYPE_MESSAGE", type_name=".kiln_test.Inner")
    add("many", 10, "TYPE_MESSAGE", "REPEATED", type_name=".kiln_test.Inner")
    add("z", 11, "TYPE_SINT32", "REPEATED", packed=True)
    add("f64", 12, "TYPE_FIXED64")
    add("dflt", 13, "TYPE_INT32", default="-4")
    return fds


def fld_type(name):
    from google.protobuf import descriptor_pb2
    return getattr(descriptor_pb2.FieldDescriptorProto, name)


def lab(name):
    from google.protobuf import descriptor_pb2
    return getattr(descriptor_pb2.FieldDescriptorProto, "LABEL_" + name)


def _records(fds):
    from google.protobuf import descriptor_pool, message_factory
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    Rec = message_factory.GetMessageClass(pool.FindMessageTypeByName("kiln_test.Rec"))
    out = []
    r = Rec(a=-3, s="hello\x00world", e=7, flag=True, d=-1e300, f64=2**63 + 5)
    r.b.extend([1.5, -0.25, 3e38])
    r.c.extend([1, -(2**62)])
    r.u.extend([0, 4294967295])
    r.inner.x = 12
    r.many.add(x=1)
    r.many.add(x=-2)
    r.z.extend([-1, 2, -300])
    out.append(r.SerializeToString())
    out.append(Rec().SerializeToString())  # every field absent: defaults, sizes 0
    r2 = Rec(a=5, dflt=9)
    r2.b.append(7.0)
    r2.many.add()
    out.append(r2.SerializeToString())
    return out


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    import tensorflow as tf
    fds = _descriptor_set()
    source = b"bytes://" + fds.SerializeToString()
    d = tmp_path_factory.mktemp("proto_codec") / "m"

    class Codec(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def f(self, b64):
            raw = tf.io.decode_base64(b64)
            sizes, values = tf.io.decode_proto(raw, "kiln_test.Rec", FIELDS, TYPES,
                                               descriptor_source=source)
            out = {"sizes": sizes}
            for name, t, v in zip(FIELDS, TYPES, values):
                out[name] = tf.io.encode_base64(v) if t == "string" else v
            # And back: the same fields encoded again, decoded once more.
            again = tf.io.encode_proto(sizes, values, FIELDS, "kiln_test.Rec",
                                       descriptor_source=source)
            s2, v2 = tf.io.decode_proto(again, "kiln_test.Rec", ["a", "b", "many"],
                                        ["int32", "float32", "string"], descriptor_source=source)
            out["round_sizes"] = s2
            out["round_a"] = v2[0]
            out["round_b"] = v2[1]
            out["round_many"] = tf.io.encode_base64(v2[2])
            # TensorFlow's own message type, from the program's protos.
            ex = tf.train.Example()
            ex.features.feature["k"].int64_list.value.append(3)
            exs = tf.fill(tf.shape(b64), ex.SerializeToString())
            es, ev = tf.io.decode_proto(exs, "tensorflow.Example", ["features"], ["string"])
            out["example_sizes"] = es
            out["example_features"] = tf.io.encode_base64(ev[0])
            return out

    m = Codec()
    tf.saved_model.save(m, str(d), signatures={"serving_default": m.f})
    recs = np.array([base64.urlsafe_b64encode(r) for r in _records(fds)], dtype=object)
    expected = {k: v.numpy() for k, v in m.f(tf.constant(recs)).items()}
    return d, recs, expected


def test_decode_and_encode_proto_give_tf_outputs(bundle, tmp_path):
    d, recs, expected = bundle
    feed = tmp_path / "b64.npy"
    np.save(feed, recs.astype("S"))
    ours = oracle.kiln_run(d, "serving_default", {"b64": feed}, tmp_path / "out")
    assert sorted(ours) == sorted(expected)
    for k, theirs in expected.items():
        mine = ours[k]
        if theirs.dtype == object:
            theirs = theirs.astype("S")
        assert mine.shape == theirs.shape, (k, mine.shape, theirs.shape)
        assert np.array_equal(mine, theirs), (k, mine, theirs)
