// Op-tester cases of the TensorMap ops (tensor_map_ops.cc): EmptyTensorMap, TensorMapInsert,
// TensorMapLookup, TensorMapErase, TensorMapHasKey, TensorMapSize, TensorMapStackKeys. Maps are
// built directly as the variant values the ops exchange; references are the maps and values
// TF's semantics give (insert replaces an equal key's value, keys compare by dtype, shape and
// value).
#include <utility>

#include "kernels/tensor_map.h"
#include "ops/array_ref.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

using exec::TensorMap;
using Entries = std::vector<TensorMap::Entry>;

Tensor Map(Entries entries) {
  return TensorMap::Wrap(std::make_shared<const TensorMap>(std::move(entries)));
}
Tensor Str(const std::string& s) { return Tensor::Scalar<std::string>(s); }

// A map from three keys of `key` dtype (Distinct's 1, 2, 3 or "s1".."s3") to float values of
// shapes (2, 3), () and (0,).
struct Sample {
  Tensor k[3], v[3];
  Tensor map;
};
Sample MakeSample(DType key) {
  Sample s;
  const Shape shapes[] = {Shape{2, 3}, Shape{}, Shape{0}};
  Entries e;
  for (int i = 0; i < 3; ++i) {
    s.k[i] = Distinct(key, Shape{}, static_cast<uint32_t>(i + 1));
    s.v[i] = Distinct(DType::kFloat, shapes[i], static_cast<uint32_t>(10 * i + 1));
    e.push_back({s.k[i], s.v[i]});
  }
  s.map = Map(e);
  return s;
}

OpCaseBuilder MapOp(const std::string& op, const std::string& name, DType key) {
  return OpCaseBuilder(op, op + " " + name)
      .Type("key_dtype", key)
      .Type("value_dtype", DType::kFloat);
}

void AddKeyed(std::vector<OpCase>* c, DType key) {
  const std::string ks = DTypeShortName(key);
  const Sample s = MakeSample(key);
  const Tensor absent = Distinct(key, Shape{}, 7);
  const Tensor nv = Distinct(DType::kFloat, Shape{4}, 50);
  c->push_back(
      MapOp("TensorMapInsert", ks + " new key", key)
          .Input(s.map)
          .Input(absent)
          .Input(nv)
          .Reference1([s, absent, nv](const auto&) {
            return Map({{s.k[0], s.v[0]}, {s.k[1], s.v[1]}, {s.k[2], s.v[2]}, {absent, nv}});
          })
          .Build());
  c->push_back(MapOp("TensorMapInsert", ks + " replaces", key)
                   .Input(s.map)
                   .Input(s.k[1])
                   .Input(nv)
                   .Reference1([s, nv](const auto&) {
                     return Map({{s.k[0], s.v[0]}, {s.k[1], nv}, {s.k[2], s.v[2]}});
                   })
                   .Build());
  c->push_back(MapOp("TensorMapErase", ks, key)
                   .Input(s.map)
                   .Input(s.k[0])
                   .Reference1([s](const auto&) {
                     return Map({{s.k[1], s.v[1]}, {s.k[2], s.v[2]}});
                   })
                   .Build());
  for (int i = 0; i < 3; ++i)
    c->push_back(MapOp("TensorMapLookup", ks + " " + std::to_string(i), key)
                     .Input(s.map)
                     .Input(s.k[i])
                     .Reference1([s, i](const auto&) { return s.v[i]; })
                     .Build());
  for (const bool want : {true, false})
    c->push_back(OpCaseBuilder("TensorMapHasKey", "TensorMapHasKey " + ks + (want ? "" : " absent"))
                     .Type("key_dtype", key)
                     .Input(s.map)
                     .Input(want ? s.k[2] : absent)
                     .Reference1([want](const auto&) { return Tensor::Scalar<bool>(want); })
                     .Build());
  c->push_back(OpCaseBuilder("TensorMapStackKeys", "TensorMapStackKeys " + ks)
                   .Type("key_dtype", key)
                   .Input(s.map)
                   // 1, 2, 3 (or "s1".."s3"): the keys in insertion order.
                   .Reference1([key](const auto&) { return Distinct(key, Shape{3}); })
                   .Build());
  c->push_back(OpCaseBuilder("TensorMapSize", "TensorMapSize " + ks)
                   .Input(s.map)
                   .Reference1([](const auto&) { return Tensor::Scalar<int32_t>(3); })
                   .Build());
}

}  // namespace

std::vector<OpCase> TensorMapCases() {
  std::vector<OpCase> c;
  c.push_back(
      OpCaseBuilder("EmptyTensorMap").Reference1([](const auto&) { return Map({}); }).Build());
  c.push_back(OpCaseBuilder("TensorMapSize", "TensorMapSize empty")
                  .Input(Map({}))
                  .Reference1([](const auto&) { return Tensor::Scalar<int32_t>(0); })
                  .Build());
  for (DType key : {DType::kInt32, DType::kInt64, DType::kString, DType::kFloat}) AddKeyed(&c, key);
  // Keys compare as TF's TensorKey: dtype and shape first, then bytes, so 0.0 and -0.0 differ.
  const Tensor v = Distinct(DType::kFloat, Shape{2});
  const Tensor pos = Tensor::Scalar<float>(0.0f), neg = Tensor::Scalar<float>(-0.0f);
  c.push_back(MapOp("TensorMapInsert", "float -0 beside 0", DType::kFloat)
                  .Input(Map({{pos, v}}))
                  .Input(neg)
                  .Input(v)
                  .Reference1([pos, neg, v](const auto&) {
                    return Map({{pos, v}, {neg, v}});
                  })
                  .Build());
  const Tensor vec_key = Vec<int32_t>({1, 2});
  c.push_back(OpCaseBuilder("TensorMapHasKey", "TensorMapHasKey shape differs")
                  .Type("key_dtype", DType::kInt32)
                  .Input(Map({{vec_key, v}}))
                  .Input(Tensor::Scalar<int32_t>(1))
                  .Reference1([](const auto&) { return Tensor::Scalar<bool>(false); })
                  .Build());
  c.push_back(OpCaseBuilder("TensorMapStackKeys", "TensorMapStackKeys vector keys")
                  .Type("key_dtype", DType::kInt32)
                  .Input(Map({{vec_key, v}, {Vec<int32_t>({3, 4}), v}}))
                  .Reference1([](const auto&) {
                    return Make<int32_t>({1, 2, 3, 4}, Shape{2, 2});
                  })
                  .Build());
  c.push_back(MapOp("TensorMapLookup", "string value", DType::kString)
                  .Type("value_dtype", DType::kString)
                  .Input(Map({{Str("a"), Str("x")}, {Str("b"), Str("y")}}))
                  .Input(Str("b"))
                  .Reference1([](const auto&) { return Str("y"); })
                  .Build());
  return c;
}

}  // namespace kiln::testing
