// The CPU kernels of the sparse rearranging ops and the sparse tensors maps in
// kernels/sparse_manip_ops.cc. Orders and messages follow TF's kernels
// (tensorflow/core/kernels/sparse_*_op.cc).
#include "kernels/sparse_manip_ops.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/nd_index.h"
#include "kernels/sparse_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using sparse_manip::ConcatState;
using sparse_manip::GradTypes;
using sparse_manip::MapState;
using sparse_manip::SparseTensorsMap;

using SparseIn = SparseInput;

// Writes the entries `order` (positions in s) as output indices/values at outputs i, i + 1.
Status WriteEntries(const KernelContext& ctx, int i, const SparseIn& s,
                    const std::vector<int64_t>& order) {
  const int64_t m = static_cast<int64_t>(order.size());
  KILN_ASSIGN_OR_RETURN(Tensor * oi, ctx.AllocateOutput(i, Shape{m, s.rank}));
  KILN_ASSIGN_OR_RETURN(Tensor * ov, ctx.AllocateOutput(i + 1, Shape{m}));
  int64_t* o = oi->data<int64_t>();
  for (int64_t j = 0; j < m; ++j) {
    std::copy_n(s.idx + order[j] * s.rank, s.rank, o + j * s.rank);
    CopyElementRange(*s.values, order[j], ov, j, 1);
  }
  return OkStatus();
}

bool RowLess(const int64_t* idx, int64_t r, int64_t a, int64_t b) {
  return std::lexicographical_compare(idx + a * r, idx + (a + 1) * r, idx + b * r,
                                      idx + (b + 1) * r);
}

// ---- SparseReorder ---------------------------------------------------------------------------

Status ComputeReorder(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(SparseIn s, ReadSparseInput(ctx, 0, "SparseReorder"));
  std::vector<int64_t> order(s.n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return RowLess(s.idx, s.rank, a, b); });
  return WriteEntries(ctx, 0, s, order);
}

// ---- SparseConcat ----------------------------------------------------------------------------

// The inputs side by side along concat_dim, in row-major order of the result (TF sorts by
// the dims before concat_dim, then input, then the rest).
Status ComputeSparseConcat(const KernelContext& ctx) {
  const auto& st = ctx.state<ConcatState>();
  const int n = static_cast<int>(st.n);
  std::vector<const int64_t*> idx(n);
  std::vector<std::vector<int64_t>> shapes(n);
  int64_t rank = -1;
  for (int i = 0; i < n; ++i) {
    const Tensor& ind = ctx.input(i);
    const Tensor& val = ctx.input(n + i);
    const Tensor& shp = ctx.input(2 * n + i);
    if (ind.rank() != 2 || val.rank() != 1 || shp.rank() != 1 || ind.dim(0) != val.dim(0) ||
        ind.dim(1) != shp.dim(0)) {
      return ctx.Error("input ", i, ": expected indices [N, R], values [N] and shape [R], got ",
                       ind.shape().ToString(), ", ", val.shape().ToString(), " and ",
                       shp.shape().ToString());
    }
    if (rank >= 0 && shp.dim(0) != rank) {
      return ctx.Error("all inputs must have the same rank: input 0 has ", rank, ", input ", i,
                       " has ", shp.dim(0));
    }
    rank = shp.dim(0);
    idx[i] = ind.data<int64_t>();
    shapes[i] = IndexValues(shp);
  }
  if (st.dim < -rank || st.dim >= rank) {
    return ctx.Error("concat_dim ", st.dim, " is out of range for rank ", rank);
  }
  const int64_t cd = st.dim < 0 ? st.dim + rank : st.dim;
  std::vector<int64_t> out_shape = shapes[0];
  std::vector<int64_t> offset(n, 0);
  for (int i = 1; i < n; ++i) {
    for (int64_t d = 0; d < rank; ++d) {
      if (d != cd && shapes[i][d] != shapes[0][d]) {
        return ctx.Error("all dims but concat_dim must match: input 0 has shape ",
                         ShapeBrackets(shapes[0]), ", input ", i, " has ",
                         ShapeBrackets(shapes[i]));
      }
    }
    offset[i] = out_shape[cd];
    out_shape[cd] += shapes[i][cd];
  }
  struct Entry {
    int input;
    int64_t row;
  };
  std::vector<Entry> entries;
  for (int i = 0; i < n; ++i)
    for (int64_t r = 0; r < ctx.input(i).dim(0); ++r) entries.push_back({i, r});
  // TF's order: the dims before concat_dim, then the input, then the dims after it.
  auto key_less = [&](const Entry& a, const Entry& b) {
    const int64_t* x = idx[a.input] + a.row * rank;
    const int64_t* y = idx[b.input] + b.row * rank;
    for (int64_t d = 0; d < cd; ++d)
      if (x[d] != y[d]) return x[d] < y[d];
    if (a.input != b.input) return a.input < b.input;
    for (int64_t d = cd; d < rank; ++d)
      if (x[d] != y[d]) return x[d] < y[d];
    return false;
  };
  std::stable_sort(entries.begin(), entries.end(), key_less);
  const int64_t m = static_cast<int64_t>(entries.size());
  KILN_ASSIGN_OR_RETURN(Tensor * oi, ctx.AllocateOutput(0, Shape{m, rank}));
  KILN_ASSIGN_OR_RETURN(Tensor * ov, ctx.AllocateOutput(1, Shape{m}));
  KILN_ASSIGN_OR_RETURN(Tensor * os, ctx.AllocateOutput(2, Shape{rank}));
  for (int64_t j = 0; j < m; ++j) {
    const Entry& e = entries[j];
    int64_t* o = oi->data<int64_t>() + j * rank;
    std::copy_n(idx[e.input] + e.row * rank, rank, o);
    o[cd] += offset[e.input];
    CopyElementRange(ctx.input(n + e.input), e.row, ov, j, 1);
  }
  std::copy(out_shape.begin(), out_shape.end(), os->data<int64_t>());
  return OkStatus();
}

// ---- SparseSlice -----------------------------------------------------------------------------

// The entries inside [start, start + size) (clipped to the shape), shifted by -start; the
// output shape is the clipped size. Order is kept.
Status ComputeSparseSlice(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(SparseIn s, ReadSparseInput(ctx, 0, "SparseSlice"));
  const std::vector<int64_t> start = IndexValues(ctx.input(3));
  const std::vector<int64_t> size = IndexValues(ctx.input(4));
  if (static_cast<int64_t>(start.size()) != s.rank || static_cast<int64_t>(size.size()) != s.rank) {
    return ctx.Error("expected start and size of ", s.rank, " elements, got ", start.size(),
                     " and ", size.size());
  }
  std::vector<int64_t> out_shape(s.rank);
  for (int64_t d = 0; d < s.rank; ++d) {
    if (start[d] < 0 || size[d] < 0) {
      return ctx.Error("start and size must be non-negative, got ", ShapeBrackets(start), " and ",
                       ShapeBrackets(size));
    }
    out_shape[d] = std::max<int64_t>(0, std::min(start[d] + size[d], s.shape[d]) - start[d]);
  }
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < s.n; ++i) {
    bool in = true;
    for (int64_t d = 0; in && d < s.rank; ++d) {
      const int64_t v = s.idx[i * s.rank + d];
      in = v >= start[d] && v < start[d] + size[d];
    }
    if (in) keep.push_back(i);
  }
  const int64_t m = static_cast<int64_t>(keep.size());
  KILN_ASSIGN_OR_RETURN(Tensor * oi, ctx.AllocateOutput(0, Shape{m, s.rank}));
  KILN_ASSIGN_OR_RETURN(Tensor * ov, ctx.AllocateOutput(1, Shape{m}));
  for (int64_t j = 0; j < m; ++j) {
    for (int64_t d = 0; d < s.rank; ++d)
      oi->data<int64_t>()[j * s.rank + d] = s.idx[keep[j] * s.rank + d] - start[d];
    CopyElementRange(*s.values, keep[j], ov, j, 1);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * os, ctx.AllocateOutput(2, Shape{s.rank}));
  std::copy(out_shape.begin(), out_shape.end(), os->data<int64_t>());
  return OkStatus();
}

// ---- SparseSplit -----------------------------------------------------------------------------

// num_split pieces along split_dim: the first shape[dim] % num_split pieces one longer, as TF.
Status ComputeSparseSplit(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(SparseIn s, ReadSparseInput(ctx, 1, "SparseSplit"));
  const int64_t n = ctx.num_outputs() / 3;
  int64_t dim = IndexValues(ctx.input(0))[0];
  if (dim < -s.rank || dim >= s.rank) {
    return ctx.Error("split_dim ", dim, " is out of range for rank ", s.rank);
  }
  if (dim < 0) dim += s.rank;
  if (n > s.shape[dim]) {
    return ctx.Error("num_split ", n, " is greater than dimension ", dim, " of the shape, ",
                     s.shape[dim]);
  }
  const int64_t size = s.shape[dim] / n, extra = s.shape[dim] % n;
  auto start_of = [&](int64_t piece) { return piece * size + std::min(piece, extra); };
  std::vector<std::vector<int64_t>> members(n);
  for (int64_t i = 0; i < s.n; ++i) {
    const int64_t v = s.row(i)[dim];
    // The piece holding v: the first `extra` pieces have size + 1 elements.
    const int64_t piece =
        v < extra * (size + 1) ? v / (size + 1) : extra + (v - extra * (size + 1)) / size;
    members[piece].push_back(i);
  }
  for (int64_t p = 0; p < n; ++p) {
    const int64_t m = static_cast<int64_t>(members[p].size());
    KILN_ASSIGN_OR_RETURN(Tensor * oi, ctx.AllocateOutput(static_cast<int>(p), Shape{m, s.rank}));
    KILN_ASSIGN_OR_RETURN(Tensor * ov, ctx.AllocateOutput(static_cast<int>(n + p), Shape{m}));
    KILN_ASSIGN_OR_RETURN(Tensor * os,
                          ctx.AllocateOutput(static_cast<int>(2 * n + p), Shape{s.rank}));
    for (int64_t j = 0; j < m; ++j) {
      int64_t* o = oi->data<int64_t>() + j * s.rank;
      std::copy_n(s.idx + members[p][j] * s.rank, s.rank, o);
      o[dim] -= start_of(p);
      CopyElementRange(*s.values, members[p][j], ov, j, 1);
    }
    std::copy(s.shape.begin(), s.shape.end(), os->data<int64_t>());
    os->data<int64_t>()[dim] = start_of(p + 1) - start_of(p);
  }
  return OkStatus();
}

// ---- SparseSliceGrad, SparseAddGrad, SparseFillEmptyRowsGrad
// --------------------------------------

using IndexKey = std::vector<int64_t>;

IndexKey KeyOf(const int64_t* idx, int64_t i, int64_t r) {
  return IndexKey(idx + i * r, idx + (i + 1) * r);
}

// val_grad[i]: the gradient of the output entry input entry i became, or 0 if it was cut.
Status ComputeSliceGrad(const KernelContext& ctx) {
  const Tensor& grad = ctx.input(0);
  const Tensor& in_idx = ctx.input(1);
  const std::vector<int64_t> start = IndexValues(ctx.input(2));
  const Tensor& out_idx = ctx.input(3);
  if (in_idx.rank() != 2 || out_idx.rank() != 2 || in_idx.dim(1) != out_idx.dim(1) ||
      static_cast<int64_t>(start.size()) != in_idx.dim(1) || grad.rank() != 1 ||
      grad.dim(0) != out_idx.dim(0)) {
    return ctx.Error(
        "expected input_indices [N, R], input_start [R], output_indices [M, R] and "
        "backprop_val_grad [M], got ",
        in_idx.shape().ToString(), ", [", start.size(), "], ", out_idx.shape().ToString(), " and ",
        grad.shape().ToString());
  }
  const int64_t r = in_idx.dim(1);
  std::map<IndexKey, int64_t> at;
  for (int64_t j = 0; j < out_idx.dim(0); ++j) at[KeyOf(out_idx.data<int64_t>(), j, r)] = j;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{in_idx.dim(0)}));
  return DispatchStorage(grad.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    for (int64_t i = 0; i < in_idx.dim(0); ++i) {
      IndexKey k = KeyOf(in_idx.data<int64_t>(), i, r);
      for (int64_t d = 0; d < r; ++d) k[d] -= start[d];
      auto it = at.find(k);
      Elems<U>(*out)[i] = it == at.end() ? U{} : Elems<U>(grad)[it->second];
    }
    return OkStatus();
  });
}

// Each operand entry's gradient is the sum entry's at its index (0 where the sum dropped it).
Status ComputeAddGrad(const KernelContext& ctx) {
  const Tensor& grad = ctx.input(0);
  const Tensor& sum_idx = ctx.input(3);
  if (grad.rank() != 1 || grad.dim(0) != sum_idx.dim(0)) {
    return ctx.Error("backprop_val_grad must be [", sum_idx.dim(0), "], got ",
                     grad.shape().ToString());
  }
  const int64_t r = sum_idx.dim(1);
  std::map<IndexKey, int64_t> at;
  for (int64_t j = 0; j < sum_idx.dim(0); ++j) at[KeyOf(sum_idx.data<int64_t>(), j, r)] = j;
  for (int k = 0; k < 2; ++k) {
    const Tensor& idx = ctx.input(1 + k);
    if (idx.dim(1) != r) {
      return ctx.Error("operand ", k == 0 ? "a" : "b", " has rank ", idx.dim(1),
                       ", the sum has rank ", r);
    }
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(k, Shape{idx.dim(0)}));
    KILN_RETURN_IF_ERROR(DispatchStorage(grad.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      for (int64_t i = 0; i < idx.dim(0); ++i) {
        auto it = at.find(KeyOf(idx.data<int64_t>(), i, r));
        Elems<U>(*out)[i] = it == at.end() ? U{} : Elems<U>(grad)[it->second];
      }
      return OkStatus();
    }));
  }
  return OkStatus();
}

// d_values[i] = grad_values[reverse_index_map[i]]; d_default_value sums the rest (the rows
// SparseFillEmptyRows filled with the default).
Status ComputeFillEmptyRowsGrad(const KernelContext& ctx) {
  const Tensor& map = ctx.input(0);
  const Tensor& grad = ctx.input(1);
  if (map.rank() != 1 || grad.rank() != 1) {
    return ctx.Error("reverse_index_map and grad_values must be vectors, got ",
                     map.shape().ToString(), " and ", grad.shape().ToString());
  }
  const int64_t* m = map.data<int64_t>();
  std::vector<bool> used(grad.dim(0), false);
  for (int64_t i = 0; i < map.dim(0); ++i) {
    if (m[i] < 0 || m[i] >= grad.dim(0)) {
      return ctx.Error("Invalid reverse_index_map[", i, "] = ", m[i], " (grad_values has ",
                       grad.dim(0), " elements)");
    }
    used[m[i]] = true;
  }
  KILN_ASSIGN_OR_RETURN(Tensor * dv, ctx.AllocateOutput(0, Shape{map.dim(0)}));
  KILN_ASSIGN_OR_RETURN(Tensor * dd, ctx.AllocateOutput(1, Shape{}));
  return Dispatch<GradTypes>(grad.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* g = ComputeData<T>(grad);
    C* o = MutableComputeData<T>(dv);
    for (int64_t i = 0; i < map.dim(0); ++i) o[i] = g[m[i]];
    C sum = C(0);
    for (int64_t j = 0; j < grad.dim(0); ++j)
      if (!used[j]) sum = static_cast<C>(sum + g[j]);
    MutableComputeData<T>(dd)[0] = sum;
    return OkStatus();
  });
}

// ---- Sparse tensors maps ---------------------------------------------------------------------

const MapState& StateOf(const KernelContext& ctx) { return ctx.state<MapState>(); }

// ---- AddSparseToTensorsMap, AddManySparseToTensorsMap ----------------------------------------

Status CheckRanks(const KernelContext& ctx) {
  const char* what[] = {"Input indices should be a matrix", "Input values should be a vector",
                        "Input shape should be a vector"};
  for (int i = 0; i < 3; ++i)
    if (ctx.input(i).rank() != (i == 0 ? 2 : 1))
      return ctx.Error(what[i], " but received shape ", ctx.input(i).shape().ToString());
  return OkStatus();
}

// "[4,3]", as TF prints an index or a shape.
std::string IndexString(const int64_t* idx, int64_t rank) {
  std::string s = "[";
  for (int64_t d = 0; d < rank; ++d) s += (d ? "," : "") + std::to_string(idx[d]);
  return s + "]";
}

// TF's TensorShapeUtils::MakeShape (`many`: TensorShape::BuildTensorShape, its other words).
Status CheckDenseShape(const KernelContext& ctx, const Tensor& shape, bool many) {
  const int64_t* d = shape.data<int64_t>();
  int64_t elements = 1;
  for (int64_t i = 0; i < shape.NumElements(); ++i) {
    if (d[i] < 0)
      return many ? ctx.Error("Expected shape dimensions to be non-negative, got ", d[i])
                  : ctx.Error("Dimension ", d[i], " must be >= 0");
    if (__builtin_mul_overflow(elements, d[i], &elements))
      return ctx.Error("Shape ", IndexString(d, shape.NumElements()),
                       " would have more than 2**63 - 1 elements");
  }
  return OkStatus();
}

Status ComputeAdd(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckRanks(ctx));
  const Tensor& indices = ctx.input(0);
  const Tensor& values = ctx.input(1);
  const Tensor& shape = ctx.input(2);
  KILN_RETURN_IF_ERROR(CheckDenseShape(ctx, shape, false));
  // TF's SparseTensor::Create: neither bounds nor order are checked.
  if (indices.dim(0) != values.dim(0))
    return ctx.Error("indices and values rows (indexing dimension) must match. (indices = ",
                     indices.dim(0), ", values = ", values.dim(0), ")");
  if (indices.dim(1) != shape.NumElements())
    return ctx.Error("Order length must be SparseTensor rank.");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{}));
  const int64_t* d = shape.data<int64_t>();
  out->scalar<int64_t>() =
      StateOf(ctx).map->Add({indices, values, std::vector<int64_t>(d, d + shape.NumElements())});
  return OkStatus();
}

// TF's SparseTensor::IndicesValid in the standard order: each index in bounds, then increasing.
Status CheckIndices(const KernelContext& ctx, const int64_t* idx, int64_t nnz, const int64_t* shape,
                    int64_t rank) {
  for (int64_t i = 0; i < nnz; ++i) {
    const int64_t* row = idx + i * rank;
    for (int64_t d = 0; d < rank; ++d)
      if (row[d] < 0 || row[d] >= shape[d])
        return ctx.Error("indices[", i, "] = ", IndexString(row, rank),
                         " is out of bounds: need 0 <= index < ", IndexString(shape, rank));
    if (i == 0) continue;
    const int64_t* prev = row - rank;
    if (std::lexicographical_compare(row, row + rank, prev, prev + rank))
      return ctx.Error("indices[", i, "] = ", IndexString(row, rank),
                       " is out of order. Many sparse ops require sorted indices. Use "
                       "`tf.sparse.reorder` to create a correctly ordered copy.");
    if (std::equal(row, row + rank, prev))
      return ctx.Error("indices[", i, "] = ", IndexString(row, rank), " is repeated");
  }
  return OkStatus();
}

Status ComputeAddMany(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckRanks(ctx));
  const Tensor& indices = ctx.input(0);
  const Tensor& values = ctx.input(1);
  const Tensor& shape_t = ctx.input(2);
  if (values.dim(0) != indices.dim(0))
    return ctx.Error("Number of values must match first dimension of indices. Got ", values.dim(0),
                     " values, indices shape: ", indices.shape().ToString());
  if (shape_t.dim(0) != indices.dim(1))
    return ctx.Error("Number of dimensions must match second dimension of indices. Got ",
                     shape_t.dim(0), " dimensions, indices shape: ", indices.shape().ToString());
  const int64_t rank = shape_t.NumElements();
  if (rank <= 1) return ctx.Error("Rank of input SparseTensor should be > 1, but saw rank: ", rank);
  KILN_RETURN_IF_ERROR(CheckDenseShape(ctx, shape_t, true));
  const int64_t* shape = shape_t.data<int64_t>();
  const int64_t* idx = indices.data<int64_t>();
  const int64_t nnz = indices.dim(0);
  const int64_t n = shape[0];
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{n}));
  KILN_RETURN_IF_ERROR(CheckIndices(ctx, idx, nnz, shape, rank));
  SparseTensorsMap& map = *StateOf(ctx).map;
  const std::vector<int64_t> rest(shape + 1, shape + rank);
  int64_t* handles = out->data<int64_t>();
  std::vector<bool> stored(static_cast<size_t>(n), false);
  // The rows with entries first, in order (the indices are sorted), then the empty ones.
  KILN_RETURN_IF_ERROR(
      ForEachSparseBatchRow(idx, nnz, rank, values, [&](int64_t b, Tensor sub_idx, Tensor sub_val) {
        handles[b] = map.Add({std::move(sub_idx), std::move(sub_val), rest});
        stored[b] = true;
        return OkStatus();
      }));
  const Tensor empty_idx(DType::kInt64, Shape{0, rank - 1});
  const Tensor empty_val(values.dtype(), Shape{0});
  for (int64_t b = 0; b < n; ++b)
    if (!stored[b]) handles[b] = map.Add({empty_idx, empty_val, rest});
  return OkStatus();
}

// ---- TakeManySparseFromTensorsMap ------------------------------------------------------------

Status ComputeTakeMany(const KernelContext& ctx) {
  const MapState& st = StateOf(ctx);
  const Tensor& handles = ctx.input(0);
  if (handles.rank() != 1)
    return ctx.Error("sparse_handles should be a vector but received shape ",
                     handles.shape().ToString());
  const int64_t n = handles.dim(0);
  if (n <= 0)
    return ctx.Error("Must have at least 1 serialized SparseTensor, but input matrix has 0 rows");
  std::vector<SparseTensorsMap::Entry> parts;
  if (Status s = st.map->Take(handles.data<int64_t>(), n, &parts); !s.ok()) return Wrap(ctx, s);
  const auto rank = static_cast<int64_t>(parts[0].shape.size());
  std::vector<int64_t> shape(static_cast<size_t>(rank + 1), 0);
  shape[0] = n;
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const SparseTensorsMap::Entry& p = parts[i];
    if (p.values.dtype() != st.dtype)
      return ctx.Error("Requested SparseTensor of type ", DTypeShortName(st.dtype),
                       " but SparseTensor[", i,
                       "].values.dtype() == ", DTypeShortName(p.values.dtype()));
    const auto r = static_cast<int64_t>(p.shape.size());
    if (r != rank)
      return ctx.Error("Inconsistent rank across SparseTensors: rank prior to SparseTensor[", i,
                       "] was: ", rank + 1, " but rank of SparseTensor[", i, "] is: ", r + 1);
    if (__builtin_add_overflow(total, p.values.dim(0), &total))
      return ctx.Error("Too many sparse entries");
    for (int64_t d = 0; d < rank; ++d) shape[d + 1] = std::max(shape[d + 1], p.shape[d]);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out_idx, ctx.AllocateOutput(0, Shape{total, rank + 1}));
  KILN_ASSIGN_OR_RETURN(Tensor * out_val, ctx.AllocateOutput(1, Shape{total}));
  KILN_ASSIGN_OR_RETURN(Tensor * out_shape, ctx.AllocateOutput(2, Shape{rank + 1}));
  std::copy(shape.begin(), shape.end(), out_shape->data<int64_t>());
  int64_t* o = out_idx->data<int64_t>();
  int64_t at = 0;
  for (int64_t i = 0; i < n; ++i) {
    const SparseTensorsMap::Entry& p = parts[i];
    const int64_t m = p.values.dim(0);
    const int64_t* in = p.indices.data<int64_t>();
    for (int64_t k = 0; k < m; ++k) {
      int64_t* row = o + (at + k) * (rank + 1);
      row[0] = i;
      std::copy_n(in + k * rank, rank, row + 1);
    }
    CopyElementRange(p.values, 0, out_val, at, m);
    at += m;
  }
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"SparseReorder", ComputeReorder},
    {"SparseConcat", ComputeSparseConcat},
    {"SparseSlice", ComputeSparseSlice},
    {"SparseSplit", ComputeSparseSplit},
    {"SparseSliceGrad", ComputeSliceGrad},
    {"SparseAddGrad", ComputeAddGrad},
    {"SparseFillEmptyRowsGrad", ComputeFillEmptyRowsGrad},
    {"RaggedFillEmptyRowsGrad", ComputeFillEmptyRowsGrad},
    {"AddSparseToTensorsMap", ComputeAdd},
    {"AddManySparseToTensorsMap", ComputeAddMany},
    {"TakeManySparseFromTensorsMap", ComputeTakeMany},
};

}  // namespace

std::span<const KernelEntry> SparseManipCpuKernels() { return kCpu; }

}  // namespace kiln::exec
