// The CPU kernels of the sparse ops in kernels/sparse_ops.cc: SparseToDense, SparseFillEmptyRows
// (and RaggedFillEmptyRows), SparseReshape, the set operations and SetSize.
#include "kernels/sparse_ops.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/nd_index.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using sparse::SetOp;
using sparse::SetOperands;
using sparse::SetState;
using sparse::SetTypes;
using sparse::ValidateState;

// "[0,1]": row i of an [N, R] int64 index matrix.
std::string RowString(const int64_t* idx, int64_t i, int64_t r) {
  return ShapeBrackets(std::span<const int64_t>(idx + i * r, r));
}

Status ExpectVector(const KernelContext& ctx, const Tensor& t, std::string_view name) {
  if (t.rank() != 1) {
    return ctx.Error("input '", name, "' must be a vector, got shape ", t.shape().ToString());
  }
  return OkStatus();
}

// ---- SparseToDense ---------------------------------------------------------------------------

Status ComputeSparseToDense(const KernelContext& ctx) {
  const Tensor& indices = ctx.input(0);
  const Tensor& values = ctx.input(2);
  const Tensor& dflt = ctx.input(3);
  if (indices.rank() > 2) {
    return ctx.Error("input 'sparse_indices' must have rank at most 2, got shape ",
                     indices.shape().ToString());
  }
  if (ctx.input(1).rank() > 1) {
    return ctx.Error("input 'output_shape' must have rank at most 1, got shape ",
                     ctx.input(1).shape().ToString());
  }
  auto shape = Shape::FromDims(IndexValues(ctx.input(1)));
  if (!shape.ok()) return Wrap(ctx, shape.status());
  const int64_t n = indices.rank() == 0 ? 1 : indices.dim(0);
  const int64_t r = indices.rank() == 2 ? indices.dim(1) : 1;
  if (r != shape->rank()) {
    return ctx.Error("sparse_indices has ", r, " columns but output_shape ", shape->ToString(),
                     " has rank ", shape->rank());
  }
  if (!(values.rank() == 0 || (values.rank() == 1 && values.dim(0) == n))) {
    return ctx.Error("sparse_values has incorrect shape ", values.shape().ToString(),
                     ", should be [] or [", n, "]");
  }
  if (dflt.NumElements() != 1) {
    return ctx.Error("default_value should be a scalar, got shape ", dflt.shape().ToString());
  }
  const std::vector<int64_t> idx = IndexValues(indices);
  const bool validate = ctx.state<ValidateState>().value;
  std::vector<int64_t> flat(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t f = 0;
    bool inside = true;
    for (int64_t c = 0; c < r; ++c) {
      const int64_t v = idx[i * r + c];
      inside &= v >= 0 && v < shape->dim(static_cast<int>(c));
      f = f * shape->dim(static_cast<int>(c)) + v;
    }
    if (!inside) {
      if (validate) {
        return ctx.Error("indices[", i, "] = ", RowString(idx.data(), i, r),
                         " is out of bounds: need 0 <= index < ", ShapeBrackets(shape->dims()));
      }
      return ctx.Error("indices are not valid (out of bounds); shape: ",
                       ShapeBrackets(shape->dims()));
    }
    if (validate && i > 0) {
      // Lexicographic order of the index rows, strictly increasing.
      const int64_t* a = &idx[(i - 1) * r];
      const int64_t* b = &idx[i * r];
      const int cmp = std::lexicographical_compare(a, a + r, b, b + r)   ? -1
                      : std::lexicographical_compare(b, b + r, a, a + r) ? 1
                                                                         : 0;
      if (cmp == 0) {
        return ctx.Error("indices[", i, "] = ", RowString(idx.data(), i, r), " is repeated");
      }
      if (cmp > 0) {
        return ctx.Error("indices[", i, "] = ", RowString(idx.data(), i, r),
                         " is out of order; many sparse ops require sorted indices "
                         "(use tf.sparse.reorder to make an ordered copy)");
      }
    }
    flat[i] = f;
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, *shape));
  return DispatchStorage(values.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U* dst = Elems<U>(*out);
    std::fill(dst, dst + out->NumElements(), Elems<U>(dflt)[0]);
    const U* v = Elems<U>(values);
    const bool scalar = values.rank() == 0;
    for (int64_t i = 0; i < n; ++i) dst[flat[i]] = v[scalar ? 0 : i];
    return OkStatus();
  });
}

// ---- SparseFillEmptyRows ---------------------------------------------------------------------

Status ComputeFillEmptyRows(const KernelContext& ctx) {
  const bool ragged = ctx.state<TypedOpState<bool>>().value;
  const Tensor& indices = ctx.input(0);
  const Tensor& values = ctx.input(1);
  const Tensor& dense_shape = ctx.input(2);
  const Tensor& dflt = ctx.input(3);
  if (indices.rank() != (ragged ? 1 : 2)) {
    return ctx.Error(ragged ? "value_rowids must be a vector" : "indices must be a matrix",
                     ", got shape ", indices.shape().ToString());
  }
  KILN_RETURN_IF_ERROR(ExpectVector(ctx, values, "values"));
  if (ragged && dense_shape.NumElements() != 1)
    return ctx.Error("nrows must be a scalar, got shape ", dense_shape.shape().ToString());
  if (!ragged) KILN_RETURN_IF_ERROR(ExpectVector(ctx, dense_shape, "dense_shape"));
  if (dflt.NumElements() != 1) {
    return ctx.Error("default_value must be a scalar, got shape ", dflt.shape().ToString());
  }
  const int64_t n = indices.dim(0), r = ragged ? 1 : indices.dim(1);
  if (values.dim(0) != n) {
    return ctx.Error("the number of values (", values.dim(0), ") must equal the number of index ",
                     "rows (", n, ")");
  }
  if (!ragged && (dense_shape.dim(0) != r || r < 1)) {
    return ctx.Error("dense_shape of length ", dense_shape.dim(0), " must match the index rank ", r,
                     " (at least 1)");
  }
  const int64_t* idx = indices.data<int64_t>();
  const int64_t rows = dense_shape.data<int64_t>()[0];
  if (rows < 0) return ctx.Error("dense_shape[0] = ", rows, " must not be negative");
  // The per-row scratch is as large as output 2; allocating that first fails cleanly on an
  // absurd dense_shape.
  KILN_ASSIGN_OR_RETURN(Tensor * empty, ctx.AllocateOutput(2, Shape{rows}));
  KILN_ASSIGN_OR_RETURN(void* scratch, ctx.AllocateTemp(sizeof(int64_t) * (2 * rows + 1)));
  int64_t* count = static_cast<int64_t*>(scratch);
  int64_t* start = count + rows;  // first output position of each row, and the end
  std::fill(count, count + rows, int64_t{0});
  // Entries grouped by row, keeping their order within a row (as TF's kernel does).
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = idx[i * r];
    if (row < 0 || row >= rows) {
      return ctx.Error("indices(", i, ", 0) is invalid: ", row,
                       row < 0 ? " < 0" : " >= ", row < 0 ? 0 : rows);
    }
    ++count[row];
  }
  start[0] = 0;
  for (int64_t row = 0; row < rows; ++row) {
    start[row + 1] = start[row] + std::max<int64_t>(count[row], 1);
  }
  const int64_t total = start[rows];
  KILN_ASSIGN_OR_RETURN(Tensor * out_idx,
                        ctx.AllocateOutput(0, ragged ? Shape{total} : Shape{total, r}));
  KILN_ASSIGN_OR_RETURN(Tensor * out_val, ctx.AllocateOutput(1, Shape{total}));
  KILN_ASSIGN_OR_RETURN(Tensor * reverse, ctx.AllocateOutput(3, Shape{n}));
  int64_t* oi = out_idx->data<int64_t>();
  bool* em = empty->data<bool>();
  int64_t* rev = reverse->data<int64_t>();
  for (int64_t row = 0; row < rows; ++row) {
    em[row] = count[row] == 0;
    count[row] = start[row];  // from here on: the next free output position of the row
  }
  for (int64_t i = 0; i < n; ++i) rev[i] = count[idx[i * r]]++;
  return DispatchStorage(values.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* v = Elems<U>(values);
    U* ov = Elems<U>(*out_val);
    for (int64_t i = 0; i < n; ++i) {
      std::copy(idx + i * r, idx + (i + 1) * r, oi + rev[i] * r);
      ov[rev[i]] = v[i];
    }
    for (int64_t row = 0; row < rows; ++row) {
      if (!em[row]) continue;
      int64_t* o = oi + start[row] * r;
      std::fill(o, o + r, int64_t{0});
      o[0] = row;
      ov[start[row]] = Elems<U>(dflt)[0];
    }
    return OkStatus();
  });
}

// ---- SparseReshape ---------------------------------------------------------------------------

Status ComputeSparseReshape(const KernelContext& ctx) {
  const Tensor& indices = ctx.input(0);
  const Tensor& in_shape = ctx.input(1);
  const Tensor& new_shape = ctx.input(2);
  if (indices.rank() != 2) {
    return ctx.Error("input_indices must be a matrix, got shape ", indices.shape().ToString());
  }
  KILN_RETURN_IF_ERROR(ExpectVector(ctx, in_shape, "input_shape"));
  KILN_RETURN_IF_ERROR(ExpectVector(ctx, new_shape, "new_shape"));
  const int64_t n = indices.dim(0), r_in = indices.dim(1);
  if (in_shape.dim(0) != r_in) {
    return ctx.Error("input_shape has ", in_shape.dim(0), " entries but input_indices has ", r_in,
                     " columns");
  }
  const int64_t* is = in_shape.data<int64_t>();
  int64_t dense = 1;
  for (int64_t d = 0; d < r_in; ++d) {
    if (is[d] < 0) return ctx.Error("input_shape has a negative dimension ", is[d]);
    if (is[d] != 0 && dense > INT64_MAX / is[d]) return ctx.Error("input_shape is too large");
    dense *= is[d];
  }
  const int64_t r_out = new_shape.dim(0);
  std::vector<int64_t> out(new_shape.data<int64_t>(), new_shape.data<int64_t>() + r_out);
  int unknown = -1;
  int64_t product = 1;
  for (int64_t d = 0; d < r_out; ++d) {
    if (out[d] == -1) {
      if (unknown >= 0) {
        return ctx.Error("only one output dimension may be -1, not both ", unknown, " and ", d);
      }
      unknown = static_cast<int>(d);
    } else if (out[d] < 0) {
      return ctx.Error("size ", d, " must be non-negative, not ", out[d]);
    } else {
      if (out[d] != 0 && product > INT64_MAX / out[d]) return ctx.Error("new_shape is too large");
      product *= out[d];
    }
  }
  const std::string shapes = " input_shape=" + DimsString(std::vector<int64_t>(is, is + r_in)) +
                             " output_shape=" + DimsString(out);
  if (unknown >= 0) {
    if (product == 0 || dense % product != 0) {
      return ctx.Error("input to reshape is a SparseTensor with ", dense,
                       " dense values, but the requested shape requires a multiple of ", product,
                       ".", shapes);
    }
    out[unknown] = dense / product;
  } else if (product != dense) {
    return ctx.Error("input to reshape is a tensor with ", dense,
                     " dense values, but the requested shape has ", product, ".", shapes);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * oi, ctx.AllocateOutput(0, Shape{n, r_out}));
  KILN_ASSIGN_OR_RETURN(Tensor * os, ctx.AllocateOutput(1, Shape{r_out}));
  std::copy(out.begin(), out.end(), os->data<int64_t>());
  const int64_t* src = indices.data<int64_t>();
  int64_t* dst = oi->data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    int64_t flat = 0;
    for (int64_t d = 0; d < r_in; ++d) {
      const int64_t v = src[i * r_in + d];
      if (v < 0 || v >= is[d]) {
        return ctx.Error("input_indices[", i, "] = ", RowString(src, i, r_in),
                         " is out of bounds of input_shape");
      }
      flat = flat * is[d] + v;
    }
    for (int64_t d = r_out - 1; d >= 0; --d) {
      dst[i * r_out + d] = out[d] == 0 ? 0 : flat % out[d];
      flat = out[d] == 0 ? 0 : flat / out[d];
    }
  }
  return OkStatus();
}

// ---- DenseToDenseSetOperation, DenseToSparseSetOperation, SparseToSparseSetOperation, SetSize --

// One operand's sets: the leading dims and each position's sorted, distinct elements.
template <typename T>
struct Sets {
  std::vector<int64_t> shape;  // the operand's (a sparse one's dense shape)
  std::vector<int64_t> lead;
  std::vector<std::vector<T>> groups;
};

template <typename T>
void SortUnique(std::vector<T>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

template <typename T>
Result<Sets<T>> ReadSets(const KernelContext& ctx, int first, bool sparse, std::string_view name) {
  Sets<T> s;
  if (!sparse) {
    const Tensor& t = ctx.input(first);
    if (t.rank() < 2) {
      return ctx.Error("shape ", ShapeBrackets(t.shape().dims()), " has rank ", t.rank(), " < 2");
    }
    s.shape = t.shape().ToVector();
    s.lead.assign(t.shape().dims().begin(), t.shape().dims().end() - 1);
    const int64_t n = t.dim(t.rank() - 1);
    const int64_t g = n == 0 ? t.NumElements() : t.NumElements() / n;
    int64_t groups = 1;
    for (int64_t d : s.lead) groups *= d;
    s.groups.resize(groups);
    for (int64_t i = 0; i < g && n > 0; ++i) {
      s.groups[i].assign(t.data<T>() + i * n, t.data<T>() + (i + 1) * n);
      SortUnique(&s.groups[i]);
    }
    return s;
  }
  const Tensor& ind = ctx.input(first);
  const Tensor& val = ctx.input(first + 1);
  const std::vector<int64_t> shape = IndexValues(ctx.input(first + 2));
  const int64_t r = static_cast<int64_t>(shape.size());
  if (r < 2 || ind.rank() != 2 || ind.dim(1) != r || val.rank() != 1 || val.dim(0) != ind.dim(0)) {
    return ctx.Error("input '", name,
                     "': expected indices [N, R], values [N] and shape [R] with "
                     "R >= 2, got ",
                     ind.shape().ToString(), ", ", val.shape().ToString(), " and [", r, "]");
  }
  s.shape = shape;
  s.lead.assign(shape.begin(), shape.end() - 1);
  int64_t groups = 1;
  for (int64_t d : s.lead) groups *= d;
  s.groups.resize(groups);
  const int64_t* idx = ind.data<int64_t>();
  for (int64_t i = 0; i < ind.dim(0); ++i) {
    int64_t flat = 0;
    for (int64_t d = 0; d < r; ++d) {
      const int64_t v = idx[i * r + d];
      if (v < 0 || v >= shape[d]) {
        return ctx.Error("input '", name, "': indices[", i,
                         "] = ", ShapeBrackets({idx + i * r, static_cast<size_t>(r)}),
                         " is out of bounds for shape ", ShapeBrackets(shape));
      }
      if (d + 1 < r) flat = flat * shape[d] + v;
    }
    s.groups[flat].push_back(val.data<T>()[i]);
  }
  for (auto& g : s.groups) SortUnique(&g);
  return s;
}

template <typename T>
Status SetOperation(const KernelContext& ctx, SetOp op, const SetOperands& k) {
  KILN_ASSIGN_OR_RETURN(Sets<T> a, ReadSets<T>(ctx, 0, k.a_sparse, "set1"));
  KILN_ASSIGN_OR_RETURN(Sets<T> b, ReadSets<T>(ctx, k.b_first(), k.b_sparse, "set2"));
  if (a.lead != b.lead) {
    return ctx.Error("mismatched shapes ", ShapeBrackets(a.shape), " vs ", ShapeBrackets(b.shape),
                     " (all dims but the last must match)");
  }
  const int rank = static_cast<int>(a.lead.size()) + 1;
  const int64_t groups = static_cast<int64_t>(a.groups.size());
  std::vector<std::vector<T>> results(groups);
  int64_t max_size = 0, total = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const std::vector<T>& sa = a.groups[g];
    const std::vector<T>& sb = b.groups[g];
    std::vector<T>& r = results[g];
    switch (op) {
      case SetOp::kAMinusB:
        std::set_difference(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(r));
        break;
      case SetOp::kBMinusA:
        std::set_difference(sb.begin(), sb.end(), sa.begin(), sa.end(), std::back_inserter(r));
        break;
      case SetOp::kIntersection:
        std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(r));
        break;
      case SetOp::kUnion:
        std::set_union(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(r));
        break;
    }
    max_size = std::max<int64_t>(max_size, static_cast<int64_t>(r.size()));
    total += static_cast<int64_t>(r.size());
  }
  KILN_ASSIGN_OR_RETURN(Tensor * oi, ctx.AllocateOutput(0, Shape{total, rank}));
  KILN_ASSIGN_OR_RETURN(Tensor * ov, ctx.AllocateOutput(1, Shape{total}));
  KILN_ASSIGN_OR_RETURN(Tensor * os, ctx.AllocateOutput(2, Shape{rank}));
  std::copy(a.lead.begin(), a.lead.end(), os->data<int64_t>());
  os->data<int64_t>()[rank - 1] = max_size;
  int64_t* idx = oi->data<int64_t>();
  T* val = ov->data<T>();
  for (int64_t g = 0; g < groups; ++g) {
    for (size_t j = 0; j < results[g].size(); ++j) {
      int64_t rem = g;
      for (int d = rank - 2; d >= 0; --d) {
        idx[d] = a.lead[d] == 0 ? 0 : rem % a.lead[d];
        rem = a.lead[d] == 0 ? 0 : rem / a.lead[d];
      }
      idx[rank - 1] = static_cast<int64_t>(j);
      idx += rank;
      *val++ = results[g][j];
    }
  }
  return OkStatus();
}

Status ComputeSetOperation(const KernelContext& ctx) {
  const SetOp op = ctx.state<SetState>().op;
  const SetOperands k = ctx.state<SetState>().operands;
  return Dispatch<SetTypes>(ctx.input(k.a_sparse ? 1 : 0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return SetOperation<T>(ctx, op, k);
  });
}

// The number of distinct values of each set.
Status ComputeSetSize(const KernelContext& ctx) {
  return Dispatch<SetTypes>(ctx.input(1).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    KILN_ASSIGN_OR_RETURN(Sets<T> s, ReadSets<T>(ctx, 0, true, "set"));
    KILN_ASSIGN_OR_RETURN(Shape shape, Shape::FromDims(s.lead));
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
    for (size_t g = 0; g < s.groups.size(); ++g)
      out->data<int32_t>()[g] = static_cast<int32_t>(s.groups[g].size());
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"SparseToDense", ComputeSparseToDense},
    {"SparseFillEmptyRows", ComputeFillEmptyRows},
    {"RaggedFillEmptyRows", ComputeFillEmptyRows},
    {"SparseReshape", ComputeSparseReshape},
    {"DenseToDenseSetOperation", ComputeSetOperation},
    {"DenseToSparseSetOperation", ComputeSetOperation},
    {"SparseToSparseSetOperation", ComputeSetOperation},
    {"SetSize", ComputeSetSize},
};

}  // namespace

std::span<const KernelEntry> SparseCpuKernels() { return kCpu; }

}  // namespace kiln::exec
