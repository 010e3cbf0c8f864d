// Op-tester cases of Cumsum, Cumprod, CumulativeLogsumexp and LinSpace. The scan reference walks
// each line along the axis with a running value in double.
#include <algorithm>
#include <cmath>

#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

Tensor AsDouble(const Tensor& t) {
  return RefUnaryDouble(
      t, [](double v) { return v; }, DType::kDouble);
}

// kind: 0 sum, 1 product, 2 log-sum-exp (an empty fold is -inf).
Tensor RefScan(const Tensor& x, int axis, int kind, bool exclusive, bool reverse) {
  const Tensor v = AsDouble(x);
  Tensor out(DType::kDouble, x.shape());
  const int64_t n = x.dim(axis);
  for (int64_t e = 0; e < x.NumElements(); ++e) {
    std::vector<int64_t> idx = Unravel(e, x.shape());
    // The line through e along the axis: fold the elements before it (after it, reversed).
    double acc = kind == 1 ? 1 : kind == 2 ? -INFINITY : 0;
    const int64_t k = idx[axis];
    for (int64_t j = 0; j < n; ++j) {
      const bool before = reverse ? j > k : j < k;
      if (!before && !(j == k && !exclusive)) continue;
      idx[axis] = j;
      int64_t flat = 0;
      for (int d = 0; d < x.rank(); ++d) flat = flat * x.dim(d) + idx[d];
      const double x_j = v.data<double>()[flat];
      if (kind == 0) acc += x_j;
      if (kind == 1) acc *= x_j;
      if (kind == 2) acc = std::max(acc, x_j) + std::log1p(std::exp(-std::abs(acc - x_j)));
    }
    out.data<double>()[e] = acc;
  }
  return RefUnaryDouble(
      out, [](double d) { return d; }, x.dtype());
}

}  // namespace

std::vector<OpCase> ScanCases() {
  std::vector<OpCase> c;
  uint32_t seed = 1;
  struct G {
    Shape shape;
    int axis;
  };
  for (const std::string op : {"Cumsum", "Cumprod", "CumulativeLogsumexp"}) {
    const bool prod = op == "Cumprod";
    const int kind = prod ? 1 : op == "Cumsum" ? 0 : 2;
    for (bool exclusive : {false, true}) {
      for (bool reverse : {false, true}) {
        for (const G& g : std::vector<G>{{Shape{7}, 0},
                                         {Shape{3, 4}, 0},
                                         {Shape{3, 4}, 1},
                                         {Shape{2, 3, 4}, -2},
                                         {Shape{0, 3}, 1},
                                         {Shape{40, 300, 3}, 1}}) {
          for (DType t : {DType::kFloat, DType::kInt32, DType::kDouble, DType::kHalf}) {
            if (g.shape.num_elements() > 1000 && t != DType::kFloat) continue;
            if (kind == 2 && t == DType::kInt32) continue;  // floating point only
            const int a = g.axis < 0 ? g.axis + g.shape.rank() : g.axis;
            // Long products: factors near 1 (floats) or -1, 0, 1 (integers).
            const bool integer = t == DType::kInt32;
            const double lo = prod ? (integer ? -1.4 : 0.9) : -3;
            const double hi = prod ? (integer ? 1.4 : 1.1) : 3;
            OpCaseBuilder b(op, op + " " + DTypeShortName(t) + " " + g.shape.ToString() + " axis " +
                                    std::to_string(g.axis) + (exclusive ? " exclusive" : "") +
                                    (reverse ? " reverse" : ""));
            if (exclusive) b.Bool("exclusive", true);
            if (reverse) b.Bool("reverse", true);
            c.push_back(
                b.T(t)
                    .Input(RandomOf(t, g.shape, seed++, lo, hi))
                    .ConstInput(Tensor::Scalar<int32_t>(g.axis))
                    .Reference1([a, kind, exclusive, reverse](const std::vector<Tensor>& in) {
                      return RefScan(in[0], a, kind, exclusive, reverse);
                    })
                    .Tolerance(t == DType::kDouble ? 1e-12 : 1e-4)
                    .Build());
          }
        }
      }
    }
  }
  c.push_back(OpCaseBuilder("Cumsum", "Cumsum int64 axis, runtime axis")
                  .T(DType::kInt64)
                  .Type("Tidx", DType::kInt64)
                  .Input(RandomOf(DType::kInt64, Shape{5, 6}, 3, -9, 9))
                  .Input(Tensor::Scalar<int64_t>(-1))
                  .Reference1([](const std::vector<Tensor>& in) {
                    return RefScan(in[0], 1, 0, false, false);
                  })
                  .Build());

  // LinSpace: start + i * (stop - start) / (num - 1), ending exactly at stop.
  struct L {
    double start, stop;
    int64_t num;
  };
  for (const L& l :
       std::vector<L>{{0, 1, 7}, {3, 3, 4}, {1, -2, 4}, {-5, 10, 1}, {0.5, 2.5, 100}}) {
    for (DType t : {DType::kFloat, DType::kDouble}) {
      const L v = l;
      Tensor start = RefUnaryDouble(
          Tensor::Scalar<double>(l.start), [](double d) { return d; }, t);
      Tensor stop = RefUnaryDouble(
          Tensor::Scalar<double>(l.stop), [](double d) { return d; }, t);
      c.push_back(OpCaseBuilder("LinSpace")
                      .T(t)
                      .Input(start)
                      .Input(stop)
                      .ConstInput(Tensor::Scalar<int32_t>(static_cast<int32_t>(l.num)))
                      .Reference1([v, t](const std::vector<Tensor>&) {
                        Tensor out(DType::kDouble, Shape{v.num});
                        for (int64_t i = 0; i < v.num; ++i) {
                          out.data<double>()[i] =
                              i == v.num - 1 && v.num > 1
                                  ? v.stop
                                  : v.start +
                                        static_cast<double>(i) * (v.stop - v.start) /
                                            static_cast<double>(std::max<int64_t>(1, v.num - 1));
                        }
                        return RefUnaryDouble(
                            out, [](double d) { return d; }, t);
                      })
                      .Tolerance(1e-6)
                      .Build());
    }
  }
  c.push_back(OpCaseBuilder("LinSpace", "LinSpace num as a runtime int64")
                  .T(DType::kFloat)
                  .Type("Tidx", DType::kInt64)
                  .Input(Tensor::Scalar<float>(2))
                  .Input(Tensor::Scalar<float>(4))
                  .Input(Tensor::Scalar<int64_t>(5))
                  .Reference1([](const auto&) {
                    return Make<float>({2, 2.5, 3, 3.5, 4}, {5});
                  })
                  .Build());
  return c;
}

}  // namespace kiln::testing
