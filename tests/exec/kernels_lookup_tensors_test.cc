// The tables of tensors (MutableHashTableOfTensorsV2, MutableDenseHashTableV2): their attr and
// input errors, the dense table's growth, and the shape errors of the ops that use them.
#include <doctest/doctest.h>

#include "exec/kernel_test_util.h"
#include "kernels/lookup_table.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

OpRunner Dense(int64_t empty, int64_t deleted, int64_t buckets = 4) {
  OpRunner r("MutableDenseHashTableV2");
  r.Type("key_dtype", DType::kInt64)
      .Type("value_dtype", DType::kFloat)
      .ShapeAttr("value_shape", PartialShape{2})
      .Int("initial_num_buckets", buckets)
      .ConstantInput(Tensor::Scalar<int64_t>(empty))
      .ConstantInput(Tensor::Scalar<int64_t>(deleted));
  return r;
}

Status Insert(const Tensor& table, const Tensor& keys, const Tensor& values) {
  return OpRunner("LookupTableInsertV2", "insert")
      .Type("Tin", keys.dtype())
      .Type("Tout", values.dtype())
      .Input(table)
      .Input(keys)
      .Input(values)
      .Run()
      .status();
}

Result<Tensor> Find(const Tensor& table, const Tensor& keys, const Tensor& dflt) {
  return OpRunner("LookupTableFindV2", "find")
      .Type("Tin", keys.dtype())
      .Type("Tout", dflt.dtype())
      .Input(table)
      .Input(keys)
      .Input(dflt)
      .Run1();
}

TEST_CASE("MutableDenseHashTableV2: bad buckets, load factor and marker keys fail") {
  CheckError(Dense(-1, -2, 6).Run().status(), {"initial_num_buckets", "power of 2", "6"});
  CheckError(Dense(-1, -1).Run().status(), {"Empty and deleted keys cannot be equal"});
  CheckError(Dense(-1, -2).Float("max_load_factor", 1.5f).Run().status(), {"max_load_factor"});
  auto table = Dense(-1, -2).Run1();
  REQUIRE(table.ok());
  CheckError(Insert(*table, Make<int64_t>({-1}, {1}), Make<float>({1, 2}, {1, 2})), {"empty_key"});
  CheckError(Find(*table, Make<int64_t>({-2}, {1}), Make<float>({0, 0}, {2})).status(),
             {"deleted_key"});
  CheckError(Insert(*table, Make<int64_t>({1}, {1}), Make<float>({1, 2, 3}, {1, 3})),
             {"input 'values'", "(1, 2)"});
  CheckError(Find(*table, Make<int64_t>({1}, {1}), Make<float>({0, 0, 0}, {3})).status(),
             {"input 'default_value'", "(2,)"});
}

TEST_CASE("MutableDenseHashTableV2: grows past its load factor and keeps every entry") {
  auto table = Dense(-1, -2).Run1();
  REQUIRE(table.ok());
  std::vector<int64_t> keys;
  std::vector<float> values;
  for (int64_t i = 0; i < 40; ++i) {
    keys.push_back(i * 7);
    values.push_back(static_cast<float>(i));
    values.push_back(static_cast<float>(-i));
  }
  const Tensor k = Make<int64_t>(keys, {40});
  REQUIRE(Insert(*table, k, Make<float>(values, {40, 2})).ok());
  auto found = Find(*table, k, Make<float>({0, 0}, {2}));
  REQUIRE(found.ok());
  for (int64_t i = 0; i < 80; ++i) CHECK(found->data<float>()[i] == values[i]);
  auto* t = AsLookupTable(table->scalar<std::shared_ptr<ResourceBase>>().get());
  REQUIRE(t != nullptr);
  CHECK(t->Size() == 40);
}

TEST_CASE("MutableHashTableOfTensorsV2: value_shape must be a vector, kinds do not mix") {
  CheckError(OpRunner("MutableHashTableOfTensorsV2")
                 .Type("key_dtype", DType::kString)
                 .Type("value_dtype", DType::kFloat)
                 .Run()
                 .status(),
             {"attr 'value_shape'", "vector"});
  ResourceManager rm;
  REQUIRE(OpRunner("MutableHashTableV2")
              .Type("key_dtype", DType::kString)
              .Type("value_dtype", DType::kFloat)
              .String("shared_name", "t")
              .Resources(&rm)
              .Run()
              .ok());
  CheckError(OpRunner("MutableHashTableOfTensorsV2")
                 .Type("key_dtype", DType::kString)
                 .Type("value_dtype", DType::kFloat)
                 .ShapeAttr("value_shape", PartialShape{2})
                 .String("shared_name", "t")
                 .Resources(&rm)
                 .Run()
                 .status(),
             {"exists as a MutableHashTableV2"});
}

}  // namespace
}  // namespace kiln::exec
