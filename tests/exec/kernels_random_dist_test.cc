// Gamma, Poisson, binomial, parameterized truncated normal and StatelessShuffle
// (random_distribution_ops.cc): a seeded stateful node's second call against TensorFlow's
// (recorded from TF 2.21), parameters that never end TF's loops, and the error paths. The values
// of first calls are the op tester's (tests/ops/cases_random_dist.cc).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

Tensor Shape1(const std::vector<int32_t>& dims) {
  const auto n = static_cast<int64_t>(dims.size());
  return Make<int32_t>(dims, Shape{n});
}

void SetType(ProtoAttrMap& attrs, const std::string& name, DType t) {
  attrs[name].set_type(static_cast<tensorflow::DataType>(DTypeToProto(t)));
}

// Two calls of one prepared stateful node.
std::vector<Tensor> TwoCalls(const std::string& op, const ProtoAttrMap& attrs,
                             const std::vector<Tensor>& inputs) {
  std::vector<TensorSpec> specs;
  std::vector<const Tensor*> values;
  for (const Tensor& t : inputs) {
    specs.push_back(TensorSpec{t.dtype(), t.shape()});
    values.push_back(&t);
  }
  PrintSink sink = [](std::string_view, std::string_view) {};
  SingleOpOptions options;
  options.print = &sink;
  auto single = SingleOp::Prepare(op, "node", attrs, specs, values, options);
  REQUIRE_MESSAGE(single.ok(), single.status().ToString());
  std::vector<Tensor> out;
  for (int call = 0; call < 2; ++call) {
    auto got = single->Run(inputs);
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    out.push_back((*got)[0]);
  }
  return out;
}

void CheckValues(const Tensor& got, const std::vector<double>& want) {
  REQUIRE(got.NumElements() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const double v = got.dtype() == DType::kFloat   ? got.data<float>()[i]
                     : got.dtype() == DType::kInt64 ? static_cast<double>(got.data<int64_t>()[i])
                                                    : got.data<double>()[i];
    CHECK_MESSAGE(v == want[i], "element ", i, ": ", v, " vs TF's ", want[i]);
  }
}

TEST_CASE("stateful gamma, Poisson and truncated normal: the second call is TF's") {
  ProtoAttrMap gamma;
  SetType(gamma, "T", DType::kFloat);
  SetType(gamma, "S", DType::kInt32);
  gamma["seed"].set_i(3);
  gamma["seed2"].set_i(5);
  auto g = TwoCalls("RandomGamma", gamma, {Shape1({4}), Tensor::Scalar<float>(0.5f)});
  CheckValues(g[1],
              {0.3353619873523712, 0.2922837734222412, 0.5319055318832397, 0.037128839641809464});

  ProtoAttrMap poisson;
  SetType(poisson, "R", DType::kFloat);
  SetType(poisson, "dtype", DType::kInt64);
  SetType(poisson, "S", DType::kInt32);
  poisson["seed"].set_i(10);
  poisson["seed2"].set_i(2);
  auto p = TwoCalls("RandomPoissonV2", poisson, {Shape1({5}), Tensor::Scalar<float>(4.0f)});
  CheckValues(p[1], {6, 4, 3, 1, 0});

  ProtoAttrMap ptn;
  SetType(ptn, "dtype", DType::kFloat);
  SetType(ptn, "T", DType::kInt32);
  ptn["seed"].set_i(30);
  ptn["seed2"].set_i(1);
  auto t = TwoCalls("ParameterizedTruncatedNormal", ptn,
                    {Shape1({7}), Tensor::Scalar<float>(0), Tensor::Scalar<float>(1),
                     Tensor::Scalar<float>(-1), Tensor::Scalar<float>(1)});
  CheckValues(t[1],
              {0.6846542358398438, 0.6331250667572021, 0.46759700775146484, 0.6122288703918457,
               0.10035443305969238, -0.5401537418365479, 0.6048660278320312});
}

TEST_CASE("random distributions: parameters that never end TF's loops give NaN") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto poisson = OpRunner("StatelessRandomPoisson")
                     .Type("dtype", DType::kDouble)
                     .Type("Rtype", DType::kDouble)
                     .Type("T", DType::kInt32)
                     .ConstantInput(Shape1({3}))
                     .Input(Make<int64_t>({1, 2}, {2}))
                     .Input(Tensor::Scalar<double>(nan))
                     .Run1();
  REQUIRE_MESSAGE(poisson.ok(), poisson.status().ToString());
  for (int i = 0; i < 3; ++i) CHECK(std::isnan(poisson->data<double>()[i]));
  auto binomial = OpRunner("StatelessRandomBinomial")
                      .Type("dtype", DType::kFloat)
                      .Type("S", DType::kInt32)
                      .ConstantInput(Shape1({2}))
                      .Input(Make<int64_t>({1, 2}, {2}))
                      .Input(Tensor::Scalar<double>(nan))
                      .Input(Tensor::Scalar<double>(0.3))
                      .Run1();
  REQUIRE_MESSAGE(binomial.ok(), binomial.status().ToString());
  for (int i = 0; i < 2; ++i) CHECK(std::isnan(binomial->data<float>()[i]));
}

OpRunner Gamma(const Tensor& shape, const Tensor& seed, const Tensor& alpha) {
  OpRunner r("StatelessRandomGammaV2", "g");
  r.Type("dtype", alpha.dtype()).Type("T", DType::kInt32).ConstantInput(shape).Input(seed);
  r.Input(alpha);
  return r;
}

TEST_CASE("random distributions: errors name the input and what TF expects") {
  const Tensor seed = Make<int64_t>({1, 2}, {2});
  const Tensor alpha2 = Make<float>({1, 2}, {2});
  CheckError(Gamma(Shape1({5}), seed, alpha2).Run1().status(),
             {"node 'g'", "input 'shape'", "(5,)", "'alpha'", "(2,)"});
  CheckError(Gamma(Shape1({4, 2}), Make<int64_t>({1, 2, 3}, {3}), alpha2).Run1().status(),
             {"input 'seed'", "(2,)"});
  CheckError(Gamma(Shape1({2}), seed, Make<int32_t>({1, 2}, {2})).Prepare(),
             {"attr 'dtype'", "int32"});

  auto v3 = [&](const Tensor& key, const Tensor& counter, int alg) {
    return OpRunner("StatelessRandomGammaV3")
        .Type("dtype", DType::kFloat)
        .ConstantInput(Shape1({2}))
        .Input(key)
        .Input(counter)
        .Input(Tensor::Scalar<int32_t>(alg))
        .Input(alpha2)
        .Run1();
  };
  const Tensor key = Make<uint64_t>({1}, {1}), counter = Make<uint64_t>({2, 3}, {2});
  CheckError(v3(key, counter, 2).status(), {"input 'alg'", "Philox"});
  CheckError(v3(Make<uint64_t>({1, 2}, {2}), counter, 1).status(), {"input 'key'", "(1,)"});
  CheckError(v3(key, Make<uint64_t>({2}, {1}), 1).status(), {"input 'counter'"});

  auto poisson = OpRunner("StatelessRandomPoisson")
                     .Type("dtype", DType::kInt32)
                     .Type("Rtype", DType::kFloat)
                     .ConstantInput(Shape1({3}))
                     .Input(seed)
                     .Input(alpha2)
                     .Run1();
  CheckError(poisson.status(), {"input 'shape'", "'lam'"});

  auto binomial = [&](const Tensor& shape, const Tensor& counts, const Tensor& probs) {
    return OpRunner("StatelessRandomBinomial")
        .Type("T", counts.dtype())
        .ConstantInput(shape)
        .Input(seed)
        .Input(counts)
        .Input(probs)
        .Run1();
  };
  const Tensor probs3 = Make<double>({0.1, 0.2, 0.3}, {3});
  CheckError(binomial(Shape1({3}), Make<double>({1, 2}, {2}), probs3).status(),
             {"'counts' and 'probs'", "compatible", "(2,)", "(3,)"});
  CheckError(binomial(Shape1({3, 2}), Tensor::Scalar<double>(4), probs3).status(),
             {"input 'shape'", "(3, 2)", "(3,)"});
  CheckError(
      binomial(Shape1({3}), Make<int32_t>({1, 2, 3}, {3}), Make<int32_t>({1, 1, 1}, {3})).status(),
      {"attr 'T'", "int32"});

  auto ptn = [&](const Tensor& shape, float stddev, float lo, float hi) {
    return OpRunner("StatelessParameterizedTruncatedNormal")
        .Type("dtype", DType::kFloat)
        .ConstantInput(shape)
        .Input(seed)
        .Input(Tensor::Scalar<float>(0))
        .Input(Tensor::Scalar<float>(stddev))
        .Input(Tensor::Scalar<float>(lo))
        .Input(Tensor::Scalar<float>(hi))
        .Run1();
  };
  CheckError(ptn(Shape1({3}), 0, -1, 1).status(), {"Invalid parameters"});
  CheckError(ptn(Shape1({3}), 1, 2, 1).status(), {"Invalid parameters"});
  const float inf = std::numeric_limits<float>::infinity();
  CheckError(ptn(Shape1({3}), 1, -inf, inf).status(), {"Invalid parameters"});

  auto stateful_ptn = [&](const Tensor& shape, const Tensor& means) {
    return OpRunner("ParameterizedTruncatedNormal")
        .Type("dtype", DType::kFloat)
        .Int("seed", 1)
        .ConstantInput(shape)
        .Input(means)
        .Input(Tensor::Scalar<float>(1))
        .Input(Tensor::Scalar<float>(-1))
        .Input(Tensor::Scalar<float>(1))
        .Run1();
  };
  CheckError(stateful_ptn(Make<int32_t>({}, {0}), Tensor::Scalar<float>(0)).status(),
             {"input 'shape'", "non-empty"});
  CheckError(stateful_ptn(Shape1({2, 3}), Make<float>({0, 0, 0, 0}, {2, 2})).status(),
             {"input 'means'", "scalar or vector"});
  CheckError(stateful_ptn(Shape1({2, 3}), Make<float>({0, 0, 0}, {3})).status(),
             {"input 'means'", "length 1 or shape[0] = 2", "(3,)"});

  auto gamma = OpRunner("RandomGamma")
                   .T(DType::kFloat)
                   .Int("seed", 1)
                   .ConstantInput(Shape1({2}))
                   .Input(Make<float>({}, {0}))
                   .Run1();
  CheckError(gamma.status(), {"input 'alpha'", "non-zero element count"});

  auto shuffle = OpRunner("StatelessShuffle")
                     .T(DType::kFloat)
                     .Input(Make<float>({1, 2, 3}, {3}))
                     .Input(Make<uint64_t>({1}, {1}))
                     .Input(Make<uint64_t>({2, 3}, {2}))
                     .Input(Tensor::Scalar<int32_t>(2))
                     .Run1();
  CheckError(shuffle.status(), {"input 'alg'", "Philox"});

  // RandomIndexShuffle: TF 2.21's messages; an odd rounds attr makes TF loop forever, refused.
  auto index_shuffle = [](Tensor index, Tensor seed, Tensor max_index, int64_t rounds = 4) {
    return OpRunner("RandomIndexShuffle")
        .Type("dtype", index.dtype())
        .Type("Tseed", seed.dtype())
        .Int("rounds", rounds)
        .Input(std::move(index))
        .Input(std::move(seed))
        .Input(std::move(max_index))
        .Run1();
  };
  const Tensor seed3 = Make<int64_t>({1, 2, 3}, {3});
  CheckError(index_shuffle(Make<int32_t>({1, 3}, {2}), seed3, Tensor::Scalar<int32_t>(2)).status(),
             {"max_index must be >= index, but 2 < 3"});
  CheckError(index_shuffle(Make<int32_t>({-1}, {1}), seed3, Tensor::Scalar<int32_t>(2)).status(),
             {"index must be >= 0 but was -1"});
  CheckError(index_shuffle(Make<int64_t>({1}, {1}), seed3, Tensor::Scalar<int64_t>(-4)).status(),
             {"max_index must be >= 0 but was -4"});
  CheckError(
      index_shuffle(Make<int64_t>({1, 2, 3}, {3}), seed3, Make<int64_t>({5, 6}, {2})).status(),
      {"max_index must be a scalar or a vector of 3 values", "(2,)"});
  CheckError(index_shuffle(Make<int64_t>({1, 2}, {2}), Make<int64_t>({1, 2, 3}, {1, 3}),
                           Tensor::Scalar<int64_t>(5))
                 .status(),
             {"seed must be a vector of size [3] or a matrix of size [2, 3]", "(1, 3)"});
  CheckError(
      index_shuffle(Tensor::Scalar<int64_t>(1), seed3, Tensor::Scalar<int64_t>(5), 5).status(),
      {"attr 'rounds'", "even and at least 4", "5"});
}

TEST_CASE("random distributions: shapes") {
  OpRunner gamma("RandomGamma");
  gamma.T(DType::kHalf).Int("seed", 1).ConstantInput(Shape1({4, 2}));
  gamma.InputSpec({DType::kHalf, PartialShape{-1, 3}});
  REQUIRE(gamma.Prepare().ok());
  CHECK(gamma.output_specs()[0] == TensorSpec{DType::kHalf, PartialShape{4, 2, -1, 3}});
  // An empty sample shape needs no alpha elements.
  auto empty = OpRunner("RandomGamma")
                   .T(DType::kFloat)
                   .Int("seed", 1)
                   .ConstantInput(Shape1({0}))
                   .Input(Make<float>({}, {0}))
                   .Run1();
  REQUIRE_MESSAGE(empty.ok(), empty.status().ToString());
  CHECK(empty->shape() == Shape({0, 0}));
  auto poisson = OpRunner("RandomPoissonV2")
                     .Int("seed", 2)
                     .Type("R", DType::kFloat)
                     .ConstantInput(Shape1({3}))
                     .Input(Make<float>({1, 20}, {2}))
                     .Run1();
  REQUIRE_MESSAGE(poisson.ok(), poisson.status().ToString());
  CHECK(poisson->dtype() == DType::kInt64);  // dtype's default
  CHECK(poisson->shape() == Shape({3, 2}));
}

}  // namespace
}  // namespace kiln::exec
