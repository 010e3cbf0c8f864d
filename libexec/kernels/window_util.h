// Geometry of windowed ops (convolutions, pooling) over 1 to 3 spatial dims, shared by every
// window family (conv_ops, conv_nd_ops, pool_nd_ops): TensorFlow's output sizes
// and padding, the prepare-time readers of the window attrs (ksize, strides, dilations,
// padding, explicit_paddings, data_format) with messages that name the attr and what
// TensorFlow expects, TF's group count of a convolution, and the accumulation types kernels
// use for half and bfloat16.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {

enum class WindowPadding { kSame, kValid, kExplicit };

// One spatial dim of a window op.
struct WindowDim {
  int64_t in = 0, k = 1, stride = 1, dilation = 1;
  int64_t pad_before = 0, pad_after = 0;  // explicit padding in; set for SAME
  int64_t out = 0;
  int64_t effective_k() const { return (k - 1) * dilation + 1; }
};

// TensorFlow's GetWindowedOutputSizeVerbose: sets out (and the padding for SAME). in < 0
// (unknown) gives out = -1. Fails, leaving *w unchanged, when the output size would be
// negative.
Status ComputeWindowDim(WindowPadding padding, WindowDim* w);

// The attrs of a window op over `spatial` dims (2 or 3), all in the layout of the op's
// data_format with the batch and channel entries checked.
struct WindowSpec {
  int spatial = 2;
  WindowPadding padding = WindowPadding::kValid;
  std::array<int64_t, 3> ksize{1, 1, 1}, strides{1, 1, 1}, dilations{1, 1, 1};
  std::array<int64_t, 3> pad_before{}, pad_after{};  // EXPLICIT only
};

struct WindowAttrOptions {
  int spatial = 2;
  bool read_ksize = false;      // pooling ops
  bool read_strides = true;     // false: strides are an input (MaxPoolV2)
  bool read_dilations = false;  // convolutions
  bool allow_explicit = false;  // EXPLICIT padding with explicit_paddings
  bool has_data_format = true;
  // conv_ops.cc's 2-D ops (Conv2D, DepthwiseConv2dNative, their fused forms, MaxPool,
  // AvgPool) keep the checks and messages they have always had: padding and explicit_paddings
  // (read for every op) before the lists, only the spatial list entries checked (positive, no
  // int32 limit), "depth" for the channel dimension. spatial must be 2.
  bool legacy_2d = false;
};

// Reads the attrs of the options; data_format must be NHWC / NDHWC (channels last), as for
// TensorFlow's CPU kernels of these ops: a channels-first format is Unimplemented.
Status ReadWindowAttrs(const PrepareContext& ctx, const WindowAttrOptions& opts, WindowSpec* a);

// Checks a ksize/strides list of rank `spatial + 2` in channels-last layout (batch and channel
// entries 1, the rest positive) and stores its spatial entries. `what` names it in messages
// ("attr 'ksize'", "input 'ksize'").
Status CheckWindowList(const PrepareContext& ctx, std::string_view what,
                       const std::vector<int64_t>& v, int spatial, std::array<int64_t, 3>* out);
Status CheckWindowList(const KernelContext& ctx, std::string_view what,
                       const std::vector<int64_t>& v, int spatial, std::array<int64_t, 3>* out);

// The window dims of an input with channels-last dims `in` (-1 unknown) under `a`, the window
// sizes `k` (ksize, or the filter's spatial dims).
Status MakeWindowDims(const WindowSpec& a, std::span<const int64_t> in,
                      const std::array<int64_t, 3>& k, std::array<WindowDim, 3>* dims);

// The group count of a (possibly grouped) convolution, as TF's Conv2D/Conv3D define it: the
// input's channels are a multiple of the filter's in-channels (groups = in_c / filter_in_c) and
// the output channels split evenly among the groups. Sizes of -1 are unknown: returns -1 when the
// count cannot be known yet, after checking what is known. Empty channels (0 and 0) are 1 group.
Result<int64_t> ConvGroups(int64_t in_c, int64_t filter_in_c, int64_t out_c);

// Fails unless the element count of `dims` (non-negative) fits comfortably in int64 (below
// 2^56, so byte sizes cannot overflow either): shapes computed from input values (input_sizes,
// resize targets) can ask for anything.
Status CheckElementCount(std::span<const int64_t> dims, std::string_view what);

// Dims of a known-rank partial shape, or `rank` unknown dims.
std::vector<int64_t> DimsOrUnknown(const PartialShape& s, int rank);

// ---- arithmetic ---------------------------------------------------------------------------

// The type sums are kept in: float for half and bfloat16, the type itself otherwise.
template <typename C>
struct AccOf {
  using type = C;
};
template <>
struct AccOf<Eigen::half> {
  using type = float;
};
template <>
struct AccOf<Eigen::bfloat16> {
  using type = float;
};
template <typename C>
using Acc = typename AccOf<C>::type;

template <typename C>
inline Acc<C> ToAcc(C v) {
  return static_cast<Acc<C>>(v);
}
template <typename C, typename A>
inline C FromAcc(A v) {
  return static_cast<C>(v);
}

// Half and bfloat16 as float: a temporary copy of `n` elements (from ctx.AllocateTemp) for
// kernels that run one float or double implementation; float and double pass through.
template <typename C>
Result<const Acc<C>*> AccCopy(const KernelContext& ctx, const C* data, int64_t n) {
  if constexpr (std::is_same_v<C, Acc<C>>) {
    return data;
  } else {
    KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(Acc<C>) * std::max<int64_t>(n, 1)));
    auto* out = static_cast<Acc<C>*>(mem);
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Acc<C>>(data[i]);
    return static_cast<const Acc<C>*>(out);
  }
}

// Where a float implementation writes the result for output `out` of type C: `out` itself for
// float and double, else a temporary that Finish() converts into `out`.
template <typename C>
class AccOutput {
 public:
  Status Init(const KernelContext& ctx, C* out, int64_t n) {
    out_ = out;
    n_ = n;
    if constexpr (std::is_same_v<C, Acc<C>>) {
      acc_ = out;
    } else {
      KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(Acc<C>) * std::max<int64_t>(n, 1)));
      acc_ = static_cast<Acc<C>*>(mem);
    }
    return OkStatus();
  }
  Acc<C>* data() const { return acc_; }
  void Finish() const {
    if constexpr (!std::is_same_v<C, Acc<C>>) {
      for (int64_t i = 0; i < n_; ++i) out_[i] = static_cast<C>(acc_[i]);
    }
  }

 private:
  C* out_ = nullptr;
  Acc<C>* acc_ = nullptr;
  int64_t n_ = 0;
};

}  // namespace kiln::exec
