// The CPU kernels of the ragged ops in kernels/ragged_ops.cc. Splits are validated before any
// value is touched.
#include "kernels/ragged_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/nd_index.h"
#include "kernels/ragged_util.h"
#include "kernels/strided_walk.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using ragged::GatherState;
using ragged::Partition;
using ragged::RangeTypes;
using ragged::ToTensorState;

using Ranges = std::vector<std::pair<int64_t, int64_t>>;

// ---- RaggedRange -----------------------------------------------------------------------------

template <typename T>
int64_t RaggedRangeSize(T start, T limit, T delta) {
  if ((delta > 0 && limit < start) || (delta < 0 && limit > start)) return 0;
  if constexpr (std::is_integral_v<T>) {
    const int64_t span = std::abs(static_cast<int64_t>(limit) - static_cast<int64_t>(start));
    const int64_t step = std::abs(static_cast<int64_t>(delta));
    return (span + step - 1) / step;
  } else {
    return static_cast<int64_t>(std::ceil(std::abs((limit - start) / delta)));
  }
}

Status ComputeRaggedRange(const KernelContext& ctx) {
  int64_t rows = -1;
  bool all_scalar = true;
  for (int i = 0; i < 3; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.rank() > 1) return ctx.Error("starts, limits, and deltas must be scalars or vectors");
    if (t.rank() == 1) {
      all_scalar = false;
      if (rows >= 0 && rows != t.dim(0)) {
        return ctx.Error("starts, limits, and deltas must have the same shape");
      }
      rows = t.dim(0);
    }
  }
  if (all_scalar) rows = 1;
  return Dispatch<RangeTypes>(ctx.input(0).dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    auto at = [&](int i, int64_t r) {
      const Tensor& t = ctx.input(i);
      return t.data<T>()[t.rank() == 0 ? 0 : r];
    };
    Splits splits(rows + 1, 0);
    for (int64_t r = 0; r < rows; ++r) {
      const T delta = at(2, r);
      if (delta == T(0)) return ctx.Error("requires delta != 0");
      const T start = at(0, r), limit = at(1, r);
      if constexpr (!std::is_integral_v<T>) {
        if (!std::isfinite(static_cast<double>((limit - start) / delta))) {
          return ctx.Error("range from ", start, " to ", limit, " by ", delta, " is not finite");
        }
      }
      const int64_t size = RaggedRangeSize(start, limit, delta);
      if (size > (int64_t{1} << 40) - splits[r]) {
        return ctx.Error("range from ", start, " to ", limit, " by ", delta, " is too large");
      }
      splits[r + 1] = splits[r] + size;
    }
    KILN_RETURN_IF_ERROR(WriteSplitsOutput(ctx, 0, splits));
    KILN_ASSIGN_OR_RETURN(Tensor * values, ctx.AllocateOutput(1, Shape{splits[rows]}));
    T* v = values->data<T>();
    for (int64_t r = 0; r < rows; ++r) {
      T value = at(0, r);
      const T delta = at(2, r);
      for (int64_t j = splits[r]; j < splits[r + 1]; ++j, value += delta) v[j] = value;
    }
    return OkStatus();
  });
}

// ---- RaggedGather ----------------------------------------------------------------------------

Status ComputeRaggedGather(const KernelContext& ctx) {
  const int p = ctx.state<GatherState>().params_ragged_rank;
  const Tensor& values = ctx.input(p);
  const Tensor& indices = ctx.input(p + 1);
  if (values.rank() == 0) return ctx.Error("params_dense_values must have rank at least 1");
  const std::vector<Splits> splits = ReadSplits(ctx, 0, p);
  Status valid = ValidateNestedSplits(splits, values.dim(0), "params_nested_splits");
  if (!valid.ok()) return Wrap(ctx, valid);
  if (ctx.num_outputs() - 1 != indices.rank() - 1 + p) {
    return ctx.Error(
        "OUTPUT_RAGGED_RANK ", ctx.num_outputs() - 1,
        " does not match indices.rank - 1 + PARAMS_RAGGED_RANK = ", indices.rank() - 1 + p);
  }
  const int64_t nrows = static_cast<int64_t>(splits[0].size()) - 1;
  const std::vector<int64_t> idx = IndexValues(indices);
  Ranges ranges;
  ranges.reserve(idx.size());
  for (size_t j = 0; j < idx.size(); ++j) {
    if (idx[j] < 0 || idx[j] >= nrows) {
      return ctx.Error("indices", PositionString(static_cast<int64_t>(j), indices.shape().dims()),
                       " = ", idx[j], " is not in [0, ", nrows, ")");
    }
    ranges.emplace_back(idx[j], idx[j] + 1);
  }
  int out = 0;
  // The indices' own outer dims become uniform ragged dims.
  int64_t outer = 1;
  for (int d = 0; d + 1 < indices.rank(); ++d) {
    outer *= indices.dim(d);
    const int64_t len = indices.dim(d + 1);
    Splits s(outer + 1);
    for (int64_t i = 0; i <= outer; ++i) s[i] = i * len;
    KILN_RETURN_IF_ERROR(WriteSplitsOutput(ctx, out++, s));
  }
  // Each params level: the row lengths of the selected rows, then their children's ranges.
  for (int k = 0; k < p; ++k) {
    const Splits& sk = splits[k];
    Splits s = {0};
    for (auto& r : ranges) {
      for (int64_t i = r.first; i < r.second; ++i) s.push_back(s.back() + sk[i + 1] - sk[i]);
      r = {sk[r.first], sk[r.second]};
    }
    // A scalar index selects one row: its own length is not a ragged dim of the result.
    if (k > 0 || indices.rank() > 0) KILN_RETURN_IF_ERROR(WriteSplitsOutput(ctx, out++, s));
  }
  return WriteValueRows(ctx, out, values, ranges);
}

// ---- RaggedTensorToSparse --------------------------------------------------------------------

Status ComputeToSparse(const KernelContext& ctx) {
  const int r = ctx.num_inputs() - 1;
  const Tensor& values = ctx.input(r);
  if (values.rank() == 0) return ctx.Error("rt_dense_values must have rank at least 1");
  const std::vector<Splits> splits = ReadSplits(ctx, 0, r);
  Status valid = ValidateNestedSplits(splits, values.dim(0), "rt_nested_splits");
  if (!valid.ok()) return Wrap(ctx, valid);
  const int inner_rank = values.rank() - 1;
  const int dense_rank = r + 1 + inner_rank;
  // parent[k][c]: the row of level k that position c of level k+1 belongs to.
  std::vector<std::vector<int64_t>> parent(r);
  std::vector<int64_t> dense_shape(dense_rank, 0);
  dense_shape[0] = static_cast<int64_t>(splits[0].size()) - 1;
  for (int k = 0; k < r; ++k) {
    const Splits& s = splits[k];
    parent[k].resize(s.back());
    for (size_t row = 0; row + 1 < s.size(); ++row) {
      std::fill(parent[k].begin() + s[row], parent[k].begin() + s[row + 1],
                static_cast<int64_t>(row));
      dense_shape[k + 1] = std::max(dense_shape[k + 1], s[row + 1] - s[row]);
    }
  }
  for (int d = 0; d < inner_rank; ++d) dense_shape[r + 1 + d] = values.dim(d + 1);
  const int64_t n = values.NumElements();
  const int64_t inner = values.dim(0) == 0 ? 0 : n / values.dim(0);
  KILN_ASSIGN_OR_RETURN(Tensor * oi, ctx.AllocateOutput(0, Shape{n, dense_rank}));
  KILN_ASSIGN_OR_RETURN(Tensor * ov, ctx.AllocateOutput(1, Shape{n}));
  KILN_ASSIGN_OR_RETURN(Tensor * os, ctx.AllocateOutput(2, Shape{dense_rank}));
  std::copy(dense_shape.begin(), dense_shape.end(), os->data<int64_t>());
  int64_t* idx = oi->data<int64_t>();
  std::vector<int64_t> coords(dense_rank);
  for (int64_t v = 0; v < values.dim(0); ++v) {
    // Ragged coordinates of value row v, innermost first.
    int64_t pos = v;
    for (int k = r - 1; k >= 0; --k) {
      const int64_t row = parent[k][pos];
      coords[k + 1] = pos - splits[k][row];
      pos = row;
    }
    coords[0] = pos;
    for (int64_t e = 0; e < inner; ++e) {
      int64_t rem = e;
      for (int d = inner_rank - 1; d >= 0; --d) {
        coords[r + 1 + d] = rem % values.dim(d + 1);
        rem /= values.dim(d + 1);
      }
      idx = std::copy(coords.begin(), coords.end(), idx);
    }
  }
  // The values flattened: the same elements in the same order.
  return DispatchStorage(values.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    std::copy(Elems<U>(values), Elems<U>(values) + n, Elems<U>(*ov));
    return OkStatus();
  });
}

// ---- RaggedTensorToTensor --------------------------------------------------------------------

// Row ids (sorted, each in [0, parents)) as splits with `parents` rows.
Result<Splits> RowIdsToSplits(const std::vector<int64_t>& ids, int64_t parents) {
  Splits s(parents + 1, 0);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= parents) {
      return InvalidArgument("value_rowids[", i, "] = ", ids[i], " is not in [0, ", parents, ")");
    }
    if (i > 0 && ids[i] < ids[i - 1]) {
      return InvalidArgument("value_rowids must be sorted, but entry ", i, " (", ids[i],
                             ") < entry ", i - 1, " (", ids[i - 1], ")");
    }
    ++s[ids[i] + 1];
  }
  for (int64_t r = 0; r < parents; ++r) s[r + 1] += s[r];
  return s;
}

Status ComputeToTensor(const KernelContext& ctx) {
  const auto& types = ctx.state<ToTensorState>().types;
  const Tensor& values = ctx.input(1);
  const Tensor& dflt = ctx.input(2);
  if (values.rank() == 0) return ctx.Error("values must have rank at least 1");
  // Every partition as splits.
  std::vector<Splits> splits;
  int64_t rows = -1;  // rows of the level being described
  for (size_t i = 0; i < types.size(); ++i) {
    const Tensor& t = ctx.input(3 + static_cast<int>(i));
    std::vector<int64_t> v = IndexValues(t);
    switch (types[i]) {
      case Partition::kFirstDimSize:
        if (t.NumElements() != 1 || v[0] < 0) {
          return ctx.Error("FIRST_DIM_SIZE must be a non-negative scalar");
        }
        rows = v[0];
        break;
      case Partition::kValueRowIds: {
        auto s = RowIdsToSplits(v, rows);
        if (!s.ok()) return Wrap(ctx, s.status());
        splits.push_back(std::move(*s));
        rows = splits.back().back();
        break;
      }
      case Partition::kRowSplits:
        if (v.empty()) return ctx.Error("row_partition_tensors:", i, " (ROW_SPLITS) is empty");
        if (rows >= 0 && static_cast<int64_t>(v.size()) - 1 != rows) {
          return ctx.Error("row_partition_tensors:", i, " describes ", v.size() - 1,
                           " rows, but the level above has ", rows);
        }
        rows = v.back();
        splits.push_back(std::move(v));
        break;
    }
  }
  Status valid = ValidateNestedSplits(splits, values.dim(0), "row_partition_tensors");
  if (!valid.ok()) return Wrap(ctx, valid);
  const int rr = static_cast<int>(splits.size());
  const int inner_rank = values.rank() - 1;
  // Output dims: the shape input where it gives one, else the ragged maximum.
  std::vector<int64_t> dims(1 + rr + inner_rank, -1);
  const Tensor& shape_t = ctx.input(0);
  if (shape_t.rank() == 1) {
    std::vector<int64_t> want = IndexValues(shape_t);
    if (want.size() != dims.size()) {
      return ctx.Error("input 'shape' ", DimsString(want), " must have rank ", dims.size());
    }
    for (size_t d = 0; d < dims.size(); ++d) {
      if (want[d] < -1) return ctx.Error("input 'shape' ", DimsString(want), " is invalid");
      dims[d] = want[d];
    }
  } else if (shape_t.rank() != 0 || IndexValues(shape_t)[0] != -1) {
    return ctx.Error("input 'shape' must be a vector or the scalar -1 (unknown rank)");
  }
  if (dims[0] < 0) dims[0] = static_cast<int64_t>(splits[0].size()) - 1;
  for (int k = 0; k < rr; ++k) {
    if (dims[1 + k] >= 0) continue;
    int64_t widest = 0;
    for (size_t row = 0; row + 1 < splits[k].size(); ++row)
      widest = std::max(widest, splits[k][row + 1] - splits[k][row]);
    dims[1 + k] = widest;
  }
  for (int d = 0; d < inner_rank; ++d) {
    const int64_t have = values.dim(d + 1);
    if (dims[1 + rr + d] >= 0 && dims[1 + rr + d] != have) {
      return ctx.Error("rt_input.shape and shape=", DimsString(dims),
                       " are incompatible: ", "rt_input.shape[", 1 + rr + d, "] = ", have,
                       " but shape[", 1 + rr + d, "] = ", dims[1 + rr + d]);
    }
    dims[1 + rr + d] = have;
  }
  auto out_shape = Shape::FromDims(dims);
  if (!out_shape.ok()) return Wrap(ctx, out_shape.status());
  // default_value broadcasts to one value row (values.shape[1:]).
  Shape row_shape;
  for (int d = 0; d < inner_rank; ++d) row_shape.AddDim(values.dim(d + 1));
  bool broadcastable = dflt.rank() <= row_shape.rank();
  for (int d = 0; broadcastable && d < dflt.rank(); ++d) {
    const int64_t dd = dflt.dim(dflt.rank() - 1 - d);
    broadcastable = dd == 1 || dd == row_shape.dim(row_shape.rank() - 1 - d);
  }
  if (!broadcastable) {
    return ctx.Error("default_value.shape=", dflt.shape().ToString(),
                     " and rt_input.flat_values.shape=", values.shape().ToString(),
                     " are incompatible: default_value must broadcast to flat_values.shape[1:]");
  }
  // Output position (in rows of `inner` elements) of every position of each level; -1 when it
  // falls outside the requested shape.
  std::vector<int64_t> pos(splits[0].size() - 1);
  for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<int64_t>(i) < dims[0] ? i : -1;
  for (int k = 0; k < rr; ++k) {
    const Splits& s = splits[k];
    std::vector<int64_t> next(s.back(), -1);
    const int64_t width = dims[1 + k];
    for (size_t row = 0; row + 1 < s.size(); ++row) {
      if (pos[row] < 0) continue;
      for (int64_t c = s[row]; c < s[row + 1] && c - s[row] < width; ++c) {
        next[c] = pos[row] * width + (c - s[row]);
      }
    }
    pos = std::move(next);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, *out_shape));
  const int64_t inner = row_shape.num_elements();
  const int64_t out_rows = inner == 0 ? 0 : out->NumElements() / inner;
  if (out->NumElements() == 0) return OkStatus();
  // One row of defaults, broadcast from default_value.
  std::vector<int64_t> dflt_offsets(inner);
  const auto bstrides = BroadcastStrides(dflt.shape(), row_shape);
  for (int64_t e = 0; e < inner; ++e) {
    int64_t rem = e, off = 0;
    for (int d = row_shape.rank() - 1; d >= 0; --d) {
      off += (rem % row_shape.dim(d)) * bstrides[d];
      rem /= row_shape.dim(d);
    }
    dflt_offsets[e] = off;
  }
  return DispatchStorage(values.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U* dst = Elems<U>(*out);
    const U* dv = Elems<U>(dflt);
    for (int64_t r = 0; r < out_rows; ++r)
      for (int64_t e = 0; e < inner; ++e) dst[r * inner + e] = dv[dflt_offsets[e]];
    const U* src = Elems<U>(values);
    for (size_t v = 0; v < pos.size(); ++v) {
      if (pos[v] < 0) continue;
      std::copy(src + v * inner, src + (v + 1) * inner, dst + pos[v] * inner);
    }
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"RaggedRange", ComputeRaggedRange},
    {"RaggedGather", ComputeRaggedGather},
    {"RaggedTensorToSparse", ComputeToSparse},
    {"RaggedTensorToTensor", ComputeToTensor},
};

}  // namespace

std::span<const KernelEntry> RaggedCpuKernels() { return kCpu; }

}  // namespace kiln::exec
