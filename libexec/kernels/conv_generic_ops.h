// Conv's and FusedPadConv2D's / FusedResizeAndPadConv2D's type lists, op states and shape
// arithmetic (TF's checks of the fused ops' sizes), shared by the definitions and the CPU
// kernels of kernels/conv_generic_ops.cc.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"
#include "kiln/core/dtype.h"
#include "kiln/core/status.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::conv_generic {

inline constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// ---- Conv ---------------------------------------------------------------------------------------

using ConvTypes = TypeList<float, double, Half, BFloat16, int32_t>;

struct ConvState : OpState {
  DType dtype = DType::kFloat;
  int spatial = 2;
  int64_t batch_dims = 1;
  WindowSpec window;
};

// The flattened input dims [batch, spatial..., channels] of input dims `in` (-1 unknown).
inline std::vector<int64_t> FlatInput(std::span<const int64_t> in, int64_t batch_dims) {
  int64_t batch = 1;
  for (int64_t i = 0; i < batch_dims; ++i) batch = in[i] < 0 || batch < 0 ? -1 : batch * in[i];
  std::vector<int64_t> flat = {batch};
  flat.insert(flat.end(), in.begin() + batch_dims, in.end());
  return flat;
}

// The output's shape: the flattened one, or with the batch dims restored (see the opening comment
// of conv_generic_ops.cc).
inline std::vector<int64_t> ConvOutputDims(std::span<const int64_t> in, int64_t batch_dims,
                                           const std::vector<int64_t>& flat_out, bool flat) {
  if (flat) return flat_out;
  std::vector<int64_t> out(in.begin(), in.begin() + batch_dims);
  out.insert(out.end(), flat_out.begin() + 1, flat_out.end());
  return out;
}

// ---- FusedPadConv2D, FusedResizeAndPadConv2D --------------------------------------------------

using FusedPadTypes = TypeList<float, double, Half, BFloat16>;

struct FusedState : OpState {
  bool resize = false;
  bool align_corners = false;
  int64_t pad_offset = 0;  // 0 SYMMETRIC, 1 REFLECT
  int64_t stride_h = 1, stride_w = 1;
  WindowPadding padding = WindowPadding::kSame;
  DType dtype = DType::kFloat;
  int paddings_input = 1, filter_input = 2;
};

// Everything about one call's sizes, checked as TF's kernel checks them.
struct FusedGeom {
  int64_t batch = 0, in_h = 0, in_w = 0, depth = 0;
  int64_t resized_h = 0, resized_w = 0;
  float scale_h = 1.0f, scale_w = 1.0f;
  int64_t pad_top = 0, pad_left = 0, padded_h = 0, padded_w = 0;
  int64_t fh = 0, fw = 0, out_c = 0, out_h = 0, out_w = 0;
};

// TF's CalculateResizeScale (image_resize_coords.h's ResizeScale differs only for a 1-pixel
// input, where both read the one pixel).
inline float ResizeScaleOf(int64_t in, int64_t out, bool align_corners) {
  return align_corners && in > 1 && out > 1
             ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
             : static_cast<float>(in) / static_cast<float>(out);
}

// `size` is the resize target (empty without a resize), `pads` the [4, 2] paddings.
inline Status MakeFusedGeom(const FusedState& st, std::span<const int64_t> in,
                            const std::vector<int64_t>& size, std::span<const int64_t> pads_shape,
                            const std::vector<int64_t>& pads, std::span<const int64_t> filter,
                            FusedGeom* g) {
  if (in.size() != 4) {
    return InvalidArgument("input must be 4-dimensional (batch, height, width, depth), got ",
                           DimsString({in.begin(), in.end()}));
  }
  int64_t n = 1;
  for (int64_t v : in) n *= v;
  if (n <= 0) return InvalidArgument("Input tensor can't be empty");
  g->batch = in[0];
  g->in_h = in[1];
  g->in_w = in[2];
  g->depth = in[3];
  g->resized_h = in[1];
  g->resized_w = in[2];
  if (st.resize) {  // TF's ImageResizerState::ValidateAndCalculateOutputSize
    if (in[1] > kInt32Max || in[2] > kInt32Max)
      return InvalidArgument("input sizes must be between 0 and max int32");
    if (size.size() != 2)
      return InvalidArgument("shape_t must have two elements, got ", DimsString(size));
    if (size[0] <= 0 || size[1] <= 0)
      return InvalidArgument("output dimensions must be positive, got ", DimsString(size));
    g->resized_h = size[0];
    g->resized_w = size[1];
    g->scale_h = ResizeScaleOf(g->in_h, g->resized_h, st.align_corners);
    g->scale_w = ResizeScaleOf(g->in_w, g->resized_w, st.align_corners);
  }
  if (pads_shape.size() != 2 || pads_shape[1] != 2) {
    return InvalidArgument("paddings must be a matrix with 2 columns: ",
                           DimsString({pads_shape.begin(), pads_shape.end()}));
  }
  if (pads_shape[0] != 4) {
    return InvalidArgument("The first dimension of paddings must be the rank of inputs: 4 ",
                           DimsString({pads_shape.begin(), pads_shape.end()}));
  }
  const std::array<int64_t, 4> resized = {g->batch, g->resized_h, g->resized_w, g->depth};
  std::array<int64_t, 4> padded{};
  for (size_t d = 0; d < 4; ++d) {
    const int64_t before = pads[2 * d], after = pads[2 * d + 1];
    if (before < 0 || after < 0)
      return InvalidArgument("paddings must be non-negative: ", before, " ", after);
    if (st.pad_offset == 0 && (before > resized[d] || after > resized[d])) {
      return InvalidArgument("paddings must be no greater than the dimension size: ", before, ", ",
                             after, " greater than ", resized[d]);
    }
    if (st.pad_offset == 1 && (before >= resized[d] || after >= resized[d])) {
      return InvalidArgument("paddings must be less than the dimension size: ", before, ", ", after,
                             " not less than ", resized[d]);
    }
    padded[d] = before + resized[d] + after;
  }
  if (pads[0] != 0 || pads[1] != 0) {
    return InvalidArgument("Fused mirror padding only support spatial padding, not batches: ",
                           DimsString(pads));
  }
  if (pads[6] != 0 || pads[7] != 0) {
    return InvalidArgument("Fused mirror padding only support spatial padding, not channels: ",
                           DimsString(pads));
  }
  g->pad_top = pads[2];
  g->pad_left = pads[4];
  g->padded_h = padded[1];
  g->padded_w = padded[2];
  if (filter.size() != 4)
    return InvalidArgument("filter must be 4-dimensional: ",
                           DimsString({filter.begin(), filter.end()}));
  for (int i = 0; i < 3; ++i)
    if (filter[i] > kInt32Max) return InvalidArgument("filter too large");
  if (g->depth != filter[2]) {
    return InvalidArgument("input and filter must have the same depth: ", g->depth, " vs ",
                           filter[2]);
  }
  if (g->padded_h > kInt32Max) return InvalidArgument("Input rows too large");
  if (g->padded_w > kInt32Max) return InvalidArgument("Input cols too large");
  if (g->batch > kInt32Max) return InvalidArgument("batch is too large");
  g->fh = filter[0];
  g->fw = filter[1];
  g->out_c = filter[3];
  WindowDim h{.in = g->padded_h, .k = g->fh, .stride = st.stride_h};
  WindowDim w{.in = g->padded_w, .k = g->fw, .stride = st.stride_w};
  KILN_RETURN_IF_ERROR(ComputeWindowDim(st.padding, &h));
  KILN_RETURN_IF_ERROR(ComputeWindowDim(st.padding, &w));
  g->out_h = h.out;
  g->out_w = w.out;
  const int64_t out_dims[] = {g->batch, g->out_h, g->out_w, g->out_c};
  KILN_RETURN_IF_ERROR(CheckElementCount(out_dims, "output shape"));
  if (g->batch * g->out_h * g->out_w * g->out_c == 0)
    return InvalidArgument("Output tensor can't be empty");
  return OkStatus();
}

}  // namespace kiln::exec::conv_generic
