// tf.random.Generator's ops: the state each call leaves in the variable (TensorFlow 2.21's, as
// recorded with tf.raw_ops on the CPU for the state [-3, -1, 0x12345678abcdef]) and the errors.
// The drawn values are checked in tests/ops/cases_stateful_random.cc.
#include <doctest/doctest.h>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

constexpr int64_t kKey = 0x12345678abcdef;

struct Var {
  std::shared_ptr<VariableResource> var;
  Tensor handle;
};

Var StateVar(const Tensor& value) {
  Var v;
  v.var = std::make_shared<VariableResource>("rng", value.dtype(), PartialShape(value.shape()));
  REQUIRE(v.var->Assign(value).ok());
  v.handle = Tensor(DType::kResource, Shape());
  v.handle.scalar<std::shared_ptr<ResourceBase>>() = v.var;
  return v;
}

Var StateVar() { return StateVar(Make<int64_t>({-3, -1, kKey}, {3})); }

std::vector<int64_t> StateOf(const Var& v) {
  auto t = v.var->Read();
  REQUIRE(t.ok());
  return std::vector<int64_t>(t->data<int64_t>(), t->data<int64_t>() + t->NumElements());
}

Result<std::vector<Tensor>> Draw(const std::string& op, const Var& v, int64_t alg, int64_t n,
                                 DType dtype = DType::kFloat) {
  return OpRunner(op)
      .Type("dtype", dtype)
      .Input(v.handle)
      .Input(Tensor::Scalar<int64_t>(alg))
      .Input(Make<int64_t>({n}, {1}))
      .Run();
}

TEST_CASE("stateful random: the counter moves on by 256 blocks per output") {
  for (const char* op :
       {"StatefulUniform", "StatefulStandardNormalV2", "StatefulTruncatedNormal"}) {
    CAPTURE(op);
    Var v = StateVar();
    REQUIRE(Draw(op, v, 1, 5).ok());
    CHECK(StateOf(v) == std::vector<int64_t>{1277, 0, kKey});  // TF's, the carry included
    REQUIRE(Draw(op, v, 3, 0).ok());                           // auto-select is Philox
    CHECK(StateOf(v) == std::vector<int64_t>{1277, 0, kKey});
  }
  Var v = StateVar();
  REQUIRE(OpRunner("StatefulUniformInt")
              .Type("dtype", DType::kInt64)
              .Input(v.handle)
              .Input(Tensor::Scalar<int64_t>(1))
              .Input(Make<int64_t>({3}, {1}))
              .Input(Tensor::Scalar<int64_t>(-5))
              .Input(Tensor::Scalar<int64_t>(5))
              .Run()
              .ok());
  CHECK(StateOf(v) == std::vector<int64_t>{765, 0, kKey});
  REQUIRE(Draw("StatefulUniformFullInt", v, 1, 3, DType::kUInt32).ok());
  CHECK(StateOf(v) == std::vector<int64_t>{1533, 0, kKey});
}

TEST_CASE("stateful random: StatefulRandomBinomial reserves TF's blocks") {
  auto binomial = [](const Var& v, int64_t alg, const std::vector<int32_t>& shape) {
    const auto rank = static_cast<int64_t>(shape.size());
    return OpRunner("StatefulRandomBinomial")
        .Type("S", DType::kInt32)
        .Type("T", DType::kFloat)
        .Type("dtype", DType::kInt32)
        .Input(v.handle)
        .Input(Tensor::Scalar<int64_t>(alg))
        .Input(Make<int32_t>(shape, {rank}))
        .Input(Make<float>({10, 20}, {2}))
        .Input(Make<float>({0.3f}, {1}))
        .Run();
  };
  Var v = StateVar();
  REQUIRE(binomial(v, 1, {5, 2}).ok());
  CHECK(StateOf(v) == std::vector<int64_t>{204797, 0, kKey});  // TF's
  Var empty = StateVar();
  REQUIRE(binomial(empty, 1, {0, 2}).ok());  // an empty output still moves the state on
  CHECK(StateOf(empty) == std::vector<int64_t>{76797, 0, kKey});
  Var bad = StateVar();
  CheckError(binomial(bad, 3, {5, 2}).status(), {"unsupported algorithm id: 3"});
  CheckError(binomial(bad, 1, {3}).status(), {"'shape'", "must end with"});
  CHECK(StateOf(bad) == std::vector<int64_t>{-3, -1, kKey});
}

TEST_CASE("stateful random: RngSkip and RngReadAndSkip") {
  Var v = StateVar();
  auto read = OpRunner("RngReadAndSkip")
                  .Input(v.handle)
                  .Input(Tensor::Scalar<int32_t>(1))
                  .Input(Tensor::Scalar<uint64_t>(7))
                  .Run();
  REQUIRE(read.ok());
  CHECK(TensorsEqual((*read)[0], Make<int64_t>({-3, -1, kKey}, {3})));
  CHECK(StateOf(v) == std::vector<int64_t>{1789, 0, kKey});
  // 2^63 + 5 blocks of 256 wrap to 1280 in uint64, as TF's.
  Var big = StateVar();
  REQUIRE(OpRunner("RngReadAndSkip")
              .Input(big.handle)
              .Input(Tensor::Scalar<int32_t>(3))
              .Input(Tensor::Scalar<uint64_t>((uint64_t{1} << 63) + 5))
              .Run()
              .ok());
  CHECK(StateOf(big) == std::vector<int64_t>{1277, 0, kKey});
  // A negative delta is 2^64 - 512 blocks; TF's Philox skip drops that carry.
  Var back = StateVar();
  REQUIRE(OpRunner("RngSkip")
              .Input(back.handle)
              .Input(Tensor::Scalar<int64_t>(1))
              .Input(Tensor::Scalar<int64_t>(-2))
              .Run()
              .ok());
  CHECK(StateOf(back) == std::vector<int64_t>{-515, -1, kKey});
  // A longer state keeps its tail; the read gives the first three elements.
  Var longer = StateVar(Make<int64_t>({1, 2, 3, 4, 5}, {5}));
  read = OpRunner("RngReadAndSkip")
             .Input(longer.handle)
             .Input(Tensor::Scalar<int32_t>(1))
             .Input(Tensor::Scalar<uint64_t>(1))
             .Run();
  REQUIRE(read.ok());
  CHECK(TensorsEqual((*read)[0], Make<int64_t>({1, 2, 3}, {3})));
  CHECK(StateOf(longer) == std::vector<int64_t>{257, 2, 3, 4, 5});
}

TEST_CASE("stateful random: errors leave the state as it was") {
  Var v = StateVar();
  auto three = Draw("StatefulUniform", v, 2, 3);
  CheckError(three.status(), {"node 'node'", "ThreeFry"});
  CheckError(Draw("StatefulUniform", v, 7, 3).status(), {"unsupported algorithm id: 7"});
  auto bounds = OpRunner("StatefulUniformInt")
                    .Type("dtype", DType::kInt32)
                    .Input(v.handle)
                    .Input(Tensor::Scalar<int64_t>(1))
                    .Input(Make<int64_t>({0}, {1}))
                    .Input(Tensor::Scalar<int32_t>(5))
                    .Input(Tensor::Scalar<int32_t>(5))
                    .Run();
  CheckError(bounds.status(), {"minval < maxval", "5 >= 5"});
  CHECK(StateOf(v) == std::vector<int64_t>{-3, -1, kKey});

  Var small = StateVar(Make<int64_t>({1, 2}, {2}));
  CheckError(Draw("StatefulUniform", small, 1, 3).status(),
             {"size of state must be at least 3", "got 2"});
  Var wrong = StateVar(Make<int32_t>({1, 2, 3}, {3}));
  CheckError(Draw("StatefulUniform", wrong, 1, 3).status(), {"variable 'rng'", "must be int64"});
  Var matrix = StateVar(Make<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3}));
  CheckError(Draw("StatefulUniform", matrix, 1, 3).status(), {"one and only one dimension"});
  CheckError(OpRunner("StatefulUniform")
                 .Input(v.handle)
                 .Input(Tensor::Scalar<int32_t>(1))
                 .Input(Make<int64_t>({3}, {1}))
                 .Prepare(),
             {"'algorithm'", "int64"});
}

}  // namespace
}  // namespace kiln::exec
