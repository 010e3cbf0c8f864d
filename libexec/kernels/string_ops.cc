// Strings put together: StringFormat, PrintV2 and TF1's Print, StringJoin (element-wise), and
// ReduceJoin / UnsortedSegmentJoin (across a tensor: over axes, or by segment id; see below).
#include <atomic>
#include <string>
#include <vector>

#include "core/tensor_summary.h"
#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

// ---- StringFormat ----------------------------------------------------------------------------

struct StringFormatState : OpState {
  std::vector<std::string> pieces;  // the template split at each placeholder
  int summarize = 3;
};

Status PrepareStringFormat(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, std::vector<DType> types, ctx.attrs.GetTypeList("T"));
  KILN_PREPARE_ASSIGN(ctx, std::string tmpl, ctx.attrs.GetString("template", "%s"));
  KILN_PREPARE_ASSIGN(ctx, std::string placeholder, ctx.attrs.GetString("placeholder", "%s"));
  KILN_PREPARE_ASSIGN(ctx, int64_t summarize, ctx.attrs.GetInt("summarize", 3));
  if (placeholder.empty()) return ctx.Error("attr 'placeholder' must not be empty");
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(types.size())));
  for (size_t i = 0; i < types.size(); ++i) {
    KILN_RETURN_IF_ERROR(
        ExpectInputDType(ctx, static_cast<int>(i), internal::StrCat("inputs:", i), types[i]));
  }
  auto state = std::make_shared<StringFormatState>();
  state->summarize = static_cast<int>(summarize);
  size_t start = 0;
  for (size_t pos; (pos = tmpl.find(placeholder, start)) != std::string::npos;
       start = pos + placeholder.size()) {
    state->pieces.push_back(tmpl.substr(start, pos - start));
  }
  state->pieces.push_back(tmpl.substr(start));
  const size_t placeholders = state->pieces.size() - 1;
  if (placeholders != types.size()) {
    return ctx.Error("template \"", tmpl, "\" has ", placeholders, " placeholder(s) \"",
                     placeholder, "\" but the node has ", types.size(), " input(s)");
  }
  ctx.outputs = {TensorSpec{DType::kString, PartialShape::Scalar()}};
  ctx.state = std::move(state);
  return OkStatus();
}

Status ComputeStringFormat(const KernelContext& ctx) {
  const auto& st = ctx.state<StringFormatState>();
  std::string out = st.pieces[0];
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    out += ctx.input(i).SummarizeValue(st.summarize);
    out += st.pieces[i + 1];
  }
  KILN_ASSIGN_OR_RETURN(Tensor * result, ctx.AllocateOutput(0, Shape()));
  result->scalar<std::string>() = std::move(out);
  return OkStatus();
}

// ---- PrintV2 ---------------------------------------------------------------------------------

struct PrintState : OpState {
  std::string stream;
  std::string end;
};

bool IsKnownStream(std::string_view s) {
  return s == "stdout" || s == "stderr" || s == "log(info)" || s == "log(warning)" ||
         s == "log(error)" || s.substr(0, 7) == "file://";
}

Status PreparePrintV2(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  auto state = std::make_shared<PrintState>();
  KILN_PREPARE_ASSIGN(ctx, state->stream, ctx.attrs.GetString("output_stream", "stderr"));
  KILN_PREPARE_ASSIGN(ctx, state->end, ctx.attrs.GetString("end", "\n"));
  if (!IsKnownStream(state->stream)) {
    return ctx.Error("attr 'output_stream': unknown stream \"", state->stream,
                     "\" (expected stdout, stderr, log(info), log(warning), log(error) or "
                     "file://<path>)");
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 0));
  ctx.state = std::move(state);
  return OkStatus();
}

Status ComputePrintV2(const KernelContext& ctx) {
  const auto& st = ctx.state<PrintState>();
  const Tensor& in = ctx.input(0);
  if (in.NumElements() != 1) {
    return ctx.Error("input must be a string scalar, got shape ", in.shape().ToString());
  }
  (*ctx.env().print)(st.stream, in.scalar<std::string>() + st.end);
  return OkStatus();
}

// ---- Print (TF1's tf.Print)
// ---------------------------------------------------------------------- Passes input 0 on and
// writes `message` and each data input's summary ("[1 2 3...]") to stderr, as TF's PrintOp does, at
// most first_n times per node when first_n >= 0.

struct TfPrintState : OpState {
  std::string message;
  int64_t first_n = -1;
  int summarize = 3;
  // Calls so far: the one thing Compute changes, shared by the node's callers as TF's counter.
  mutable std::atomic<int64_t> calls{0};
};

Status PreparePrint(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputsAtLeast(1));
  auto state = std::make_shared<TfPrintState>();
  KILN_PREPARE_ASSIGN(ctx, state->message, ctx.attrs.GetString("message", ""));
  KILN_PREPARE_ASSIGN(ctx, state->first_n, ctx.attrs.GetInt("first_n", -1));
  KILN_PREPARE_ASSIGN(ctx, int64_t summarize, ctx.attrs.GetInt("summarize", 3));
  state->summarize = static_cast<int>(summarize);
  ctx.outputs = {ctx.inputs[0]};
  ctx.state = std::move(state);
  return OkStatus();
}

Status ComputePrint(const KernelContext& ctx) {
  const auto& st = ctx.state<TfPrintState>();
  ctx.SetOutput(0, ctx.input(0));
  if (st.first_n >= 0 && st.calls.fetch_add(1) >= st.first_n) return OkStatus();
  std::string msg = st.message;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    msg += '[';
    msg += SummarizeValueV1(ctx.input(i), st.summarize);
    msg += ']';
  }
  (*ctx.env().print)("stderr", msg + "\n");
  return OkStatus();
}

// ---- StringJoin ------------------------------------------------------------------------------

Status PrepareStringJoin(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputsAtLeast(1));
  KILN_PREPARE_ASSIGN(ctx, int64_t n,
                      ctx.attrs.GetInt("N", static_cast<int64_t>(ctx.inputs.size())));
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(n)));
  KILN_PREPARE_ASSIGN(ctx, std::string separator, ctx.attrs.GetString("separator", ""));
  ctx.state = std::make_shared<TypedOpState<std::string>>(std::move(separator));
  // Scalars repeat; every other input must have the same shape.
  PartialShape shape = PartialShape::Scalar();
  bool any_unknown_rank = false;
  for (int i = 0; i < static_cast<int>(n); ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, internal::StrCat("inputs:", i), DType::kString));
    const PartialShape& s = ctx.inputs[i].shape;
    if (s.unknown_rank()) {
      any_unknown_rank = true;
      continue;
    }
    if (s.rank() == 0) continue;
    if (shape.rank() == 0) {
      shape = s;
      continue;
    }
    auto merged = shape.MergeWith(s);
    if (!merged.ok()) {
      return ctx.Error("inputs must be scalars or have the same shape, got ",
                       shape.ToPythonString(), " and ", s.ToPythonString());
    }
    shape = *merged;
  }
  if (any_unknown_rank && shape.rank() == 0) shape = PartialShape::UnknownRank();
  ctx.outputs = {TensorSpec{DType::kString, shape}};
  return OkStatus();
}

Status ComputeStringJoin(const KernelContext& ctx) {
  const std::string& sep = ctx.state<TypedOpState<std::string>>().value;
  const Tensor* shaped = nullptr;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.input(i);
    if (t.rank() == 0) continue;
    if (shaped == nullptr) {
      shaped = &t;
    } else if (t.shape() != shaped->shape()) {
      return ctx.Error("inputs must be scalars or have the same shape, got ",
                       shaped->shape().ToString(), " and ", t.shape().ToString());
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out_ptr,
                        ctx.AllocateOutput(0, DType::kString, shaped ? shaped->shape() : Shape()));
  Tensor& out = *out_ptr;
  std::span<std::string> dst = out.flat<std::string>();
  for (size_t j = 0; j < dst.size(); ++j) {
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& t = ctx.input(i);
      if (i > 0) dst[j] += sep;
      dst[j] += t.data<std::string>()[t.rank() == 0 ? 0 : j];
    }
  }
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

// ---- ReduceJoin(inputs, reduction_indices) ---------------------------------------------------
// Joined in row-major order of the input, whatever the order of the axes (as TF).

struct JoinState : OpState {
  std::string separator;
  bool keep_dims = false;
};

Status PrepareReduceJoin(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "inputs", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "reduction_indices", DType::kInt32));
  auto st = std::make_shared<JoinState>();
  KILN_PREPARE_ASSIGN(ctx, st->keep_dims, ctx.attrs.GetBool("keep_dims", false));
  KILN_PREPARE_ASSIGN(ctx, st->separator, ctx.attrs.GetString("separator", ""));
  const PartialShape& x = ctx.inputs[0].shape;
  PartialShape out = PartialShape::UnknownRank();
  if (const Tensor* axes = ConstantInput(ctx, 1); axes != nullptr && !x.unknown_rank()) {
    std::vector<bool> reduced(x.rank(), false);
    for (int64_t a : IndexValues(*axes)) {
      KILN_PREPARE_ASSIGN(ctx, int axis, CanonicalAxis(a, x.rank(), "reduction_indices"));
      reduced[axis] = true;
    }
    std::vector<int64_t> dims;
    for (int i = 0; i < x.rank(); ++i)
      if (!reduced[i])
        dims.push_back(x.dim(i));
      else if (st->keep_dims)
        dims.push_back(1);
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  }
  ctx.outputs = {TensorSpec{DType::kString, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status ComputeReduceJoin(const KernelContext& ctx) {
  const auto& st = ctx.state<JoinState>();
  const Tensor& x = ctx.input(0);
  const int rank = x.rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : IndexValues(ctx.input(1))) {
    if (a < -rank || a >= rank)
      return ctx.Error("Invalid reduction dimension ", a, " for input with ", rank,
                       " dimension(s)");
    const int axis = static_cast<int>(a < 0 ? a + rank : a);
    if (reduced[axis]) return ctx.Error("Duplicate reduction dimension ", a);
    reduced[axis] = true;
  }
  Shape out_shape, kept;  // kept: the output's dims without the reduced ones
  for (int i = 0; i < rank; ++i) {
    if (!reduced[i]) {
      out_shape.AddDim(x.dim(i));
      kept.AddDim(x.dim(i));
    } else if (st.keep_dims) {
      out_shape.AddDim(1);
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  std::string* o = out->data<std::string>();
  const std::string* in = x.data<std::string>();
  std::vector<bool> started(static_cast<size_t>(out->NumElements()), false);
  // Row-major over the input: each element goes to its output slot, in the reduced dims' order.
  std::vector<int64_t> idx(rank, 0);
  for (int64_t e = 0; e < x.NumElements(); ++e) {
    int64_t slot = 0;
    for (int i = 0, k = 0; i < rank; ++i)
      if (!reduced[i]) slot = slot * kept.dim(k++) + idx[i];
    if (started[slot]) o[slot] += st.separator;
    o[slot] += in[e];
    started[slot] = true;
    for (int i = rank - 1; i >= 0; --i) {
      if (++idx[i] < x.dim(i)) break;
      idx[i] = 0;
    }
  }
  return OkStatus();
}

// ---- UnsortedSegmentJoin(inputs, segment_ids, num_segments) ----------------------------------
// Joined in row-major order of the input; an id outside [0, num_segments) is TF's error.

Status PrepareSegmentJoin(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "inputs", DType::kString));
  KILN_PREPARE_ASSIGN(ctx, DType tidx, ctx.attrs.GetType("Tindices", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tindices", tidx, {DType::kInt32, DType::kInt64}));
  KILN_PREPARE_ASSIGN(ctx, DType tnum, ctx.attrs.GetType("Tnumsegments", DType::kInt32));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, "Tnumsegments", tnum, {DType::kInt32, DType::kInt64}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "segment_ids", tidx));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "num_segments", tnum));
  auto st = std::make_shared<JoinState>();
  KILN_PREPARE_ASSIGN(ctx, st->separator, ctx.attrs.GetString("separator", ""));
  const PartialShape &x = ctx.inputs[0].shape, &ids = ctx.inputs[1].shape;
  PartialShape out = PartialShape::UnknownRank();
  if (!x.unknown_rank() && !ids.unknown_rank() && ids.rank() <= x.rank()) {
    int64_t n = -1;
    if (const Tensor* num = ConstantInput(ctx, 2)) n = IndexValues(*num)[0];
    std::vector<int64_t> dims = {n};
    for (int i = ids.rank(); i < x.rank(); ++i) dims.push_back(x.dim(i));
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  }
  ctx.outputs = {TensorSpec{DType::kString, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status ComputeSegmentJoin(const KernelContext& ctx) {
  const auto& st = ctx.state<JoinState>();
  const Tensor& x = ctx.input(0);
  const Tensor& ids_t = ctx.input(1);
  if (ids_t.rank() > x.rank())
    return ctx.Error("segment_ids ", ids_t.shape().ToString(), " must be a prefix of inputs ",
                     x.shape().ToString());
  for (int i = 0; i < ids_t.rank(); ++i)
    if (ids_t.dim(i) != x.dim(i))
      return ctx.Error("segment_ids ", ids_t.shape().ToString(), " must be a prefix of inputs ",
                       x.shape().ToString());
  const int64_t segments = IndexValues(ctx.input(2))[0];
  if (segments < 0) return ctx.Error("num_segments must be non-negative, got ", segments);
  Shape shape;
  shape.AddDim(segments);
  int64_t inner = 1;
  for (int i = ids_t.rank(); i < x.rank(); ++i) {
    shape.AddDim(x.dim(i));
    inner *= x.dim(i);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  const std::vector<int64_t> ids = IndexValues(ids_t);
  std::vector<bool> started(static_cast<size_t>(segments), false);
  std::string* o = out->data<std::string>();
  const std::string* in = x.data<std::string>();
  for (size_t r = 0; r < ids.size(); ++r) {
    const int64_t s = ids[r];
    if (s < 0 || s >= segments)
      return ctx.Error(
          "segment_ids are not allowed to exceed num_segments or to have negative "
          "values (segment_ids[",
          r, "] = ", s, ", num_segments ", segments, ")");
    for (int64_t k = 0; k < inner; ++k) {
      if (started[s]) o[s * inner + k] += st.separator;
      o[s * inner + k] += in[static_cast<int64_t>(r) * inner + k];
    }
    started[s] = true;
  }
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"StringFormat", "output", kOpNone, PrepareStringFormat},
    {"PrintV2", "", kOpStateful, PreparePrintV2},
    {"Print", "output", kOpStateful, PreparePrint},
    {"StringJoin", "output", kOpNone, PrepareStringJoin},
    {"ReduceJoin", "output", kOpFreshOutputs, PrepareReduceJoin},
    {"UnsortedSegmentJoin", "output", kOpFreshOutputs, PrepareSegmentJoin},
};

constexpr KernelEntry kCpu[] = {
    {"StringFormat", ComputeStringFormat},
    {"PrintV2", ComputePrintV2},
    {"Print", ComputePrint},
    {"StringJoin", ComputeStringJoin},
    {"ReduceJoin", ComputeReduceJoin},
    {"UnsortedSegmentJoin", ComputeSegmentJoin},
};

}  // namespace

std::span<const OpDefinition> StringOpDefs() { return kDefs; }
std::span<const KernelEntry> StringCpuKernels() { return kCpu; }

}  // namespace kiln::exec
