// Op-tester cases of the segment reductions. The reference sends each data row (or each
// indexed row, for the sparse ops) to its segment and folds it there in double.
#include <cmath>
#include <limits>

#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

Tensor AsDouble(const Tensor& t) {
  return RefUnaryDouble(
      t, [](double v) { return v; }, DType::kDouble);
}

std::vector<int64_t> Ints(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.NumElements(); ++i)
    v.push_back(t.dtype() == DType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i]);
  return v;
}

enum class Kind { kSum, kMean, kProd, kMax, kMin, kSqrtN };

// rows[p] of data goes to segment ids[p] (negative: dropped); `skip` leading dims of data are
// the ids' dims. Empty segments: 0 for sorted and sparse ops (`sorted`), else the identity.
Tensor RefSegments(const Tensor& data, const std::vector<int64_t>& rows,
                   const std::vector<int64_t>& ids, int skip, int64_t out_rows, Kind kind,
                   bool sorted) {
  Shape os;
  os.AddDim(out_rows);
  int64_t inner = 1;
  for (int i = skip; i < data.rank(); ++i) {
    os.AddDim(data.dim(i));
    inner *= data.dim(i);
  }
  const Tensor v = AsDouble(data);
  const bool integer = data.dtype() != DType::kFloat && data.dtype() != DType::kDouble &&
                       data.dtype() != DType::kHalf && data.dtype() != DType::kBFloat16;
  Tensor out(DType::kDouble, os);
  std::vector<int64_t> count(out_rows, 0);
  for (size_t p = 0; p < ids.size(); ++p)
    if (ids[p] >= 0) ++count[ids[p]];
  // The largest finite value of the data's type (integers: clamped to it on the way back).
  double largest = 1e300;
  if (data.dtype() == DType::kFloat) largest = std::numeric_limits<float>::max();
  if (data.dtype() == DType::kDouble) largest = std::numeric_limits<double>::max();
  if (data.dtype() == DType::kHalf) largest = 65504;
  if (data.dtype() == DType::kBFloat16) largest = 3.3895313892515355e38;
  const double lowest = -largest;
  for (int64_t r = 0; r < out_rows; ++r) {
    for (int64_t j = 0; j < inner; ++j) {
      // Sorted float segments start at -inf / +inf (Eigen's reducers), unsorted ones at the
      // type's extremes (an all -inf segment: -inf sorted, the lowest float unsorted).
      constexpr double kInf = std::numeric_limits<double>::infinity();
      const bool inf_start = sorted && !integer;
      double acc = kind == Kind::kProd  ? 1
                   : kind == Kind::kMax ? (inf_start ? -kInf : lowest)
                   : kind == Kind::kMin ? (inf_start ? kInf : largest)
                                        : 0;
      for (size_t p = 0; p < ids.size(); ++p) {
        if (ids[p] != r) continue;
        const double x = v.data<double>()[rows[p] * inner + j];
        switch (kind) {
          case Kind::kProd:
            acc *= x;
            break;
          // TF's CPU functors: std::max(value, acc), so a NaN stays unless a later value
          // replaces it (and of 0 and -0 the later wins).
          case Kind::kMax:
            acc = std::max(x, acc);
            break;
          case Kind::kMin:
            acc = std::min(x, acc);
            break;
          default:
            acc += x;
        }
      }
      if (kind == Kind::kMean && count[r] > 0) {
        acc = integer ? std::trunc(acc / count[r]) : acc / count[r];
      }
      if (kind == Kind::kSqrtN && count[r] > 0) acc /= std::sqrt(static_cast<double>(count[r]));
      if (sorted && count[r] == 0) acc = kind == Kind::kProd ? 1 : 0;
      out.data<double>()[r * inner + j] = acc;
    }
  }
  return RefUnaryDouble(
      out, [](double d) { return d; }, data.dtype());
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

}  // namespace

std::vector<OpCase> SegmentCases() {
  std::vector<OpCase> c;
  uint32_t seed = 1;
  const std::vector<std::pair<std::string, Kind>> sorted_ops = {{"SegmentSum", Kind::kSum},
                                                                {"SegmentMean", Kind::kMean},
                                                                {"SegmentProd", Kind::kProd},
                                                                {"SegmentMax", Kind::kMax},
                                                                {"SegmentMin", Kind::kMin}};
  // Sorted ids with gaps (empty segments) and repeats; rows of several shapes.
  const std::vector<int32_t> ids = {0, 0, 1, 3, 3, 3, 6};
  for (const auto& [op, kind] : sorted_ops) {
    const Kind k = kind;
    for (DType t : {DType::kFloat, DType::kInt32, DType::kDouble, DType::kHalf, DType::kUInt8}) {
      for (const Shape& s : {Shape{7}, Shape{7, 3}, Shape{7, 2, 300}}) {
        if (s.num_elements() > 100 && t != DType::kFloat) continue;
        const bool u = t == DType::kUInt8;
        const double lo = k == Kind::kProd ? (u ? 0 : -2) : (u ? 0 : -5),
                     hi = k == Kind::kProd ? 2 : 5;
        c.push_back(OpCaseBuilder(op)
                        .T(t)
                        .Type("Tindices", DType::kInt32)
                        .Input(RandomOf(t, s, seed++, lo, hi))
                        .Input(Make<int32_t>(ids, {7}))
                        .Reference1([k](const std::vector<Tensor>& in) {
                          const std::vector<int64_t> id = Ints(in[1]);
                          return RefSegments(in[0], Iota(in[0].dim(0)), id, 1, id.back() + 1, k,
                                             true);
                        })
                        .Tolerance(1e-5)
                        .Build());
      }
    }
  }
  // A segment of -inf alone stays -inf (of +inf: +inf for the minimum).
  for (const auto& [op, kind] :
       std::vector<std::pair<std::string, Kind>>{{"SegmentMax", Kind::kMax},
                                                 {"SegmentMin", Kind::kMin},
                                                 {"UnsortedSegmentMax", Kind::kMax},
                                                 {"UnsortedSegmentMin", Kind::kMin}}) {
    const Kind k = kind;
    const bool unsorted = op.rfind("Unsorted", 0) == 0;
    const float inf = std::numeric_limits<float>::infinity();
    const float edge = k == Kind::kMax ? -inf : inf;
    OpCaseBuilder b(op, op + " of infinities alone");
    b.T(DType::kFloat)
        .Type("Tindices", DType::kInt32)
        .Input(Make<float>({edge, edge, 1.5f, edge}, {4}))
        .Input(Make<int32_t>({0, 0, 1, 2}, {4}));
    if (unsorted) b.ConstInput(Tensor::Scalar<int32_t>(4));
    c.push_back(
        b.Reference1([k, unsorted](const std::vector<Tensor>& in) {
           return RefSegments(in[0], Iota(4), {0, 0, 1, 2}, 1, unsorted ? 4 : 3, k, !unsorted);
         }).Build());
  }
  c.push_back(OpCaseBuilder("SegmentSum", "SegmentSum int64 ids, many segments")
                  .T(DType::kFloat)
                  .Type("Tindices", DType::kInt64)
                  .Input(RandomOf(DType::kFloat, Shape{5000, 8}, seed++))
                  .Input([] {
                    std::vector<int64_t> v(5000);
                    for (int64_t i = 0; i < 5000; ++i) v[i] = i / 3 + (i > 2500 ? 10 : 0);
                    return Make<int64_t>(v, {5000});
                  }())
                  .Reference1([](const std::vector<Tensor>& in) {
                    const std::vector<int64_t> id = Ints(in[1]);
                    return RefSegments(in[0], Iota(5000), id, 1, id.back() + 1, Kind::kSum, true);
                  })
                  .Tolerance(1e-5)
                  .Build());
  c.push_back(OpCaseBuilder("SegmentSum", "SegmentSum empty")
                  .T(DType::kFloat)
                  .Type("Tindices", DType::kInt32)
                  .Input(Tensor(DType::kFloat, Shape{0, 2}))
                  .Input(Tensor(DType::kInt32, Shape{0}))
                  .Reference1([](const auto&) {
                    return Tensor(DType::kFloat, Shape{0, 2});
                  })
                  .Build());

  // Unsorted: any order, negative ids dropped, ids of a prefix of data's shape.
  const std::vector<std::pair<std::string, Kind>> unsorted_ops = {
      {"UnsortedSegmentSum", Kind::kSum},
      {"UnsortedSegmentProd", Kind::kProd},
      {"UnsortedSegmentMax", Kind::kMax},
      {"UnsortedSegmentMin", Kind::kMin}};
  for (const auto& [op, kind] : unsorted_ops) {
    const Kind k = kind;
    for (DType t : {DType::kFloat, DType::kInt32, DType::kDouble, DType::kHalf, DType::kInt64}) {
      c.push_back(OpCaseBuilder(op)
                      .T(t)
                      .Type("Tindices", DType::kInt32)
                      .Input(RandomOf(t, Shape{6, 4}, seed++, k == Kind::kProd ? -2 : -5,
                                      k == Kind::kProd ? 2 : 5))
                      .Input(Make<int32_t>({3, 0, -1, 3, 5, 0}, {6}))
                      .ConstInput(Tensor::Scalar<int32_t>(7))
                      .Reference1([k](const std::vector<Tensor>& in) {
                        return RefSegments(in[0], Iota(6), Ints(in[1]), 1, 7, k, false);
                      })
                      .Tolerance(1e-5)
                      .Build());
    }
    c.push_back(OpCaseBuilder(op, op + " 2-D ids, int64 num_segments")
                    .T(DType::kFloat)
                    .Type("Tindices", DType::kInt64)
                    .Type("Tnumsegments", DType::kInt64)
                    .Input(RandomOf(DType::kFloat, Shape{3, 4, 2}, seed++, -2, 2))
                    .Input(Make<int64_t>({1, 0, 2, 1, 1, -5, 0, 2, 2, 2, 0, 1}, {3, 4}))
                    .Input(Tensor::Scalar<int64_t>(4))
                    .Reference1([k](const std::vector<Tensor>& in) {
                      return RefSegments(in[0], Iota(12), Ints(in[1]), 2, 4, k, false);
                    })
                    .Tolerance(1e-5)
                    .Build());
  }
  c.push_back(OpCaseBuilder("UnsortedSegmentSum", "UnsortedSegmentSum wide rows")
                  .T(DType::kFloat)
                  .Type("Tindices", DType::kInt32)
                  .Input(RandomOf(DType::kFloat, Shape{50, 2000}, seed++))
                  .Input(RandomOf(DType::kInt32, Shape{50}, 1000, -1, 9))
                  .ConstInput(Tensor::Scalar<int32_t>(10))
                  .Reference1([](const std::vector<Tensor>& in) {
                    return RefSegments(in[0], Iota(50), Ints(in[1]), 1, 10, Kind::kSum, false);
                  })
                  .Tolerance(1e-5)
                  .Build());

  // Sparse segments: rows chosen (and repeated) by indices, sorted segment ids.
  const std::vector<std::pair<std::string, Kind>> sparse_ops = {
      {"SparseSegmentSum", Kind::kSum},
      {"SparseSegmentMean", Kind::kMean},
      {"SparseSegmentSqrtN", Kind::kSqrtN}};
  for (const auto& [op, kind] : sparse_ops) {
    const Kind k = kind;
    for (bool with_num : {false, true}) {
      for (DType t : {DType::kFloat, DType::kDouble, DType::kBFloat16}) {
        for (DType index : {DType::kInt32, DType::kInt64}) {
          const std::string name = with_num ? op + "WithNumSegments" : op;
          OpCaseBuilder b(name);
          b.T(t).Type("Tidx", index).Type("Tsegmentids", index);
          const std::vector<int64_t> rows = {4, 0, 4, 2, 1, 1, 3};
          const std::vector<int64_t> segs = {0, 0, 0, 2, 2, 3, 5};
          auto as = [index](const std::vector<int64_t>& v) {
            return index == DType::kInt32
                       ? Make<int32_t>(std::vector<int32_t>(v.begin(), v.end()), {7})
                       : Make<int64_t>(v, {7});
          };
          b.Input(RandomOf(t, Shape{5, 3}, seed++)).Input(as(rows)).Input(as(segs));
          if (with_num)
            b.Type("Tnumsegments", index)
                .ConstInput(index == DType::kInt32 ? Tensor::Scalar<int32_t>(8)
                                                   : Tensor::Scalar<int64_t>(8));
          const int64_t out_rows = with_num ? 8 : 6;
          c.push_back(b.Reference1([k, rows, segs, out_rows](const std::vector<Tensor>& in) {
                         return RefSegments(in[0], rows, segs, 1, out_rows, k, true);
                       })
                          .Tolerance(1e-6)
                          .Build());
        }
      }
    }
  }
  c.push_back(OpCaseBuilder("SparseSegmentSum", "SparseSegmentSum int32 data, big rows")
                  .T(DType::kInt32)
                  .Input(RandomOf(DType::kInt32, Shape{20, 3000}, seed++, -9, 9))
                  .Input(RandomOf(DType::kInt32, Shape{40}, 1001, 0, 19))
                  .Input([] {
                    std::vector<int32_t> v(40);
                    for (int i = 0; i < 40; ++i) v[i] = i / 4;
                    return Make<int32_t>(v, {40});
                  }())
                  .Reference1([](const std::vector<Tensor>& in) {
                    return RefSegments(in[0], Ints(in[1]), Ints(in[2]), 1, 10, Kind::kSum, true);
                  })
                  .Build());
  return c;
}

}  // namespace kiln::testing
