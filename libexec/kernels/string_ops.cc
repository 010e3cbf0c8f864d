// Strings put together: StringFormat, PrintV2 and TF1's Print, StringJoin (element-wise), and
// ReduceJoin / UnsortedSegmentJoin (across a tensor: over axes, or by segment id; see below).
// The CPU kernels are in kernels/cpu/string_ops.cc.
#include "kernels/string_ops.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using string_ops::JoinState;
using string_ops::PrintState;
using string_ops::StringFormatState;
using string_ops::TfPrintState;

// ---- StringFormat ----------------------------------------------------------------------------

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

// ---- PrintV2 ---------------------------------------------------------------------------------

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

// ---- Print (TF1's tf.Print)
// ---------------------------------------------------------------------- Passes input 0 on and
// writes `message` and each data input's summary ("[1 2 3...]") to stderr, as TF's PrintOp does, at
// most first_n times per node when first_n >= 0.

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

// ---- ReduceJoin(inputs, reduction_indices) ---------------------------------------------------
// Joined in row-major order of the input, whatever the order of the axes (as TF).

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

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"StringFormat", "output", kOpNone, PrepareStringFormat},
    {"PrintV2", "", kOpStateful, PreparePrintV2},
    {"Print", "output", kOpStateful, PreparePrint},
    {"StringJoin", "output", kOpNone, PrepareStringJoin},
    {"ReduceJoin", "output", kOpFreshOutputs, PrepareReduceJoin},
    {"UnsortedSegmentJoin", "output", kOpFreshOutputs, PrepareSegmentJoin},
};

}  // namespace

std::span<const OpDefinition> StringOpDefs() { return kDefs; }

}  // namespace kiln::exec
