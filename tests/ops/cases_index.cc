// Op-tester cases of position ops: TopKV2, ApproxTopK, Where, InvertPermutation, LowerBound,
// UpperBound, UnravelIndex, InTopK(V2), NthElement.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ops/array_ref.h"
#include "ops/op_cases.h"

namespace kiln::testing {

std::vector<OpCase> IndexCases() {
  std::vector<OpCase> c;
  // TopKV2: per row, the k largest by a stable sort (ties keep the lower index first).
  for (DType t : {DType::kFloat, DType::kInt32, DType::kDouble, DType::kHalf, DType::kInt8,
                  DType::kUInt16, DType::kInt64, DType::kBFloat16}) {
    for (const Shape& s : {Shape{7}, Shape{3, 10}, Shape{2, 2, 5}, Shape{64, 300}}) {
      const int64_t cols = s.dim(s.rank() - 1);
      for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{3}, cols}) {
        if (s.num_elements() > 1000 && k != 3) continue;
        c.push_back(OpCaseBuilder("TopKV2", "TopKV2 " + DTypeShortName(t) + " " + s.ToString() +
                                                " k=" + std::to_string(k))
                        .T(t)
                        .Type("Tk", DType::kInt32)
                        .Input(RandomOf(t, s, 17, -4, 4))  // small range: ties happen
                        .ConstInput(Tensor::Scalar<int32_t>(static_cast<int32_t>(k)))
                        .Reference([k](const std::vector<Tensor>& in) {
                          const Tensor x = RefUnaryDouble(
                              in[0], [](double v) { return v; }, DType::kDouble);
                          const int64_t n = x.dim(x.rank() - 1);
                          Shape out = x.shape();
                          out.set_dim(out.rank() - 1, k);
                          Tensor values(DType::kDouble, out), indices(DType::kInt32, out);
                          for (int64_t r = 0; r < (n == 0 ? 0 : x.NumElements() / n); ++r) {
                            std::vector<int64_t> order(n);
                            std::iota(order.begin(), order.end(), 0);
                            const double* row = x.data<double>() + r * n;
                            std::stable_sort(order.begin(), order.end(),
                                             [&](int64_t a, int64_t b) { return row[a] > row[b]; });
                            for (int64_t j = 0; j < k; ++j) {
                              values.data<double>()[r * k + j] = row[order[j]];
                              indices.data<int32_t>()[r * k + j] = static_cast<int32_t>(order[j]);
                            }
                          }
                          return std::vector<Tensor>{
                              RefUnaryDouble(
                                  values, [](double v) { return v; }, in[0].dtype()),
                              indices};
                        })
                        .Build());
        // ApproxTopK: TF's CPU kernel is the exact top k with int32 indices, k an attr.
        if (k == 0 || s.num_elements() > 1000) continue;
        c.push_back(OpCaseBuilder("ApproxTopK", "ApproxTopK " + DTypeShortName(t) + " " +
                                                    s.ToString() + " k=" + std::to_string(k))
                        .T(t)
                        .Int("k", k)
                        .Input(RandomOf(t, s, 17, -4, 4))
                        .Reference(c.back().reference)
                        .Build());
      }
    }
  }
  c.push_back(OpCaseBuilder("TopKV2", "TopKV2 NaN first, int64 k and indices")
                  .T(DType::kFloat)
                  .Type("Tk", DType::kInt64)
                  .Type("index_type", DType::kInt64)
                  .Input(Vec<float>({1, NAN, 2, 3}))
                  .Input(Tensor::Scalar<int64_t>(3))
                  .Reference([](const auto&) {
                    return std::vector<Tensor>{Vec<float>({NAN, 3, 2}), Vec<int64_t>({1, 3, 2})};
                  })
                  .Build());
  c.push_back(OpCaseBuilder("TopKV2", "TopKV2 int16 indices, unsorted attr")
                  .T(DType::kInt32)
                  .Type("Tk", DType::kInt16)
                  .Type("index_type", DType::kInt16)
                  .Bool("sorted", false)
                  .Input(Vec<int32_t>({5, 1, 5, 9}))
                  .Input(Tensor::Scalar<int16_t>(2))
                  .Reference([](const auto&) {
                    return std::vector<Tensor>{Vec<int32_t>({9, 5}), Vec<int16_t>({3, 0})};
                  })
                  .Build());

  // Where: coordinates of the non-zero elements in row-major order.
  for (DType t : {DType::kBool, DType::kFloat, DType::kInt32, DType::kHalf, DType::kUInt8,
                  DType::kDouble, DType::kInt64}) {
    for (const Shape& s : {Shape{}, Shape{7}, Shape{3, 4}, Shape{2, 0, 3}, Shape{2, 3, 2}}) {
      c.push_back(OpCaseBuilder("Where")
                      .T(t)
                      .Input(RandomOf(t, s, 23, -1.4, 1.4))  // rounds to -1, 0, 1 for ints
                      .Reference1([](const std::vector<Tensor>& in) {
                        const Tensor x = RefUnaryDouble(
                            in[0], [](double v) { return v; }, DType::kDouble);
                        std::vector<int64_t> coords;
                        int64_t count = 0;
                        for (int64_t i = 0; i < x.NumElements(); ++i) {
                          if (x.data<double>()[i] == 0) continue;
                          const Index o = Unravel(i, x.shape());
                          coords.insert(coords.end(), o.begin(), o.end());
                          ++count;
                        }
                        return Make<int64_t>(coords, Shape{count, x.rank()});
                      })
                      .Build());
    }
  }
  c.push_back(OpCaseBuilder("Where", "Where negative zero is zero")
                  .T(DType::kFloat)
                  .Input(Vec<float>({0.0f, -0.0f, 2.0f, NAN}))
                  .Reference1([](const auto&) {
                    return Make<int64_t>({2, 3}, Shape{2, 1});
                  })
                  .Build());

  // InvertPermutation.
  for (const std::vector<int64_t>& p :
       {std::vector<int64_t>{}, std::vector<int64_t>{0}, std::vector<int64_t>{3, 4, 0, 2, 1}}) {
    std::vector<int64_t> inv(p.size());
    for (size_t i = 0; i < p.size(); ++i) inv[p[i]] = static_cast<int64_t>(i);
    c.push_back(OpCaseBuilder("InvertPermutation")
                    .T(DType::kInt64)
                    .Input(Vec<int64_t>(p))
                    .Reference1([inv](const auto&) { return Vec<int64_t>(inv); })
                    .Build());
    std::vector<int32_t> p32(p.begin(), p.end()), inv32(inv.begin(), inv.end());
    c.push_back(OpCaseBuilder("InvertPermutation")
                    .T(DType::kInt32)
                    .Input(Vec<int32_t>(p32))
                    .Reference1([inv32](const auto&) { return Vec<int32_t>(inv32); })
                    .Build());
  }
  // LowerBound / UpperBound: per row, the count of sorted values below (or not above) each value;
  // ties and values outside the row included.
  for (DType t : {DType::kFloat, DType::kInt32, DType::kDouble}) {
    for (bool upper : {false, true}) {
      for (DType out : {DType::kInt32, DType::kInt64}) {
        const std::string op = upper ? "UpperBound" : "LowerBound";
        Tensor sorted = RefUnaryDouble(
            RandomOf(t, Shape{3, 8}, 31, -3, 3), [](double v) { return std::round(v); }, t);
        // Sort each row in the reference's double form, back to t.
        Tensor d = RefUnaryDouble(
            sorted, [](double v) { return v; }, DType::kDouble);
        for (int r = 0; r < 3; ++r)
          std::sort(d.data<double>() + r * 8, d.data<double>() + r * 8 + 8);
        sorted = RefUnaryDouble(
            d, [](double v) { return v; }, t);
        OpCaseBuilder b(op, op + " " + DTypeShortName(t) + " " + DTypeShortName(out));
        if (out != DType::kInt32) b.Type("out_type", out);
        c.push_back(
            b.T(t)
                .Input(sorted)
                .Input(RefUnaryDouble(
                    RandomOf(t, Shape{3, 5}, 32, -4, 4), [](double v) { return std::round(v); }, t))
                .Reference1([upper, out](const std::vector<Tensor>& in) {
                  const Tensor s = RefUnaryDouble(
                      in[0], [](double v) { return v; }, DType::kDouble);
                  const Tensor v = RefUnaryDouble(
                      in[1], [](double x) { return x; }, DType::kDouble);
                  Tensor o(DType::kDouble, v.shape());
                  for (int64_t i = 0; i < v.NumElements(); ++i) {
                    const double* row = s.data<double>() + (i / 5) * 8;
                    int64_t n = 0;
                    for (int j = 0; j < 8; ++j)
                      n += upper ? row[j] <= v.data<double>()[i] : row[j] < v.data<double>()[i];
                    o.data<double>()[i] = static_cast<double>(n);
                  }
                  return RefUnaryDouble(
                      o, [](double x) { return x; }, out);
                })
                .Build());
      }
    }
  }
  // InTopK (k an attr) and InTopKV2 (k an input): ties with the target count as not above it;
  // an out-of-range target or a non-finite prediction in the row gives false.
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor pred = Make<float>({0.1f, 0.5f, 0.2f, 0.2f,  //
                                   0.3f, 0.3f, 0.3f, 0.1f,  //
                                   0.9f, 0.0f, inf,  0.1f,  //
                                   0.4f, 0.2f, 0.1f, 0.3f,  //
                                   0.1f, 0.2f, 0.3f, 0.4f},
                                  {5, 4});
  for (int64_t k : {1, 2, 4}) {
    std::vector<bool> want;
    const std::vector<int64_t> targets = {2, 1, 0, 7, 0};
    for (int r = 0; r < 5; ++r) {
      const float* row = pred.data<float>() + r * 4;
      const int64_t t = targets[r];
      bool ok = t >= 0 && t < 4;
      int more = 0;
      for (int j = 0; ok && j < 4; ++j) {
        ok = std::isfinite(row[j]);
        more += row[j] > row[t];
      }
      want.push_back(ok && more < k);
    }
    const Tensor expected = Make<bool>(want, {5});
    c.push_back(OpCaseBuilder("InTopK", "InTopK k " + std::to_string(k))
                    .T(DType::kInt32)
                    .Int("k", k)
                    .Input(pred)
                    .Input(Vec<int32_t>({2, 1, 0, 7, 0}))
                    .Reference1([expected](const auto&) { return expected; })
                    .Build());
    c.push_back(OpCaseBuilder("InTopKV2", "InTopKV2 k " + std::to_string(k))
                    .T(DType::kInt64)
                    .Input(pred)
                    .Input(Vec<int64_t>(targets))
                    .ConstInput(Tensor::Scalar<int64_t>(k))
                    .Reference1([expected](const auto&) { return expected; })
                    .Build());
  }
  // NthElement: the n-th smallest of each row, or the n-th largest reversed.
  for (DType t : {DType::kFloat, DType::kInt32, DType::kDouble}) {
    for (bool reverse : {false, true}) {
      for (int32_t n : {0, 3, 6}) {
        c.push_back(OpCaseBuilder("NthElement", "NthElement " + DTypeShortName(t) + " n " +
                                                    std::to_string(n) + (reverse ? " reverse" : ""))
                        .T(t)
                        .Bool("reverse", reverse)
                        .Input(RandomOf(t, Shape{2, 3, 7}, 51, -9, 9))
                        .ConstInput(Tensor::Scalar<int32_t>(n))
                        .Reference1([n, reverse](const std::vector<Tensor>& in) {
                          const Tensor x = RefUnaryDouble(
                              in[0], [](double v) { return v; }, DType::kDouble);
                          Tensor out(DType::kDouble, Shape{2, 3});
                          for (int r = 0; r < 6; ++r) {
                            std::vector<double> row(x.data<double>() + r * 7,
                                                    x.data<double>() + r * 7 + 7);
                            std::sort(row.begin(), row.end());
                            out.data<double>()[r] = row[reverse ? 6 - n : n];
                          }
                          return RefUnaryDouble(
                              out, [](double v) { return v; }, in[0].dtype());
                        })
                        .Build());
      }
    }
  }
  // UnravelIndex: a scalar and a vector of flat indices, int32 and int64.
  c.push_back(OpCaseBuilder("UnravelIndex", "UnravelIndex vector int32")
                  .Type("Tidx", DType::kInt32)
                  .Input(Vec<int32_t>({0, 5, 23, 17}))
                  .Input(Vec<int32_t>({2, 3, 4}))
                  .Reference1([](const auto&) {
                    return Make<int32_t>({0, 0, 1, 1, 0, 1, 2, 1, 0, 1, 3, 1}, Shape{3, 4});
                  })
                  .Build());
  c.push_back(OpCaseBuilder("UnravelIndex", "UnravelIndex scalar int64")
                  .Type("Tidx", DType::kInt64)
                  .Input(Tensor::Scalar<int64_t>(17))
                  .Input(Vec<int64_t>({4, 5}))
                  .Reference1([](const auto&) {
                    return Vec<int64_t>({3, 2});
                  })
                  .Build());
  return c;
}

}  // namespace kiln::testing
