// Selecting elements: Transpose (and ConjugateTranspose), StridedSlice and its writes
// (StridedSliceGrad, TensorStridedSliceUpdate), GatherV2 (batch_dims included); and TF's
// strided-slice analysis (kernels/strided_slice.h). The CPU kernels are in
// kernels/cpu/slice_ops.cc.
#include "kernels/slice_ops.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/strided_slice.h"

namespace kiln::exec {
namespace {

using slice::BatchDimsState;
using slice::CheckPerm;
using slice::GatherBatchDims;
using slice::GatherDims;
using slice::StridedSliceState;

// ---- Transpose -------------------------------------------------------------------------------

Status PrepareTranspose(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "x"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "perm", "Tperm").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "perm", 1));
  const PartialShape& in = ctx.inputs[0].shape;
  int64_t n = KnownLength(ctx.inputs[1].shape);
  if (!in.unknown_rank() && n >= 0 && n != in.rank()) {
    return ctx.Error("input 'perm' has ", n, " entries but 'x' has shape ", in.ToPythonString());
  }
  PartialShape out = UnknownDims(in.unknown_rank() ? static_cast<int>(n) : in.rank());
  if (const Tensor* perm_t = ConstantInput(ctx, 1); perm_t != nullptr && !in.unknown_rank()) {
    std::vector<int64_t> perm = IndexValues(*perm_t);
    Status s = CheckPerm(perm, in.rank());
    if (!s.ok()) return ctx.Error(s.message());
    std::vector<int64_t> dims;
    for (int64_t p : perm) dims.push_back(in.dim(p));
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

// ---- StridedSlice ------------------------------------------------------------------------------

constexpr int kNewAxis = -1;
constexpr int kShrinkAxis = -2;

bool Bit(int64_t mask, int i) { return i < 63 && ((mask >> i) & 1) != 0; }

}  // namespace

// input_dims: -1 for unknown. begin/end null when their values are unknown.
Status AnalyzeStridedSlice(std::span<const int64_t> input_dims, const int64_t* begin,
                           const int64_t* end, const int64_t* strides, int n, const SliceMasks& m,
                           DenseSlice* out) {
  if (m.ellipsis & (m.ellipsis - 1)) {
    return InvalidArgument("multiple ellipses in slice spec are not allowed (ellipsis_mask ",
                           m.ellipsis, ")");
  }
  if (n > 32) return InvalidArgument("slice spec has ", n, " entries; at most 32 are supported");
  const int dims = static_cast<int>(input_dims.size());
  int sparse_dims = n;
  int64_t ellipsis = m.ellipsis;
  int new_after_ellipsis = 0;
  bool seen = false;
  for (int i = 0; i < n; ++i) {
    if (seen && Bit(m.new_axis, i)) ++new_after_ellipsis;
    if (Bit(ellipsis, i)) seen = true;
  }
  if (!seen) ellipsis |= int64_t{1} << sparse_dims++;  // an implicit trailing ellipsis

  std::array<int64_t, kMaxRank> b{}, e{};
  std::array<bool, kMaxRank> bm{}, em{}, shrink{};
  std::vector<int> gather;
  int full = 0;
  for (int i = 0; i < sparse_dims; ++i) {
    if (Bit(ellipsis, i)) {
      const int next = std::min(dims - (sparse_dims - i) + 1 + new_after_ellipsis, dims);
      for (; full < next; ++full) {
        b[full] = e[full] = 0;
        out->stride[full] = 1;
        bm[full] = em[full] = true;
        shrink[full] = false;
        gather.push_back(full);
      }
    } else if (Bit(m.new_axis, i)) {
      gather.push_back(kNewAxis);
    } else {
      if (full == dims) {
        return InvalidArgument("index out of range using input dim ", full, "; input has only ",
                               dims, " dims");
      }
      b[full] = begin ? begin[i] : 0;
      e[full] = end ? end[i] : 0;
      out->stride[full] = strides[i];
      bm[full] = Bit(m.begin, i);
      em[full] = Bit(m.end, i);
      shrink[full] = Bit(m.shrink, i);
      gather.push_back(shrink[full] ? kShrinkAxis : full);
      ++full;
    }
  }
  const bool known = begin != nullptr && end != nullptr;
  for (int i = 0; i < dims; ++i) {
    const int64_t stride = out->stride[i];
    const int64_t dim = input_dims[i];
    if (stride == 0) return InvalidArgument("strides[", i, "] must be non-zero");
    if (dim == -1) {
      out->size[i] = shrink[i] ? 1 : -1;
      continue;
    }
    if (shrink[i] && stride <= 0) {
      return InvalidArgument("only stride 1 is allowed on non-range indexing (dim ", i,
                             " has stride ", stride, ")");
    }
    int64_t len = 0;
    bool known_len = false;
    if (known) {
      if (shrink[i]) {
        const int64_t x = b[i] < 0 ? dim + b[i] : b[i];
        if (x < 0 || x >= dim) {
          return InvalidArgument("slice index ", b[i], " of dimension ", i, " out of bounds (size ",
                                 dim, ")");
        }
        b[i] = x;
        e[i] = x + 1;
      } else {
        const int64_t lo = stride > 0 ? 0 : -1, hi = stride > 0 ? dim : dim - 1;
        auto canonical = [&](int64_t x, bool masked, bool is_end) {
          if (masked) return (stride > 0) != is_end ? lo : hi;
          const int64_t fwd = x < 0 ? dim + x : x;
          return std::clamp(fwd, lo, hi);
        };
        b[i] = canonical(b[i], bm[i], false);
        e[i] = canonical(e[i], em[i], true);
      }
      len = e[i] - b[i];
      known_len = true;
    } else if (shrink[i]) {
      len = 1;
      known_len = true;
    } else if (bm[i] && em[i]) {
      len = stride < 0 ? -dim : dim;
      known_len = true;
    }
    if (!known_len) {
      out->size[i] = -1;
    } else if (len == 0 || (len < 0) != (stride < 0)) {
      out->size[i] = 0;
    } else {
      out->size[i] = len / stride + (len % stride != 0 ? 1 : 0);
    }
    out->begin[i] = b[i];
  }
  out->final_dims.clear();
  for (int g : gather) {
    if (g >= 0) {
      out->final_dims.push_back(out->size[g]);
    } else if (g == kNewAxis) {
      out->final_dims.push_back(1);
    }
  }
  if (out->final_dims.size() > static_cast<size_t>(kMaxRank)) {
    return InvalidArgument("slice result would have rank ", out->final_dims.size(), "; at most ",
                           kMaxRank, " is supported");
  }
  return OkStatus();
}

namespace {

Status PrepareStridedSlice(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_PREPARE_ASSIGN(ctx, DType index, ctx.attrs.GetType("Index"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Index", index, {DType::kInt32, DType::kInt64}));
  const char* names[] = {"begin", "end", "strides"};
  for (int i = 1; i < 4; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, names[i - 1], index));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, names[i - 1], 1));
  }
  auto state = std::make_shared<StridedSliceState>();
  KILN_RETURN_IF_ERROR(ReadSliceMasks(ctx, &state->masks));
  const SliceMasks& m = state->masks;
  const int64_t lens[] = {KnownLength(ctx.inputs[1].shape), KnownLength(ctx.inputs[2].shape),
                          KnownLength(ctx.inputs[3].shape)};
  for (int i = 1; i < 3; ++i) {
    if (lens[i] >= 0 && lens[0] >= 0 && lens[i] != lens[0]) {
      return ctx.Error("expected begin, end and strides to be vectors of equal length, got ",
                       lens[0], ", ", lens[1], " and ", lens[2]);
    }
  }
  PartialShape out;
  const PartialShape& in = ctx.inputs[0].shape;
  const Tensor* strides_t = ConstantInput(ctx, 3);
  if (!in.unknown_rank() && strides_t != nullptr) {
    std::vector<int64_t> strides = IndexValues(*strides_t);
    const Tensor* begin_t = ConstantInput(ctx, 1);
    const Tensor* end_t = ConstantInput(ctx, 2);
    std::vector<int64_t> begin, end;
    if (begin_t) begin = IndexValues(*begin_t);
    if (end_t) end = IndexValues(*end_t);
    const bool both =
        begin_t && end_t && begin.size() == strides.size() && end.size() == strides.size();
    DenseSlice dense;
    Status s =
        AnalyzeStridedSlice(in.dims(), both ? begin.data() : nullptr, both ? end.data() : nullptr,
                            strides.data(), static_cast<int>(strides.size()), m, &dense);
    if (!s.ok()) return ctx.Error(s.message());
    out = *PartialShape::FromDims(dense.final_dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- StridedSliceGrad, TensorStridedSliceUpdate ----------------------------------------------

// The writes of a strided slice: StridedSliceGrad(shape, begin, end, strides, dy) is zeros of
// `shape` with dy in the slice; TensorStridedSliceUpdate(input, begin, end, strides, value) is
// the input with `value` (broadcast to the slice's shape) in the slice.
template <bool kGrad>
Status PrepareStridedWrite(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(5));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_PREPARE_ASSIGN(ctx, DType index, ctx.attrs.GetType("Index"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Index", index, {DType::kInt32, DType::kInt64}));
  const char* names[] = {kGrad ? "shape" : "input", "begin", "end", "strides"};
  for (int i = kGrad ? 0 : 1; i < 4; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, names[i], index));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, names[i], 1));
  }
  if (!kGrad) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 4, kGrad ? "dy" : "value", t));
  auto state = std::make_shared<StridedSliceState>();
  KILN_RETURN_IF_ERROR(ReadSliceMasks(ctx, &state->masks));
  PartialShape out = ctx.inputs[0].shape;
  if (kGrad) {
    out = PartialShape::UnknownRank();
    if (const Tensor* shape_t = ConstantInput(ctx, 0)) {
      KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(IndexValues(*shape_t)));
    } else if (const int64_t n = KnownLength(ctx.inputs[0].shape); n >= 0) {
      out = UnknownDims(static_cast<int>(n));
    }
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

}  // namespace

Status ReadSliceMasks(PrepareContext& ctx, SliceMasks* m) {
  KILN_PREPARE_ASSIGN(ctx, m->begin, ctx.attrs.GetInt("begin_mask", 0));
  KILN_PREPARE_ASSIGN(ctx, m->end, ctx.attrs.GetInt("end_mask", 0));
  KILN_PREPARE_ASSIGN(ctx, m->ellipsis, ctx.attrs.GetInt("ellipsis_mask", 0));
  KILN_PREPARE_ASSIGN(ctx, m->new_axis, ctx.attrs.GetInt("new_axis_mask", 0));
  KILN_PREPARE_ASSIGN(ctx, m->shrink, ctx.attrs.GetInt("shrink_axis_mask", 0));
  return OkStatus();
}

Status AnalyzeSliceOf(const Shape& shape, const Tensor& begin_t, const Tensor& end_t,
                      const Tensor& strides_t, const SliceMasks& m, DenseSlice* out) {
  if (begin_t.rank() != 1 || end_t.rank() != 1 || strides_t.rank() != 1 ||
      begin_t.NumElements() != strides_t.NumElements() ||
      end_t.NumElements() != strides_t.NumElements()) {
    return InvalidArgument(
        "expected begin, end and strides to be vectors of equal length, got shapes ",
        begin_t.shape().ToString(), ", ", end_t.shape().ToString(), " and ",
        strides_t.shape().ToString());
  }
  std::vector<int64_t> begin = IndexValues(begin_t), end = IndexValues(end_t),
                       strides = IndexValues(strides_t);
  return AnalyzeStridedSlice(shape.dims(), begin.data(), end.data(), strides.data(),
                             static_cast<int>(strides.size()), m, out);
}

namespace {

// ---- GatherV2 --------------------------------------------------------------------------------

Status PrepareGather(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "params", "Tparams"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "indices", "Tindices").status());
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 2, "axis", "Taxis").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "axis", 0));
  KILN_PREPARE_ASSIGN(ctx, int64_t batch_dims, ctx.attrs.GetInt("batch_dims", 0));
  const PartialShape& params = ctx.inputs[0].shape;
  const PartialShape& indices = ctx.inputs[1].shape;
  PartialShape out;
  if (!params.unknown_rank() && params.rank() == 0) {
    return ctx.Error("input 'params' must have rank >= 1, got a scalar");
  }
  if (!params.unknown_rank() && !indices.unknown_rank()) {
    auto b0 = GatherBatchDims(batch_dims, indices.rank(), kMaxRank);  // range only: axis unknown
    if (!b0.ok()) return ctx.Error(b0.status().message());
    const int rank = params.rank() + indices.rank() - 1 - *b0;
    if (rank > kMaxRank) return ctx.Error("result would have rank ", rank);
    out = UnknownDims(rank);
    if (const Tensor* axis_t = ConstantInput(ctx, 2)) {
      auto axis = CanonicalAxis(IndexValues(*axis_t)[0], params.rank(), "axis");
      if (!axis.ok()) return ctx.Error(axis.status().message());
      auto b = GatherBatchDims(batch_dims, indices.rank(), *axis);
      if (!b.ok()) return ctx.Error(b.status().message());
      for (int d = 0; d < *b; ++d) {
        if (params.dim(d) >= 0 && indices.dim(d) >= 0 && params.dim(d) != indices.dim(d)) {
          return ctx.Error("params.shape[", d, "]: ", params.dim(d),
                           " should be equal to indices.shape[", d, "]: ", indices.dim(d));
        }
      }
      out = *PartialShape::FromDims(GatherDims(params.dims(), indices.dims(), *axis, *b));
    }
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::make_shared<BatchDimsState>(batch_dims);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Transpose", "y", kOpFreshOutputs, PrepareTranspose},
    {"ConjugateTranspose", "y", kOpFreshOutputs, PrepareTranspose},
    {"StridedSliceGrad", "output", kOpFreshOutputs, PrepareStridedWrite<true>},
    {"TensorStridedSliceUpdate", "output", kOpFreshOutputs, PrepareStridedWrite<false>},
    {"StridedSlice", "output", kOpFreshOutputs, PrepareStridedSlice},
    {"GatherV2", "output", kOpFreshOutputs, PrepareGather},
};

}  // namespace

std::span<const OpDefinition> SliceOpDefs() { return kDefs; }

}  // namespace kiln::exec
