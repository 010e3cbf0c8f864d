// Op-tester cases of the serialization ops: SerializeTensor / ParseTensor (TensorProto bytes
// TensorFlow wrote, recorded from TF 2.21's tf.io.serialize_tensor), DecodeCompressed (streams
// from Python's zlib and gzip modules), and the SequenceExample parse ops (records and outputs
// recorded from TF 2.21).
#include <string>
#include <vector>

#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

std::string Bytes(const std::vector<int>& v) {
  std::string s;
  for (int b : v) s.push_back(static_cast<char>(b));
  return s;
}

// (tensor, TF's serialize_tensor bytes of it)
struct Serialized {
  const char* name;
  Tensor tensor;
  std::string bytes;
};

std::vector<Serialized> TfSerialized() {
  return {
      {"float32 (2, 2)", Make<float>({1.5f, -2, 0.25f, 4}, Shape{2, 2}),
       Bytes({8, 1,   18, 8, 18, 2, 8,   2, 18, 2,   8,  2, 34, 16,  0,
              0, 192, 63, 0, 0,  0, 192, 0, 0,  128, 62, 0, 0,  128, 64})},
      {"int32 scalar", Tensor::Scalar<int32_t>(7), Bytes({8, 3, 18, 0, 34, 4, 7, 0, 0, 0})},
      {"string (2,)", Make<std::string>({"ab", "c"}, Shape{2}),
       Bytes({8, 7, 18, 4, 18, 2, 8, 2, 66, 2, 97, 98, 66, 1, 99})},
      {"float16 (2,)", Make<Half>({Half{0x3e00}, Half{0xc000}}, Shape{2}),
       Bytes({8, 19, 18, 4, 18, 2, 8, 2, 34, 4, 0, 62, 0, 192})},
      {"int64 (0, 3)", Tensor(DType::kInt64, Shape{0, 3}),
       Bytes({8, 9, 18, 6, 18, 0, 18, 2, 8, 3})},
  };
}

void AddTensorProtoCases(std::vector<OpCase>* c) {
  for (const Serialized& s : TfSerialized()) {
    const std::string bytes = s.bytes;
    c->push_back(OpCaseBuilder("SerializeTensor", std::string("SerializeTensor ") + s.name)
                     .T(s.tensor.dtype())
                     .Input(s.tensor)
                     .Reference1([bytes](const auto&) { return Tensor::StringScalar(bytes); })
                     .Build());
    const Tensor want = s.tensor;
    c->push_back(OpCaseBuilder("ParseTensor", std::string("ParseTensor ") + s.name)
                     .Type("out_type", s.tensor.dtype())
                     .Input(Tensor::StringScalar(bytes))
                     .Reference1([want](const auto&) { return want; })
                     .Build());
  }
  // The value-field form: a float scalar in float_val (packed), as TF writes Const values.
  c->push_back(OpCaseBuilder("ParseTensor", "ParseTensor float_val scalar")
                   .Type("out_type", DType::kFloat)
                   .Input(Tensor::StringScalar(Bytes({8, 1, 18, 0, 42, 4, 0, 0, 192, 63})))
                   .Reference1([](const auto&) { return Tensor::Scalar<float>(1.5f); })
                   .Build());
  // Strings in tensor_content: every length as a varint, then the bytes (TF's string list).
  c->push_back(
      OpCaseBuilder("ParseTensor", "ParseTensor string tensor_content")
          .Type("out_type", DType::kString)
          .Input(Tensor::StringScalar(Bytes({8, 7, 18, 4, 18, 2, 8, 2, 34, 5, 2, 1, 97, 98, 99})))
          .Reference1([](const auto&) {
            return Make<std::string>({"ab", "c"}, Shape{2});
          })
          .Build());
}

void AddDecodeCompressedCases(std::vector<OpCase>* c) {
  const std::string text = "kiln kiln kiln decodes";
  const std::string zlib = Bytes({120, 156, 203, 206, 204, 201, 83, 200, 134, 19, 41,
                                  169, 201, 249, 41,  169, 197, 0,  94,  45,  8,  66});
  const std::string gzip =
      Bytes({31, 139, 8,   0,   0,   0,  0,   0,   2, 3,   203, 206, 204, 201, 83, 200, 134,
             19, 41,  169, 201, 249, 41, 169, 197, 0, 117, 81,  251, 236, 22,  0,  0,   0});
  c->push_back(OpCaseBuilder("DecodeCompressed", "DecodeCompressed ZLIB (2,)")
                   .String("compression_type", "ZLIB")
                   .Input(Make<std::string>({zlib, ""}, Shape{2}))
                   .Reference1([text](const auto&) {
                     return Make<std::string>({text, ""}, Shape{2});
                   })
                   .Build());
  // Two gzip members read one after the other.
  c->push_back(OpCaseBuilder("DecodeCompressed", "DecodeCompressed GZIP members")
                   .String("compression_type", "GZIP")
                   .Input(Make<std::string>({gzip + gzip}, Shape{1, 1}))
                   .Reference1([text](const auto&) {
                     return Make<std::string>({text + text}, Shape{1, 1});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("DecodeCompressed", "DecodeCompressed none")
                   .Input(Tensor::StringScalar(text))
                   .Reference1([text](const auto&) { return Tensor::StringScalar(text); })
                   .Build());
}

// Three SequenceExamples written by TF's protobuf (tf.train.SequenceExample): context c_f
// float [2], c_i int64 (missing in record 1), c_s strings, c_r int64; feature lists fl_d float
// steps of 2 (missing in record 2), fl_s int64 (3 steps, one empty; missing in record 1), fl_r
// strings (no steps in record 1).
std::vector<std::string> SequenceRecords() {
  return {
      Bytes({10,  68,  10, 15,  10,  3,   99,  95, 115, 18, 8,   10,  6,  10,  1,  97, 10, 1,  98,
             10,  12,  10, 3,   99,  95,  105, 18, 5,   26, 3,   10,  1,  7,   10, 19, 10, 3,  99,
             95,  102, 18, 12,  18,  10,  10,  8,  0,   0,  192, 63,  0,  0,   0,  64, 10, 14, 10,
             3,   99,  95, 114, 18,  7,   26,  5,  10,  3,  1,   2,   3,  18,  94, 10, 27, 10, 4,
             102, 108, 95, 115, 18,  19,  10,  5,  26,  3,  10,  1,   1,  10,  6,  26, 4,  10, 2,
             2,   3,   10, 2,   26,  0,   10,  36, 10,  4,  102, 108, 95, 100, 18, 28, 10, 12, 18,
             10,  10,  8,  0,   0,   128, 63,  0,  0,   0,  64,  10,  12, 18,  10, 10, 8,  0,  0,
             64,  64,  0,  0,   128, 64,  10,  25, 10,  4,  102, 108, 95, 114, 18, 17, 10, 5,  10,
             3,   10,  1,  120, 10,  8,   10,  6,  10,  1,  121, 10,  1,  122}),
      Bytes({10,  32,  10, 9,  10,  3,   99, 95,  115, 18, 2,   10,  0,  10,  19,  10,  3,  99,
             95,  102, 18, 12, 18,  10,  10, 8,   0,   0,  0,   63,  0,  0,   128, 191, 18, 34,
             10,  22,  10, 4,  102, 108, 95, 100, 18,  14, 10,  12,  18, 10,  10,  8,   0,  0,
             160, 64,  0,  0,  192, 64,  10, 8,   10,  4,  102, 108, 95, 114, 18,  0}),
      Bytes({10, 63, 10,  12,  10,  3,   99,  95, 115, 18, 5,  10, 3,  10, 1,  99,  10,
             12, 10, 3,   99,  95,  105, 18,  5,  26,  3,  10, 1,  9,  10, 19, 10,  3,
             99, 95, 102, 18,  12,  18,  10,  10, 8,   0,  0,  64, 64, 0,  0,  128, 64,
             10, 12, 10,  3,   99,  95,  114, 18, 5,   26, 3,  10, 1,  4,  18, 34,  10,
             15, 10, 4,   102, 108, 95,  115, 18, 7,   10, 5,  26, 3,  10, 1,  4,   10,
             15, 10, 4,   102, 108, 95,  114, 18, 7,   10, 5,  10, 3,  10, 1,  119}),
  };
}

void AddSequenceExampleCases(std::vector<OpCase>* c) {
  const std::vector<std::string> recs = SequenceRecords();
  const Tensor serialized = Make<std::string>(recs, Shape{3});
  const Tensor no_names(DType::kString, Shape{0});
  auto keys = [](const std::vector<std::string>& k) {
    const int64_t n = static_cast<int64_t>(k.size());
    return Make<std::string>(k, Shape{n});
  };
  // Outputs recorded from TF 2.21 (gen_parsing_ops.parse_sequence_example_v2).
  c->push_back(
      OpCaseBuilder("ParseSequenceExampleV2", "ParseSequenceExampleV2 dense, sparse, ragged")
          .Int("Ncontext_sparse", 1)
          .TypeList("context_sparse_types", {DType::kString})
          .TypeList("Tcontext_dense", {DType::kFloat, DType::kInt64})
          .ShapeList("context_dense_shapes", {PartialShape{2}, PartialShape{1}})
          .TypeList("context_ragged_value_types", {DType::kInt64})
          .TypeList("context_ragged_split_types", {DType::kInt64})
          .Int("Nfeature_list_sparse", 1)
          .Int("Nfeature_list_dense", 1)
          .TypeList("feature_list_sparse_types", {DType::kInt64})
          .TypeList("feature_list_dense_types", {DType::kFloat})
          .ShapeList("feature_list_dense_shapes", {PartialShape{2}})
          .TypeList("feature_list_ragged_value_types", {DType::kString})
          .TypeList("feature_list_ragged_split_types", {DType::kInt32})
          .Input(serialized)
          .ConstInput(no_names)
          .ConstInput(keys({"c_s"}))
          .ConstInput(keys({"c_f", "c_i"}))
          .ConstInput(keys({"c_r"}))
          .ConstInput(keys({"fl_s"}))
          .ConstInput(keys({"fl_d"}))
          .ConstInput(keys({"fl_r"}))
          .ConstInput(Make<bool>({true}, Shape{1}))
          .ConstInput(Tensor(DType::kFloat, Shape{0}))
          .ConstInput(Make<int64_t>({0}, Shape{1}))
          .Reference([](const std::vector<Tensor>&) {
            return std::vector<Tensor>{
                Make<int64_t>({0, 0, 0, 1, 2, 0}, Shape{3, 2}),
                Make<std::string>({"a", "b", "c"}, Shape{3}),
                Make<int64_t>({3, 2}, Shape{2}),
                Make<float>({1.5f, 2.0f, 0.5f, -1.0f, 3.0f, 4.0f}, Shape{3, 2}),
                Make<int64_t>({7, 0, 9}, Shape{3, 1}),
                Make<int64_t>({1, 2, 3, 4}, Shape{4}),
                Make<int64_t>({0, 3, 3, 4}, Shape{4}),
                Make<int64_t>({0, 0, 0, 0, 1, 0, 0, 1, 1, 2, 0, 0}, Shape{4, 3}),
                Make<int64_t>({1, 2, 3, 4}, Shape{4}),
                Make<int64_t>({3, 3, 2}, Shape{3}),
                Make<float>(
                    {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f},
                    Shape{3, 2, 2}),
                Make<int64_t>({2, 1, 0}, Shape{3}),
                Make<std::string>({"x", "y", "z", "w"}, Shape{4}),
                Make<int32_t>({0, 2, 2, 3}, Shape{4}),
                Make<int32_t>({0, 1, 3, 4}, Shape{4})};
          })
          .Build());
  // TF 1's op: keys and feature_list_dense_missing_assumed_empty in attrs (TF's outputs).
  c->push_back(OpCaseBuilder("ParseSequenceExample", "ParseSequenceExample keys in attrs")
                   .Int("Ncontext_sparse", 1)
                   .Int("Ncontext_dense", 2)
                   .Int("Nfeature_list_sparse", 1)
                   .Int("Nfeature_list_dense", 1)
                   .StringList("context_sparse_keys", {"c_s"})
                   .StringList("context_dense_keys", {"c_f", "c_i"})
                   .StringList("feature_list_sparse_keys", {"fl_s"})
                   .StringList("feature_list_dense_keys", {"fl_d"})
                   .StringList("feature_list_dense_missing_assumed_empty", {"fl_d"})
                   .TypeList("context_sparse_types", {DType::kString})
                   .TypeList("Tcontext_dense", {DType::kFloat, DType::kInt64})
                   .ShapeList("context_dense_shapes", {PartialShape{2}, PartialShape{1}})
                   .TypeList("feature_list_sparse_types", {DType::kInt64})
                   .TypeList("feature_list_dense_types", {DType::kFloat})
                   .ShapeList("feature_list_dense_shapes", {PartialShape{2}})
                   .Input(serialized)
                   .ConstInput(keys({"r0", "r1", "r2"}))
                   .ConstInput(Tensor(DType::kFloat, Shape{0}))
                   .ConstInput(Make<int64_t>({0}, Shape{1}))
                   .Reference([](const std::vector<Tensor>&) {
                     return std::vector<Tensor>{
                         Make<int64_t>({0, 0, 0, 1, 2, 0}, Shape{3, 2}),
                         Make<std::string>({"a", "b", "c"}, Shape{3}),
                         Make<int64_t>({3, 2}, Shape{2}),
                         Make<float>({1.5f, 2.0f, 0.5f, -1.0f, 3.0f, 4.0f}, Shape{3, 2}),
                         Make<int64_t>({7, 0, 9}, Shape{3, 1}),
                         Make<int64_t>({0, 0, 0, 0, 1, 0, 0, 1, 1, 2, 0, 0}, Shape{4, 3}),
                         Make<int64_t>({1, 2, 3, 4}, Shape{4}),
                         Make<int64_t>({3, 3, 2}, Shape{3}),
                         Make<float>({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 0.0f, 0.0f, 0.0f, 0.0f,
                                      0.0f, 0.0f},
                                     Shape{3, 2, 2}),
                         Make<int64_t>({2, 1, 0}, Shape{3})};
                   })
                   .Build());
  // One record, keys as scalar inputs (TF's outputs).
  c->push_back(OpCaseBuilder("ParseSingleSequenceExample", "ParseSingleSequenceExample record 0")
                   .Int("Ncontext_sparse", 1)
                   .Int("Ncontext_dense", 1)
                   .Int("Nfeature_list_sparse", 1)
                   .Int("Nfeature_list_dense", 1)
                   .TypeList("context_sparse_types", {DType::kString})
                   .TypeList("Tcontext_dense", {DType::kFloat})
                   .ShapeList("context_dense_shapes", {PartialShape{2}})
                   .TypeList("feature_list_sparse_types", {DType::kInt64})
                   .TypeList("feature_list_dense_types", {DType::kFloat})
                   .ShapeList("feature_list_dense_shapes", {PartialShape{2}})
                   .Input(Tensor::StringScalar(recs[0]))
                   .ConstInput(Tensor(DType::kString, Shape{0}))
                   .ConstInput(Tensor::StringScalar("c_s"))
                   .ConstInput(Tensor::StringScalar("c_f"))
                   .ConstInput(Tensor::StringScalar("fl_s"))
                   .ConstInput(Tensor::StringScalar("fl_d"))
                   .ConstInput(Tensor(DType::kFloat, Shape{0}))
                   .ConstInput(Tensor::StringScalar("one"))
                   .Reference([](const std::vector<Tensor>&) {
                     return std::vector<Tensor>{Make<int64_t>({0, 1}, Shape{2, 1}),
                                                Make<std::string>({"a", "b"}, Shape{2}),
                                                Make<int64_t>({2}, Shape{1}),
                                                Make<float>({1.5f, 2.0f}, Shape{2}),
                                                Make<int64_t>({0, 0, 1, 0, 1, 1}, Shape{3, 2}),
                                                Make<int64_t>({1, 2, 3}, Shape{3}),
                                                Make<int64_t>({3, 2}, Shape{2}),
                                                Make<float>({1.0f, 2.0f, 3.0f, 4.0f}, Shape{2, 2})};
                   })
                   .Build());
}

// Sparse tensors as TensorProto triples; the bytes are TF 2.21's (raw_ops.SerializeSparse,
// SerializeManySparse). The sparse tensor: indices (0, 1), (2, 0), (2, 1) of shape (3, 2).
void AddSparseSerializeCases(std::vector<OpCase>* c) {
  const Tensor indices = Make<int64_t>({0, 1, 2, 0, 2, 1}, Shape{3, 2});
  const Tensor values = Make<float>({1.5f, -2, 4}, Shape{3});
  const Tensor strings = Make<std::string>({"a", "bc", ""}, Shape{3});
  const Tensor shape = Make<int64_t>({3, 2}, Shape{2});
  const std::vector<std::string> one = {
      Bytes({8, 9, 18, 8, 18, 2, 8, 3, 18, 2, 8, 2, 34, 48, 0, 0, 0, 0, 0, 0, 0,
             0, 1, 0,  0, 0,  0, 0, 0, 0,  2, 0, 0, 0,  0,  0, 0, 0, 0, 0, 0, 0,
             0, 0, 0,  0, 2,  0, 0, 0, 0,  0, 0, 0, 1,  0,  0, 0, 0, 0, 0, 0}),
      Bytes({8, 1, 18, 4, 18, 2, 8, 3, 34, 12, 0, 0, 192, 63, 0, 0, 0, 192, 0, 0, 128, 64}),
      Bytes({8, 9, 18, 4, 18, 2, 8, 2, 34, 16, 3, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0})};
  const std::vector<std::string> many = {
      Bytes({8, 9, 18, 8, 18, 2, 8, 1, 18, 2, 8, 1, 34, 8, 1, 0, 0, 0, 0, 0, 0, 0}),
      Bytes({8, 1, 18, 4, 18, 2, 8, 1, 34, 4, 0, 0, 192, 63}),
      Bytes({8, 9, 18, 4, 18, 2, 8, 1, 34, 8, 2, 0, 0, 0, 0, 0, 0, 0}),
      Bytes({8, 9, 18, 6, 18, 0, 18, 2, 8, 1}),
      Bytes({8, 1, 18, 2, 18, 0}),
      Bytes({8, 9, 18, 4, 18, 2, 8, 1, 34, 8, 2, 0, 0, 0, 0, 0, 0, 0}),
      Bytes({8, 9, 18, 8, 18, 2, 8, 2, 18, 2, 8, 1, 34, 16, 0,
             0, 0, 0,  0, 0,  0, 0, 1, 0,  0, 0, 0, 0,  0,  0}),
      Bytes({8, 1, 18, 4, 18, 2, 8, 2, 34, 8, 0, 0, 0, 192, 0, 0, 128, 64}),
      Bytes({8, 9, 18, 4, 18, 2, 8, 1, 34, 8, 2, 0, 0, 0, 0, 0, 0, 0})};
  const std::vector<std::string> many_strings = {
      Bytes({8, 9, 18, 8, 18, 2, 8, 1, 18, 2, 8, 1, 34, 8, 1, 0, 0, 0, 0, 0, 0, 0}),
      Bytes({8, 7, 18, 4, 18, 2, 8, 1, 34, 2, 1, 97}),
      Bytes({8, 9, 18, 4, 18, 2, 8, 1, 34, 8, 2, 0, 0, 0, 0, 0, 0, 0}),
      Bytes({8, 9, 18, 6, 18, 0, 18, 2, 8, 1}),
      Bytes({8, 7, 18, 2, 18, 0}),
      Bytes({8, 9, 18, 4, 18, 2, 8, 1, 34, 8, 2, 0, 0, 0, 0, 0, 0, 0}),
      Bytes({8, 9, 18, 8, 18, 2, 8, 2, 18, 2, 8, 1, 34, 16, 0,
             0, 0, 0,  0, 0,  0, 0, 1, 0,  0, 0, 0, 0,  0,  0}),
      Bytes({8, 7, 18, 4, 18, 2, 8, 2, 34, 4, 2, 0, 98, 99}),
      Bytes({8, 9, 18, 4, 18, 2, 8, 1, 34, 8, 2, 0, 0, 0, 0, 0, 0, 0})};
  c->push_back(OpCaseBuilder("SerializeSparse", "SerializeSparse float32 (3, 2)")
                   .T(DType::kFloat)
                   .Type("out_type", DType::kString)
                   .Input(indices)
                   .Input(values)
                   .ConstInput(shape)
                   .Reference1([one](const auto&) { return Make<std::string>(one, Shape{3}); })
                   .Build());
  c->push_back(OpCaseBuilder("SerializeManySparse", "SerializeManySparse float32, an empty row")
                   .T(DType::kFloat)
                   .Input(indices)
                   .Input(values)
                   .ConstInput(shape)
                   .Reference1([many](const auto&) {
                     return Make<std::string>(many, Shape{3, 3});
                   })
                   .Build());
  // Strings in tensor_content (TF's string list), as AsProtoTensorContent writes them.
  c->push_back(OpCaseBuilder("SerializeManySparse", "SerializeManySparse strings")
                   .T(DType::kString)
                   .Input(indices)
                   .Input(strings)
                   .ConstInput(shape)
                   .Reference1([many_strings](const auto&) {
                     return Make<std::string>(many_strings, Shape{3, 3});
                   })
                   .Build());
  auto sparse = [](const Tensor& i, const Tensor& v, const Tensor& s) {
    return [i, v, s](const auto&) { return std::vector<Tensor>{i, v, s}; };
  };
  c->push_back(OpCaseBuilder("DeserializeSparse", "DeserializeSparse one triple")
                   .Type("dtype", DType::kFloat)
                   .Type("Tserialized", DType::kString)
                   .Input(Make<std::string>(one, Shape{3}))
                   .Reference(sparse(indices, values, shape))
                   .Build());
  c->push_back(OpCaseBuilder("DeserializeManySparse", "DeserializeManySparse strings")
                   .Type("dtype", DType::kString)
                   .Input(Make<std::string>(many_strings, Shape{3, 3}))
                   .Reference(sparse(indices, strings, shape))
                   .Build());
  // (3, 1) triples: two leading dims (TF's outputs).
  c->push_back(OpCaseBuilder("DeserializeSparse", "DeserializeSparse (3, 1, 3)")
                   .Type("dtype", DType::kFloat)
                   .Input(Make<std::string>(many, Shape{3, 1, 3}))
                   .Reference(sparse(Make<int64_t>({0, 0, 1, 2, 0, 0, 2, 0, 1}, Shape{3, 3}),
                                     values, Make<int64_t>({3, 1, 2}, Shape{3})))
                   .Build());
  // Shapes (1, 4) and (2, 1): each dim the largest (TF's outputs).
  const std::vector<std::string> two = {
      Bytes({8, 9, 18, 8, 18, 2, 8, 1, 18, 2, 8, 2, 34, 16, 0,
             0, 0, 0,  0, 0,  0, 0, 3, 0,  0, 0, 0, 0,  0,  0}),
      Bytes({8, 1, 18, 4, 18, 2, 8, 1, 34, 4, 0, 0, 128, 63}),
      Bytes({8, 9, 18, 4, 18, 2, 8, 2, 34, 16, 1, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0}),
      Bytes({8, 9, 18, 8, 18, 2, 8, 1, 18, 2, 8, 2, 34, 16, 1,
             0, 0, 0,  0, 0,  0, 0, 0, 0,  0, 0, 0, 0,  0,  0}),
      Bytes({8, 1, 18, 4, 18, 2, 8, 1, 34, 4, 0, 0, 0, 64}),
      Bytes({8, 9, 18, 4, 18, 2, 8, 2, 34, 16, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0})};
  c->push_back(
      OpCaseBuilder("DeserializeManySparse", "DeserializeManySparse largest shape")
          .Type("dtype", DType::kFloat)
          .Input(Make<std::string>(two, Shape{2, 3}))
          .Reference(sparse(Make<int64_t>({0, 0, 3, 1, 1, 0}, Shape{2, 3}),
                            Make<float>({1, 2}, Shape{2}), Make<int64_t>({2, 2, 4}, Shape{3})))
          .Build());
}

}  // namespace

std::vector<OpCase> SerializeCases() {
  std::vector<OpCase> c;
  AddTensorProtoCases(&c);
  AddDecodeCompressedCases(&c);
  AddSequenceExampleCases(&c);
  AddSparseSerializeCases(&c);
  return c;
}

}  // namespace kiln::testing
