// Variable updates: the optimizer ops against their update rules written as plain loops,
// ResourceGather / ResourceScatter* values and errors, TF1 reference variables, and Assert's
// message.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckClose;
using testing::CheckError;
using testing::Make;
using testing::OpRunner;
using testing::Random;

struct Var {
  std::shared_ptr<VariableResource> var;
  Tensor handle;
};

Var MakeVar(const std::string& name, const Tensor& value) {
  Var v;
  v.var = std::make_shared<VariableResource>(name, value.dtype(), PartialShape(value.shape()));
  REQUIRE(v.var->Assign(value).ok());
  v.handle = Tensor(DType::kResource, Shape());
  v.handle.scalar<std::shared_ptr<ResourceBase>>() = v.var;
  return v;
}

Tensor Value(const Var& v) {
  auto t = v.var->Read();
  REQUIRE(t.ok());
  return *t;
}

// Element-wise reference update in double: f(var, slots..., grad) changes its arguments.
template <typename F>
std::vector<Tensor> RefUpdate(std::vector<Tensor> vals, const Tensor& grad, F f) {
  for (Tensor& t : vals) t = t.DeepCopy();
  for (int64_t i = 0; i < grad.NumElements(); ++i) {
    std::vector<double> x;
    for (const Tensor& t : vals) x.push_back(t.data<float>()[i]);
    f(x, static_cast<double>(grad.data<float>()[i]));
    for (size_t k = 0; k < vals.size(); ++k) vals[k].data<float>()[i] = static_cast<float>(x[k]);
  }
  return vals;
}

TEST_CASE("optimizer updates follow their rules") {
  const Shape s{3, 4};
  const Tensor var0 = Random<float>(s, 1, -1, 1);
  const Tensor slot0 = Random<float>(s, 2, 0.1, 1);
  const Tensor slot1 = Random<float>(s, 3, 0.1, 1);
  const Tensor grad = Random<float>(s, 4, -1, 1);
  const double lr = 0.05, mom = 0.9, eps = 1e-7, b1 = 0.9, b2 = 0.999, b1p = 0.9 * 0.9,
               b2p = 0.999 * 0.999, rho = 0.9;
  auto f = [](double v) { return Tensor::Scalar(static_cast<float>(v)); };

  SUBCASE("GradientDescent") {
    Var v = MakeVar("v", var0);
    REQUIRE(OpRunner("ResourceApplyGradientDescent")
                .T(DType::kFloat)
                .Input(v.handle)
                .Input(f(lr))
                .Input(grad)
                .Run()
                .ok());
    auto want = RefUpdate({var0}, grad, [&](std::vector<double>& x, double g) { x[0] -= lr * g; });
    CheckClose<float>(Value(v), want[0]);
  }
  for (bool nesterov : {false, true}) {
    CAPTURE(nesterov);
    Var v = MakeVar("v", var0), a = MakeVar("accum", slot0);
    REQUIRE(OpRunner("ResourceApplyMomentum")
                .T(DType::kFloat)
                .Bool("use_nesterov", nesterov)
                .Input(v.handle)
                .Input(a.handle)
                .Input(f(lr))
                .Input(grad)
                .Input(f(mom))
                .Run()
                .ok());
    auto want = RefUpdate({var0, slot0}, grad, [&](std::vector<double>& x, double g) {
      x[1] = x[1] * mom + g;
      x[0] -= nesterov ? g * lr + x[1] * mom * lr : x[1] * lr;
    });
    CheckClose<float>(Value(v), want[0]);
    CheckClose<float>(Value(a), want[1]);

    Var kv = MakeVar("v", var0), ka = MakeVar("accum", slot0);
    REQUIRE(OpRunner("ResourceApplyKerasMomentum")
                .T(DType::kFloat)
                .Bool("use_nesterov", nesterov)
                .Input(kv.handle)
                .Input(ka.handle)
                .Input(f(lr))
                .Input(grad)
                .Input(f(mom))
                .Run()
                .ok());
    want = RefUpdate({var0, slot0}, grad, [&](std::vector<double>& x, double g) {
      x[1] = x[1] * mom - g * lr;
      x[0] += nesterov ? x[1] * mom - g * lr : x[1];
    });
    CheckClose<float>(Value(kv), want[0]);
    CheckClose<float>(Value(ka), want[1]);

    Var av = MakeVar("v", var0), am = MakeVar("m", slot0), avv = MakeVar("vv", slot1);
    REQUIRE(OpRunner("ResourceApplyAdam")
                .T(DType::kFloat)
                .Bool("use_nesterov", nesterov)
                .Input(av.handle)
                .Input(am.handle)
                .Input(avv.handle)
                .Input(f(b1p))
                .Input(f(b2p))
                .Input(f(lr))
                .Input(f(b1))
                .Input(f(b2))
                .Input(f(eps))
                .Input(grad)
                .Run()
                .ok());
    want = RefUpdate({var0, slot0, slot1}, grad, [&](std::vector<double>& x, double g) {
      const double alpha = lr * std::sqrt(1 - b2p) / (1 - b1p);
      x[1] = x[1] + (g - x[1]) * (1 - b1);
      x[2] = x[2] + (g * g - x[2]) * (1 - b2);
      const double m = nesterov ? g * (1 - b1) + b1 * x[1] : x[1];
      x[0] -= m * alpha / (std::sqrt(x[2]) + eps);
    });
    CheckClose<float>(Value(av), want[0], 1e-5);
    CheckClose<float>(Value(am), want[1], 1e-5);
    CheckClose<float>(Value(avv), want[2], 1e-5);
  }
  for (bool update_slots : {true, false}) {
    Var v = MakeVar("v", var0), a = MakeVar("accum", slot0);
    REQUIRE(OpRunner("ResourceApplyAdagradV2")
                .T(DType::kFloat)
                .Bool("update_slots", update_slots)
                .Input(v.handle)
                .Input(a.handle)
                .Input(f(lr))
                .Input(f(eps))
                .Input(grad)
                .Run()
                .ok());
    auto want = RefUpdate({var0, slot0}, grad, [&](std::vector<double>& x, double g) {
      if (update_slots) x[1] += g * g;
      x[0] -= lr * g / (std::sqrt(x[1]) + eps);
    });
    CheckClose<float>(Value(v), want[0], 1e-5);
    CheckClose<float>(Value(a), want[1], 1e-5);
  }
  SUBCASE("RMSProp") {
    Var v = MakeVar("v", var0), ms = MakeVar("ms", slot0), mo = MakeVar("mom", slot1);
    REQUIRE(OpRunner("ResourceApplyRMSProp")
                .T(DType::kFloat)
                .Input(v.handle)
                .Input(ms.handle)
                .Input(mo.handle)
                .Input(f(lr))
                .Input(f(rho))
                .Input(f(mom))
                .Input(f(eps))
                .Input(grad)
                .Run()
                .ok());
    auto want = RefUpdate({var0, slot0, slot1}, grad, [&](std::vector<double>& x, double g) {
      x[1] = x[1] + (g * g - x[1]) * (1 - rho);
      x[2] = x[2] * mom + lr * g / std::sqrt(x[1] + eps);
      x[0] -= x[2];
    });
    CheckClose<float>(Value(v), want[0], 1e-5);
    CheckClose<float>(Value(ms), want[1], 1e-5);
    CheckClose<float>(Value(mo), want[2], 1e-5);
  }
}

TEST_CASE("Adagrad, AdaMax and AdamWithAmsgrad updates follow their rules") {
  const Shape s{3, 4};
  const Tensor var0 = Random<float>(s, 1, -1, 1);
  const Tensor slot0 = Random<float>(s, 2, 0.1, 1);
  const Tensor slot1 = Random<float>(s, 3, 0.1, 1);
  const Tensor slot2 = Random<float>(s, 5, 0.1, 1);
  const Tensor grad = Random<float>(s, 4, -1, 1);
  const double lr = 0.05, eps = 1e-7, b1 = 0.9, b2 = 0.999, b1p = 0.9 * 0.9, b2p = 0.999 * 0.999;
  auto f = [](double v) { return Tensor::Scalar(static_cast<float>(v)); };

  for (bool update_slots : {true, false}) {
    CAPTURE(update_slots);
    Var v = MakeVar("v", var0), a = MakeVar("accum", slot0);
    REQUIRE(OpRunner("ResourceApplyAdagrad")
                .T(DType::kFloat)
                .Bool("update_slots", update_slots)
                .Input(v.handle)
                .Input(a.handle)
                .Input(f(lr))
                .Input(grad)
                .Run()
                .ok());
    auto want = RefUpdate({var0, slot0}, grad, [&](std::vector<double>& x, double g) {
      if (update_slots) x[1] += g * g;
      x[0] -= lr * g / std::sqrt(x[1]);
    });
    CheckClose<float>(Value(v), want[0], 1e-5);
    CheckClose<float>(Value(a), want[1], 1e-5);
  }
  SUBCASE("AdaMax") {
    Var v = MakeVar("v", var0), m = MakeVar("m", slot0), u = MakeVar("u", slot1);
    REQUIRE(OpRunner("ResourceApplyAdaMax")
                .T(DType::kFloat)
                .Input(v.handle)
                .Input(m.handle)
                .Input(u.handle)
                .Input(f(b1p))
                .Input(f(lr))
                .Input(f(b1))
                .Input(f(b2))
                .Input(f(eps))
                .Input(grad)
                .Run()
                .ok());
    auto want = RefUpdate({var0, slot0, slot1}, grad, [&](std::vector<double>& x, double g) {
      x[1] += (g - x[1]) * (1 - b1);
      x[2] = std::max(b2 * x[2], std::abs(g));
      x[0] -= lr / (1 - b1p) * (x[1] / (x[2] + eps));
    });
    CheckClose<float>(Value(v), want[0], 1e-5);
    CheckClose<float>(Value(m), want[1], 1e-5);
    CheckClose<float>(Value(u), want[2], 1e-5);
  }
  SUBCASE("AdamWithAmsgrad") {
    Var v = MakeVar("v", var0), m = MakeVar("m", slot0), u = MakeVar("u", slot1),
        vhat = MakeVar("vhat", slot2);
    REQUIRE(OpRunner("ResourceApplyAdamWithAmsgrad")
                .T(DType::kFloat)
                .Input(v.handle)
                .Input(m.handle)
                .Input(u.handle)
                .Input(vhat.handle)
                .Input(f(b1p))
                .Input(f(b2p))
                .Input(f(lr))
                .Input(f(b1))
                .Input(f(b2))
                .Input(f(eps))
                .Input(grad)
                .Run()
                .ok());
    auto want = RefUpdate({var0, slot0, slot1, slot2}, grad, [&](std::vector<double>& x, double g) {
      const double alpha = lr * std::sqrt(1 - b2p) / (1 - b1p);
      x[1] += (g - x[1]) * (1 - b1);
      x[2] += (g * g - x[2]) * (1 - b2);
      x[3] = std::max(x[3], x[2]);
      x[0] -= x[1] * alpha / (std::sqrt(x[3]) + eps);
    });
    CheckClose<float>(Value(v), want[0], 1e-5);
    CheckClose<float>(Value(m), want[1], 1e-5);
    CheckClose<float>(Value(u), want[2], 1e-5);
    CheckClose<float>(Value(vhat), want[3], 1e-5);
  }
}

TEST_CASE("ResourceApplyAdaMax has no bfloat16 kernel, as TF") {
  OpRunner r("ResourceApplyAdaMax", "adamax");
  r.T(DType::kBFloat16).InputSpec({DType::kResource, Shape{}});
  r.InputSpec({DType::kResource, Shape{}}).InputSpec({DType::kResource, Shape{}});
  for (int i = 0; i < 6; ++i) r.InputSpec({DType::kBFloat16, Shape{}});
  CheckError(r.Prepare(), {"attr 'T'", "bfloat16"});
}

TEST_CASE("an update writes in place only when no reader holds the variable's buffer") {
  const Tensor var0 = Random<float>(Shape{64}, 1, -1, 1);
  const Tensor grad = Random<float>(Shape{64}, 4, -1, 1);
  Var v = MakeVar("v", var0);
  auto step = [&] {
    REQUIRE(OpRunner("ResourceApplyGradientDescent")
                .T(DType::kFloat)
                .Input(v.handle)
                .Input(Tensor::Scalar(0.5f))
                .Input(grad)
                .Run()
                .ok());
  };
  // A reader keeps the value it read: the update goes to a new buffer.
  const Tensor held = Value(v);
  step();
  CHECK(TensorsEqual(held, var0));
  CHECK_FALSE(Value(v).SharesBufferWith(held));
  // Nobody else holds it now: the next update reuses the buffer.
  const void* buffer = Value(v).raw_data();
  step();
  CHECK(Value(v).raw_data() == buffer);
  auto want = RefUpdate({var0}, grad, [](std::vector<double>& x, double g) { x[0] -= 1.0 * g; });
  CheckClose<float>(Value(v), want[0]);
}

TEST_CASE("optimizer updates in float64 and float16") {
  Var v = MakeVar("v", Make<double>({1, 2}, {2}));
  REQUIRE(OpRunner("ResourceApplyGradientDescent")
              .T(DType::kDouble)
              .Input(v.handle)
              .Input(Tensor::Scalar(0.5))
              .Input(Make<double>({2, 4}, {2}))
              .Run()
              .ok());
  CheckClose<double>(Value(v), Make<double>({0, 0}, {2}));
  Tensor h(DType::kHalf, Shape{2});
  h.data<Half>()[0].bits = 0x3c00;  // 1.0
  h.data<Half>()[1].bits = 0x4000;  // 2.0
  Var hv = MakeVar("h", h);
  Tensor alpha(DType::kHalf, Shape{});
  alpha.data<Half>()[0].bits = 0x3800;  // 0.5
  REQUIRE(OpRunner("ResourceApplyGradientDescent")
              .T(DType::kHalf)
              .Input(hv.handle)
              .Input(alpha)
              .Input(h)
              .Run()
              .ok());
  Tensor got = Value(hv);
  CHECK(got.data<Half>()[0].bits == 0x3800);  // 1 - 0.5 * 1 = 0.5
  CHECK(got.data<Half>()[1].bits == 0x3c00);  // 2 - 0.5 * 2 = 1
}

// TF 2.21's results for the same updates on complex64 variables (g * g squares, sqrt is
// complex: TF's Eigen expressions in complex arithmetic).
TEST_CASE("optimizer updates on complex variables match TF") {
  using C = std::complex<float>;
  auto c = [](std::vector<C> v) {
    const auto n = static_cast<int64_t>(v.size());
    return n == 1 ? Tensor::Scalar(v[0]) : Make<C>(v, {n});
  };
  auto check = [](const Var& v, std::vector<C> want) {
    const Tensor got = Value(v);
    REQUIRE(got.NumElements() == static_cast<int64_t>(want.size()));
    for (size_t i = 0; i < want.size(); ++i)
      CHECK_MESSAGE(std::abs(got.data<C>()[i] - want[i]) <= 2e-6f * (1 + std::abs(want[i])),
                    v.var->name(), "[", i, "]: ", got.data<C>()[i].real(), "+",
                    got.data<C>()[i].imag(), "j, want ", want[i].real(), "+", want[i].imag(), "j");
  };
  const Tensor var0 = c({{1, 2}, {-0.5f, 1}}), slot_a = c({{0.1f, -0.2f}, {0.3f, 0}}),
               slot_b = c({{0.2f, 0.1f}, {0.5f, -0.5f}}), grad = c({{0.4f, -0.3f}, {-1, 0.5f}});
  {
    Var v = MakeVar("adam_var", var0), m = MakeVar("adam_m", slot_a), u = MakeVar("adam_v", slot_b);
    REQUIRE(OpRunner("ResourceApplyAdam")
                .T(DType::kComplex64)
                .Input(v.handle)
                .Input(m.handle)
                .Input(u.handle)
                .Input(c({{0.9f, 0}}))
                .Input(c({{0.999f, 0}}))
                .Input(c({{0.01f, 0}}))
                .Input(c({{0.9f, 0}}))
                .Input(c({{0.999f, 0}}))
                .Input(c({{1e-7f, 0}}))
                .Input(grad)
                .Run()
                .ok());
    check(v, {{0.99947536f, 2.0015671f}, {-0.50051844f, 0.99958175f}});
    check(m, {{0.13000001f, -0.21000001f}, {0.16999999f, 0.050000012f}});
    check(u, {{0.19987f, 0.09966001f}, {0.50025f, -0.50049996f}});
  }
  {
    Var v = MakeVar("rms_var", var0), ms = MakeVar("rms_ms", slot_b),
        mom = MakeVar("rms_mom", slot_a);
    REQUIRE(OpRunner("ResourceApplyRMSProp")
                .T(DType::kComplex64)
                .Input(v.handle)
                .Input(ms.handle)
                .Input(mom.handle)
                .Input(c({{0.01f, 0}}))
                .Input(c({{0.9f, 0}}))
                .Input(c({{0.5f, 0}}))
                .Input(c({{1e-7f, 0}}))
                .Input(grad)
                .Run()
                .ok());
    check(v, {{0.9422839f, 2.1081567f}, {-0.6372007f, 0.9992398f}});
    check(ms, {{0.187f, 0.06599999f}, {0.525f, -0.55f}});
    check(mom, {{0.057716064f, -0.10815663f}, {0.13720074f, 0.00076018f}});
  }
  {
    Var v = MakeVar("adagrad_var", var0), acc = MakeVar("adagrad_acc", slot_b);
    REQUIRE(OpRunner("ResourceApplyAdagrad")
                .T(DType::kComplex64)
                .Input(v.handle)
                .Input(acc.handle)
                .Input(c({{0.01f, 0}}))
                .Input(grad)
                .Run()
                .ok());
    check(v, {{0.99166465f, 2.0035667f}, {-0.49200147f, 0.999795f}});
    check(acc, {{0.27f, -0.14000002f}, {1.25f, -1.5f}});
  }
}

TEST_CASE("optimizer updates: errors name the input and leave the variables unchanged") {
  const Tensor var0 = Make<float>({1, 2, 3}, {3});
  Var v = MakeVar("w", var0), a = MakeVar("acc", Make<float>({1, 1}, {2}));
  auto r = OpRunner("ResourceApplyMomentum", "step")
               .T(DType::kFloat)
               .Input(v.handle)
               .Input(a.handle)
               .Input(Tensor::Scalar(0.1f))
               .Input(Make<float>({1, 1, 1}, {3}))
               .Input(Tensor::Scalar(0.9f))
               .Run();
  CheckError(r.status(), {"node 'step'", "variable 'acc'", "(2,)", "'grad'"});
  CHECK(TensorsEqual(Value(v), var0));
  auto scalar = OpRunner("ResourceApplyGradientDescent", "gd")
                    .T(DType::kFloat)
                    .Input(v.handle)
                    .Input(Make<float>({0.1f, 0.1f}, {2}))
                    .Input(Make<float>({1, 1, 1}, {3}),
                           TensorSpec{DType::kFloat, PartialShape::UnknownRank()})
                    .Run();
  CheckError(scalar.status(), {"input 'alpha'", "rank 0"});
  Var i = MakeVar("ints", Make<int32_t>({1}, {1}));
  OpRunner ints("ResourceApplyGradientDescent", "gd");
  ints.T(DType::kInt32)
      .InputSpec({DType::kResource, Shape{}})
      .InputSpec({DType::kInt32, Shape{}})
      .InputSpec({DType::kInt32, Shape{1}});
  CheckError(ints.Prepare(), {"attr 'T'", "int32"});
  auto dtype = OpRunner("ResourceApplyGradientDescent", "gd")
                   .T(DType::kDouble)
                   .Input(v.handle)
                   .Input(Tensor::Scalar(0.1))
                   .Input(Make<double>({1, 1, 1}, {3}))
                   .Run();
  CheckError(dtype.status(), {"variable 'w' has dtype float32", "float64"});
  auto same = OpRunner("ResourceApplyMomentum", "step")
                  .T(DType::kFloat)
                  .Input(v.handle)
                  .Input(v.handle)
                  .Input(Tensor::Scalar(0.1f))
                  .Input(var0)
                  .Input(Tensor::Scalar(0.9f))
                  .Run();
  CheckError(same.status(), {"'w' is passed more than once"});
  auto uninit = std::make_shared<VariableResource>("fresh", DType::kFloat, PartialShape(Shape{3}));
  Tensor uh(DType::kResource, Shape());
  uh.scalar<std::shared_ptr<ResourceBase>>() = uninit;
  auto un = OpRunner("ResourceApplyGradientDescent")
                .T(DType::kFloat)
                .Input(uh)
                .Input(Tensor::Scalar(0.1f))
                .Input(var0)
                .Run();
  CheckError(un.status(), {"'fresh' is not initialized"});
}

TEST_CASE("ResourceGather: rows, batch_dims, out-of-range indices") {
  Var p = MakeVar("params", Make<float>({0, 1, 2, 3, 4, 5}, {3, 2}));
  auto got = OpRunner("ResourceGather")
                 .Type("dtype", DType::kFloat)
                 .Type("Tindices", DType::kInt64)
                 .Input(p.handle)
                 .Input(Make<int64_t>({2, 0}, {2}))
                 .Run1();
  REQUIRE(got.ok());
  CHECK(TensorsEqual(*got, Make<float>({4, 5, 0, 1}, {2, 2})));
  auto bad = OpRunner("ResourceGather", "g")
                 .Type("dtype", DType::kFloat)
                 .Type("Tindices", DType::kInt32)
                 .Input(p.handle)
                 .Input(Make<int32_t>({1, 3}, {2}))
                 .Run();
  CheckError(bad.status(), {"node 'g'", "indices[1] = 3 is not in [0, 3)"});
  auto neg = OpRunner("ResourceGather", "g")
                 .Type("dtype", DType::kFloat)
                 .Type("Tindices", DType::kInt32)
                 .Input(p.handle)
                 .Input(Make<int32_t>({-1}, {1}))
                 .Run();
  CheckError(neg.status(), {"indices[0] = -1"});
  auto dtype = OpRunner("ResourceGather", "g")
                   .Type("dtype", DType::kInt32)
                   .Type("Tindices", DType::kInt32)
                   .Input(p.handle)
                   .Input(Make<int32_t>({0}, {1}))
                   .Run();
  CheckError(dtype.status(), {"'params' has dtype float32", "int32"});
}

TEST_CASE("ResourceScatterUpdate / Add: rows, scalar updates, repeated indices, errors") {
  Var v = MakeVar("table", Make<float>({0, 0, 0, 0, 0, 0}, {3, 2}));
  REQUIRE(OpRunner("ResourceScatterAdd")
              .Type("dtype", DType::kFloat)
              .Type("Tindices", DType::kInt32)
              .Input(v.handle)
              .Input(Make<int32_t>({2, 0, 2}, {3}))
              .Input(Make<float>({1, 2, 3, 4, 5, 6}, {3, 2}))
              .Run()
              .ok());
  CHECK(TensorsEqual(Value(v), Make<float>({3, 4, 0, 0, 6, 8}, {3, 2})));
  REQUIRE(OpRunner("ResourceScatterUpdate")
              .Type("dtype", DType::kFloat)
              .Type("Tindices", DType::kInt32)
              .Input(v.handle)
              .Input(Make<int32_t>({1}, {1}))
              .Input(Tensor::Scalar(9.0f))
              .Run()
              .ok());
  CHECK(TensorsEqual(Value(v), Make<float>({3, 4, 9, 9, 6, 8}, {3, 2})));
  auto bad = OpRunner("ResourceScatterUpdate", "s")
                 .Type("dtype", DType::kFloat)
                 .Type("Tindices", DType::kInt32)
                 .Input(v.handle)
                 .Input(Make<int32_t>({3}, {1}))
                 .Input(Make<float>({1, 1}, {1, 2}))
                 .Run();
  CheckError(bad.status(), {"node 's'", "indices[0] = 3 is not in [0, 3)"});
  auto shape = OpRunner("ResourceScatterAdd", "s")
                   .Type("dtype", DType::kFloat)
                   .Type("Tindices", DType::kInt32)
                   .Input(v.handle)
                   .Input(Make<int32_t>({0}, {1}))
                   .Input(Make<float>({1, 1, 1}, {1, 3}))
                   .Run();
  CheckError(shape.status(), {"'updates' must have shape (1, 2)"});
  CHECK(TensorsEqual(Value(v), Make<float>({3, 4, 9, 9, 6, 8}, {3, 2})));
  OpRunner strings("ResourceScatterAdd", "s");
  strings.Type("dtype", DType::kString)
      .Type("Tindices", DType::kInt32)
      .InputSpec({DType::kResource, Shape{}})
      .InputSpec({DType::kInt32, Shape{1}})
      .InputSpec({DType::kString, Shape{1}});
  CheckError(strings.Prepare(), {"attr 'dtype'", "string"});
  Var w = MakeVar("words", Make<std::string>({"a", "b"}, {2}));
  REQUIRE(OpRunner("ResourceScatterUpdate")
              .Type("dtype", DType::kString)
              .Type("Tindices", DType::kInt64)
              .Input(w.handle)
              .Input(Make<int64_t>({0}, {1}))
              .Input(Make<std::string>({"z"}, {1}))
              .Run()
              .ok());
  CHECK(TensorsEqual(Value(w), Make<std::string>({"z", "b"}, {2})));
}

TEST_CASE("TF1 reference variables: VariableV2 by name, Assign, AssignAdd, AssignSub") {
  ResourceManager rm;
  auto make = [&](const std::string& node) {
    return OpRunner("VariableV2", node)
        .Type("dtype", DType::kFloat)
        .ShapeAttr("shape", PartialShape(Shape{2}))
        .Resources(&rm)
        .Run1();
  };
  auto a = make("a"), a2 = make("a"), b = make("b");
  REQUIRE(a.ok());
  CHECK(TensorsEqual(*a, *a2));
  CHECK_FALSE(TensorsEqual(*a, *b));
  auto read = [&](const Tensor& h) {
    return OpRunner("ReadVariableOp", "read").Type("dtype", DType::kFloat).Input(h).Run1();
  };
  CheckError(read(*a).status(), {"'a' is not initialized"});
  auto out = OpRunner("Assign").T(DType::kFloat).Input(*a).Input(Make<float>({1, 2}, {2})).Run1();
  REQUIRE(out.ok());
  CHECK(TensorsEqual(*out, *a));  // output_ref is the ref
  REQUIRE(OpRunner("AssignAdd")
              .T(DType::kFloat)
              .Input(*a)
              .Input(Make<float>({10, 10}, {2}))
              .Run()
              .ok());
  REQUIRE(
      OpRunner("AssignSub").T(DType::kFloat).Input(*a).Input(Make<float>({1, 2}, {2})).Run().ok());
  CHECK(TensorsEqual(*read(*a), Make<float>({10, 10}, {2})));
  auto shape =
      OpRunner("Assign", "as").T(DType::kFloat).Input(*a).Input(Make<float>({1, 2, 3}, {3})).Run();
  CheckError(shape.status(), {"node 'as'", "(3,)", "(2,)"});
  REQUIRE(OpRunner("Assign")
              .T(DType::kFloat)
              .Bool("validate_shape", false)
              .Input(*b)
              .Input(Make<float>({1, 2, 3}, {3}))
              .Run()
              .ok());
  CHECK(TensorsEqual(*read(*b), Make<float>({1, 2, 3}, {3})));
  auto add_shape =
      OpRunner("AssignAdd", "add").T(DType::kFloat).Input(*a).Input(Make<float>({1}, {1})).Run();
  CheckError(add_shape.status(), {"node 'add'", "must be equal"});
  auto dtype =
      OpRunner("Assign", "as").T(DType::kInt32).Input(*a).Input(Make<int32_t>({1, 2}, {2})).Run();
  CheckError(dtype.status(), {"'a' has dtype float32", "int32"});
  OpRunner strings("AssignAdd", "add");
  strings.T(DType::kString)
      .InputSpec({DType::kResource, Shape{}})
      .InputSpec({DType::kString, Shape{}});
  CheckError(strings.Prepare(), {"attr 'T'", "string"});
}

TEST_CASE("Assert: passes silently, fails with the data as TF summarises it") {
  CHECK(OpRunner("Assert")
            .TypeList("T", {DType::kInt32})
            .Input(Tensor::Scalar(true))
            .Input(Make<int32_t>({1}, {1}))
            .Run()
            .ok());
  auto failed = OpRunner("Assert", "check")
                    .TypeList("T", {DType::kString, DType::kInt32, DType::kString, DType::kFloat,
                                    DType::kBool, DType::kDouble})
                    .Input(Tensor::Scalar(false))
                    .Input(Tensor::StringScalar("x > 0 did not hold"))
                    .Input(Make<int32_t>({1, 2, 3, 4, 5}, {5}))
                    .Input(Make<std::string>({"a", "b\n\x01'"}, {2}))
                    .Input(Make<float>({0.1f, 1.2345678f, 1e-5f}, {3}))
                    .Input(Make<bool>({true}, {1, 1}))
                    .Input(Make<double>({1.23456789}, {1}))
                    .Run();
  CheckError(failed.status(), {"node 'check'",
                               "assertion failed: [x > 0 did not hold] [1 2 3...] [a b\\n\\001\\'] "
                               "[0.1 1.23456776 1e-05] [1] [1.23456789]"});
  auto summarize = OpRunner("Assert")
                       .TypeList("T", {DType::kInt64})
                       .Int("summarize", 2)
                       .Input(Tensor::Scalar(false))
                       .Input(Make<int64_t>({7, 8, 9}, {3}))
                       .Run();
  CheckError(summarize.status(), {"assertion failed: [7 8...]"});
  auto vec =
      OpRunner("Assert", "check")
          .TypeList("T", {DType::kInt32})
          .Input(Make<bool>({false}, {1}), TensorSpec{DType::kBool, PartialShape::UnknownRank()})
          .Input(Make<int32_t>({1}, {1}))
          .Run();
  CheckError(vec.status(), {"'condition' must be a scalar", "(1,)"});
  OpRunner count("Assert", "check");
  count.TypeList("T", {DType::kInt32, DType::kInt32})
      .InputSpec({DType::kBool, Shape{}})
      .InputSpec({DType::kInt32, Shape{}});
  CheckError(count.Prepare(), {"node 'check'", "input"});
}

}  // namespace
}  // namespace kiln::exec
