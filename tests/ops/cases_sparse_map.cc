// Op-tester cases of the sparse tensors maps (sparse_manip_ops.cc): AddSparseToTensorsMap,
// AddManySparseToTensorsMap, TakeManySparseFromTensorsMap, in every dtype TF registers. A map
// is state: the Add cases run on a map of their own (each run counts the handles on, so only
// the first run's are compared), the TakeMany cases take tensors stored beforehand through the
// Add ops and run once, on the single-op path. References are the handles TF gives (counted
// from 0; AddMany's rows with entries first) and the stacked tensor written out by hand; the
// errors are in tests/exec/kernels_sparse_map_test.cc.
#include <atomic>

#include "kernels/tensor_list.h"
#include "kiln/exec/resources.h"
#include "ops/array_ref.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

using exec::TensorList;

ResourceManager* Manager() {
  static ResourceManager rm;
  return &rm;
}

// A shared_name no earlier build of these cases used (the case lists are built more than once).
std::string FreshName(const std::string& base) {
  static std::atomic<int> n{0};
  return base + "_" + std::to_string(n++);
}

// n values of any dtype that differ: numbers and strings as Distinct makes them, handles of
// distinct variables, tensor lists of one distinct element.
Tensor Values(DType t, int64_t n, uint32_t seed) {
  if (t == DType::kResource) {
    Tensor v(t, Shape{n});
    for (int64_t i = 0; i < n; ++i)
      v.data<std::shared_ptr<ResourceBase>>()[i] = std::make_shared<exec::VariableResource>(
          "v" + std::to_string(seed + i), DType::kFloat, PartialShape::Scalar());
    return v;
  }
  if (t == DType::kVariant) {
    Tensor v(t, Shape{n});
    for (int64_t i = 0; i < n; ++i)
      v.data<std::shared_ptr<const VariantBase>>()[i] = std::make_shared<const TensorList>(
          DType::kInt32, PartialShape::Scalar(),
          std::vector<Tensor>{Tensor::Scalar<int32_t>(static_cast<int32_t>(seed + i))});
    return v;
  }
  return Distinct(t, Shape{n}, seed);
}

// Elements i of `a` and `b` (same dtype) in the order `from` names them: (0, i) from a, (1, i)
// from b.
Tensor Pick(const Tensor& a, const Tensor& b, const std::vector<std::pair<int, int64_t>>& from) {
  Tensor out(a.dtype(), Shape{static_cast<int64_t>(from.size())});
  for (size_t k = 0; k < from.size(); ++k)
    CopyElement(from[k].first == 0 ? a : b, from[k].second, &out, static_cast<int64_t>(k));
  return out;
}

Tensor Int64s(const std::vector<int64_t>& v, const Shape& s) { return Make<int64_t>(v, s); }

int64_t AddOne(const std::string& map, const Tensor& indices, const Tensor& values,
               const Tensor& shape) {
  auto h = OpRunner("AddSparseToTensorsMap")
               .T(values.dtype())
               .String("shared_name", map)
               .Resources(Manager())
               .Input(indices)
               .Input(values)
               .Input(shape)
               .Run1();
  REQUIRE_MESSAGE(h.ok(), h.status().ToString());
  return h->scalar<int64_t>();
}

const std::vector<DType>& AllTypes() {
  static const std::vector<DType> types = {
      DType::kBFloat16, DType::kBool,     DType::kComplex128, DType::kComplex64, DType::kHalf,
      DType::kFloat,    DType::kDouble,   DType::kInt16,      DType::kInt32,     DType::kInt64,
      DType::kInt8,     DType::kResource, DType::kString,     DType::kUInt16,    DType::kUInt32,
      DType::kUInt64,   DType::kUInt8,    DType::kVariant};
  return types;
}

// AddSparseToTensorsMap: a map of the node's own (no model), so the first handle is 0; TF
// checks neither bounds nor order here.
void AddSingle(std::vector<OpCase>* c) {
  for (DType t : {DType::kFloat, DType::kInt64, DType::kString, DType::kBool, DType::kComplex64,
                  DType::kHalf, DType::kVariant}) {
    c->push_back(OpCaseBuilder("AddSparseToTensorsMap",
                               "AddSparseToTensorsMap " + DTypeShortName(t) + " unsorted")
                     .T(t)
                     .Input(Int64s({1, 0, 0, 2, 5, 7}, Shape{3, 2}))
                     .Input(Values(t, 3, 1))
                     .Input(Vec<int64_t>({3, 4}))
                     .Reference1([](const auto&) { return Tensor::Scalar<int64_t>(0); })
                     .NonDeterministic()
                     .Build());
  }
  c->push_back(OpCaseBuilder("AddSparseToTensorsMap", "AddSparseToTensorsMap rank 0")
                   .T(DType::kInt32)
                   .String("shared_name", "unused_by_the_others")
                   .Input(Tensor(DType::kInt64, Shape{0, 0}))
                   .Input(Tensor(DType::kInt32, Shape{0}))
                   .Input(Tensor(DType::kInt64, Shape{0}))
                   .Reference1([](const auto&) { return Tensor::Scalar<int64_t>(0); })
                   .NonDeterministic()
                   .Build());
}

// AddManySparseToTensorsMap: rows 0 and 2 of four hold entries and get handles 0 and 1, the
// empty rows 1 and 3 then 2 and 3.
void AddMany(std::vector<OpCase>* c) {
  for (DType t : AllTypes()) {
    c->push_back(
        OpCaseBuilder("AddManySparseToTensorsMap", "AddManySparseToTensorsMap " + DTypeShortName(t))
            .T(t)
            .Input(Int64s({0, 0, 1, 0, 1, 1, 2, 0, 3, 2, 1, 0}, Shape{4, 3}))
            .Input(Values(t, 4, 3))
            .Input(Vec<int64_t>({4, 2, 5}))
            .Reference1([](const auto&) {
              return Vec<int64_t>({0, 2, 1, 3});
            })
            .NonDeterministic()
            .Build());
  }
  c->push_back(OpCaseBuilder("AddManySparseToTensorsMap", "AddManySparseToTensorsMap no entries")
                   .T(DType::kFloat)
                   .Input(Tensor(DType::kInt64, Shape{0, 2}))
                   .Input(Tensor(DType::kFloat, Shape{0}))
                   .Input(Vec<int64_t>({3, 7}))
                   .Reference1([](const auto&) {
                     return Vec<int64_t>({0, 1, 2});
                   })
                   .NonDeterministic()
                   .Build());
}

// TakeManySparseFromTensorsMap: a (3, 4) tensor with unsorted indices and a (2, 6) one, taken
// in the other order: the handle's position leads each index, the stored order is kept and the
// dense shape is the largest of each dim.
void AddTakeMany(std::vector<OpCase>* c) {
  for (DType t : AllTypes()) {
    const std::string map = FreshName("take_" + DTypeShortName(t));
    const Tensor a = Values(t, 2, 1), b = Values(t, 1, 7);
    const int64_t ha = AddOne(map, Int64s({1, 0, 0, 2}, Shape{2, 2}), a, Vec<int64_t>({3, 4}));
    const int64_t hb = AddOne(map, Int64s({0, 1}, Shape{1, 2}), b, Vec<int64_t>({2, 6}));
    c->push_back(OpCaseBuilder("TakeManySparseFromTensorsMap",
                               "TakeManySparseFromTensorsMap " + DTypeShortName(t))
                     .Type("dtype", t)
                     .String("shared_name", map)
                     .Resources(Manager())
                     .Input(Vec<int64_t>({hb, ha}))
                     .Reference([a, b](const auto&) {
                       return std::vector<Tensor>{Int64s({0, 0, 1, 1, 1, 0, 1, 0, 2}, Shape{3, 3}),
                                                  Pick(a, b, {{1, 0}, {0, 0}, {0, 1}}),
                                                  Vec<int64_t>({2, 3, 6})};
                     })
                     .NonDeterministic()
                     .SingleOpOnly()
                     .Build());
  }
  // A round trip: AddMany's rows (one empty) taken back give the tensor it was given.
  const std::string map = FreshName("round_trip");
  const Tensor indices = Int64s({0, 0, 1, 0, 1, 1, 2, 0, 3, 2, 1, 0}, Shape{4, 3});
  const Tensor values = Values(DType::kFloat, 4, 11);
  auto handles = OpRunner("AddManySparseToTensorsMap")
                     .T(DType::kFloat)
                     .String("shared_name", map)
                     .Resources(Manager())
                     .Input(indices)
                     .Input(values)
                     .Input(Vec<int64_t>({3, 2, 5}))
                     .Run1();
  REQUIRE_MESSAGE(handles.ok(), handles.status().ToString());
  c->push_back(
      OpCaseBuilder("TakeManySparseFromTensorsMap", "TakeManySparseFromTensorsMap round trip")
          .Type("dtype", DType::kFloat)
          .String("shared_name", map)
          .Resources(Manager())
          .Input(*handles)
          .Reference([indices, values](const auto&) {
            return std::vector<Tensor>{indices, values, Vec<int64_t>({3, 2, 5})};
          })
          .NonDeterministic()
          .SingleOpOnly()
          .Build());
}

}  // namespace

std::vector<OpCase> SparseMapCases() {
  std::vector<OpCase> c;
  AddSingle(&c);
  AddMany(&c);
  AddTakeMany(&c);
  return c;
}

}  // namespace kiln::testing
