// Grayscale morphological dilation (NHWC) and its gradients, as TF's CPU kernels:
//   Dilation2D(input [b, h, w, d], filter [fh, fw, d]): out(b, y, x, c) = max over the taps
//     (i, j) inside the image of input(b, y*sr + i*rr - pad_top, x*sc + j*rc - pad_left, c) +
//     filter(i, j, c); lowest() where no tap is inside.
//   Dilation2DBackpropInput / Dilation2DBackpropFilter(input, filter, out_backprop): each
//     out_backprop value goes to the input pixel / filter tap of its window's first maximum
//     (TF's defaults where the window has none: the window's clamped start, tap (0, 0)).
// strides and rates are [1, r, c, 1]; padding SAME or VALID (TF's windowed output size with
// the effective filter size (f - 1) * rate + 1): definitions. The CPU kernels are in
// kernels/cpu/dilation_ops.cc.
#include "kernels/dilation_ops.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using dilation::Dil;
using dilation::DilationDims;
using dilation::DilationState;

Status ReadDilationList(PrepareContext& ctx, const char* attr, int64_t* r, int64_t* c) {
  KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> v, ctx.attrs.GetIntList(attr));
  if (v.size() != 4) {
    return ctx.Error("attr '", attr, "' must have 4 entries [1, rows, cols, 1], got ",
                     DimsString(v));
  }
  if (v[0] != 1 || v[3] != 1) {
    return PrepareUnimplemented(ctx, "attr '", attr, "' ", DimsString(v),
                                ": only the spatial dimensions (1 and 2) may differ from 1");
  }
  if (v[1] <= 0 || v[2] <= 0) {
    return ctx.Error("attr '", attr, "' must be positive, got ", DimsString(v));
  }
  *r = v[1];
  *c = v[2];
  return OkStatus();
}

template <Dil K>
Status PrepareDilation(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(K == Dil::kForward ? 2 : 3));
  auto st = std::make_shared<DilationState>();
  KILN_PREPARE_ASSIGN(ctx, st->t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, RealTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ReadDilationList(ctx, "strides", &st->stride_r, &st->stride_c));
  KILN_RETURN_IF_ERROR(ReadDilationList(ctx, "rates", &st->rate_r, &st->rate_c));
  KILN_PREPARE_ASSIGN(ctx, std::string padding, ctx.attrs.GetString("padding"));
  if (padding != "SAME" && padding != "VALID") {
    return ctx.Error("attr 'padding' must be \"SAME\" or \"VALID\", got \"", padding, "\"");
  }
  st->padding = padding == "SAME" ? WindowPadding::kSame : WindowPadding::kValid;
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 4));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "filter", st->t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "filter", 3));
  if (K != Dil::kForward) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "out_backprop", st->t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "out_backprop", 4));
  }
  const PartialShape& in = ctx.inputs[0].shape;
  const PartialShape& f = ctx.inputs[1].shape;
  if (K == Dil::kInput) {
    ctx.outputs = {TensorSpec{st->t, in}};
  } else if (K == Dil::kFilter) {
    ctx.outputs = {TensorSpec{st->t, f}};
  } else {
    std::vector<int64_t> i(4, -1), k(3, -1);
    if (!in.unknown_rank()) i.assign(in.dims().begin(), in.dims().end());
    if (!f.unknown_rank()) k.assign(f.dims().begin(), f.dims().end());
    if (i[3] >= 0 && k[2] >= 0 && i[3] != k[2]) {
      return ctx.Error("inputs 'input' ", in.ToPythonString(), " and 'filter' ", f.ToPythonString(),
                       " must have the same depth");
    }
    WindowDim rows, cols;
    KILN_PREPARE_CHECK(ctx, DilationDims(*st, i[1], i[2], k[0], k[1], &rows, &cols));
    ctx.outputs = {TensorSpec{st->t, PartialShape{i[0], rows.out, cols.out, i[3]}}};
  }
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"Dilation2D", "output", kOpFreshOutputs, PrepareDilation<Dil::kForward>},
    {"Dilation2DBackpropInput", "in_backprop", kOpFreshOutputs, PrepareDilation<Dil::kInput>},
    {"Dilation2DBackpropFilter", "filter_backprop", kOpFreshOutputs, PrepareDilation<Dil::kFilter>},
};

}  // namespace

std::span<const OpDefinition> DilationOpDefs() { return kDefs; }

}  // namespace kiln::exec
