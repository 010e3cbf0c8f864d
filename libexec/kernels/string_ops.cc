// StringFormat, PrintV2 and StringJoin.
#include <string>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/op_families.h"

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

constexpr OpDefinition kDefs[] = {
    {"StringFormat", "output", kOpNone, PrepareStringFormat},
    {"PrintV2", "", kOpStateful, PreparePrintV2},
    {"StringJoin", "output", kOpNone, PrepareStringJoin},
};

constexpr KernelEntry kCpu[] = {
    {"StringFormat", ComputeStringFormat},
    {"PrintV2", ComputePrintV2},
    {"StringJoin", ComputeStringJoin},
};

}  // namespace

std::span<const OpDefinition> StringOpDefs() { return kDefs; }
std::span<const KernelEntry> StringCpuKernels() { return kCpu; }

}  // namespace kiln::exec
