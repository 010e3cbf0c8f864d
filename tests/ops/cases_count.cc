// Op-tester cases of Bincount, DenseBincount, RaggedBincount, Unique, UniqueV2,
// UniqueWithCounts(V2) and ListDiff. The references count with plain loops and find first
// occurrences (and values of y) by linear search.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/array_ref.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

// Bins of the values in [begin, end) of `arr` (weights w, or 1 each), dropping values >= size.
template <typename T>
void CountInto(const std::vector<int64_t>& arr, const Tensor* w, int64_t begin, int64_t end,
               int64_t size, bool binary, T* bins) {
  for (int64_t i = begin; i < end; ++i) {
    if (arr[i] >= size) continue;
    if (binary) {
      bins[arr[i]] = T(1);
    } else {
      bins[arr[i]] += w != nullptr && w->NumElements() > 0 ? w->data<T>()[i] : T(1);
    }
  }
}

std::vector<int64_t> Ints(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.NumElements(); ++i)
    v.push_back(t.dtype() == DType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i]);
  return v;
}

template <typename T>
OpCase BincountCase(const Tensor& arr, int32_t size, const Tensor& weights) {
  return OpCaseBuilder("Bincount")
      .T(kDTypeOf<T>)
      .Input(arr)
      .ConstInput(Tensor::Scalar<int32_t>(size))
      .Input(weights)
      .Reference1([size](const std::vector<Tensor>& in) {
        Tensor out(kDTypeOf<T>, Shape{size});
        CountInto<T>(Ints(in[0]), &in[2], 0, in[0].NumElements(), size, false, out.data<T>());
        return out;
      })
      .Build();
}

template <typename T, typename Index>
OpCase DenseBincountCase(const Tensor& arr, Index size, const Tensor& weights, bool binary) {
  return OpCaseBuilder("DenseBincount", "DenseBincount " + DTypeShortName(kDTypeOf<T>) + " " +
                                            arr.shape().ToString() + (binary ? " binary" : ""))
      .T(kDTypeOf<T>)
      .Type("Tidx", kDTypeOf<Index>)
      .Bool("binary_output", binary)
      .Input(arr)
      .Input(Tensor::Scalar<Index>(size))
      .Input(weights)
      .Reference1([size, binary](const std::vector<Tensor>& in) {
        const int64_t rows = in[0].rank() == 2 ? in[0].dim(0) : 1;
        const int64_t per_row = in[0].rank() == 2 ? in[0].dim(1) : in[0].NumElements();
        Tensor out(kDTypeOf<T>, in[0].rank() == 2 ? Shape{rows, size} : Shape{size});
        for (int64_t r = 0; r < rows; ++r)
          CountInto<T>(Ints(in[0]), &in[2], r * per_row, (r + 1) * per_row, size, binary,
                       out.data<T>() + r * size);
        return out;
      })
      .Build();
}

// RaggedBincount: the rows of a ragged tensor (row splits over the values) counted separately.
template <typename T, typename Index>
OpCase RaggedBincountCase(const std::vector<int64_t>& splits, const Tensor& values, Index size,
                          const Tensor& weights, bool binary) {
  const int64_t rows = static_cast<int64_t>(splits.size()) - 1;
  return OpCaseBuilder("RaggedBincount", "RaggedBincount " + DTypeShortName(kDTypeOf<T>) + " " +
                                             std::to_string(rows) + " rows" +
                                             (weights.NumElements() ? " weighted" : "") +
                                             (binary ? " binary" : ""))
      .T(kDTypeOf<T>)
      .Type("Tidx", kDTypeOf<Index>)
      .Bool("binary_output", binary)
      .Input(Make<int64_t>(splits, {static_cast<int64_t>(splits.size())}))
      .Input(values)
      .ConstInput(Tensor::Scalar<Index>(size))
      .Input(weights)
      .Reference1([splits, rows, size, binary](const std::vector<Tensor>& in) {
        Tensor out(kDTypeOf<T>, Shape{rows, size});
        for (int64_t r = 0; r < rows; ++r)
          CountInto<T>(Ints(in[1]), &in[3], splits[r], splits[r + 1], size, binary,
                       out.data<T>() + r * size);
        return out;
      })
      .Build();
}

// Unique slices along `axis` (-1: the elements of a vector), by linear search. NaN equals
// nothing, -0 equals 0.
template <typename T>
std::vector<Tensor> RefUnique(const Tensor& x, int axis, DType index, bool counts) {
  int64_t outer = 1, inner = 1, n = x.NumElements();
  if (axis >= 0) {
    n = x.dim(axis);
    for (int i = 0; i < x.rank(); ++i) {
      if (i < axis) outer *= x.dim(i);
      if (i > axis) inner *= x.dim(i);
    }
  }
  const T* p = x.data<T>();
  auto elem = [&](int64_t o, int64_t k, int64_t i) { return p[(o * n + k) * inner + i]; };
  auto same = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        if constexpr (std::is_floating_point_v<T>) {
          if (!(elem(o, a, i) == elem(o, b, i))) return false;
        } else {
          if (elem(o, a, i) != elem(o, b, i)) return false;
        }
      }
    return true;
  };
  std::vector<int64_t> first, idx, count;
  for (int64_t k = 0; k < n; ++k) {
    int64_t id = -1;
    for (size_t u = 0; u < first.size() && id < 0; ++u)
      if (same(first[u], k)) id = static_cast<int64_t>(u);
    if (id < 0) {
      id = static_cast<int64_t>(first.size());
      first.push_back(k);
      count.push_back(0);
    }
    ++count[id];
    idx.push_back(id);
  }
  const int64_t u = static_cast<int64_t>(first.size());
  Shape ys = x.shape();
  if (axis >= 0) {
    ys.set_dim(axis, u);
  } else {
    ys = Shape{u};
  }
  Tensor y(x.dtype(), ys);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < u; ++j)
      for (int64_t i = 0; i < inner; ++i)
        y.data<T>()[(o * u + j) * inner + i] = elem(o, first[j], i);
  auto as_index = [index](const std::vector<int64_t>& v) {
    Tensor t(index, Shape{static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) {
      if (index == DType::kInt32) {
        t.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
      } else {
        t.data<int64_t>()[i] = v[i];
      }
    }
    return t;
  };
  std::vector<Tensor> out = {y, as_index(idx)};
  if (counts) out.push_back(as_index(count));
  return out;
}

template <typename T>
void AddUnique(std::vector<OpCase>* c, const Tensor& x, DType index = DType::kInt32) {
  for (bool counts : {false, true}) {
    OpCaseBuilder b(counts ? "UniqueWithCounts" : "Unique");
    if (index != DType::kInt32) b.Type("out_idx", index);
    c->push_back(b.T(x.dtype())
                     .Input(x)
                     .Reference([index, counts](const std::vector<Tensor>& in) {
                       return RefUnique<T>(in[0], -1, index, counts);
                     })
                     .Build());
  }
}

template <typename T>
void AddUniqueV2(std::vector<OpCase>* c, const Tensor& x, std::vector<int64_t> axis) {
  const int a = axis.empty() ? -1 : static_cast<int>(axis[0] < 0 ? axis[0] + x.rank() : axis[0]);
  c->push_back(OpCaseBuilder("UniqueV2", "UniqueV2 " + DTypeShortName(x.dtype()) + " " +
                                             x.shape().ToString() + " axis " +
                                             (axis.empty() ? "[]" : std::to_string(axis[0])))
                   .T(x.dtype())
                   .Input(x)
                   .ConstInput(Make<int64_t>(axis, Shape{static_cast<int64_t>(axis.size())}))
                   .Reference([a](const std::vector<Tensor>& in) {
                     return RefUnique<T>(in[0], a, DType::kInt32, false);
                   })
                   .Build());
}

}  // namespace

namespace {

// HistogramFixedWidth (TF's values for the float case; its rule for the others).
void AddHistogram(std::vector<OpCase>* c) {
  c->push_back(OpCaseBuilder("HistogramFixedWidth", "HistogramFixedWidth float TF values")
                   .T(DType::kFloat)
                   .Input(Vec<float>({-1, 0, 0.5f, 1, 4.9f, 5, 7}))
                   .Input(Vec<float>({0, 5}))
                   .ConstInput(Tensor::Scalar<int32_t>(5))
                   .Reference1([](const auto&) {
                     return Vec<int32_t>({3, 1, 0, 0, 3});
                   })
                   .Build());
  for (DType t : {DType::kDouble, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kHalf}) {
    for (DType out : {DType::kInt32, DType::kInt64}) {
      c->push_back(OpCaseBuilder("HistogramFixedWidth", "HistogramFixedWidth " + DTypeShortName(t) +
                                                            " to " + DTypeShortName(out))
                       .T(t)
                       .Type("dtype", out)
                       .Input(RandomOf(t, Shape{4, 25}, 75, -30, 130))
                       .Input(FromDoubles(t, Shape{2}, {0, 100}))
                       .Input(Tensor::Scalar<int32_t>(7))
                       .Reference1([out](const std::vector<Tensor>& in) {
                         std::vector<double> counts(7, 0);
                         const double step = 100.0 / 7;
                         for (double v : Doubles(in[0])) {
                           const double pos = std::max(v, 0.0) / step;
                           counts[static_cast<size_t>(std::min(pos, 6.0))] += 1;
                         }
                         return FromDoubles(out, Shape{7}, counts);
                       })
                       .Build());
    }
  }
}

}  // namespace

std::vector<OpCase> CountCases() {
  std::vector<OpCase> c;
  // Bincount: values past the last bin are dropped; weights or counts.
  const Tensor arr = RandomOf(DType::kInt32, Shape{200}, 1, 0, 12);
  c.push_back(BincountCase<float>(arr, 10, Tensor(DType::kFloat, Shape{0})));
  c.push_back(BincountCase<float>(arr, 10, RandomOf(DType::kFloat, Shape{200}, 2)));
  c.push_back(BincountCase<int32_t>(RandomOf(DType::kInt32, Shape{4, 5}, 3, 0, 6), 7,
                                    RandomOf(DType::kInt32, Shape{4, 5}, 4, 0, 9)));
  c.push_back(BincountCase<double>(arr, 0, Tensor(DType::kDouble, Shape{0})));
  // Narrow integer weights wrap as TF's kernel adds them.
  c.push_back(BincountCase<int8_t>(arr, 10, RandomOf(DType::kInt8, Shape{200}, 5, -9, 9)));
  c.push_back(BincountCase<uint16_t>(arr, 10, RandomOf(DType::kUInt16, Shape{200}, 6, 0, 900)));
  c.push_back(
      BincountCase<int64_t>(Tensor(DType::kInt32, Shape{0}), 3, Tensor(DType::kInt64, Shape{0})));
  // RaggedBincount: empty rows, values past the last bin, weights, presence.
  for (bool binary : {false, true}) {
    c.push_back(RaggedBincountCase<float, int64_t>({0, 0, 3, 3, 10, 12},
                                                   RandomOf(DType::kInt64, Shape{12}, 11, 0, 8), 6,
                                                   Tensor(DType::kFloat, Shape{0}), binary));
    c.push_back(RaggedBincountCase<int64_t, int32_t>(
        {0, 4, 9, 20}, RandomOf(DType::kInt32, Shape{20}, 12, 0, 5), 5,
        RandomOf(DType::kInt64, Shape{20}, 13, 0, 9), binary));
    c.push_back(
        RaggedBincountCase<double, int64_t>({0, 2, 5}, RandomOf(DType::kInt64, Shape{5}, 14, 0, 4),
                                            4, RandomOf(DType::kDouble, Shape{5}, 15), binary));
    c.push_back(RaggedBincountCase<int32_t, int32_t>({0}, Tensor(DType::kInt32, Shape{0}), 3,
                                                     Tensor(DType::kInt32, Shape{0}), binary));
  }
  // DenseBincount: vectors and rows of a matrix, counts, weights, presence.
  for (bool binary : {false, true}) {
    c.push_back(DenseBincountCase<float, int32_t>(RandomOf(DType::kInt32, Shape{30}, 5, 0, 9), 8,
                                                  Tensor(DType::kFloat, Shape{0}), binary));
    c.push_back(DenseBincountCase<int64_t, int64_t>(RandomOf(DType::kInt64, Shape{6, 9}, 6, 0, 7),
                                                    5, Tensor(DType::kInt64, Shape{0}), binary));
    c.push_back(DenseBincountCase<double, int32_t>(RandomOf(DType::kInt32, Shape{4, 8}, 7, 0, 5), 5,
                                                   RandomOf(DType::kDouble, Shape{4, 8}, 8),
                                                   binary));
  }
  // Unique, UniqueWithCounts over a vector.
  AddUnique<int32_t>(&c, RandomOf(DType::kInt32, Shape{300}, 9, -20, 20));
  AddUnique<int64_t>(&c, RandomOf(DType::kInt64, Shape{50}, 10, 0, 5), DType::kInt64);
  AddUnique<uint8_t>(&c, RandomOf(DType::kUInt8, Shape{40}, 11, 0, 255));
  AddUnique<bool>(&c, RandomOf(DType::kBool, Shape{9}, 12));
  AddUnique<std::string>(&c, Make<std::string>({"b", "a", "b", "", "a", "c", ""}, {7}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  AddUnique<float>(&c, Make<float>({nan, 1, nan, -0.0f, 0.0f, 1, 2.5f}, {7}));
  AddUnique<double>(&c, RandomOf(DType::kDouble, Shape{0}, 13));
  // UniqueV2: along an axis (rows, columns), the empty axis for a vector.
  Tensor rows = RandomOf(DType::kInt32, Shape{12, 3}, 14, 0, 1);
  AddUniqueV2<int32_t>(&c, rows, {0});
  AddUniqueV2<int32_t>(&c, RandomOf(DType::kInt32, Shape{2, 10}, 15, 0, 1), {1});
  AddUniqueV2<int32_t>(&c, RandomOf(DType::kInt32, Shape{2, 10}, 15, 0, 1), {-1});
  AddUniqueV2<float>(&c,
                     RefUnaryDouble(RandomOf(DType::kFloat, Shape{2, 8, 1}, 16, 0, 1),
                                    [](double v) { return std::round(v); }),
                     {1});
  AddUniqueV2<int64_t>(&c, RandomOf(DType::kInt64, Shape{20}, 17, 0, 4), {});
  AddUniqueV2<int64_t>(&c, RandomOf(DType::kInt64, Shape{20}, 17, 0, 4), {0});
  // UniqueWithCountsV2: UniqueV2 with the counts.
  for (int axis : {0, 1}) {
    c.push_back(
        OpCaseBuilder("UniqueWithCountsV2", "UniqueWithCountsV2 int32 axis " + std::to_string(axis))
            .T(DType::kInt32)
            .Input(rows)
            .ConstInput(Make<int64_t>({axis}, Shape{1}))
            .Reference([axis](const std::vector<Tensor>& in) {
              return RefUnique<int32_t>(in[0], axis, DType::kInt32, true);
            })
            .Build());
  }
  // ListDiff: x's values that y lacks, in order, duplicates kept, with their positions.
  const auto list_diff = [](const std::vector<double>& x, const std::vector<double>& y) {
    std::vector<double> out, idx;
    for (size_t i = 0; i < x.size(); ++i)
      if (std::find(y.begin(), y.end(), x[i]) == y.end()) {
        out.push_back(x[i]);
        idx.push_back(static_cast<double>(i));
      }
    return std::pair{out, idx};
  };
  for (DType t : {DType::kInt32, DType::kFloat, DType::kInt64}) {
    for (DType index : {DType::kInt32, DType::kInt64}) {
      OpCaseBuilder b("ListDiff", "ListDiff " + DTypeShortName(t) + " " + DTypeShortName(index));
      if (index != DType::kInt32) b.Type("out_idx", index);
      c.push_back(b.T(t)
                      .Input(RandomOf(t, Shape{30}, 18, -5, 5))
                      .Input(RandomOf(t, Shape{6}, 19, -5, 5))
                      .Reference([list_diff, t, index](const std::vector<Tensor>& in) {
                        const Tensor x = RefUnaryDouble(
                            in[0], [](double v) { return v; }, DType::kDouble);
                        const Tensor y = RefUnaryDouble(
                            in[1], [](double v) { return v; }, DType::kDouble);
                        auto [out, idx] =
                            list_diff({x.data<double>(), x.data<double>() + x.NumElements()},
                                      {y.data<double>(), y.data<double>() + y.NumElements()});
                        const Shape s{static_cast<int64_t>(out.size())};
                        return std::vector<Tensor>{
                            RefUnaryDouble(
                                Make<double>(out, s), [](double v) { return v; }, t),
                            RefUnaryDouble(
                                Make<double>(idx, s), [](double v) { return v; }, index)};
                      })
                      .Build());
    }
  }
  c.push_back(OpCaseBuilder("ListDiff", "ListDiff string")
                  .T(DType::kString)
                  .Input(Make<std::string>({"a", "b", "a", "c", ""}, {5}))
                  .Input(Make<std::string>({"a", "x"}, {2}))
                  .Reference([](const auto&) {
                    return std::vector<Tensor>{Make<std::string>({"b", "c", ""}, {3}),
                                               Make<int32_t>({1, 3, 4}, {3})};
                  })
                  .Build());
  AddHistogram(&c);
  return c;
}

}  // namespace kiln::testing
