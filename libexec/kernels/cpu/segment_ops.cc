// The CPU kernels of the ops in kernels/segment_ops.cc.
// Each output element accumulates its rows in input order, whatever the thread count.
#include "kernels/segment_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/math_functors.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using segment::ScalarIndex;

// ---- reducers --------------------------------------------------------------------------------

// Identity (the start of an accumulation), Step, the value of an empty sorted segment, and
// Finalize(acc, count) for a non-empty one. Accumulators widen as in cpu/reduction_ops.cc.
template <typename C>
using IntMeanAcc = std::conditional_t<std::is_signed_v<C>, int64_t, uint64_t>;
template <typename C>
using MeanAccOf = std::conditional_t<kIsInteger<C>, IntMeanAcc<C>, fn::Wide<C>>;

template <typename C>
struct SegSum {
  using Acc = fn::Wide<C>;
  static Acc Identity() { return Acc(0); }
  static Acc Step(Acc a, C v) { return fn::Add<Acc>()(a, Acc(v)); }
  static C Empty() { return C(0); }
  static C Finalize(Acc a, int64_t) { return static_cast<C>(a); }
};
template <typename C>
struct SegProd {
  using Acc = fn::Wide<C>;
  static Acc Identity() { return Acc(1); }
  static Acc Step(Acc a, C v) { return fn::Mul<Acc>()(a, Acc(v)); }
  static C Empty() { return C(1); }
  static C Finalize(Acc a, int64_t) { return static_cast<C>(a); }
};
template <typename C>
struct SegMax {
  using Acc = C;
  // Unsorted: TF starts every segment at the lowest value (an empty one stays there).
  static Acc Identity() { return std::numeric_limits<C>::lowest(); }
  // Sorted: Eigen's max reducer, from -inf (an all -inf segment is -inf).
  static Acc SortedIdentity() {
    if constexpr (std::numeric_limits<C>::has_infinity) return -std::numeric_limits<C>::infinity();
    return std::numeric_limits<C>::lowest();
  }
  // std::max(v, a), as TF's CPU functors: a NaN wins unless a later value replaces it, and
  // of equal values (0, -0) the later one is kept.
  static Acc Step(Acc a, C v) { return a > v ? a : v; }
  static C Empty() { return C(0); }
  static C Finalize(Acc a, int64_t) { return a; }
};
template <typename C>
struct SegMin {
  using Acc = C;
  static Acc Identity() { return std::numeric_limits<C>::max(); }
  static Acc SortedIdentity() {
    if constexpr (std::numeric_limits<C>::has_infinity) return std::numeric_limits<C>::infinity();
    return std::numeric_limits<C>::max();
  }
  static Acc Step(Acc a, C v) { return a < v ? a : v; }  // std::min(v, a), as SegMax
  static C Empty() { return C(0); }
  static C Finalize(Acc a, int64_t) { return a; }
};
// Integer means divide in integers (truncating), as TF.
template <typename C>
struct SegMean {
  using Acc = MeanAccOf<C>;
  static Acc Identity() { return Acc(0); }
  static Acc Step(Acc a, C v) { return fn::Add<Acc>()(a, static_cast<Acc>(v)); }
  static C Empty() { return C(0); }
  static C Finalize(Acc a, int64_t n) { return static_cast<C>(a / static_cast<Acc>(n)); }
};
template <typename C>
struct SegSqrtN {
  using Acc = fn::Wide<C>;
  static Acc Identity() { return Acc(0); }
  static Acc Step(Acc a, C v) { return a + Acc(v); }
  static C Empty() { return C(0); }
  static C Finalize(Acc a, int64_t n) { return static_cast<C>(a / std::sqrt(static_cast<Acc>(n))); }
};

// ---- sorted segments -------------------------------------------------------------------------

// Output row r gathers positions [starts[r], starts[r + 1]); position p reads data row
// rows[p] (rows null: row p). `inner` elements per row.
// Where a sorted segment's reduction starts: the reducer's SortedIdentity where it has one.
template <typename R>
typename R::Acc SortedIdentity() {
  if constexpr (requires { R::SortedIdentity(); }) {
    return R::SortedIdentity();
  } else {
    return R::Identity();
  }
}

template <typename R, typename C>
void ReduceSorted(const ThreadPool& pool, const C* data, int64_t inner, const int64_t* starts,
                  const int64_t* rows, int64_t out_rows, C* out) {
  using Acc = typename R::Acc;
  const int64_t per_row = std::max<int64_t>(1, inner);
  pool.ParallelFor(out_rows, std::max<int64_t>(1, 16384 / per_row),
                   [&](int64_t begin, int64_t end) {
                     constexpr int64_t kChunk = 256;
                     Acc acc[kChunk];
                     for (int64_t r = begin; r < end; ++r) {
                       const int64_t count = starts[r + 1] - starts[r];
                       C* o = out + r * inner;
                       if (count == 0) {
                         std::fill_n(o, inner, R::Empty());
                         continue;
                       }
                       for (int64_t c0 = 0; c0 < inner; c0 += kChunk) {
                         const int64_t m = std::min(kChunk, inner - c0);
                         for (int64_t j = 0; j < m; ++j) acc[j] = SortedIdentity<R>();
                         for (int64_t p = starts[r]; p < starts[r + 1]; ++p) {
                           const C* src = data + (rows ? rows[p] : p) * inner + c0;
                           for (int64_t j = 0; j < m; ++j) acc[j] = R::Step(acc[j], src[j]);
                         }
                         for (int64_t j = 0; j < m; ++j) o[c0 + j] = R::Finalize(acc[j], count);
                       }
                     }
                   });
}

// Start positions of the segments of sorted ids (out_rows + 1 of them), or an error naming the
// id that is out of order, negative or not below out_rows.
Status SegmentStarts(const KernelContext& ctx, const std::vector<int64_t>& ids, int64_t out_rows,
                     std::vector<int64_t>* starts) {
  for (size_t p = 1; p < ids.size(); ++p) {
    if (ids[p] < ids[p - 1]) {
      return ctx.Error("segment ids are not increasing: segment_ids[", p - 1, "] = ", ids[p - 1],
                       ", segment_ids[", p, "] = ", ids[p]);
    }
  }
  starts->assign(out_rows + 1, static_cast<int64_t>(ids.size()));
  int64_t next = 0;  // the first row whose start is not yet known
  for (size_t p = 0; p < ids.size(); ++p) {
    const int64_t id = ids[p];
    if (id < 0 || id >= out_rows) {
      return ctx.Error("segment_ids[", p, "] = ", id, " is out of range [0, ", out_rows, ")");
    }
    for (; next <= id; ++next) (*starts)[next] = static_cast<int64_t>(p);
  }
  return OkStatus();
}

// The output shape: [rows] + data.shape[skip:].
Shape SegmentOutputShape(const Shape& data, int skip, int64_t rows) {
  Shape s;
  s.AddDim(rows);
  for (int i = skip; i < data.rank(); ++i) s.AddDim(data.dim(i));
  return s;
}

// Elements per data row: the product of data's dims from `skip` on.
int64_t InnerSize(const Shape& data, int skip) {
  int64_t n = 1;
  for (int i = skip; i < data.rank(); ++i) n *= data.dim(i);
  return n;
}
template <template <typename> class R, typename List>
Status ComputeSegment(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& ids_t = ctx.input(1);
  if (data.rank() < 1) return ctx.Error("input 'data' must have rank >= 1, got a scalar");
  if (ids_t.rank() != 1 || ids_t.dim(0) != data.dim(0)) {
    return ctx.Error("input 'segment_ids' must be a vector of data's first dim ", data.dim(0),
                     ", got shape ", ids_t.shape().ToString());
  }
  const std::vector<int64_t> ids = IndexValues(ids_t);
  const int64_t out_rows = ids.empty() ? 0 : std::max<int64_t>(0, ids.back() + 1);
  std::vector<int64_t> starts;
  KILN_RETURN_IF_ERROR(SegmentStarts(ctx, ids, out_rows, &starts));
  KILN_ASSIGN_OR_RETURN(Tensor * out,
                        ctx.AllocateOutput(0, SegmentOutputShape(data.shape(), 1, out_rows)));
  const int64_t inner = InnerSize(data.shape(), 1);
  return Dispatch<List>(data.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    ReduceSorted<R<C>>(ctx.threads(), ComputeData<T>(data), inner, starts.data(), nullptr, out_rows,
                       MutableComputeData<T>(out));
    return OkStatus();
  });
}

// ---- sparse segments -------------------------------------------------------------------------

template <template <typename> class R, typename List, bool kNumSegments>
Status ComputeSparseSegment(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices_t = ctx.input(1);
  const Tensor& ids_t = ctx.input(2);
  if (data.rank() < 1) return ctx.Error("input 'data' must have rank >= 1, got a scalar");
  if (indices_t.rank() != 1 || ids_t.rank() != 1 || indices_t.dim(0) != ids_t.dim(0)) {
    return ctx.Error(
        "inputs 'indices' and 'segment_ids' must be vectors of one length, got "
        "shapes ",
        indices_t.shape().ToString(), " and ", ids_t.shape().ToString());
  }
  const std::vector<int64_t> rows = IndexValues(indices_t);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= data.dim(0)) {
      return ctx.Error("indices[", i, "] = ", rows[i], " is out of range [0, ", data.dim(0), ")");
    }
  }
  const std::vector<int64_t> ids = IndexValues(ids_t);
  int64_t out_rows = ids.empty() ? 0 : std::max<int64_t>(0, ids.back() + 1);
  if (kNumSegments) {
    const Tensor& n = ctx.input(3);
    if (n.rank() != 0) {
      return ctx.Error("input 'num_segments' must be a scalar, got shape ", n.shape().ToString());
    }
    out_rows = ScalarIndex(n);
    if (out_rows < 0) {
      return ctx.Error("input 'num_segments' must be non-negative, got ", out_rows);
    }
  }
  std::vector<int64_t> starts;
  KILN_RETURN_IF_ERROR(SegmentStarts(ctx, ids, out_rows, &starts));
  KILN_ASSIGN_OR_RETURN(Tensor * out,
                        ctx.AllocateOutput(0, SegmentOutputShape(data.shape(), 1, out_rows)));
  const int64_t inner = InnerSize(data.shape(), 1);
  return Dispatch<List>(data.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    ReduceSorted<R<C>>(ctx.threads(), ComputeData<T>(data), inner, starts.data(), rows.data(),
                       out_rows, MutableComputeData<T>(out));
    return OkStatus();
  });
}

// ---- unsorted segments -----------------------------------------------------------------------

template <template <typename> class R, typename List>
Status ComputeUnsorted(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& ids_t = ctx.input(1);
  const Tensor& num_t = ctx.input(2);
  if (num_t.rank() != 0) {
    return ctx.Error("input 'num_segments' must be a scalar, got shape ", num_t.shape().ToString());
  }
  const int64_t out_rows = ScalarIndex(num_t);
  if (out_rows < 0) return ctx.Error("input 'num_segments' must be non-negative, got ", out_rows);
  bool prefix = ids_t.rank() <= data.rank();
  for (int i = 0; prefix && i < ids_t.rank(); ++i) prefix = ids_t.dim(i) == data.dim(i);
  if (!prefix) {
    return ctx.Error("data's shape ", data.shape().ToString(),
                     " does not start with the shape of segment_ids ", ids_t.shape().ToString());
  }
  const std::vector<int64_t> ids = IndexValues(ids_t);
  for (size_t p = 0; p < ids.size(); ++p) {
    if (ids[p] >= out_rows) {
      return ctx.Error("segment_ids[", p, "] = ", ids[p], " is out of range [0, ", out_rows, ")");
    }
  }
  const Shape out_shape = SegmentOutputShape(data.shape(), ids_t.rank(), out_rows);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  const int64_t n = static_cast<int64_t>(ids.size());
  const int64_t inner = InnerSize(data.shape(), ids_t.rank());
  if (out_shape.num_elements() == 0) return OkStatus();
  return Dispatch<List>(data.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using Red = R<C>;
    using Acc = typename Red::Acc;
    const C* src = ComputeData<T>(data);
    C* o = MutableComputeData<T>(out);
    // Threads take column blocks; each walks every row in order for its columns. Empty segments
    // keep the identity (TF's: the lowest / highest finite value for Max / Min).
    KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(Acc) * out_shape.num_elements()));
    Acc* acc = static_cast<Acc*>(mem);
    ctx.threads().ParallelFor(inner, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n)),
                              [&](int64_t c0, int64_t c1) {
                                for (int64_t r = 0; r < out_rows; ++r)
                                  for (int64_t j = c0; j < c1; ++j)
                                    acc[r * inner + j] = Red::Identity();
                                for (int64_t p = 0; p < n; ++p) {
                                  if (ids[p] < 0) continue;  // negative ids drop their rows, as TF
                                  Acc* a = acc + ids[p] * inner;
                                  const C* s = src + p * inner;
                                  for (int64_t j = c0; j < c1; ++j) a[j] = Red::Step(a[j], s[j]);
                                }
                                for (int64_t r = 0; r < out_rows; ++r)
                                  for (int64_t j = c0; j < c1; ++j)
                                    o[r * inner + j] = Red::Finalize(acc[r * inner + j], 1);
                              });
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"SegmentSum", ComputeSegment<SegSum, NumberTypes>},
    {"SegmentMean", ComputeSegment<SegMean, NumberTypes>},
    {"SegmentProd", ComputeSegment<SegProd, NumberTypes>},
    {"SegmentMax", ComputeSegment<SegMax, RealTypes>},
    {"SegmentMin", ComputeSegment<SegMin, RealTypes>},
    {"UnsortedSegmentSum", ComputeUnsorted<SegSum, NumberTypes>},
    {"UnsortedSegmentProd", ComputeUnsorted<SegProd, NumberTypes>},
    {"UnsortedSegmentMax", ComputeUnsorted<SegMax, RealTypes>},
    {"UnsortedSegmentMin", ComputeUnsorted<SegMin, RealTypes>},
    {"SparseSegmentSum", ComputeSparseSegment<SegSum, RealTypes, false>},
    {"SparseSegmentMean", ComputeSparseSegment<SegMean, FloatTypes, false>},
    {"SparseSegmentSqrtN", ComputeSparseSegment<SegSqrtN, FloatTypes, false>},
    {"SparseSegmentSumWithNumSegments", ComputeSparseSegment<SegSum, RealTypes, true>},
    {"SparseSegmentMeanWithNumSegments", ComputeSparseSegment<SegMean, FloatTypes, true>},
    {"SparseSegmentSqrtNWithNumSegments", ComputeSparseSegment<SegSqrtN, FloatTypes, true>},
};

}  // namespace

std::span<const KernelEntry> SegmentCpuKernels() { return kCpu; }

}  // namespace kiln::exec
