// The one strided index walk behind broadcasting, selects, transposes, strided slices and
// reductions: an index space of up to kMaxRank row-major dims and N operands, each with a
// base offset and a stride per dim (0 where the operand repeats). Dims that every operand walks
// contiguously are merged when the plan is built, so the innermost run is as long as it can be
// and the walk's per-row overhead is paid rarely. Plain data, usable by a GPU kernel as it is.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>

#include "kiln/core/shape.h"
#include "kiln/exec/thread_pool.h"

namespace kiln::exec {

// MaxDims is kMaxRank except for plans that split dims (Tile views its output as
// [m0, d0, m1, d1, ...]).
template <int N, int MaxDims = kMaxRank>
struct StridedPlan {
  using Offsets = std::array<int64_t, N>;
  static constexpr int kMaxDims = MaxDims;
  int rank = 0;
  std::array<int64_t, MaxDims> dims{};
  std::array<Offsets, MaxDims> strides{};  // strides[dim][operand]
  Offsets offset{};
  int64_t num_elements = 1;

  // Appends an inner dim of size d with these operand strides. Size-1 dims are dropped; a dim
  // that continues the previous one for every operand is merged into it.
  void AddDim(int64_t d, const Offsets& s) {
    num_elements *= d;
    if (d == 1) return;
    if (rank > 0) {
      bool merge = true;
      for (int k = 0; k < N; ++k) merge &= strides[rank - 1][k] == s[k] * d;
      if (merge) {
        dims[rank - 1] *= d;
        strides[rank - 1] = s;
        return;
      }
    }
    dims[rank] = d;
    strides[rank] = s;
    ++rank;
  }

  int64_t inner() const { return rank == 0 ? 1 : dims[rank - 1]; }
  // Number of innermost runs.
  int64_t rows() const { return num_elements == 0 ? 0 : num_elements / inner(); }
};

// Calls row(offsets, n, inner_strides) for the elements [begin, end) of the index space, in
// runs along the innermost dim: offsets[k] is operand k's offset of the run's first element, n
// the run length, and operand k advances by inner_strides[k] along the run.
template <typename Plan, typename Row>
void WalkRange(const Plan& p, int64_t begin, int64_t end, Row&& row) {
  using Offsets = typename Plan::Offsets;
  constexpr int N = std::tuple_size_v<Offsets>;
  if (begin >= end) return;
  Offsets zero{};
  const Offsets& inner_strides = p.rank == 0 ? zero : p.strides[p.rank - 1];
  const int64_t inner = p.inner();
  const int outer = std::max(0, p.rank - 1);
  // Decompose the first row index into an index over the outer dims.
  std::array<int64_t, Plan::kMaxDims> idx{};
  Offsets off = p.offset;
  int64_t r = begin / inner;
  for (int i = outer - 1; i >= 0; --i) {
    idx[i] = r % p.dims[i];
    r /= p.dims[i];
    for (int k = 0; k < N; ++k) off[k] += idx[i] * p.strides[i][k];
  }
  int64_t col = begin % inner;
  for (int64_t pos = begin; pos < end;) {
    const int64_t n = std::min(inner - col, end - pos);
    Offsets start = off;
    for (int k = 0; k < N; ++k) start[k] += col * inner_strides[k];
    row(start, n, inner_strides);
    pos += n;
    col = 0;
    for (int i = outer - 1; i >= 0; --i) {
      for (int k = 0; k < N; ++k) off[k] += p.strides[i][k];
      if (++idx[i] < p.dims[i]) break;
      for (int k = 0; k < N; ++k) off[k] -= p.strides[i][k] * p.dims[i];
      idx[i] = 0;
    }
  }
}

// WalkRange over the whole index space, split into contiguous element ranges across the pool's
// threads when there is enough work (`min_elements_per_thread` each at least). Different
// elements must be independent.
template <typename Plan, typename Row>
void ParallelWalk(const Plan& p, const ThreadPool& pool, int64_t min_elements_per_thread,
                  Row&& row) {
  pool.ParallelFor(p.num_elements, min_elements_per_thread,
                   [&](int64_t begin, int64_t end) { WalkRange(p, begin, end, row); });
}

// Row-major strides of a shape.
inline std::array<int64_t, kMaxRank> RowMajorStrides(const Shape& s) {
  std::array<int64_t, kMaxRank> strides{};
  int64_t stride = 1;
  for (int i = s.rank() - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= s.dim(i);
  }
  return strides;
}

// Strides of `in` for each dim of `out` under numpy broadcasting (0 where `in` repeats).
inline std::array<int64_t, kMaxRank> BroadcastStrides(const Shape& in, const Shape& out) {
  std::array<int64_t, kMaxRank> strides{};
  int64_t stride = 1;
  for (int i = out.rank() - 1; i >= 0; --i) {
    const int j = i - (out.rank() - in.rank());
    if (j < 0) break;
    strides[i] = in.dim(j) == 1 ? 0 : stride;
    stride *= in.dim(j);
  }
  return strides;
}

// Operand 0 is the contiguous output of shape `out`; operands 1..N-1 are `ins` broadcast to it.
template <int N>
StridedPlan<N> MakeBroadcastPlan(const Shape& out, const std::array<Shape, N - 1>& ins) {
  StridedPlan<N> p;
  const auto out_strides = RowMajorStrides(out);
  std::array<std::array<int64_t, kMaxRank>, N - 1> in_strides;
  for (int k = 0; k < N - 1; ++k) in_strides[k] = BroadcastStrides(ins[k], out);
  for (int i = 0; i < out.rank(); ++i) {
    typename StridedPlan<N>::Offsets s;
    s[0] = out_strides[i];
    for (int k = 1; k < N; ++k) s[k] = in_strides[k - 1][i];
    p.AddDim(out.dim(i), s);
  }
  return p;
}

}  // namespace kiln::exec
