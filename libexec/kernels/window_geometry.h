// Geometry of windowed ops over NHWC images (convolutions, pooling): TF's output sizes and
// SAME/VALID/EXPLICIT padding, and the attrs they share (strides, dilations, ksize, padding,
// data_format), parsed once at prepare time.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/kernel_util.h"

namespace kiln::exec {

enum class Padding { kSame, kValid, kExplicit };

// One spatial dim of a window op.
struct Window {
  int64_t in = 0, k = 0, stride = 1, dilation = 1;
  int64_t pad_before = 0, pad_after = 0;  // explicit padding; set for SAME by OutputSize
  int64_t out = 0;
};

// TF's GetWindowedOutputSizeVerbose. w.in == -1 (unknown) gives out -1.
Status ComputeOutputSize(Padding padding, Window* w);

// Everything a kernel needs about one NHWC window op, all sizes known.
struct ConvGeometry {
  int64_t batch = 0, in_c = 0, out_c = 0;
  Window h, w;
};

// The attrs every window op shares, parsed once.
struct WindowAttrs : OpState {
  Padding padding = Padding::kValid;
  int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int64_t k_h = 0, k_w = 0;                // pooling only (ksize)
  std::vector<int64_t> explicit_paddings;  // 8 entries for EXPLICIT
};

// "[1, 2, 2, 1]".
std::string ListString(const std::vector<int64_t>& v);

// A 4-entry NHWC list attr whose batch and depth entries must be 1; returns (h, w).
Status ReadSpatialList(const PrepareContext& ctx, std::string_view name, bool required, int64_t* h,
                       int64_t* w);
// padding, explicit_paddings and data_format (NHWC only). `allow_explicit`: whether EXPLICIT
// is valid for the op.
Status ReadPadding(const PrepareContext& ctx, bool allow_explicit, WindowAttrs* a);
// Geometry of `input` shape dims (-1 unknown) under the attrs, with the filter's spatial size
// k_h x k_w. Fails for negative output sizes.
Status MakeGeometry(const WindowAttrs& a, std::span<const int64_t> input, int64_t k_h, int64_t k_w,
                    ConvGeometry* g);

// The group count of a (possibly grouped) convolution, as TF's Conv2D/Conv3D define it: the
// input's channels are a multiple of the filter's in-channels (groups = in_c / filter_in_c) and
// the output channels split evenly among the groups. Sizes of -1 are unknown: returns -1 when the
// count cannot be known yet, after checking what is known. Empty channels (0 and 0) are 1 group.
Result<int64_t> ConvGroups(int64_t in_c, int64_t filter_in_c, int64_t out_c);

}  // namespace kiln::exec
