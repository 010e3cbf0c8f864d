// Cutting tensors into pieces and the TF1 way of joining them: Slice, Split, SplitV and Concat
// (v1, whose axis comes first). Every piece is a strided copy of its input.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

// Output `out` is x[.., begin:begin+size, ..] along `axis`.
Status CopySliceAlong(const KernelContext& ctx, int out, const Tensor& x, int axis, int64_t begin,
                      int64_t size) {
  const auto strides = RowMajorStrides(x.shape());
  Shape shape = x.shape();
  shape.set_dim(axis, size);
  CopyPlan plan;
  plan.offset[1] = begin * strides[axis];
  for (int d = 0; d < x.rank(); ++d) AddCopyDim(&plan, shape.dim(d), strides[d]);
  return CopyIntoOutput(ctx, out, x, shape, plan);
}

// The split axis: a scalar int32 input, accepted in [-rank, rank).
Result<int> SplitAxis(const Tensor& t, int rank) {
  if (t.NumElements() != 1) {
    return InvalidArgument("input 'split_dim' must be a scalar, got shape ", t.shape().ToString());
  }
  return CanonicalAxis(IndexValues(t)[0], rank, "split_dim");
}

// ---- Slice -------------------------------------------------------------------------------------

// begin/size made concrete against `dims`; size -1 means "to the end".
Status ResolveSlice(std::span<const int64_t> dims, std::vector<int64_t>* begin,
                    std::vector<int64_t>* size) {
  if (begin->size() != dims.size() || size->size() != dims.size()) {
    return InvalidArgument("expected begin and size to be vectors of length ", dims.size(),
                           " (the input's rank), got ", begin->size(), " and ", size->size());
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t b = (*begin)[i];
    if (b < 0 || b > dims[i]) {
      return InvalidArgument("expected begin[", i, "] in [0, ", dims[i], "], but got ", b);
    }
    const int64_t given = (*size)[i];
    const int64_t s = given == -1 ? dims[i] - b : given;
    if (s < 0 || b + s > dims[i]) {
      return InvalidArgument("expected size[", i, "] in [0, ", dims[i] - b, "], but got ", given);
    }
    (*size)[i] = s;
  }
  return OkStatus();
}

Status PrepareSlice(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_ASSIGN_OR_RETURN(DType index, IndexInputDType(ctx, 1, "begin", "Index"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "size", index));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "begin", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "size", 1));
  const PartialShape& in = ctx.inputs[0].shape;
  int rank = in.rank();
  for (int i = 1; i < 3; ++i) {
    const int64_t n = KnownLength(ctx.inputs[i].shape);
    if (n < 0) continue;
    if (rank >= 0 && n != rank) {
      return ctx.Error("input '", i == 1 ? "begin" : "size", "' has ", n,
                       " entries but 'input' has shape ", in.ToPythonString());
    }
    rank = static_cast<int>(n);
  }
  PartialShape out = UnknownDims(rank);
  const Tensor* begin_t = ConstantInput(ctx, 1);
  const Tensor* size_t_ = ConstantInput(ctx, 2);
  if (size_t_ != nullptr && rank >= 0) {
    std::vector<int64_t> size = IndexValues(*size_t_);
    std::vector<int64_t> dims(rank, -1);
    for (int i = 0; i < rank && i < static_cast<int>(size.size()); ++i) {
      if (size[i] < -1) return ctx.Error("size[", i, "] = ", size[i], " must be -1 or >= 0");
      dims[i] = size[i];
    }
    if (begin_t != nullptr && !in.unknown_rank()) {
      std::vector<int64_t> begin = IndexValues(*begin_t);
      for (int i = 0; i < rank && i < static_cast<int>(begin.size()); ++i) {
        if (dims[i] == -1 && in.dim(i) >= 0) dims[i] = in.dim(i) - begin[i];
        if (in.dim(i) >= 0 && (begin[i] < 0 || begin[i] > in.dim(i) || dims[i] < 0 ||
                               begin[i] + dims[i] > in.dim(i))) {
          return ctx.Error("slice [", begin[i], ", ", begin[i] + size[i], ") of dim ", i,
                           " is out of range for 'input' of shape ", in.ToPythonString());
        }
      }
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status ComputeSlice(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> begin = IndexValues(ctx.input(1));
  std::vector<int64_t> size = IndexValues(ctx.input(2));
  if (ctx.input(1).rank() != 1 || ctx.input(2).rank() != 1) {
    return ctx.Error("inputs 'begin' and 'size' must be vectors, got shapes ",
                     ctx.input(1).shape().ToString(), " and ", ctx.input(2).shape().ToString());
  }
  Status s = ResolveSlice(x.shape().dims(), &begin, &size);
  if (!s.ok()) return Wrap(ctx, s);
  const auto strides = RowMajorStrides(x.shape());
  Shape shape;
  CopyPlan plan;
  for (int d = 0; d < x.rank(); ++d) {
    shape.AddDim(size[d]);
    plan.offset[1] += begin[d] * strides[d];
    AddCopyDim(&plan, size[d], strides[d]);
  }
  return CopyIntoOutput(ctx, 0, x, shape, plan);
}

// ---- Split, SplitV -----------------------------------------------------------------------------

struct SplitState : OpState {
  int value_input = 1;  // Split: (split_dim, value); SplitV: (value, size_splits, split_dim)
  int axis_input = 0;
};

// Piece sizes of SplitV with at most one -1, resolved against a dim of size `dim` (-1 unknown:
// the -1 piece stays unknown).
Result<std::vector<int64_t>> ResolveSplits(std::vector<int64_t> sizes, int64_t dim) {
  int unknown = -1;
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (unknown >= 0) {
        return InvalidArgument("size_splits ", DimsString(sizes),
                               " has more than one -1 (at most one size can be inferred)");
      }
      unknown = static_cast<int>(i);
    } else if (sizes[i] < 0) {
      return InvalidArgument("size_splits ", DimsString(sizes), " has a negative size ", sizes[i]);
    } else {
      total += sizes[i];
    }
  }
  if (dim < 0) return sizes;
  if ((unknown < 0 && total != dim) || (unknown >= 0 && total > dim)) {
    return InvalidArgument("size_splits ", DimsString(sizes), " must ",
                           unknown < 0 ? "sum to" : "sum to at most",
                           " the split dimension's size ", dim, ", got ", total);
  }
  if (unknown >= 0) sizes[unknown] = dim - total;
  return sizes;
}

Status PrepareSplit(PrepareContext& ctx) {
  const bool v = ctx.op == "SplitV";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(v ? 3 : 2));
  auto state = std::make_shared<SplitState>();
  state->value_input = v ? 0 : 1;
  state->axis_input = v ? 2 : 0;
  KILN_PREPARE_ASSIGN(ctx, int64_t num, ctx.attrs.GetInt("num_split"));
  if (num < 1) return ctx.Error("attr 'num_split' must be at least 1, got ", num);
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, state->value_input, "value"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, state->axis_input, "split_dim", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, state->axis_input, "split_dim", 0));
  std::vector<int64_t> sizes;
  if (v) {
    KILN_PREPARE_ASSIGN(ctx, DType tlen, ctx.attrs.GetType("Tlen", DType::kInt64));
    KILN_RETURN_IF_ERROR(
        ExpectAttrDTypeIn(ctx, "Tlen", tlen, {DType::kInt8, DType::kInt32, DType::kInt64}));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "size_splits", tlen));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "size_splits", 1));
    const int64_t n = KnownLength(ctx.inputs[1].shape);
    if (n >= 0 && n != num) {
      return ctx.Error("input 'size_splits' has ", n, " entries but attr 'num_split' is ", num);
    }
    if (const Tensor* s = ConstantInput(ctx, 1)) {
      for (int64_t i = 0; i < s->NumElements(); ++i) {
        sizes.push_back(s->dtype() == DType::kInt8    ? s->data<int8_t>()[i]
                        : s->dtype() == DType::kInt32 ? s->data<int32_t>()[i]
                                                      : s->data<int64_t>()[i]);
      }
    }
  }
  const PartialShape& in = ctx.inputs[state->value_input].shape;
  std::vector<PartialShape> outs(num, UnknownDims(in.rank()));
  const Tensor* axis_t = ConstantInput(ctx, state->axis_input);
  if (!in.unknown_rank() && axis_t != nullptr) {
    auto axis = SplitAxis(*axis_t, in.rank());
    if (!axis.ok()) return ctx.Error(axis.status().message());
    const int64_t dim = in.dim(*axis);
    std::vector<int64_t> pieces(num, -1);
    if (!v) {
      if (dim >= 0 && dim % num != 0) {
        return ctx.Error(
            "number of ways to split should evenly divide the split dimension, but "
            "got split_dim ",
            *axis, " (size = ", dim, ") and num_split ", num);
      }
      if (dim >= 0) pieces.assign(num, dim / num);
    } else if (!sizes.empty()) {
      auto r = ResolveSplits(sizes, dim);
      if (!r.ok()) return ctx.Error(r.status().message());
      pieces = *r;
    }
    for (int64_t k = 0; k < num; ++k) {
      std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
      dims[*axis] = pieces[k];
      outs[k] = *PartialShape::FromDims(dims);
    }
  }
  for (const PartialShape& s : outs) ctx.outputs.push_back(TensorSpec{t, s});
  ctx.state = std::move(state);
  return OkStatus();
}

Status ComputeSplit(const KernelContext& ctx) {
  const auto& st = ctx.state<SplitState>();
  const Tensor& x = ctx.input(st.value_input);
  if (x.rank() == 0) return ctx.Error("cannot split a scalar");
  auto axis = SplitAxis(ctx.input(st.axis_input), x.rank());
  if (!axis.ok()) return Wrap(ctx, axis.status());
  const int num = ctx.num_outputs();
  const int64_t dim = x.dim(*axis);
  std::vector<int64_t> pieces;
  if (st.value_input == 1) {
    if (dim % num != 0) {
      return ctx.Error(
          "number of ways to split should evenly divide the split dimension, but got "
          "split_dim ",
          *axis, " (size = ", dim, ") and num_split ", num);
    }
    pieces.assign(num, dim / num);
  } else {
    const Tensor& s = ctx.input(1);
    if (s.rank() != 1 || s.NumElements() != num) {
      return ctx.Error("input 'size_splits' must be a vector of ", num, " sizes, got shape ",
                       s.shape().ToString());
    }
    std::vector<int64_t> sizes;
    for (int64_t i = 0; i < num; ++i) {
      sizes.push_back(s.dtype() == DType::kInt8    ? s.data<int8_t>()[i]
                      : s.dtype() == DType::kInt32 ? s.data<int32_t>()[i]
                                                   : s.data<int64_t>()[i]);
    }
    auto r = ResolveSplits(sizes, dim);
    if (!r.ok()) return Wrap(ctx, r.status());
    pieces = *r;
  }
  int64_t begin = 0;
  for (int k = 0; k < num; ++k) {
    KILN_RETURN_IF_ERROR(CopySliceAlong(ctx, k, x, *axis, begin, pieces[k]));
    begin += pieces[k];
  }
  return OkStatus();
}

// ---- Concat (v1) -------------------------------------------------------------------------------

Status PrepareConcatV1(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("N"));
  if (n < 2) return ctx.Error("attr 'N' must be at least 2, got ", n);
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(n) + 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "concat_dim", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "concat_dim", 0));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  int rank = -1;
  for (int i = 1; i <= n; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, internal::StrCat("values:", i - 1), t));
    const PartialShape& s = ctx.inputs[i].shape;
    if (s.unknown_rank()) continue;
    if (s.rank() == 0) return ctx.Error("cannot concatenate scalars (use Pack)");
    if (rank >= 0 && s.rank() != rank) {
      return ctx.Error("all values must have the same rank, but values:", i - 1, " has shape ",
                       s.ToPythonString(), " and an earlier value rank ", rank);
    }
    rank = s.rank();
  }
  std::vector<int64_t> dims;
  if (rank >= 0) dims.assign(rank, -1);
  if (const Tensor* axis_t = ConstantInput(ctx, 0); axis_t != nullptr && rank >= 0) {
    auto axis = CanonicalAxis(IndexValues(*axis_t)[0], rank, "concat_dim");
    if (!axis.ok()) return ctx.Error(axis.status().message());
    int64_t total = 0;
    for (int i = 1; i <= n; ++i) {
      const PartialShape& s = ctx.inputs[i].shape;
      if (s.unknown_rank()) {
        total = -1;
        continue;
      }
      for (int d = 0; d < rank; ++d) {
        if (d == *axis || s.dim(d) < 0) continue;
        if (dims[d] >= 0 && dims[d] != s.dim(d)) {
          return ctx.Error("dimension ", d, " of values:", i - 1, " ", s.ToPythonString(),
                           " does not match ", dims[d], " of an earlier value");
        }
        dims[d] = s.dim(d);
      }
      total = (total < 0 || s.dim(*axis) < 0) ? -1 : total + s.dim(*axis);
    }
    dims[*axis] = total;
  }
  ctx.outputs = {TensorSpec{t, rank >= 0 ? *PartialShape::FromDims(dims) : PartialShape()}};
  return OkStatus();
}

Status ComputeConcatV1(const KernelContext& ctx) {
  const int n = ctx.num_inputs() - 1;
  const Tensor& first = ctx.input(1);
  if (first.rank() == 0) return ctx.Error("cannot concatenate scalars (use Pack)");
  const Tensor& axis_t = ctx.input(0);
  if (axis_t.NumElements() != 1) {
    return ctx.Error("input 'concat_dim' must be a scalar, got shape ", axis_t.shape().ToString());
  }
  auto axis = CanonicalAxis(IndexValues(axis_t)[0], first.rank(), "concat_dim");
  if (!axis.ok()) return Wrap(ctx, axis.status());
  Shape out_shape = first.shape();
  int64_t outer = 1;
  for (int d = 0; d < *axis; ++d) outer *= first.dim(d);
  std::vector<int64_t> chunks(n);
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    const Shape& s = ctx.input(i + 1).shape();
    bool ok = s.rank() == first.rank();
    for (int d = 0; ok && d < s.rank(); ++d) ok = d == *axis || s.dim(d) == first.dim(d);
    if (!ok) {
      return ctx.Error("values must match in all dimensions but concat_dim ", *axis,
                       ": values:0 has shape ", first.shape().ToString(), ", values:", i,
                       " has shape ", s.ToString());
    }
    total += s.dim(*axis);
    chunks[i] = outer == 0 ? 0 : s.num_elements() / outer;
  }
  out_shape.set_dim(*axis, total);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  if (out->NumElements() == 0) return OkStatus();
  const int64_t row = out->NumElements() / outer;
  return DispatchStorage(first.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U* dst = Elems<U>(*out);
    // Output row o is the inputs' rows o side by side; rows are independent.
    ctx.threads().ParallelFor(outer, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, row)),
                              [&](int64_t begin, int64_t end) {
                                for (int64_t o = begin; o < end; ++o) {
                                  U* to = dst + o * row;
                                  for (int k = 0; k < n; ++k) {
                                    const U* src = Elems<U>(ctx.input(k + 1)) + o * chunks[k];
                                    to = std::copy(src, src + chunks[k], to);
                                  }
                                }
                              });
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Slice", "output", kOpFreshOutputs, PrepareSlice},
    {"Split", "output", kOpFreshOutputs, PrepareSplit},
    {"SplitV", "output", kOpFreshOutputs, PrepareSplit},
    {"Concat", "output", kOpFreshOutputs, PrepareConcatV1},
};

constexpr KernelEntry kCpu[] = {
    {"Slice", ComputeSlice},
    {"Split", ComputeSplit},
    {"SplitV", ComputeSplit},
    {"Concat", ComputeConcatV1},
};

}  // namespace

std::span<const OpDefinition> SplitOpDefs() { return kDefs; }
std::span<const KernelEntry> SplitCpuKernels() { return kCpu; }

}  // namespace kiln::exec
