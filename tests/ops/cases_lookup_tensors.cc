// Op-tester cases of the tables of tensors: MutableHashTableOfTensorsV2 (a vector per key) and
// MutableDenseHashTableV2 (open addressing: with int64 keys TF's hash is the key itself, so the
// exported bucket layout below is worked out by hand: bucket = key & (buckets - 1), then
// quadratic probing +1, +2, ...).
#include "kernels/lookup_table.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

ResourceManager* Manager() {
  static ResourceManager rm;
  return &rm;
}

Tensor HandleOf(std::shared_ptr<exec::LookupTable> table) {
  Tensor h(DType::kResource, Shape());
  h.scalar<std::shared_ptr<ResourceBase>>() = std::move(table);
  return h;
}

// string -> float32 [2]: "a" -> (1, 2), "b" -> (3, 4).
Tensor PairTable(const std::string& name) {
  auto made = exec::MakeTensorLookupTable(name, DType::kString, DType::kFloat, Shape{2});
  REQUIRE(made.ok());
  REQUIRE(
      (*made)->Insert(Make<std::string>({"b", "a"}, {2}), Make<float>({3, 4, 1, 2}, {2, 2})).ok());
  return HandleOf(*made);
}

// int64 -> float32 [2] over 8 buckets, empty key -1, deleted key -2, holding 3, 5 and 11.
Tensor DenseTable(const std::string& name) {
  exec::DenseTableOptions o;
  o.empty_key = Tensor::Scalar<int64_t>(-1);
  o.deleted_key = Tensor::Scalar<int64_t>(-2);
  o.value_shape = Shape{2};
  o.initial_num_buckets = 8;
  auto made = exec::MakeDenseLookupTable(name, DType::kInt64, DType::kFloat, o);
  REQUIRE(made.ok());
  REQUIRE(
      (*made)
          ->Insert(Make<int64_t>({3, 5, 11}, {3}), Make<float>({30, 31, 50, 51, 110, 111}, {3, 2}))
          .ok());
  return HandleOf(*made);
}

void AddMaking(std::vector<OpCase>* c) {
  for (const char* op : {"MutableHashTableOfTensorsV2", "MutableHashTableOfTensors"}) {
    c->push_back(OpCaseBuilder(op)
                     .Type("key_dtype", DType::kString)
                     .Type("value_dtype", DType::kFloat)
                     .ShapeAttr("value_shape", PartialShape{2})
                     .String("shared_name", std::string("cases_tensors_") + op)
                     .Resources(Manager())
                     .Build());
    c->push_back(OpCaseBuilder(op, std::string(op) + " int64 keys")
                     .Type("key_dtype", DType::kInt64)
                     .Type("value_dtype", DType::kFloat)
                     .ShapeAttr("value_shape", PartialShape{2})
                     .Resources(Manager())
                     .NonDeterministic()  // unshared: a new table, a new handle, each run
                     .Build());
  }
  c->push_back(OpCaseBuilder("AnonymousMutableHashTableOfTensors")
                   .Type("key_dtype", DType::kInt64)
                   .Type("value_dtype", DType::kDouble)
                   .ShapeAttr("value_shape", PartialShape{3})
                   .NonDeterministic()
                   .Build());
  // MutableDenseHashTable is TF 1's reference form of the same table.
  for (const char* op : {"MutableDenseHashTableV2", "MutableDenseHashTable"}) {
    c->push_back(OpCaseBuilder(op)
                     .Type("key_dtype", DType::kInt64)
                     .Type("value_dtype", DType::kFloat)
                     .ShapeAttr("value_shape", PartialShape{2})
                     .Int("initial_num_buckets", 16)
                     .Float("max_load_factor", 0.5f)
                     .String("shared_name", std::string("cases_dense_") + op)
                     .Resources(Manager())
                     .ConstInput(Tensor::Scalar<int64_t>(-1))
                     .ConstInput(Tensor::Scalar<int64_t>(-2))
                     .Build());
  }
  // String keys: the empty and deleted keys are strings too.
  for (const char* op : {"MutableDenseHashTableV2", "MutableDenseHashTable"}) {
    c->push_back(OpCaseBuilder(op, std::string(op) + " string keys")
                     .Type("key_dtype", DType::kString)
                     .Type("value_dtype", DType::kInt64)
                     .Resources(Manager())
                     .NonDeterministic()  // unshared: a new table, a new handle, each run
                     .ConstInput(Tensor::StringScalar(""))
                     .ConstInput(Tensor::StringScalar("<deleted>"))
                     .Build());
  }
  c->push_back(OpCaseBuilder("AnonymousMutableDenseHashTable")
                   .Type("key_dtype", DType::kString)
                   .Type("value_dtype", DType::kInt64)
                   .ConstInput(Tensor::StringScalar(""))
                   .ConstInput(Tensor::StringScalar("<deleted>"))
                   .NonDeterministic()
                   .Build());
}

void AddTensorTable(std::vector<OpCase>* c) {
  const Tensor table = PairTable("pairs");
  const Tensor keys = Make<std::string>({"a", "z", "b"}, {3});
  c->push_back(OpCaseBuilder("LookupTableFindV2", "LookupTableFindV2 of vectors")
                   .Type("Tin", DType::kString)
                   .Type("Tout", DType::kFloat)
                   .Input(table)
                   .Input(keys)
                   .Input(Make<float>({-1, -2}, {2}))
                   .Reference1([](const auto&) {
                     return Make<float>({1, 2, -1, -2, 3, 4}, {3, 2});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("LookupTableFindV2", "LookupTableFindV2 of vectors, default per key")
                   .Type("Tin", DType::kString)
                   .Type("Tout", DType::kFloat)
                   .Input(table)
                   .Input(keys)
                   .Input(Make<float>({-1, -2, -3, -4, -5, -6}, {3, 2}))
                   .Reference1([](const auto&) {
                     return Make<float>({1, 2, -3, -4, 3, 4}, {3, 2});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("LookupTableExportV2", "LookupTableExportV2 of vectors")
                   .Type("Tkeys", DType::kString)
                   .Type("Tvalues", DType::kFloat)
                   .Input(table)
                   .Reference([](const auto&) {
                     return std::vector<Tensor>{Make<std::string>({"a", "b"}, {2}),
                                                Make<float>({1, 2, 3, 4}, {2, 2})};
                   })
                   .Build());
  for (const char* op : {"LookupTableInsertV2", "LookupTableImportV2"}) {
    c->push_back(OpCaseBuilder(op, std::string(op) + " of vectors")
                     .Type("Tin", DType::kString)
                     .Type("Tout", DType::kFloat)
                     .Input(PairTable(std::string("pairs_") + op))
                     .Input(Make<std::string>({"c", "a"}, {2}))
                     .Input(Make<float>({5, 6, 7, 8}, {2, 2}))
                     .Build());
  }
  c->push_back(OpCaseBuilder("LookupTableSizeV2", "LookupTableSizeV2 of vectors")
                   .Input(table)
                   .Reference1([](const auto&) { return Tensor::Scalar<int64_t>(2); })
                   .Build());
}

void AddDenseTable(std::vector<OpCase>* c) {
  const Tensor table = DenseTable("dense");
  c->push_back(OpCaseBuilder("LookupTableFindV2", "LookupTableFindV2 dense")
                   .Type("Tin", DType::kInt64)
                   .Type("Tout", DType::kFloat)
                   .Input(table)
                   .Input(Make<int64_t>({11, 4, 3, 19}, {4}))
                   .Input(Make<float>({0, -1}, {2}))
                   .Reference1([](const auto&) {
                     return Make<float>({110, 111, 0, -1, 30, 31, 0, -1}, {4, 2});
                   })
                   .Build());
  // 3 -> bucket 3, 5 -> 5, 11 -> 3 (taken) then 4.
  c->push_back(
      OpCaseBuilder("LookupTableExportV2", "LookupTableExportV2 dense buckets")
          .Type("Tkeys", DType::kInt64)
          .Type("Tvalues", DType::kFloat)
          .Input(table)
          .Reference([](const auto&) {
            return std::vector<Tensor>{
                Make<int64_t>({-1, -1, -1, 3, 11, 5, -1, -1}, {8, 1}),
                Make<float>({0, 0, 0, 0, 0, 0, 30, 31, 110, 111, 50, 51, 0, 0, 0, 0}, {8, 2})};
          })
          .Build());
  c->push_back(OpCaseBuilder("LookupTableSizeV2", "LookupTableSizeV2 dense")
                   .Input(table)
                   .Reference1([](const auto&) { return Tensor::Scalar<int64_t>(3); })
                   .Build());
  c->push_back(OpCaseBuilder("LookupTableRemoveV2", "LookupTableRemoveV2 dense")
                   .Type("Tin", DType::kInt64)
                   .Input(DenseTable("dense_removes"))
                   .Input(Make<int64_t>({3, 7}, {2}))
                   .Build());
  c->push_back(OpCaseBuilder("LookupTableInsertV2", "LookupTableInsertV2 dense")
                   .Type("Tin", DType::kInt64)
                   .Type("Tout", DType::kFloat)
                   .Input(DenseTable("dense_inserts"))
                   .Input(Make<int64_t>({7, 3}, {2}))
                   .Input(Make<float>({70, 71, 32, 33}, {2, 2}))
                   .Build());
  c->push_back(OpCaseBuilder("LookupTableImportV2", "LookupTableImportV2 dense buckets")
                   .Type("Tin", DType::kInt64)
                   .Type("Tout", DType::kFloat)
                   .Input(DenseTable("dense_imports"))
                   .Input(Make<int64_t>({-1, 9, -1, -1}, {4, 1}))
                   .Input(Make<float>({0, 0, 90, 91, 0, 0, 0, 0}, {4, 2}))
                   .Build());
}

}  // namespace

std::vector<OpCase> LookupTensorCases() {
  std::vector<OpCase> c;
  AddMaking(&c);
  AddTensorTable(&c);
  AddDenseTable(&c);
  return c;
}

}  // namespace kiln::testing
