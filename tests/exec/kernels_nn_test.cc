// nn kernels against plain-loop references: BiasAdd in both layouts, activations, softmax.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckClose;
using testing::CheckError;
using testing::Make;
using testing::OpRunner;
using testing::Random;
using testing::Unravel;

template <typename T>
Tensor RefBiasAdd(const Tensor& value, const Tensor& bias, bool nchw) {
  Tensor out(kDTypeOf<T>, value.shape());
  const int channel_dim = nchw ? 1 : value.rank() - 1;
  for (int64_t i = 0; i < value.NumElements(); ++i) {
    int64_t c = Unravel(i, value.shape())[channel_dim];
    out.data<T>()[i] = value.data<T>()[i] + bias.data<T>()[c];
  }
  return out;
}

template <typename T>
void CheckBiasAdd() {
  struct Case {
    Shape value;
    bool nchw;
  };
  const std::vector<Case> cases = {
      {{4, 3}, false},         {{1, 1}, false},      {{2, 5, 5, 3}, false}, {{2, 3, 7}, false},
      {{4, 3}, true},          {{2, 3, 5, 5}, true}, {{2, 3, 7}, true},     {{0, 3}, false},
      {{3, 2, 2, 2, 2}, true}, {{9, 130}, false},
  };
  uint32_t seed = 21;
  for (const Case& c : cases) {
    CAPTURE(DTypeShortName(kDTypeOf<T>));
    CAPTURE(c.value.ToString());
    CAPTURE(c.nchw);
    const int64_t channels = c.value.dim(c.nchw ? 1 : c.value.rank() - 1);
    Tensor value = Random<T>(c.value, seed++);
    Tensor bias = Random<T>(Shape{channels}, seed++);
    OpRunner r("BiasAdd");
    r.T(kDTypeOf<T>).Input(value).Input(bias);
    if (c.nchw) {
      r.String("data_format", "NCHW");
    } else if (seed % 2 == 0) {
      r.String("data_format", "NHWC");  // explicit default half of the time
    }
    auto got = r.Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CheckClose<T>(*got, RefBiasAdd<T>(value, bias, c.nchw));
  }
}

TEST_CASE("BiasAdd: NHWC and NCHW against a reference") {
  CheckBiasAdd<float>();
  CheckBiasAdd<double>();
  CheckBiasAdd<int32_t>();
  CheckBiasAdd<int64_t>();
}

TEST_CASE("BiasAdd: prepare errors name the problem") {
  SUBCASE("channel mismatch") {
    OpRunner r("BiasAdd", "ba");
    r.T(DType::kFloat).InputSpec({DType::kFloat, Shape{2, 3}}).InputSpec({DType::kFloat, Shape{4}});
    CheckError(r.Prepare(), {"node 'ba'", "'bias' has 4 elements", "(2, 3)", "is 3"});
  }
  SUBCASE("NCHW uses dim 1") {
    OpRunner r("BiasAdd");
    r.T(DType::kFloat)
        .String("data_format", "NCHW")
        .InputSpec({DType::kFloat, Shape{2, 3, 5}})
        .InputSpec({DType::kFloat, Shape{5}});
    CheckError(r.Prepare(), {"'bias' has 5 elements", "NCHW", "is 3"});
  }
  SUBCASE("bad data_format") {
    OpRunner r("BiasAdd");
    r.T(DType::kFloat)
        .String("data_format", "NDHWC")
        .InputSpec({DType::kFloat, Shape{2, 3}})
        .InputSpec({DType::kFloat, Shape{3}});
    CheckError(r.Prepare(), {"attr 'data_format'", "NDHWC"});
  }
  SUBCASE("value rank") {
    OpRunner r("BiasAdd");
    r.T(DType::kFloat).InputSpec({DType::kFloat, Shape{3}}).InputSpec({DType::kFloat, Shape{3}});
    CheckError(r.Prepare(), {"input 'value'", "rank >= 2", "(3,)"});
  }
  SUBCASE("bias rank") {
    OpRunner r("BiasAdd");
    r.T(DType::kFloat)
        .InputSpec({DType::kFloat, Shape{2, 3}})
        .InputSpec({DType::kFloat, Shape{1, 3}});
    CheckError(r.Prepare(), {"input 'bias'", "expected rank 1", "(1, 3)"});
  }
  SUBCASE("bias dtype") {
    OpRunner r("BiasAdd");
    r.T(DType::kFloat)
        .InputSpec({DType::kFloat, Shape{2, 3}})
        .InputSpec({DType::kDouble, Shape{3}});
    CheckError(r.Prepare(), {"input 'bias'", "expected dtype float32", "got float64"});
  }
  SUBCASE("unknown dims are accepted, then checked when run") {
    OpRunner r("BiasAdd");
    r.T(DType::kFloat)
        .Input(Random<float>({2, 3}, 1), {DType::kFloat, PartialShape{-1, -1}})
        .Input(Random<float>({4}, 2), {DType::kFloat, PartialShape{-1}});
    REQUIRE(r.Prepare().ok());
    CHECK(r.output_specs()[0].shape == PartialShape({-1, -1}));
    CheckError(r.Run1().status(), {"'bias' has 4 elements", "is 3"});
  }
}

// ---- activations -----------------------------------------------------------------------------

template <typename T, typename F>
void CheckActivation(const std::string& op, F ref) {
  uint32_t seed = 31;
  for (const Shape& s : {Shape{}, Shape{7}, Shape{3, 5}, Shape{2, 3, 4}, Shape{0}, Shape{257}}) {
    CAPTURE(op);
    CAPTURE(DTypeShortName(kDTypeOf<T>));
    CAPTURE(s.ToString());
    Tensor x = Random<T>(s, seed++, -9, 9);
    Tensor want(kDTypeOf<T>, s);
    for (int64_t i = 0; i < x.NumElements(); ++i) want.data<T>()[i] = ref(x.data<T>()[i]);
    OpRunner r(op);
    auto got = r.T(kDTypeOf<T>).Input(x).Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CheckClose<T>(*got, want);
  }
}

template <typename T>
void CheckReluFamily() {
  CheckActivation<T>("Relu", [](T x) { return x > 0 ? x : T(0); });
  CheckActivation<T>("Relu6", [](T x) { return x < 0 ? T(0) : (x > 6 ? T(6) : x); });
}

TEST_CASE("Relu, Relu6, Elu against a reference") {
  CheckReluFamily<float>();
  CheckReluFamily<double>();
  CheckReluFamily<int32_t>();
  CheckReluFamily<int64_t>();
  CheckActivation<float>("Elu", [](float x) { return x < 0 ? std::exp(x) - 1 : x; });
  CheckActivation<double>("Elu", [](double x) { return x < 0 ? std::exp(x) - 1 : x; });
}

TEST_CASE("activations: prepare errors") {
  OpRunner elu("Elu", "e");
  elu.T(DType::kInt32).InputSpec({DType::kInt32, Shape{2}});
  CheckError(elu.Prepare(), {"node 'e'", "attr 'T'", "int32", "not supported"});
  OpRunner relu("Relu");
  relu.T(DType::kFloat).InputSpec({DType::kInt64, Shape{2}});
  CheckError(relu.Prepare(), {"input 'features'", "expected dtype float32", "got int64"});
  OpRunner missing("Relu6");
  missing.InputSpec({DType::kFloat, Shape{2}});
  CheckError(missing.Prepare(), {"missing attr 'T'"});
}

// ---- Softmax, LogSoftmax ---------------------------------------------------------------------

// Over the last dim, in long double with the max subtracted.
template <typename T>
Tensor RefSoftmax(const Tensor& x, bool log) {
  Tensor out(kDTypeOf<T>, x.shape());
  const int64_t depth = x.dim(x.rank() - 1);
  const int64_t rows = depth == 0 ? 0 : x.NumElements() / depth;
  for (int64_t r = 0; r < rows; ++r) {
    const T* in = x.data<T>() + r * depth;
    T* o = out.data<T>() + r * depth;
    long double mx = in[0];
    for (int64_t j = 1; j < depth; ++j) mx = std::max<long double>(mx, in[j]);
    long double sum = 0;
    for (int64_t j = 0; j < depth; ++j) sum += std::exp(static_cast<long double>(in[j]) - mx);
    for (int64_t j = 0; j < depth; ++j) {
      long double shifted = in[j] - mx;
      o[j] = static_cast<T>(log ? shifted - std::log(sum) : std::exp(shifted) / sum);
    }
  }
  return out;
}

template <typename T>
void CheckSoftmax() {
  uint32_t seed = 41;
  for (const Shape& s :
       {Shape{5}, Shape{1}, Shape{3, 4}, Shape{2, 3, 6}, Shape{4, 1}, Shape{0, 3}, Shape{3, 200}}) {
    for (bool log : {false, true}) {
      CAPTURE(DTypeShortName(kDTypeOf<T>));
      CAPTURE(s.ToString());
      CAPTURE(log);
      Tensor x = Random<T>(s, seed++, -20, 20);
      auto got = OpRunner(log ? "LogSoftmax" : "Softmax").T(kDTypeOf<T>).Input(x).Run1();
      REQUIRE_MESSAGE(got.ok(), got.status().ToString());
      CheckClose<T>(*got, RefSoftmax<T>(x, log), std::is_same_v<T, float> ? 1e-5 : 1e-12);
    }
  }
}

TEST_CASE("Softmax and LogSoftmax against a reference") {
  CheckSoftmax<float>();
  CheckSoftmax<double>();
}

TEST_CASE("Softmax is numerically stable for large logits") {
  Tensor x = Make<float>({1000, 1001, 1002, -1000, -1000, -1000}, {2, 3});
  auto sm = OpRunner("Softmax").T(DType::kFloat).Input(x).Run1();
  REQUIRE(sm.ok());
  CheckClose<float>(*sm, RefSoftmax<float>(x, false));
  for (float v : sm->flat<float>()) CHECK(std::isfinite(v));
  CHECK(sm->data<float>()[3] == doctest::Approx(1.0 / 3));
  auto lsm = OpRunner("LogSoftmax").T(DType::kFloat).Input(x).Run1();
  REQUIRE(lsm.ok());
  CheckClose<float>(*lsm, RefSoftmax<float>(x, true));
  CHECK(lsm->data<float>()[2] == doctest::Approx(-0.40760596));
}

TEST_CASE("Softmax: prepare errors") {
  OpRunner scalar("Softmax", "sm");
  scalar.T(DType::kFloat).InputSpec({DType::kFloat, PartialShape::Scalar()});
  CheckError(scalar.Prepare(), {"node 'sm'", "input 'logits'", "rank >= 1", "()"});
  OpRunner ints("LogSoftmax");
  ints.T(DType::kInt32).InputSpec({DType::kInt32, Shape{3}});
  CheckError(ints.Prepare(), {"attr 'T'", "int32", "not supported"});
  OpRunner partial("Softmax");
  partial.T(DType::kFloat).InputSpec({DType::kFloat, PartialShape{-1, 10}});
  REQUIRE(partial.Prepare().ok());
  CHECK(partial.output_specs()[0] == TensorSpec{DType::kFloat, PartialShape{-1, 10}});
}

}  // namespace
}  // namespace kiln::exec
