// The CPU kernels of the ops in kernels/conv_ops.cc. float32 runs on oneDNN with the filter
// packed once at prepare time when it is a constant (weights of a loaded model are); other
// dtypes run im2col + an Eigen product.
#include "kernels/conv_ops.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_state.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/primitive_cache.h"
#include "kernels/cpu/row_product.h"
#include "kernels/eigen_functors.h"
#include "kernels/epilogue.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using conv::ConvGeometry;
using conv::ConvState;
using conv::MakeGeometry;
using conv::MaxPoolTypes;
using conv::PoolState;

// ---- functors ----------------------------------------------------------------------------------

namespace functor {

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Conv2D: for each chunk of output pixels, gather their receptive fields into a patch matrix
// [pixels, kh*kw*in_c] (zeros for padding) and multiply by the HWIO filter [kh*kw*in_c, out_c].
// Grouped (in_c = groups * filter in-channels): group j's patches read its in_c / groups input
// channels and multiply the filter's columns of its out_c / groups output channels.
template <typename Device, typename T>
struct Conv2DFunctor;

template <typename T>
struct Conv2DFunctor<Eigen::DefaultDevice, T> {
  void operator()(const Eigen::DefaultDevice&, const ConvGeometry& g, int64_t groups,
                  const T* input, const T* filter, T* output) const {
    using Strided = Eigen::OuterStride<>;
    const int64_t icg = g.in_c / groups, ocg = g.out_c / groups;
    const int64_t k = g.h.k * g.w.k * icg;
    const int64_t pixels = g.batch * g.h.out * g.w.out;
    if (pixels == 0 || g.out_c == 0) return;
    if (k == 0) {
      Eigen::Map<RowMatrix<T>>(output, pixels, g.out_c).setZero();
      return;
    }
    // Group j's filter [k, ocg] and output block [rows, ocg] are column slices.
    auto filter_of = [&](int64_t j) {
      return Eigen::Map<const RowMatrix<T>, 0, Strided>(filter + j * ocg, k, ocg, Strided(g.out_c));
    };
    auto output_of = [&](int64_t p0, int64_t rows, int64_t j) {
      return Eigen::Map<RowMatrix<T>, 0, Strided>(output + p0 * g.out_c + j * ocg, rows, ocg,
                                                  Strided(g.out_c));
    };
    const bool pointwise = g.h.k == 1 && g.w.k == 1 && g.h.stride == 1 && g.w.stride == 1 &&
                           g.h.pad_before == 0 && g.w.pad_before == 0 && g.h.out == g.h.in &&
                           g.w.out == g.w.in;
    if (pointwise) {  // the input already is the patch matrix
      for (int64_t j = 0; j < groups; ++j) {
        output_of(0, pixels, j).noalias() = Eigen::Map<const RowMatrix<T>, 0, Strided>(
                                                input + j * icg, pixels, k, Strided(g.in_c)) *
                                            filter_of(j);
      }
      return;
    }
    // Patch rows per chunk: about 4M elements of scratch, at least one row.
    const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 22) / k);
    std::vector<T> patches(std::min(chunk, pixels) * k);
    for (int64_t p0 = 0; p0 < pixels; p0 += chunk) {
      const int64_t rows = std::min(chunk, pixels - p0);
      for (int64_t j = 0; j < groups; ++j) {
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t p = p0 + r;
          const int64_t ox = p % g.w.out, oy = (p / g.w.out) % g.h.out, b = p / (g.w.out * g.h.out);
          T* dst = patches.data() + r * k;
          for (int64_t ky = 0; ky < g.h.k; ++ky) {
            const int64_t iy = oy * g.h.stride - g.h.pad_before + ky * g.h.dilation;
            for (int64_t kx = 0; kx < g.w.k; ++kx, dst += icg) {
              const int64_t ix = ox * g.w.stride - g.w.pad_before + kx * g.w.dilation;
              if (iy < 0 || iy >= g.h.in || ix < 0 || ix >= g.w.in) {
                std::fill(dst, dst + icg, T(0));
              } else {
                const T* src = input + ((b * g.h.in + iy) * g.w.in + ix) * g.in_c + j * icg;
                std::copy(src, src + icg, dst);
              }
            }
          }
        }
        output_of(p0, rows, j).noalias() =
            Eigen::Map<const RowMatrix<T>>(patches.data(), rows, k) * filter_of(j);
      }
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

// ---- Conv2D, DepthwiseConv2dNative and their fused forms ------------------------------------

// One oneDNN convolution for one input shape, with its weights in the layout it wants.
struct DnnlConv {
  std::vector<int64_t> in_dims, filter_dims;  // the key
  dnnl::memory::desc src_md, dst_md, bias_md, user_weights_md;
  dnnl::primitive primitive;  // a convolution, or a matmul for one pixel (IsOnePixelProduct)
  dnnl::memory::desc weights_md, scratch_md;
  dnnl::reorder weights_reorder;         // user layout -> weights_md, for run-time weights
  std::shared_ptr<void> packed_weights;  // when the weights were constant at prepare time
  int threads = 1;                       // what the primitive was built for
  onednn::LeanTwin lean;                 // for calls while other work holds the cores
  dnnl::memory::desc channel_md;  // the post-activation scale's and shift's: {1, C, 1, 1}, {1, C}
  int first_post_op = 0;          // the index of the first of them among the post-ops
};

// The CPU kernel's state: the definition's, with its oneDNN objects.
struct ConvCpuState : ConvState {
  using Prepared = ConvState;
  explicit ConvCpuState(const ConvState& prepared) : ConvState(prepared) {}
  // The filter when it is known at prepare time and no batch norm is folded into it (it shares
  // the constant's buffer): every primitive packs it once.
  std::shared_ptr<const Tensor> constant_filter;
  // A constant batch norm is folded for the primitive made at prepare time into a temporary
  // that dies once packed, so such a filter is held once (packed), not three times (the
  // variable, a folded copy, the packed copy). A function whose shapes are not known at prepare
  // time folds when it first runs (late_folded_filter, under the cache's lock), keeping the
  // folded copy for the primitives of later shapes.
  bool bn_constant = false;
  mutable std::vector<float> folded_bias;  // set at prepare time, or under the cache's lock
  mutable std::shared_ptr<const Tensor> late_folded_filter;
  // float32 convolutions through oneDNN, per shape (CreateConvCpuState makes the first).
  cpu::PrimitiveCache<DnnlConv> primitives;
};

// One pixel through a 1x1 filter (a squeeze-and-excite block's products, a head on pooled
// features): a matrix product of [batch, in] by the filter as an [in, out] matrix. oneDNN 2.6's
// convolutions take slow paths there (its gemm-based one with a per-channel post-op: 80 us
// for 144x576 at batch 1; brgconv_1x1 at batch 32: 6 GMAC/s for 1024x1000), so such a
// convolution is a oneDNN matmul, or at batch 1 a row times the filter read in place
// (row_product.h).
bool IsOnePixelProduct(const ConvState& st, const ConvGeometry& g, int64_t filter_in_c) {
  return st.dtype == DType::kFloat && !st.depthwise && filter_in_c == g.in_c && g.h.k == 1 &&
         g.w.k == 1 && g.h.in == 1 && g.w.in == 1 && g.h.out == 1 && g.w.out == 1 &&
         g.h.pad_before == 0 && g.w.pad_before == 0;
}
bool IsRowProduct(const ConvState& st, const ConvGeometry& g, int64_t filter_in_c) {
  return IsOnePixelProduct(st, g, filter_in_c) && g.batch == 1 && !st.epilogue.batch_norm;
}

Result<std::unique_ptr<DnnlConv>> MakeDnnlConv(const ConvState& st, std::span<const int64_t> in,
                                               std::span<const int64_t> filter,
                                               const Tensor* constant_filter) {
  ConvGeometry g;
  KILN_RETURN_IF_ERROR(MakeGeometry(st.window, in, filter[0], filter[1], &g));
  g.out_c = st.depthwise ? g.in_c * filter[3] : filter[3];
  int64_t groups = 1;
  if (!st.depthwise) {
    KILN_ASSIGN_OR_RETURN(groups, ConvGroups(g.in_c, filter[2], g.out_c));
  }
  auto c = std::make_unique<DnnlConv>();
  c->in_dims.assign(in.begin(), in.end());
  c->filter_dims.assign(filter.begin(), filter.end());
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const bool matmul = IsOnePixelProduct(st, g, filter[2]);  // one group: in == filter in
  const bool has_bias = st.epilogue.bias || st.epilogue.batch_norm;
  if (matmul) {  // the same bytes as [batch, in] x [in, out] (HWIO of 1x1) -> [batch, out]
    c->src_md = dnnl::memory::desc({g.batch, g.in_c}, dt::f32, tag::ab);
    c->dst_md = dnnl::memory::desc({g.batch, g.out_c}, dt::f32, tag::ab);
    c->user_weights_md = dnnl::memory::desc({g.in_c, g.out_c}, dt::f32, tag::ab);
    if (has_bias) c->bias_md = dnnl::memory::desc({1, g.out_c}, dt::f32, tag::ab);
  } else {
    c->src_md = dnnl::memory::desc({g.batch, g.in_c, g.h.in, g.w.in}, dt::f32, tag::nhwc);
    c->dst_md = dnnl::memory::desc({g.batch, g.out_c, g.h.out, g.w.out}, dt::f32, tag::nhwc);
    c->user_weights_md = onednn::FilterDesc(st.depthwise, groups, filter, dt::f32);
    if (has_bias) c->bias_md = dnnl::memory::desc({g.out_c}, dt::f32, tag::x);
  }
  dnnl::memory::dims any_weights = c->user_weights_md.dims();
  // Multiply-adds: every output element sums its window over the group's input channels.
  const double macs = static_cast<double>(g.batch) * static_cast<double>(g.h.out) *
                      static_cast<double>(g.w.out) * static_cast<double>(g.out_c) *
                      static_cast<double>(filter[0]) * static_cast<double>(filter[1]) *
                      static_cast<double>(st.depthwise ? 1 : filter[2]);
  KILN_RETURN_IF_ERROR(onednn::DnnlCall("convolution setup", [&] {
    const onednn::BuildThreads build(onednn::ThreadsWorth(macs));
    c->threads = build.threads();
    c->lean.Plan(macs, c->threads);
    dnnl::post_ops ops;
    if (st.epilogue.add) ops.append_sum(1.f);
    onednn::AppendActivation(st.epilogue, &ops);
    if (st.epilogue.has_post()) {  // per output channel: {1, C, 1, 1}
      c->channel_md = matmul ? dnnl::memory::desc({1, g.out_c}, dt::f32, tag::ab)
                             : dnnl::memory::desc({1, g.out_c, 1, 1}, dt::f32, tag::nchw);
      c->first_post_op = ops.len();
      if (st.epilogue.post_scale) ops.append_binary(dnnl::algorithm::binary_mul, c->channel_md);
      if (st.epilogue.post_shift) ops.append_binary(dnnl::algorithm::binary_add, c->channel_md);
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::memory::desc w_any(any_weights, dt::f32, tag::any);
    if (matmul) {
      const auto desc = has_bias ? dnnl::matmul::desc(c->src_md, w_any, c->bias_md, c->dst_md)
                                 : dnnl::matmul::desc(c->src_md, w_any, c->dst_md);
      dnnl::matmul::primitive_desc pd(desc, attr, onednn::Engine());
      c->weights_md = pd.weights_desc();
      c->scratch_md = pd.scratchpad_desc();
      c->primitive = dnnl::matmul(pd);
    } else {
      const auto desc = onednn::ConvInferenceDesc(
          c->src_md, w_any, has_bias ? &c->bias_md : nullptr, c->dst_md, g.h, g.w);
      dnnl::convolution_forward::primitive_desc pd(desc, attr, onednn::Engine());
      c->weights_md = pd.weights_desc();
      c->scratch_md = pd.scratchpad_desc();
      c->primitive = dnnl::convolution_forward(pd);
    }
    c->weights_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(
        onednn::Engine(), c->user_weights_md, onednn::Engine(), c->weights_md));
    if (constant_filter != nullptr) {  // packed once: the filter's layout for this kernel
      c->packed_weights = onednn::PackWeights(c->weights_reorder, c->user_weights_md,
                                              constant_filter->raw_data(), c->weights_md);
      constant_filter->buffer()->ReleasePages();  // a mapped bundle's: read again only to pack
    }
  }));
  return c;
}

// Folds a batch norm into the filter and a bias: w' = w * s, b' = offset - mean * s with
// s = scale / sqrt(variance + epsilon), per output channel (TF's FusedBatchNorm, inference).
void FoldBatchNorm(const ConvState& st, const Tensor& filter, const float* scale,
                   const float* offset, const float* mean, const float* variance, float* w_out,
                   float* b_out) {
  const int64_t out_c = filter.NumElements() == 0
                            ? 0
                            : (st.depthwise ? filter.dim(2) * filter.dim(3) : filter.dim(3));
  std::vector<float> s(out_c);
  for (int64_t o = 0; o < out_c; ++o) {
    s[o] = scale[o] / std::sqrt(variance[o] + st.epilogue.epsilon);
    b_out[o] = offset[o] - mean[o] * s[o];
  }
  const float* w = filter.data<float>();
  // The output channel is the innermost index of [kh, kw, in, out] and of [kh, kw, c, m].
  for (int64_t i = 0; i < filter.NumElements(); ++i) w_out[i] = w[i] * s[i % out_c];
}

// The CPU kernel's state: for float32 with a known filter, the oneDNN primitive and the packed
// filter (a constant batch norm folded into it) now.
Status CreateConvCpuState(PrepareContext& ctx) {
  ConvCpuState* st = cpu::ReplaceWithCpuState<ConvCpuState>(ctx);
  const PartialShape& in = ctx.inputs[0].shape;
  const PartialShape& f = ctx.inputs[1].shape;
  const PartialShape& out = ctx.outputs[0].shape;
  if (st->dtype != DType::kFloat || !f.IsFullyDefined()) return OkStatus();
  const Tensor* filter = ctx.constant_inputs[1];
  // Known sizes with a non-empty output: the primitive can be made now.
  const bool known = in.IsFullyDefined() && in.ToShape()->num_elements() > 0 &&
                     out.IsFullyDefined() && out.dim(1) > 0 && out.dim(2) > 0 &&
                     f.ToShape()->num_elements() > 0;
  const int64_t out_c = known ? out.dim(3) : 0;
  // The fused Add's addend is summed into the output (AllocateOutputWithAddend).
  if (st->epilogue.add && st->dtype == DType::kFloat)
    ctx.in_place_input = st->epilogue.addend_input();
  bool bn_constant = st->epilogue.batch_norm;
  for (int i = 2; bn_constant && i < 6; ++i) bn_constant = ctx.constant_inputs[i] != nullptr;
  st->bn_constant = filter != nullptr && bn_constant;
  if (filter != nullptr && bn_constant) {
    if (known) {
      Tensor folded(DType::kFloat, filter->shape());
      std::vector<float> bias(out_c);
      FoldBatchNorm(*st, *filter, ctx.constant_inputs[2]->data<float>(),
                    ctx.constant_inputs[3]->data<float>(), ctx.constant_inputs[4]->data<float>(),
                    ctx.constant_inputs[5]->data<float>(), folded.data<float>(), bias.data());
      auto c = MakeDnnlConv(*st, in.dims(), f.dims(), &folded);
      if (!c.ok()) return ctx.Error(c.status().message());
      st->primitives.SetPrepared(std::move(c).value());
      st->folded_bias = std::move(bias);
    }
  } else if (!st->epilogue.batch_norm) {
    // shares the constant's buffer
    if (filter != nullptr) st->constant_filter = std::make_shared<const Tensor>(*filter);
    ConvGeometry g;
    if (known && MakeGeometry(st->window, in.dims(), f.dim(0), f.dim(1), &g).ok() &&
        IsRowProduct(*st, g, f.dim(2)))
      return OkStatus();
    if (known) {
      auto c = MakeDnnlConv(*st, in.dims(), f.dims(), st->constant_filter.get());
      if (!c.ok()) return ctx.Error(c.status().message());
      st->primitives.SetPrepared(std::move(c).value());
    }
  }
  return OkStatus();
}

Result<const DnnlConv*> FindDnnlConv(const KernelContext& ctx, const ConvCpuState& st) {
  const Shape& in = ctx.input(0).shape();
  const Tensor& filter = ctx.input(1);
  auto matches = [&](const DnnlConv& c) {
    return std::equal(c.in_dims.begin(), c.in_dims.end(), in.dims().begin(), in.dims().end()) &&
           std::equal(c.filter_dims.begin(), c.filter_dims.end(), filter.shape().dims().begin(),
                      filter.shape().dims().end());
  };
  return st.primitives.Get(matches, [&]() -> Result<std::unique_ptr<DnnlConv>> {
    const Tensor* packable = st.constant_filter.get();
    if (st.bn_constant && st.primitives.prepared() == nullptr) {
      // The batch norm's inputs are the constants prepare saw: fold once, for every shape.
      if (st.late_folded_filter == nullptr) {
        auto folded = std::make_shared<Tensor>(DType::kFloat, filter.shape());
        std::vector<float> bias(ctx.input(2).NumElements());
        FoldBatchNorm(st, filter, ctx.input(2).data<float>(), ctx.input(3).data<float>(),
                      ctx.input(4).data<float>(), ctx.input(5).data<float>(), folded->data<float>(),
                      bias.data());
        st.late_folded_filter = std::move(folded);
        st.folded_bias = std::move(bias);
      }
      packable = st.late_folded_filter.get();
    }
    return MakeDnnlConv(st, in.dims(), filter.shape().dims(), packable);
  });
}

template <bool kDepthwise>
Status ComputeConv(const KernelContext& ctx) {
  std::optional<ConvCpuState> local;
  const ConvCpuState& st = cpu::CpuStateOf(ctx, &local);
  const Tensor& input = ctx.input(0);
  const Tensor& filter = ctx.input(1);
  if (input.rank() != 4 || filter.rank() != 4) {
    return ctx.Error("input and filter must have rank 4, got shapes ", input.shape().ToString(),
                     " and ", filter.shape().ToString());
  }
  int64_t groups = 1;
  if (kDepthwise) {
    if (input.dim(3) != filter.dim(2)) {
      return ctx.Error("input depth must match the filter's in_channels: input has shape ",
                       input.shape().ToString(), ", filter has shape ", filter.shape().ToString());
    }
  } else {
    Result<int64_t> gr = ConvGroups(input.dim(3), filter.dim(2), filter.dim(3));
    if (!gr.ok()) {
      return ctx.Error(gr.status().message(), "; input has shape ", input.shape().ToString(),
                       ", filter has shape ", filter.shape().ToString());
    }
    groups = *gr;
  }
  ConvGeometry g;
  Status s = MakeGeometry(st.window, input.shape().dims(), filter.dim(0), filter.dim(1), &g);
  if (!s.ok()) return ctx.Error(s.message());
  g.out_c = kDepthwise ? filter.dim(2) * filter.dim(3) : filter.dim(3);
  const Shape out_shape{g.batch, g.h.out, g.w.out, g.out_c};
  const Epilogue& e = st.epilogue;
  for (int i = 2; i < 2 + e.num_args() - (e.add ? 1 : 0); ++i)
    if (ctx.input(i).rank() != 1 || ctx.input(i).dim(0) != g.out_c)
      return ctx.Error("args:", i - 2, " must be a vector of the ", g.out_c,
                       " output channels, got shape ", ctx.input(i).shape().ToString());
  KILN_ASSIGN_OR_RETURN(Tensor * out, onednn::AllocateOutputWithAddend(ctx, e, e.addend_input(),
                                                                       out_shape, "convolution"));
  if (out->NumElements() == 0) return OkStatus();
  if (st.dtype != DType::kFloat) {
    // double, and int32 for Conv2D alone (Prepare's check).
    using Types = std::conditional_t<kDepthwise, TypeList<double>, TypeList<double, int32_t>>;
    return Dispatch<Types>(input.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kDepthwise) {
        functor::DepthwiseConv2DFunctor<Eigen::DefaultDevice, T>()(
            Eigen::DefaultDevice(), g, input.data<T>(), filter.data<T>(), out->data<T>());
      } else {
        functor::Conv2DFunctor<Eigen::DefaultDevice, T>()(
            Eigen::DefaultDevice(), g, groups, input.data<T>(), filter.data<T>(), out->data<T>());
      }
      return OkStatus();
    });
  }
  if (input.NumElements() == 0 || filter.NumElements() == 0) {
    // Nothing to sum: the epilogue applied to zeros.
    std::vector<float> bias(g.out_c, 0.f);
    if (e.bias) std::copy_n(ctx.input(2).data<float>(), g.out_c, bias.begin());
    if (e.batch_norm) {
      for (int64_t o = 0; o < g.out_c; ++o)
        bias[o] = ctx.input(3).data<float>()[o] -
                  ctx.input(4).data<float>()[o] * ctx.input(2).data<float>()[o] /
                      std::sqrt(ctx.input(5).data<float>()[o] + e.epsilon);
    }
    float* o = out->data<float>();
    for (int64_t i = 0; i < out->NumElements(); ++i)
      o[i] = (e.add ? o[i] : 0.f) + bias[i % g.out_c];
    onednn::ApplyActivation(e, o, out->NumElements(), ctx.threads());
    onednn::ApplyPostScaleShift(ctx, e, out);
    return OkStatus();
  }
  if (IsRowProduct(st, g, filter.dim(2))) {
    KILN_RETURN_IF_ERROR(RowTimesMatrix(ctx, input.data<float>(), filter.data<float>(), g.in_c,
                                        g.out_c, e.bias ? ctx.input(2).data<float>() : nullptr,
                                        e.add, out->data<float>()));
    onednn::ApplyActivation(e, out->data<float>(), g.out_c, ctx.threads());
    onednn::ApplyPostScaleShift(ctx, e, out);
    return OkStatus();
  }
  // The check reads the whole input: worth it only where the convolution does much more per
  // input element (128 or more multiply-adds). Depthwise and thin convolutions skip it, so there
  // a NaN can still become 0 through a fused ReLU (measured: checking every convolution made
  // MobileNetV2 16 % slower; docs/tf-compat.md, "Non-finite values").
  const int64_t work_per_input =
      (g.out_c / (kDepthwise ? g.in_c : groups)) * g.h.k * g.w.k / (g.h.stride * g.w.stride);
  if (onednn::ActivationDropsNaN(e) && work_per_input >= 128 &&
      !onednn::AllFinite(input.data<float>(), input.NumElements())) {
    // NaN or Inf in: the convolution without oneDNN's max-based activation, then the epilogue
    // in TF's order (bias or batch norm, add, activation) keeping NaN. Rare, so the functors.
    std::vector<float> addend;
    if (e.add) addend.assign(out->data<float>(), out->data<float>() + out->NumElements());
    if constexpr (kDepthwise) {
      functor::DepthwiseConv2DFunctor<Eigen::DefaultDevice, float>()(
          Eigen::DefaultDevice(), g, input.data<float>(), filter.data<float>(), out->data<float>());
    } else {
      functor::Conv2DFunctor<Eigen::DefaultDevice, float>()(
          Eigen::DefaultDevice(), g, groups, input.data<float>(), filter.data<float>(),
          out->data<float>());
    }
    float* o = out->data<float>();
    for (int64_t i = 0; i < out->NumElements(); ++i) {
      const int64_t ch = i % g.out_c;
      float v = o[i];
      if (e.bias) v += ctx.input(2).data<float>()[ch];
      if (e.batch_norm) {
        v = (v - ctx.input(4).data<float>()[ch]) * ctx.input(2).data<float>()[ch] /
                std::sqrt(ctx.input(5).data<float>()[ch] + e.epsilon) +
            ctx.input(3).data<float>()[ch];
      }
      if (e.add) v += addend[i];
      o[i] = v;
    }
    onednn::ApplyActivation(e, o, out->NumElements(), ctx.threads());
    onednn::ApplyPostScaleShift(ctx, e, out);
    return OkStatus();
  }
  KILN_ASSIGN_OR_RETURN(const DnnlConv* c, FindDnnlConv(ctx, st));
  // The weights in the kernel's layout: packed at prepare time, or reordered now.
  void* weights = c->packed_weights.get();
  const float* bias = e.bias ? ctx.input(2).data<float>() : nullptr;
  if (e.batch_norm) {
    if (!st.folded_bias.empty() && weights != nullptr) {
      bias = st.folded_bias.data();  // the primitive made at prepare time, packed folded
    } else {
      // Statistics known only now (or a primitive for another shape): fold into scratch.
      KILN_ASSIGN_OR_RETURN(void* w, ctx.AllocateTemp(filter.ByteSize()));
      KILN_ASSIGN_OR_RETURN(void* b, ctx.AllocateTemp(g.out_c * sizeof(float)));
      FoldBatchNorm(st, filter, ctx.input(2).data<float>(), ctx.input(3).data<float>(),
                    ctx.input(4).data<float>(), ctx.input(5).data<float>(), static_cast<float*>(w),
                    static_cast<float*>(b));
      bias = static_cast<float*>(b);
      KILN_ASSIGN_OR_RETURN(weights, ctx.AllocateTemp(c->weights_md.get_size()));
      KILN_RETURN_IF_ERROR(onednn::DnnlCall("weights reorder", [&] {
        dnnl::memory user(c->user_weights_md, onednn::Engine(), w);
        dnnl::memory packed(c->weights_md, onednn::Engine(), weights);
        c->weights_reorder.execute(onednn::ThreadStream(), user, packed);
      }));
    }
  } else if (weights == nullptr) {
    KILN_ASSIGN_OR_RETURN(weights, ctx.AllocateTemp(c->weights_md.get_size()));
    KILN_RETURN_IF_ERROR(onednn::DnnlCall("weights reorder", [&] {
      dnnl::memory user(c->user_weights_md, onednn::Engine(), onednn::SourceHandle(filter));
      dnnl::memory packed(c->weights_md, onednn::Engine(), weights);
      c->weights_reorder.execute(onednn::ThreadStream(), user, packed);
    }));
  }
  const onednn::MemArg src{DNNL_ARG_SRC, &c->src_md, input.raw_data()};
  const onednn::MemArg wei{DNNL_ARG_WEIGHTS, &c->weights_md, weights};
  const onednn::MemArg dst{DNNL_ARG_DST, &c->dst_md, out->raw_data()};
  if (e.has_post()) {  // always with a bias (the fusion writes one)
    const int k = e.post_input();
    const onednn::MemArg first{DNNL_ARG_ATTR_MULTIPLE_POST_OP(c->first_post_op) | DNNL_ARG_SRC_1,
                               &c->channel_md, ctx.input(k).raw_data()};
    const onednn::MemArg bias_arg{DNNL_ARG_BIAS, &c->bias_md, bias};
    if (!(e.post_scale && e.post_shift))
      return onednn::ExecuteBound(ctx, c->primitive, c->scratch_md, c->threads,
                                  {src, wei, bias_arg, dst, first}, &c->lean);
    const onednn::MemArg second{
        DNNL_ARG_ATTR_MULTIPLE_POST_OP(c->first_post_op + 1) | DNNL_ARG_SRC_1, &c->channel_md,
        ctx.input(k + 1).raw_data()};
    return onednn::ExecuteBound(ctx, c->primitive, c->scratch_md, c->threads,
                                {src, wei, bias_arg, dst, first, second}, &c->lean);
  }
  if (bias != nullptr)
    return onednn::ExecuteBound(ctx, c->primitive, c->scratch_md, c->threads,
                                {src, wei, {DNNL_ARG_BIAS, &c->bias_md, bias}, dst}, &c->lean);
  return onednn::ExecuteBound(ctx, c->primitive, c->scratch_md, c->threads, {src, wei, dst},
                              &c->lean);
}

// ---- MaxPool, AvgPool ------------------------------------------------------------------------

// The CPU kernel's state: the definition's, with its oneDNN objects.
struct PoolCpuState : PoolState {
  using Prepared = PoolState;
  explicit PoolCpuState(const PoolState& prepared) : PoolState(prepared) {}
  struct Dnnl {
    std::vector<int64_t> in_dims;
    dnnl::memory::desc src_md, dst_md, scratch_md;
    dnnl::pooling_forward primitive;
    int threads = 1;  // what the primitive was built for
  };
  // float32 pooling through oneDNN, per shape (CreatePoolCpuState makes the first).
  cpu::PrimitiveCache<Dnnl> primitives;
};

Result<std::unique_ptr<PoolCpuState::Dnnl>> MakeDnnlPool(const PoolState& st,
                                                         std::span<const int64_t> in) {
  ConvGeometry g;
  KILN_RETURN_IF_ERROR(MakeGeometry(st.window, in, st.window.ksize[1], st.window.ksize[2], &g));
  auto p = std::make_unique<PoolCpuState::Dnnl>();
  p->in_dims.assign(in.begin(), in.end());
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  p->src_md = dnnl::memory::desc({g.batch, g.in_c, g.h.in, g.w.in}, dt::f32, tag::nhwc);
  p->dst_md = dnnl::memory::desc({g.batch, g.in_c, g.h.out, g.w.out}, dt::f32, tag::nhwc);
  // A window's reads per output element.
  const double reads = static_cast<double>(g.batch) * static_cast<double>(g.h.out) *
                       static_cast<double>(g.w.out) * static_cast<double>(g.in_c) *
                       static_cast<double>(g.h.k) * static_cast<double>(g.w.k);
  KILN_RETURN_IF_ERROR(onednn::DnnlCall("pooling setup", [&] {
    const onednn::BuildThreads build(onednn::ThreadsWorth(reads));
    p->threads = build.threads();
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    // Average pooling leaves the padding out of the count, as TF does.
    dnnl::pooling_forward::desc desc(
        dnnl::prop_kind::forward_inference,
        st.max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding,
        p->src_md, p->dst_md, {g.h.stride, g.w.stride}, {g.h.k, g.w.k},
        {g.h.pad_before, g.w.pad_before}, {g.h.pad_after, g.w.pad_after});
    dnnl::pooling_forward::primitive_desc pd(desc, attr, onednn::Engine());
    p->scratch_md = pd.scratchpad_desc();
    p->primitive = dnnl::pooling_forward(pd);
  }));
  return p;
}

// The CPU kernel's state: with known float32 shapes, the oneDNN primitive now.
Status CreatePoolCpuState(PrepareContext& ctx) {
  PoolCpuState* a = cpu::ReplaceWithCpuState<PoolCpuState>(ctx);
  const PartialShape& in = ctx.inputs[0].shape;
  const PartialShape& out = ctx.outputs[0].shape;
  if (ctx.outputs[0].dtype != DType::kFloat || !in.IsFullyDefined() ||
      in.ToShape()->num_elements() == 0 || !out.IsFullyDefined() || out.dim(1) <= 0 ||
      out.dim(2) <= 0)
    return OkStatus();
  auto p = MakeDnnlPool(*a, in.dims());
  if (!p.ok()) return ctx.Error(p.status().message());
  a->primitives.SetPrepared(std::move(p).value());
  return OkStatus();
}

Result<const PoolCpuState::Dnnl*> FindDnnlPool(const PoolCpuState& st, const Shape& in) {
  auto matches = [&](const PoolCpuState::Dnnl& p) {
    return std::equal(p.in_dims.begin(), p.in_dims.end(), in.dims().begin(), in.dims().end());
  };
  return st.primitives.Get(matches, [&] { return MakeDnnlPool(st, in.dims()); });
}

template <bool kMax>
Status ComputePool(const KernelContext& ctx) {
  std::optional<PoolCpuState> local;
  const PoolCpuState& a = cpu::CpuStateOf(ctx, &local);
  const Tensor& input = ctx.input(0);
  if (input.rank() != 4) {
    return ctx.Error("input must have rank 4, got shape ", input.shape().ToString());
  }
  ConvGeometry g;
  Status s = MakeGeometry(a.window, input.shape().dims(), a.window.ksize[1], a.window.ksize[2], &g);
  if (!s.ok()) return ctx.Error(s.message());
  g.out_c = g.in_c;
  KILN_ASSIGN_OR_RETURN(Tensor * out,
                        ctx.AllocateOutput(0, Shape{g.batch, g.h.out, g.w.out, g.out_c}));
  if (out->NumElements() == 0) return OkStatus();
  if (input.dtype() == DType::kFloat) {
    KILN_ASSIGN_OR_RETURN(const PoolCpuState::Dnnl* p, FindDnnlPool(a, input.shape()));
    return onednn::ExecuteBound(ctx, p->primitive, p->scratch_md, p->threads,
                                {{DNNL_ARG_SRC, &p->src_md, input.raw_data()},
                                 {DNNL_ARG_DST, &p->dst_md, out->raw_data()}});
  }
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    functor::Pool2DFunctor<Eigen::DefaultDevice, T, kMax>()(Eigen::DefaultDevice(), g,
                                                            input.data<T>(), out->data<T>());
    return OkStatus();
  };
  if constexpr (kMax) return Dispatch<MaxPoolTypes>(input.dtype(), run);
  return Dispatch<BasicFloatTypes>(input.dtype(), run);
}

constexpr KernelEntry kCpu[] = {
    {"Conv2D", ComputeConv<false>, 0, 0, nullptr, CreateConvCpuState},
    {"_FusedConv2D", ComputeConv<false>, 0, 0, nullptr, CreateConvCpuState},
    {"DepthwiseConv2dNative", ComputeConv<true>, 0, 0, nullptr, CreateConvCpuState},
    {"_FusedDepthwiseConv2dNative", ComputeConv<true>, 0, 0, nullptr, CreateConvCpuState},
    {"MaxPool", ComputePool<true>, 0, 0, nullptr, CreatePoolCpuState},
    {"AvgPool", ComputePool<false>, 0, 0, nullptr, CreatePoolCpuState},
};

}  // namespace

std::span<const KernelEntry> ConvCpuKernels() { return kCpu; }

}  // namespace kiln::exec
