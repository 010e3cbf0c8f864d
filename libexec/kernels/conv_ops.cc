// 2-D convolutions and pooling over NHWC images: Conv2D (im2col + an Eigen matrix product),
// DepthwiseConv2dNative, MaxPool and AvgPool. Output sizes and padding follow TF's
// GetWindowedOutputSize. NCHW is Unimplemented, as in TF's CPU kernels.
#include <Eigen/Core>
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "kernels/eigen_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"

namespace kiln::exec {
namespace {

// ---- window geometry -------------------------------------------------------------------------

enum class Padding { kSame, kValid, kExplicit };

// One spatial dim of a window op.
struct Window {
  int64_t in = 0, k = 0, stride = 1, dilation = 1;
  int64_t pad_before = 0, pad_after = 0;  // explicit padding; set for SAME by OutputSize
  int64_t out = 0;
};

// TF's GetWindowedOutputSizeVerbose. w.in == -1 (unknown) gives out -1.
Status ComputeOutputSize(Padding padding, Window* w) {
  if (w->in < 0) {
    w->out = -1;
    return OkStatus();
  }
  const int64_t effective = (w->k - 1) * w->dilation + 1;
  switch (padding) {
    case Padding::kValid:
      w->out = (w->in - effective + w->stride) / w->stride;
      w->pad_before = w->pad_after = 0;
      break;
    case Padding::kExplicit:
      w->out = (w->in + w->pad_before + w->pad_after - effective + w->stride) / w->stride;
      break;
    case Padding::kSame: {
      w->out = (w->in + w->stride - 1) / w->stride;
      const int64_t needed = std::max<int64_t>(0, (w->out - 1) * w->stride + effective - w->in);
      w->pad_before = needed / 2;
      w->pad_after = needed - w->pad_before;
      break;
    }
  }
  if (w->out < 0) {
    return InvalidArgument("computed output size would be negative: ", w->out,
                           " [input size: ", w->in, ", effective filter size: ", effective,
                           ", stride: ", w->stride, "]");
  }
  return OkStatus();
}

// Everything a kernel needs about one NHWC window op, all sizes known.
struct ConvGeometry {
  int64_t batch = 0, in_c = 0, out_c = 0;
  Window h, w;
};

// ---- functors ----------------------------------------------------------------------------------

namespace functor {

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Conv2D: for each chunk of output pixels, gather their receptive fields into a patch matrix
// [pixels, kh*kw*in_c] (zeros for padding) and multiply by the HWIO filter [kh*kw*in_c, out_c].
template <typename Device, typename T>
struct Conv2DFunctor;

template <typename T>
struct Conv2DFunctor<Eigen::DefaultDevice, T> {
  void operator()(const Eigen::DefaultDevice&, const ConvGeometry& g, const T* input,
                  const T* filter, T* output) const {
    const int64_t k = g.h.k * g.w.k * g.in_c;
    const int64_t pixels = g.batch * g.h.out * g.w.out;
    if (pixels == 0 || g.out_c == 0) return;
    Eigen::Map<const RowMatrix<T>> f(filter, k, g.out_c);
    if (k == 0) {
      Eigen::Map<RowMatrix<T>>(output, pixels, g.out_c).setZero();
      return;
    }
    const bool pointwise = g.h.k == 1 && g.w.k == 1 && g.h.stride == 1 && g.w.stride == 1 &&
                           g.h.pad_before == 0 && g.w.pad_before == 0 && g.h.out == g.h.in &&
                           g.w.out == g.w.in;
    if (pointwise) {  // the input already is the patch matrix
      Eigen::Map<RowMatrix<T>>(output, pixels, g.out_c).noalias() =
          Eigen::Map<const RowMatrix<T>>(input, pixels, k) * f;
      return;
    }
    // Patch rows per chunk: about 4M elements of scratch, at least one row.
    const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 22) / k);
    std::vector<T> patches(std::min(chunk, pixels) * k);
    for (int64_t p0 = 0; p0 < pixels; p0 += chunk) {
      const int64_t rows = std::min(chunk, pixels - p0);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t p = p0 + r;
        const int64_t ox = p % g.w.out, oy = (p / g.w.out) % g.h.out, b = p / (g.w.out * g.h.out);
        T* dst = patches.data() + r * k;
        for (int64_t ky = 0; ky < g.h.k; ++ky) {
          const int64_t iy = oy * g.h.stride - g.h.pad_before + ky * g.h.dilation;
          for (int64_t kx = 0; kx < g.w.k; ++kx, dst += g.in_c) {
            const int64_t ix = ox * g.w.stride - g.w.pad_before + kx * g.w.dilation;
            if (iy < 0 || iy >= g.h.in || ix < 0 || ix >= g.w.in) {
              std::fill(dst, dst + g.in_c, T(0));
            } else {
              const T* src = input + ((b * g.h.in + iy) * g.w.in + ix) * g.in_c;
              std::copy(src, src + g.in_c, dst);
            }
          }
        }
      }
      Eigen::Map<RowMatrix<T>>(output + p0 * g.out_c, rows, g.out_c).noalias() =
          Eigen::Map<const RowMatrix<T>>(patches.data(), rows, k) * f;
    }
  }
};

// Depthwise: filter [kh, kw, in_c, multiplier]; output channel c*multiplier+m sees only input
// channel c.
template <typename Device, typename T>
struct DepthwiseConv2DFunctor;

template <typename T>
struct DepthwiseConv2DFunctor<Eigen::DefaultDevice, T> {
  void operator()(const Eigen::DefaultDevice&, const ConvGeometry& g, const T* input,
                  const T* filter, T* output) const {
    const int64_t mult = g.in_c == 0 ? 0 : g.out_c / g.in_c;
    for (int64_t b = 0; b < g.batch; ++b) {
      for (int64_t oy = 0; oy < g.h.out; ++oy) {
        for (int64_t ox = 0; ox < g.w.out; ++ox) {
          T* out = output + ((b * g.h.out + oy) * g.w.out + ox) * g.out_c;
          std::fill(out, out + g.out_c, T(0));
          for (int64_t ky = 0; ky < g.h.k; ++ky) {
            const int64_t iy = oy * g.h.stride - g.h.pad_before + ky * g.h.dilation;
            if (iy < 0 || iy >= g.h.in) continue;
            for (int64_t kx = 0; kx < g.w.k; ++kx) {
              const int64_t ix = ox * g.w.stride - g.w.pad_before + kx * g.w.dilation;
              if (ix < 0 || ix >= g.w.in) continue;
              const T* in = input + ((b * g.h.in + iy) * g.w.in + ix) * g.in_c;
              const T* f = filter + (ky * g.w.k + kx) * g.out_c;
              if (mult == 1) {
                for (int64_t c = 0; c < g.in_c; ++c) out[c] += in[c] * f[c];
              } else {
                for (int64_t c = 0; c < g.in_c; ++c) {
                  for (int64_t m = 0; m < mult; ++m) out[c * mult + m] += in[c] * f[c * mult + m];
                }
              }
            }
          }
        }
      }
    }
  }
};

// Max or average over each window, channels vectorised; padding is left out (average divides
// by the number of real elements in the window, as TF does).
template <typename Device, typename T, bool kMax>
struct Pool2DFunctor;

template <typename T, bool kMax>
struct Pool2DFunctor<Eigen::DefaultDevice, T, kMax> {
  void operator()(const Eigen::DefaultDevice&, const ConvGeometry& g, const T* input,
                  T* output) const {
    using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
    const int64_t c = g.in_c;
    for (int64_t b = 0; b < g.batch; ++b) {
      for (int64_t oy = 0; oy < g.h.out; ++oy) {
        const int64_t y0 = oy * g.h.stride - g.h.pad_before;
        const int64_t y_lo = std::max<int64_t>(y0, 0), y_hi = std::min(y0 + g.h.k, g.h.in);
        for (int64_t ox = 0; ox < g.w.out; ++ox) {
          const int64_t x0 = ox * g.w.stride - g.w.pad_before;
          const int64_t x_lo = std::max<int64_t>(x0, 0), x_hi = std::min(x0 + g.w.k, g.w.in);
          Eigen::Map<Vec> out(output + ((b * g.h.out + oy) * g.w.out + ox) * c, c);
          out.setConstant(kMax ? std::numeric_limits<T>::lowest() : T(0));
          for (int64_t y = y_lo; y < y_hi; ++y) {
            for (int64_t x = x_lo; x < x_hi; ++x) {
              Eigen::Map<const Vec> in(input + ((b * g.h.in + y) * g.w.in + x) * c, c);
              if constexpr (kMax) {
                out = out.max(in);
              } else {
                out += in;
              }
            }
          }
          if constexpr (!kMax) {
            const int64_t count = (y_hi - y_lo) * (x_hi - x_lo);
            if (count > 0) out /= static_cast<T>(count);
          }
        }
      }
    }
  }
};

}  // namespace functor

// ---- attrs -------------------------------------------------------------------------------------

template <typename... Args>
Status PrepareUnimplemented(const PrepareContext& ctx, Args&&... args) {
  return Unimplemented("node '", ctx.node_name, "' (", ctx.op, "): ", std::forward<Args>(args)...);
}

// The attrs every window op shares, parsed once.
struct WindowAttrs : OpState {
  Padding padding = Padding::kValid;
  int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int64_t k_h = 0, k_w = 0;                // pooling only (ksize)
  std::vector<int64_t> explicit_paddings;  // 8 entries for EXPLICIT
};

std::string ListString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// A 4-entry NHWC list attr whose batch and depth entries must be 1; returns (h, w).
Status ReadSpatialList(const PrepareContext& ctx, std::string_view name, bool required, int64_t* h,
                       int64_t* w) {
  std::vector<int64_t> v;
  if (required) {
    KILN_PREPARE_ASSIGN(ctx, v, ctx.attrs.GetIntList(name));
  } else {
    KILN_PREPARE_ASSIGN(ctx, v, ctx.attrs.GetIntList(name, {1, 1, 1, 1}));
  }
  if (v.size() != 4) {
    return ctx.Error("attr '", name, "' must have 4 entries (NHWC), got ", ListString(v));
  }
  if (v[1] <= 0 || v[2] <= 0) {
    return ctx.Error("attr '", name, "' ", ListString(v), ": entries must be positive");
  }
  if (v[0] != 1 || v[3] != 1) {
    return PrepareUnimplemented(ctx, "attr '", name, "' ", ListString(v),
                                ": only 1 is supported in the batch and depth dimensions");
  }
  *h = v[1];
  *w = v[2];
  return OkStatus();
}

// padding, explicit_paddings and data_format. `allowed_explicit`: whether EXPLICIT is valid.
Status ReadPadding(const PrepareContext& ctx, bool allow_explicit, WindowAttrs* a) {
  KILN_PREPARE_ASSIGN(ctx, std::string format, ctx.attrs.GetString("data_format", "NHWC"));
  if (format == "NCHW" || format == "NCHW_VECT_C") {
    return PrepareUnimplemented(ctx, "data_format \"", format,
                                "\" is not supported on CPU; only \"NHWC\" is");
  }
  if (format != "NHWC") {
    return ctx.Error("attr 'data_format': expected \"NHWC\" or \"NCHW\", got \"", format, "\"");
  }
  KILN_PREPARE_ASSIGN(ctx, std::string padding, ctx.attrs.GetString("padding"));
  KILN_PREPARE_ASSIGN(ctx, a->explicit_paddings, ctx.attrs.GetIntList("explicit_paddings", {}));
  if (padding == "SAME") {
    a->padding = Padding::kSame;
  } else if (padding == "VALID") {
    a->padding = Padding::kValid;
  } else if (padding == "EXPLICIT" && allow_explicit) {
    a->padding = Padding::kExplicit;
  } else {
    return ctx.Error(
        "attr 'padding': expected ",
        allow_explicit ? "\"SAME\", \"VALID\" or \"EXPLICIT\"" : "\"SAME\" or \"VALID\"",
        ", got \"", padding, "\"");
  }
  const auto& p = a->explicit_paddings;
  if (a->padding != Padding::kExplicit) {
    if (!p.empty()) {
      return ctx.Error("attr 'explicit_paddings' ", ListString(p),
                       " must be empty unless padding is \"EXPLICIT\"");
    }
    return OkStatus();
  }
  if (p.size() != 8) {
    return ctx.Error(
        "attr 'explicit_paddings' must have 8 entries (before and after for N, H, "
        "W, C), got ",
        ListString(p));
  }
  for (int64_t v : p) {
    if (v < 0) return ctx.Error("attr 'explicit_paddings' ", ListString(p), ": negative entry");
  }
  if (p[0] != 0 || p[1] != 0 || p[6] != 0 || p[7] != 0) {
    return ctx.Error("attr 'explicit_paddings' ", ListString(p),
                     ": the batch and depth dimensions cannot be padded");
  }
  return OkStatus();
}

// Geometry of `input` shape dims (-1 unknown) under the attrs, with the filter's spatial size
// k_h x k_w. Fails for negative output sizes.
Status MakeGeometry(const WindowAttrs& a, std::span<const int64_t> input, int64_t k_h, int64_t k_w,
                    ConvGeometry* g) {
  g->batch = input[0];
  g->in_c = input[3];
  g->h = Window{input[1], k_h, a.stride_h, a.dil_h};
  g->w = Window{input[2], k_w, a.stride_w, a.dil_w};
  if (a.padding == Padding::kExplicit) {
    g->h.pad_before = a.explicit_paddings[2];
    g->h.pad_after = a.explicit_paddings[3];
    g->w.pad_before = a.explicit_paddings[4];
    g->w.pad_after = a.explicit_paddings[5];
  }
  KILN_RETURN_IF_ERROR(ComputeOutputSize(a.padding, &g->h));
  return ComputeOutputSize(a.padding, &g->w);
}

// ---- Conv2D, DepthwiseConv2dNative ---------------------------------------------------------

template <bool kDepthwise>
Status PrepareConv(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kFloatDTypes));
  auto a = std::make_shared<WindowAttrs>();
  KILN_RETURN_IF_ERROR(ReadPadding(ctx, /*allow_explicit=*/true, a.get()));
  KILN_RETURN_IF_ERROR(ReadSpatialList(ctx, "strides", true, &a->stride_h, &a->stride_w));
  KILN_RETURN_IF_ERROR(ReadSpatialList(ctx, "dilations", false, &a->dil_h, &a->dil_w));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "filter", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 4));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "filter", 4));
  const PartialShape& in = ctx.inputs[0].shape;
  const PartialShape& f = ctx.inputs[1].shape;
  std::array<int64_t, 4> in_dims{-1, -1, -1, -1}, f_dims{-1, -1, -1, -1};
  if (!in.unknown_rank()) std::copy(in.dims().begin(), in.dims().end(), in_dims.begin());
  if (!f.unknown_rank()) std::copy(f.dims().begin(), f.dims().end(), f_dims.begin());
  if (in_dims[3] >= 0 && f_dims[2] >= 0 && in_dims[3] != f_dims[2]) {
    if (!kDepthwise && f_dims[2] > 0 && in_dims[3] % f_dims[2] == 0) {
      return PrepareUnimplemented(ctx, "grouped convolution (input depth ", in_dims[3],
                                  ", filter depth ", f_dims[2], ") is not supported");
    }
    return ctx.Error("input depth must match the filter's in_channels: input has shape ",
                     in.ToPythonString(), ", filter has shape ", f.ToPythonString());
  }
  int64_t out_c = f_dims[3];
  if (kDepthwise) {
    const int64_t c = in_dims[3] >= 0 ? in_dims[3] : f_dims[2];
    out_c = c >= 0 && f_dims[3] >= 0 ? c * f_dims[3] : -1;
  }
  ConvGeometry g;
  std::array<int64_t, 4> known_in = in_dims;
  // Unknown filter sizes make the spatial output unknown.
  if (f_dims[0] < 0) known_in[1] = -1;
  if (f_dims[1] < 0) known_in[2] = -1;
  Status s = MakeGeometry(*a, known_in, std::max<int64_t>(f_dims[0], 1),
                          std::max<int64_t>(f_dims[1], 1), &g);
  if (!s.ok()) return ctx.Error(s.message());
  ctx.outputs = {TensorSpec{t, PartialShape{in_dims[0], g.h.out, g.w.out, out_c}}};
  ctx.state = std::move(a);
  return OkStatus();
}

template <bool kDepthwise>
Status ComputeConv(const KernelContext& ctx) {
  const auto& a = ctx.state<WindowAttrs>();
  const Tensor& input = ctx.input(0);
  const Tensor& filter = ctx.input(1);
  if (input.rank() != 4 || filter.rank() != 4) {
    return ctx.Error("input and filter must have rank 4, got shapes ", input.shape().ToString(),
                     " and ", filter.shape().ToString());
  }
  if (input.dim(3) != filter.dim(2)) {
    return ctx.Error("input depth must match the filter's in_channels: input has shape ",
                     input.shape().ToString(), ", filter has shape ", filter.shape().ToString());
  }
  ConvGeometry g;
  Status s = MakeGeometry(a, input.shape().dims(), filter.dim(0), filter.dim(1), &g);
  if (!s.ok()) return ctx.Error(s.message());
  g.out_c = kDepthwise ? filter.dim(2) * filter.dim(3) : filter.dim(3);
  KILN_ASSIGN_OR_RETURN(
      Tensor * out_ptr,
      ctx.AllocateOutput(0, input.dtype(), Shape{g.batch, g.h.out, g.w.out, g.out_c}));
  Tensor& out = *out_ptr;
  KILN_RETURN_IF_ERROR(DispatchDType<KILN_FLOAT_TYPES>(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kDepthwise) {
      functor::DepthwiseConv2DFunctor<Eigen::DefaultDevice, T>()(
          Eigen::DefaultDevice(), g, input.data<T>(), filter.data<T>(), out.data<T>());
    } else {
      functor::Conv2DFunctor<Eigen::DefaultDevice, T>()(Eigen::DefaultDevice(), g, input.data<T>(),
                                                        filter.data<T>(), out.data<T>());
    }
    return OkStatus();
  }));
  return OkStatus();
}

// ---- MaxPool, AvgPool ------------------------------------------------------------------------

template <bool kMax>
Status PreparePool(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  // MaxPool's T defaults to float in TF's OpDef, so stripped graphs (Keras) omit it; AvgPool's
  // T has no default.
  KILN_PREPARE_ASSIGN(ctx, DType t,
                      kMax ? ctx.attrs.GetType("T", DType::kFloat) : ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kMax ? kRealDTypes : kFloatDTypes));
  auto a = std::make_shared<WindowAttrs>();
  KILN_RETURN_IF_ERROR(ReadPadding(ctx, /*allow_explicit=*/false, a.get()));
  KILN_RETURN_IF_ERROR(ReadSpatialList(ctx, "ksize", true, &a->k_h, &a->k_w));
  KILN_RETURN_IF_ERROR(ReadSpatialList(ctx, "strides", true, &a->stride_h, &a->stride_w));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 4));
  const PartialShape& in = ctx.inputs[0].shape;
  std::array<int64_t, 4> in_dims{-1, -1, -1, -1};
  if (!in.unknown_rank()) std::copy(in.dims().begin(), in.dims().end(), in_dims.begin());
  ConvGeometry g;
  Status s = MakeGeometry(*a, in_dims, a->k_h, a->k_w, &g);
  if (!s.ok()) return ctx.Error(s.message());
  ctx.outputs = {TensorSpec{t, PartialShape{in_dims[0], g.h.out, g.w.out, in_dims[3]}}};
  ctx.state = std::move(a);
  return OkStatus();
}

template <bool kMax>
Status ComputePool(const KernelContext& ctx) {
  const auto& a = ctx.state<WindowAttrs>();
  const Tensor& input = ctx.input(0);
  if (input.rank() != 4) {
    return ctx.Error("input must have rank 4, got shape ", input.shape().ToString());
  }
  ConvGeometry g;
  Status s = MakeGeometry(a, input.shape().dims(), a.k_h, a.k_w, &g);
  if (!s.ok()) return ctx.Error(s.message());
  g.out_c = g.in_c;
  KILN_ASSIGN_OR_RETURN(
      Tensor * out_ptr,
      ctx.AllocateOutput(0, input.dtype(), Shape{g.batch, g.h.out, g.w.out, g.out_c}));
  Tensor& out = *out_ptr;
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    functor::Pool2DFunctor<Eigen::DefaultDevice, T, kMax>()(Eigen::DefaultDevice(), g,
                                                            input.data<T>(), out.data<T>());
    return OkStatus();
  };
  if constexpr (kMax) {
    KILN_RETURN_IF_ERROR(DispatchDType<KILN_REAL_TYPES>(input.dtype(), run));
  } else {
    KILN_RETURN_IF_ERROR(DispatchDType<KILN_FLOAT_TYPES>(input.dtype(), run));
  }
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Conv2D", "output", kOpNone, PrepareConv<false>},
    {"DepthwiseConv2dNative", "output", kOpNone, PrepareConv<true>},
    {"MaxPool", "output", kOpNone, PreparePool<true>},
    {"AvgPool", "output", kOpNone, PreparePool<false>},
};

constexpr KernelEntry kCpu[] = {
    {"Conv2D", ComputeConv<false>},
    {"DepthwiseConv2dNative", ComputeConv<true>},
    {"MaxPool", ComputePool<true>},
    {"AvgPool", ComputePool<false>},
};

}  // namespace

std::span<const OpDefinition> ConvOpDefs() { return kDefs; }
std::span<const KernelEntry> ConvCpuKernels() { return kCpu; }

}  // namespace kiln::exec
