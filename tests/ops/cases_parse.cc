// Op-tester cases of the tf.Example parse ops, DecodeRaw / DecodePaddedRaw, and the string
// joins across a tensor (ReduceJoin, UnsortedSegmentJoin). The records are
// written here in protobuf wire format (packed and unpacked lists, a repeated key where the last
// one wins, a Feature with no list); the references lay the values out as the ops document: dense
// [batch] + shape with defaults, sparse indices (record, position), ragged row splits. TF's own
// outputs for Keras/tf.io-written records are compared in tests/tf (test_long_tail_models.py).
#include <complex>
#include <cstring>
#include <string>

#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

std::string Varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
  return s;
}
std::string Field(int field, const std::string& bytes) {
  return Varint(static_cast<uint64_t>(field) << 3 | 2) + Varint(bytes.size()) + bytes;
}
std::string Floats(const std::vector<float>& v, bool packed) {
  std::string list;
  if (packed) {
    std::string raw(reinterpret_cast<const char*>(v.data()), v.size() * 4);
    list = Field(1, raw);
  } else {
    for (float f : v)
      list += Varint(1 << 3 | 5) + std::string(reinterpret_cast<const char*>(&f), 4);
  }
  return Field(2, list);  // Feature.float_list
}
std::string Ints(const std::vector<int64_t>& v, bool packed) {
  std::string list, raw;
  for (int64_t i : v) raw += Varint(static_cast<uint64_t>(i));
  if (packed) {
    list = Field(1, raw);
  } else {
    for (int64_t i : v) list += Varint(1 << 3 | 0) + Varint(static_cast<uint64_t>(i));
  }
  return Field(3, list);  // Feature.int64_list
}
std::string Bytes(const std::vector<std::string>& v) {
  std::string list;
  for (const std::string& b : v) list += Field(1, b);
  return Field(1, list);  // Feature.bytes_list
}
// An Example from (key, Feature bytes) entries, in order (a repeated key: the last wins).
std::string Example(const std::vector<std::pair<std::string, std::string>>& features) {
  std::string map;
  for (const auto& [k, f] : features) map += Field(1, Field(1, k) + Field(2, f));
  return Field(1, map);
}

Tensor Strings(const std::vector<std::string>& v, const Shape& s) {
  Tensor t(DType::kString, s);
  for (size_t i = 0; i < v.size(); ++i) t.data<std::string>()[i] = v[i];
  return t;
}

}  // namespace

namespace {

// EncodeWav's bytes and DecodeWav's samples (cut, padded, last channel repeated), TF's values.
void AddWav(std::vector<OpCase>* c) {
  const std::vector<int> bytes = {82,  73,  70, 70, 48, 0,   0,   0,   87,  65,  86,  69, 102, 109,
                                  116, 32,  16, 0,  0,  0,   1,   0,   2,   0,   128, 62, 0,   0,
                                  0,   250, 0,  0,  4,  0,   16,  0,   100, 97,  116, 97, 12,  0,
                                  0,   0,   0,  64, 0,  224, 255, 127, 0,   128, 3,   0,  102, 38};
  std::string wav;
  for (int b : bytes) wav.push_back(static_cast<char>(b));
  c->push_back(OpCaseBuilder("EncodeWav", "EncodeWav stereo, clamped, TF bytes")
                   .Input(Make<float>({0.5f, -0.25f, 1.5f, -1.0f, 0.0001f, 0.3f}, {3, 2}))
                   .Input(Tensor::Scalar<int32_t>(16000))
                   .Reference1([wav](const auto&) { return Tensor::StringScalar(wav); })
                   .Build());
  c->push_back(
      OpCaseBuilder("DecodeWav", "DecodeWav 3 channels, 4 samples, TF values")
          .Int("desired_channels", 3)
          .Int("desired_samples", 4)
          .Input(Tensor::StringScalar(wav))
          .Reference([](const auto&) {
            return std::vector<Tensor>{
                Make<float>({0.5f, -0.25f, -0.25f, 0.999969482f, -1.0f, -1.0f, 9.1552734375e-05f,
                             0.29998779296875f, 0.29998779296875f, 0, 0, 0},
                            {4, 3}),
                Tensor::Scalar<int32_t>(16000)};
          })
          .Build());
}

}  // namespace

std::vector<OpCase> ParseCases() {
  std::vector<OpCase> c;
  const std::vector<std::string> records = {
      Example({{"x", Floats({1.5f, -2}, true)},
               {"id", Ints({7}, false)},
               {"tags", Bytes({"a", "b"})},
               {"seq", Floats({1, 2, 3, 4}, false)}}),
      Example({{"x", Floats({9, 9}, true)},
               {"x", Floats({0.25f, 4}, false)},  // repeated key: this one
               {"tags", Bytes({})},
               {"empty", ""},
               {"seq", Floats({5, 6}, true)}}),
      Example({{"id", Ints({-3}, true)}, {"tags", Bytes({"c"})}})};
  const Tensor serialized = Strings(records, Shape{3});
  // ParseExampleV2: dense x [2] (default), id [] (default), seq [-1, 2] (padded with 0.5);
  // sparse tags; ragged id (int64 splits).
  c.push_back(
      OpCaseBuilder("ParseExampleV2")
          .Int("num_sparse", 1)
          .TypeList("sparse_types", {DType::kString})
          .TypeList("Tdense", {DType::kFloat, DType::kInt64, DType::kFloat})
          .ShapeList("dense_shapes", {PartialShape{2}, PartialShape::Scalar(), PartialShape{-1, 2}})
          .TypeList("ragged_value_types", {DType::kInt64})
          .TypeList("ragged_split_types", {DType::kInt64})
          .Input(serialized)
          .ConstInput(Strings({}, Shape{0}))
          .ConstInput(Strings({"tags"}, Shape{1}))
          .ConstInput(Strings({"x", "id", "seq"}, Shape{3}))
          .ConstInput(Strings({"id"}, Shape{1}))
          .ConstInput(Make<float>({-1, -1}, Shape{2}))
          .ConstInput(Tensor::Scalar<int64_t>(0))
          .ConstInput(Tensor::Scalar<float>(0.5f))
          .Reference([](const std::vector<Tensor>&) {
            return std::vector<Tensor>{
                Make<int64_t>({0, 0, 0, 1, 2, 0}, Shape{3, 2}),
                Strings({"a", "b", "c"}, Shape{3}),
                Make<int64_t>({3, 2}, Shape{2}),
                Make<float>({1.5f, -2, 0.25f, 4, -1, -1}, Shape{3, 2}),
                Make<int64_t>({7, 0, -3}, Shape{3}),
                Make<float>({1, 2, 3, 4, 5, 6, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f}, Shape{3, 2, 2}),
                Make<int64_t>({7, -3}, Shape{2}),
                Make<int64_t>({0, 1, 1, 2}, Shape{4})};
          })
          .Build());
  // ParseExample (TF 1): one input per key.
  c.push_back(OpCaseBuilder("ParseExample")
                  .Int("Nsparse", 1)
                  .Int("Ndense", 1)
                  .TypeList("sparse_types", {DType::kString})
                  .TypeList("Tdense", {DType::kFloat})
                  .ShapeList("dense_shapes", {PartialShape{2}})
                  .Input(serialized)
                  .ConstInput(Strings({}, Shape{0}))
                  .ConstInput(Tensor::StringScalar("tags"))
                  .ConstInput(Tensor::StringScalar("x"))
                  .ConstInput(Make<float>({-1, -1}, Shape{2}))
                  .Reference([](const std::vector<Tensor>&) {
                    return std::vector<Tensor>{
                        Make<int64_t>({0, 0, 0, 1, 2, 0}, Shape{3, 2}),
                        Strings({"a", "b", "c"}, Shape{3}), Make<int64_t>({3, 2}, Shape{2}),
                        Make<float>({1.5f, -2, 0.25f, 4, -1, -1}, Shape{3, 2})};
                  })
                  .Build());
  // ParseSingleExample: keys in attrs, no batch dim (sparse indices [n, 1]).
  c.push_back(OpCaseBuilder("ParseSingleExample")
                  .Int("num_sparse", 1)
                  .StringList("sparse_keys", {"tags"})
                  .StringList("dense_keys", {"id"})
                  .TypeList("sparse_types", {DType::kString})
                  .TypeList("Tdense", {DType::kInt64})
                  .ShapeList("dense_shapes", {PartialShape{1}})
                  .Input(Tensor::StringScalar(records[0]))
                  .ConstInput(Make<int64_t>({}, Shape{0}))
                  .Reference([](const std::vector<Tensor>&) {
                    return std::vector<Tensor>{
                        Make<int64_t>({0, 1}, Shape{2, 1}), Strings({"a", "b"}, Shape{2}),
                        Make<int64_t>({2}, Shape{1}), Make<int64_t>({7}, Shape{1})};
                  })
                  .Build());
  // DecodeRaw: little- and big-endian; DecodePaddedRaw: short strings zero-padded (a partial
  // last element keeps its bytes), long ones cut.
  const Tensor raw = Strings({std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8),
                              std::string("\xff\xfe\x00\x00\x00\x80\x3f\x40", 8)},
                             Shape{2});
  c.push_back(OpCaseBuilder("DecodeRaw", "DecodeRaw int16 big-endian")
                  .Type("out_type", DType::kInt16)
                  .Bool("little_endian", false)
                  .Input(raw)
                  .Reference1([](const std::vector<Tensor>&) {
                    return Make<int16_t>({258, 772, 1286, 1800, -2, 0, 128, 16192}, Shape{2, 4});
                  })
                  .Build());
  c.push_back(OpCaseBuilder("DecodeRaw", "DecodeRaw float32")
                  .Type("out_type", DType::kFloat)
                  .Input(raw)
                  .Reference1([](const std::vector<Tensor>& in) {
                    Tensor out(DType::kFloat, Shape{2, 2});
                    for (int i = 0; i < 2; ++i)
                      std::memcpy(out.data<float>() + 2 * i, in[0].data<std::string>()[i].data(),
                                  8);
                    return out;
                  })
                  .Build());
  c.push_back(OpCaseBuilder("DecodePaddedRaw")
                  .Type("out_type", DType::kUInt16)
                  .Input(Strings({std::string("\x01\x02\x03", 3), "\x04", "abcdefgh"}, Shape{3}))
                  .ConstInput(Tensor::Scalar<int32_t>(4))
                  .Reference1([](const std::vector<Tensor>&) {
                    return Make<uint16_t>({513, 3, 4, 0, 0x6261, 0x6463}, Shape{3, 2});
                  })
                  .Build());
  // Eight- and sixteen-byte elements: a complex128 from one 16-byte record; float64 and int64
  // from records padded to 16 bytes (a short record zero-filled, a long one cut).
  c.push_back(OpCaseBuilder("DecodeRaw", "DecodeRaw complex128")
                  .Type("out_type", DType::kComplex128)
                  .Input(Strings({std::string("\x00\x00\x00\x00\x00\x00\xf0\x3f"
                                              "\x00\x00\x00\x00\x00\x00\x00\xc0",
                                              16)},
                                 Shape{1}))
                  .Reference1([](const std::vector<Tensor>&) {
                    return Make<std::complex<double>>({{1.0, -2.0}}, Shape{1, 1});
                  })
                  .Build());
  const Tensor eight = Strings({std::string("\x00\x00\x00\x00\x00\x00\xf0\x3f", 8),
                                std::string("\x00\x00\x00\x00\x00\x00\x00\x40"
                                            "\x00\x00\x00\x00\x00\x00\x08\x40"
                                            "\xff\xff",
                                            18)},
                               Shape{2});
  c.push_back(OpCaseBuilder("DecodePaddedRaw", "DecodePaddedRaw float64")
                  .Type("out_type", DType::kDouble)
                  .Input(eight)
                  .ConstInput(Tensor::Scalar<int32_t>(16))
                  .Reference1([](const std::vector<Tensor>&) {
                    return Make<double>({1.0, 0.0, 2.0, 3.0}, Shape{2, 2});
                  })
                  .Build());
  c.push_back(OpCaseBuilder("DecodePaddedRaw", "DecodePaddedRaw int64")
                  .Type("out_type", DType::kInt64)
                  .Input(eight)
                  .ConstInput(Tensor::Scalar<int32_t>(16))
                  .Reference1([](const std::vector<Tensor>&) {
                    return Make<int64_t>(
                        {0x3ff0000000000000, 0, 0x4000000000000000, 0x4008000000000000},
                        Shape{2, 2});
                  })
                  .Build());
  // ReduceJoin over one axis, over both (row-major order whatever the axes' order), keep_dims;
  // UnsortedSegmentJoin with a trailing dim and an empty segment (TF's values).
  const Tensor grid = Strings({"a", "b", "c", "d", "e", "f"}, Shape{2, 3});
  c.push_back(OpCaseBuilder("ReduceJoin", "ReduceJoin axis 0")
                  .String("separator", "-")
                  .Input(grid)
                  .ConstInput(Make<int32_t>({0}, Shape{1}))
                  .Reference1([](const std::vector<Tensor>&) {
                    return Strings({"a-d", "b-e", "c-f"}, Shape{3});
                  })
                  .Build());
  c.push_back(
      OpCaseBuilder("ReduceJoin", "ReduceJoin axes (1, 0)")
          .Input(grid)
          .ConstInput(Make<int32_t>({1, 0}, Shape{2}))
          .Reference1([](const std::vector<Tensor>&) { return Strings({"abcdef"}, Shape{}); })
          .Build());
  c.push_back(OpCaseBuilder("ReduceJoin", "ReduceJoin axis -1 keep_dims")
                  .Bool("keep_dims", true)
                  .Input(grid)
                  .ConstInput(Make<int32_t>({-1}, Shape{1}))
                  .Reference1([](const std::vector<Tensor>&) {
                    return Strings({"abc", "def"}, Shape{2, 1});
                  })
                  .Build());
  c.push_back(OpCaseBuilder("UnsortedSegmentJoin")
                  .Type("Tindices", DType::kInt32)
                  .Type("Tnumsegments", DType::kInt32)
                  .String("separator", ":")
                  .Input(Strings({"Y", "q", "c", "Y", "6", "6", "p", "G", "a"}, Shape{3, 3}))
                  .Input(Make<int32_t>({1, 0, 1}, Shape{3}))
                  .ConstInput(Tensor::Scalar<int32_t>(3))
                  .Reference1([](const std::vector<Tensor>&) {
                    return Strings({"Y", "6", "6", "Y:p", "q:G", "c:a", "", "", ""}, Shape{3, 3});
                  })
                  .Build());
  // TF puts the separator only after a non-empty join so far (a ragged reduce_join of
  // ["", "def"] is "def"); TF's values.
  c.push_back(OpCaseBuilder("UnsortedSegmentJoin", "UnsortedSegmentJoin empty strings")
                  .Type("Tindices", DType::kInt32)
                  .Type("Tnumsegments", DType::kInt32)
                  .String("separator", " ")
                  .Input(Strings({"", "def", "a", "", "b", "", ""}, Shape{7}))
                  .Input(Make<int32_t>({0, 0, 1, 1, 1, 2, 2}, Shape{7}))
                  .ConstInput(Tensor::Scalar<int32_t>(3))
                  .Reference1([](const std::vector<Tensor>&) {
                    return Strings({"def", "a  b", ""}, Shape{3});
                  })
                  .Build());
  AddWav(&c);
  return c;
}

}  // namespace kiln::testing
