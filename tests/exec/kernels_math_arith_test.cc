// FloorMod, FloorDiv, Pow, Rsqrt, Reciprocal, ZerosLike, OnesLike and AddN against plain-loop
// references (Python's floor semantics for // and %), plus the error paths.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::BroadcastIndex;
using testing::CheckClose;
using testing::CheckError;
using testing::Make;
using testing::OpRunner;
using testing::Random;
using testing::RefBinary;
using testing::RefBroadcastShape;
using testing::Unravel;

// Python's floor division and modulo, written the slow obvious way.
template <typename T>
T PyFloorDiv(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(std::floor(static_cast<long double>(x) / static_cast<long double>(y)));
  } else {
    return std::floor(x / y);
  }
}
template <typename T>
T PyMod(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(x - PyFloorDiv(x, y) * y);
  } else {
    T r = std::fmod(x, y);
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
  }
}

const std::vector<std::pair<Shape, Shape>>& BroadcastCases() {
  static const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3}, {2, 3}}, {{2, 3}, {}},        {{}, {}},           {{2, 3}, {3}}, {{4, 1}, {1, 5}},
      {{0, 3}, {3}},    {{2, 1, 4}, {3, 1}}, {{37, 129}, {129}},
  };
  return cases;
}

// Divisors in [-9, -1] or [1, 9].
template <typename T>
Tensor NonZero(const Shape& s, uint32_t seed) {
  Tensor t = Random<T>(s, seed, 1, 9);
  int i = 0;
  for (T& v : t.flat<T>()) {
    if (i++ % 2) v = -v;
  }
  return t;
}

template <typename T>
void CheckFloorOps() {
  uint32_t seed = 21;
  for (const auto& item_ : BroadcastCases()) {
    const auto& sa = std::get<0>(item_);
    const auto& sb = std::get<1>(item_);
    CAPTURE(DTypeShortName(kDTypeOf<T>));
    CAPTURE(sa.ToString());
    CAPTURE(sb.ToString());
    Tensor a = Random<T>(sa, seed++, -50, 50);
    Tensor b = NonZero<T>(sb, seed++);
    auto div = OpRunner("FloorDiv").T(kDTypeOf<T>).Input(a).Input(b).Run1();
    REQUIRE_MESSAGE(div.ok(), div.status().ToString());
    CheckClose<T>(*div, RefBinary<T>(a, b, [](T x, T y) { return PyFloorDiv(x, y); }));
    auto mod = OpRunner("FloorMod").T(kDTypeOf<T>).Input(a).Input(b).Run1();
    REQUIRE_MESSAGE(mod.ok(), mod.status().ToString());
    CheckClose<T>(*mod, RefBinary<T>(a, b, [](T x, T y) { return PyMod(x, y); }), 1e-5);
  }
}

TEST_CASE("FloorDiv and FloorMod: float32") { CheckFloorOps<float>(); }
TEST_CASE("FloorDiv and FloorMod: float64") { CheckFloorOps<double>(); }
TEST_CASE("FloorDiv and FloorMod: int32") { CheckFloorOps<int32_t>(); }
TEST_CASE("FloorDiv and FloorMod: int64") { CheckFloorOps<int64_t>(); }

TEST_CASE("FloorDiv and FloorMod follow Python on signs") {
  Tensor x = Make<int32_t>({7, -7, 7, -7, 0, 6}, {6});
  Tensor y = Make<int32_t>({2, 2, -2, -2, 3, -3}, {6});
  auto div = OpRunner("FloorDiv").T(DType::kInt32).Input(x).Input(y).Run1();
  REQUIRE(div.ok());
  CHECK(TensorsEqual(*div, Make<int32_t>({3, -4, -4, 3, 0, -2}, {6})));
  auto mod = OpRunner("FloorMod").T(DType::kInt32).Input(x).Input(y).Run1();
  REQUIRE(mod.ok());
  CHECK(TensorsEqual(*mod, Make<int32_t>({1, 1, -1, -1, 0, 0}, {6})));
  auto fmod = OpRunner("FloorMod")
                  .T(DType::kFloat)
                  .Input(Make<float>({5.5f, -5.5f, 5.5f}, {3}))
                  .Input(Make<float>({2, 2, -2}, {3}))
                  .Run1();
  REQUIRE(fmod.ok());
  CheckClose<float>(*fmod, Make<float>({1.5f, 0.5f, -0.5f}, {3}));
  // The lowest int divided by -1 neither traps nor errs.
  const int32_t lowest = std::numeric_limits<int32_t>::lowest();
  auto edge = OpRunner("FloorMod")
                  .T(DType::kInt32)
                  .Input(Make<int32_t>({lowest}, {1}))
                  .Input(Make<int32_t>({-1}, {1}))
                  .Run1();
  REQUIRE(edge.ok());
  CHECK(edge->data<int32_t>()[0] == 0);
}

TEST_CASE("integer FloorDiv / FloorMod by zero is an error") {
  for (const char* op : {"FloorDiv", "FloorMod"}) {
    CAPTURE(op);
    auto got = OpRunner(op, "fd")
                   .T(DType::kInt64)
                   .Input(Make<int64_t>({1, 2}, {2}))
                   .Input(Make<int64_t>({1, 0}, {2}))
                   .Run1();
    CheckError(got.status(), {"node 'fd'", "division by zero"});
  }
  // Floats divide by zero as IEEE says.
  auto f = OpRunner("FloorDiv")
               .T(DType::kFloat)
               .Input(Make<float>({1}, {1}))
               .Input(Make<float>({0}, {1}))
               .Run1();
  REQUIRE(f.ok());
  CHECK(std::isinf(f->data<float>()[0]));
}

TEST_CASE("Pow") {
  uint32_t seed = 40;
  for (const auto& item_ : BroadcastCases()) {
    const auto& sa = std::get<0>(item_);
    const auto& sb = std::get<1>(item_);
    CAPTURE(sa.ToString());
    CAPTURE(sb.ToString());
    Tensor a = Random<double>(sa, seed++, 0.1, 4);
    Tensor b = Random<double>(sb, seed++, -3, 3);
    auto got = OpRunner("Pow").T(DType::kDouble).Input(a).Input(b).Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CheckClose<double>(*got,
                       RefBinary<double>(a, b, [](double x, double y) { return std::pow(x, y); }));
    Tensor ia = Random<int64_t>(sa, seed++, -5, 5);
    Tensor ib = Random<int64_t>(sb, seed++, 0, 6);
    auto igot = OpRunner("Pow").T(DType::kInt64).Input(ia).Input(ib).Run1();
    REQUIRE_MESSAGE(igot.ok(), igot.status().ToString());
    CheckClose<int64_t>(*igot, RefBinary<int64_t>(ia, ib, [](int64_t x, int64_t y) {
      int64_t r = 1;
      for (int64_t k = 0; k < y; ++k) r *= x;
      return r;
    }));
  }
  auto f = OpRunner("Pow")
               .T(DType::kFloat)
               .Input(Make<float>({2, -8, 0, 9}, {4}))
               .Input(Make<float>({-1, 2, 0, 0.5f}, {4}))
               .Run1();
  REQUIRE(f.ok());
  CheckClose<float>(*f, Make<float>({0.5f, 64, 1, 3}, {4}));
  auto neg = OpRunner("Pow", "p")
                 .T(DType::kInt32)
                 .Input(Make<int32_t>({2}, {1}))
                 .Input(Make<int32_t>({-1}, {1}))
                 .Run1();
  CheckError(neg.status(), {"node 'p'", "negative integer powers"});
}

TEST_CASE("Rsqrt and Reciprocal") {
  for (const Shape& s : {Shape{}, Shape{7}, Shape{3, 5}, Shape{0, 2}}) {
    CAPTURE(s.ToString());
    Tensor x = Random<float>(s, 3, 0.01, 50);
    Tensor want_rsqrt(DType::kFloat, s), want_recip(DType::kFloat, s);
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      want_rsqrt.data<float>()[i] = 1 / std::sqrt(x.data<float>()[i]);
      want_recip.data<float>()[i] = 1 / x.data<float>()[i];
    }
    auto r = OpRunner("Rsqrt").T(DType::kFloat).Input(x).Run1();
    REQUIRE(r.ok());
    CheckClose<float>(*r, want_rsqrt);
    auto q = OpRunner("Reciprocal").T(DType::kFloat).Input(x).Run1();
    REQUIRE(q.ok());
    CheckClose<float>(*q, want_recip);
  }
  auto d = OpRunner("Reciprocal").T(DType::kDouble).Input(Make<double>({-4, 0}, {2})).Run1();
  REQUIRE(d.ok());
  CHECK(d->data<double>()[0] == -0.25);
  CHECK(std::isinf(d->data<double>()[1]));
  auto i = OpRunner("Reciprocal").T(DType::kInt32).Input(Make<int32_t>({1, -1, 2}, {3})).Run1();
  REQUIRE(i.ok());
  CHECK(TensorsEqual(*i, Make<int32_t>({1, -1, 0}, {3})));
  auto zero = OpRunner("Reciprocal").T(DType::kInt32).Input(Make<int32_t>({0}, {1})).Run1();
  CheckError(zero.status(), {"division by zero"});
  OpRunner bad("Rsqrt", "rs");
  bad.T(DType::kInt32).InputSpec({DType::kInt32, Shape{2}});
  CheckError(bad.Prepare(), {"node 'rs'", "attr 'T'", "int32", "not supported"});
}

TEST_CASE("ZerosLike and OnesLike") {
  for (const Shape& s : {Shape{}, Shape{3}, Shape{2, 0}, Shape{2, 3, 4}}) {
    CAPTURE(s.ToString());
    OpRunner z("ZerosLike");
    z.T(DType::kFloat).Input(Random<float>(s, 1), {DType::kFloat, PartialShape::UnknownRank()});
    auto zero = z.Run1();
    REQUIRE(zero.ok());
    CHECK(z.output_specs()[0].shape.unknown_rank());
    CHECK(TensorsEqual(*zero, Tensor(DType::kFloat, s)));
    auto one = OpRunner("OnesLike").T(DType::kInt64).Input(Random<int64_t>(s, 2)).Run1();
    REQUIRE(one.ok());
    REQUIRE(one->shape() == s);
    for (int64_t v : one->flat<int64_t>()) CHECK(v == 1);
  }
  auto b = OpRunner("OnesLike").T(DType::kBool).Input(Make<bool>({false, true}, {2})).Run1();
  REQUIRE(b.ok());
  CHECK(TensorsEqual(*b, Make<bool>({true, true}, {2})));
  // TF's ZerosLike takes strings (empty ones); OnesLike does not.
  auto empty =
      OpRunner("ZerosLike").T(DType::kString).Input(Make<std::string>({"a", "b"}, {2})).Run1();
  REQUIRE(empty.ok());
  CHECK(TensorsEqual(*empty, Make<std::string>({"", ""}, {2})));
  OpRunner str("OnesLike");
  str.T(DType::kString).InputSpec({DType::kString, Shape{2}});
  CheckError(str.Prepare(), {"attr 'T'", "string", "not supported"});
  OpRunner dt("OnesLike");
  dt.T(DType::kFloat).InputSpec({DType::kInt32, Shape{2}});
  CheckError(dt.Prepare(), {"input 'x'", "expected dtype float32", "got int32"});
}

TEST_CASE("AddN sums same-shaped inputs") {
  for (int n : {1, 2, 5}) {
    for (const Shape& s : {Shape{}, Shape{4}, Shape{3, 7}, Shape{0, 3}}) {
      CAPTURE(n);
      CAPTURE(s.ToString());
      OpRunner r("AddN");
      r.Int("N", n).T(DType::kDouble);
      Tensor want(DType::kDouble, s);
      for (int k = 0; k < n; ++k) {
        Tensor x = Random<double>(s, 100 + k);
        r.Input(x);
        for (int64_t i = 0; i < x.NumElements(); ++i) want.data<double>()[i] += x.data<double>()[i];
      }
      auto got = r.Run1();
      REQUIRE_MESSAGE(got.ok(), got.status().ToString());
      CheckClose<double>(*got, want);
    }
  }
  auto ints = OpRunner("AddN")
                  .Int("N", 3)
                  .T(DType::kInt32)
                  .Input(Make<int32_t>({1, 2}, {2}))
                  .Input(Make<int32_t>({10, 20}, {2}))
                  .Input(Make<int32_t>({100, 200}, {2}))
                  .Run1();
  REQUIRE(ints.ok());
  CHECK(TensorsEqual(*ints, Make<int32_t>({111, 222}, {2})));
}

TEST_CASE("AddN: errors name the problem") {
  OpRunner shapes("AddN", "addn");
  shapes.Int("N", 2)
      .T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{2, 3}})
      .InputSpec({DType::kFloat, Shape{3}});
  CheckError(shapes.Prepare(), {"node 'addn'", "same shape", "(2, 3)", "input 1", "(3,)"});
  OpRunner count("AddN");
  count.Int("N", 3)
      .T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{2}})
      .InputSpec({DType::kFloat, Shape{2}});
  CheckError(count.Prepare(), {"expected 3 inputs", "got 2"});
  OpRunner zero("AddN");
  zero.Int("N", 0).T(DType::kFloat);
  CheckError(zero.Prepare(), {"attr 'N'", "at least 1"});
  OpRunner dtype("AddN");
  dtype.Int("N", 2)
      .T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{2}})
      .InputSpec({DType::kDouble, Shape{2}});
  CheckError(dtype.Prepare(), {"input 'inputs:1'", "expected dtype float32", "got float64"});
  OpRunner partial("AddN");
  partial.Int("N", 2)
      .T(DType::kFloat)
      .InputSpec({DType::kFloat, PartialShape{-1, 3}})
      .InputSpec({DType::kFloat, PartialShape{2, -1}});
  REQUIRE(partial.Prepare().ok());
  CHECK(partial.output_specs()[0].shape == PartialShape({2, 3}));
  auto late = OpRunner("AddN")
                  .Int("N", 2)
                  .T(DType::kFloat)
                  .Input(Random<float>({2, 3}, 1), {DType::kFloat, PartialShape{-1, -1}})
                  .Input(Random<float>({3, 2}, 2), {DType::kFloat, PartialShape{-1, -1}})
                  .Run1();
  CheckError(late.status(), {"same shape", "(2, 3)", "(3, 2)"});
}

}  // namespace
}  // namespace kiln::exec
