// The CPU kernel of the integer products of kernels/int8_product_ops.cc. It rounds the input to
// the FakeQuant's levels as bytes and multiplies them with the weights' int8 levels through
// oneDNN (u8s8 or s8s8, int32 sums, one output scale per channel, then the bias, residual add
// and activation as post-ops), where the CPU has 8-bit dot products; elsewhere it computes the
// FakeQuant and the product in float32, as TensorFlow does. Either way the result is
// TensorFlow's on the FakeQuant graph to within float rounding (the sums of integer levels are
// exact), apart from NaN inputs, which the integer path reads as level 0. A chained product's
// input may be those levels already, and its output the next FakeQuant's levels: oneDNN writes
// them (nearest even where TF rounds halves up: ties of exact floats only), or the float result
// is rounded as TF does.
#include "kernels/int8_product_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_state.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/primitive_cache.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/epilogue.h"
#include "kernels/fake_quant.h"
#include "kernels/int8_weights.h"
#include "kernels/kernel_util.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using int8_product::Int8State;
using int8_product::Kind;

// One oneDNN primitive for one input shape, with the weights packed for it.
struct Int8Primitive {
  std::vector<int64_t> in_dims;  // the key
  dnnl::memory::desc src_md, dst_md, bias_md, weights_md, scratch_md;
  dnnl::primitive primitive;
  std::shared_ptr<void> packed_weights;
  int threads = 1;
  bool cpu_activation = false;  // oneDNN took no activation post-op: applied after
  bool dst_levels = false;      // oneDNN writes the output levels (else floats, rounded after)
};

// The CPU kernel's state: the definition's, with the weights as the kernel reads them and its
// oneDNN primitives.
struct Int8CpuState : Int8State {
  using Prepared = Int8State;
  explicit Int8CpuState(const Int8State& prepared) : Int8State(prepared) {}
  // CPU: integer products (the weights' levels and scales), or the float fallback.
  bool integer = false;
  Int8Weights weights;
  Shape filter_shape;
  std::vector<float> out_scales;  // the input's step times each channel's weight scale
  // A constant bias divided by out_scales once (ComputeInt8 divides any other on each call).
  std::vector<float> scaled_bias;
  std::shared_ptr<const Tensor> filter;  // the float path's weights (levels times scales)
  cpu::PrimitiveCache<Int8Primitive> primitives;
};

// The output channels of the weights and whether they are the outer index ([n, k] MatMul
// weights read transposed).
std::pair<int64_t, bool> OutputChannels(const Int8State& st, const Shape& f) {
  switch (st.kind) {
    case Kind::kConv:
      return {f.dim(3), false};
    case Kind::kDepthwise:
      return {f.dim(2) * f.dim(3), false};
    case Kind::kMatMul:
      return {st.transpose_b ? f.dim(0) : f.dim(1), st.transpose_b};
  }
  return {0, false};
}

// oneDNN 2.x's integer kernels add a float bias to the float sum before the output scale
// (scale * (sum + bias)): the bias goes in divided by each channel's scale. (A per-channel
// binary post-op after the scale gives the same within float rounding and doubles the cost of
// small convolutions: a second pass over the output in oneDNN 2.6's brgemm kernels.)
void ScaleBias(const float* bias, const std::vector<float>& out_scales, float* scaled) {
  for (size_t c = 0; c < out_scales.size(); ++c) scaled[c] = bias[c] / out_scales[c];
}

// The CPU's part: the weights' levels and scales (given as int8 with attr weight_scales, or
// found in the float32 weights), used by oneDNN where it has 8-bit dot products here; the
// float path multiplies level by scale, the same floats either way the weights came.
Status CreateInt8CpuState(PrepareContext& ctx) {
  Int8CpuState* st = cpu::ReplaceWithCpuState<Int8CpuState>(ctx);
  const Tensor* f = ctx.constant_inputs[1];
  if (f == nullptr || f->NumElements() == 0 ||
      (f->dtype() != DType::kFloat && f->dtype() != DType::kInt8))
    return ctx.Error("an int8 product's weights must be a non-empty float32 or int8 constant");
  const auto [channels, outer] = OutputChannels(*st, f->shape());
  st->filter_shape = f->shape();
  bool on_grid = false;
  if (f->dtype() == DType::kInt8) {
    KILN_PREPARE_ASSIGN(ctx, st->weights.scales, ctx.attrs.GetFloatList("weight_scales"));
    if (static_cast<int64_t>(st->weights.scales.size()) != channels)
      return ctx.Error("attr weight_scales has ", st->weights.scales.size(),
                       " scales for weights of ", channels, " output channels");
    st->weights.levels.assign(f->data<int8_t>(), f->data<int8_t>() + f->NumElements());
    on_grid = true;
  } else {
    on_grid = QuantizeOnGrid(f->data<float>(), f->NumElements(), channels, outer, &st->weights);
  }
  st->integer = on_grid && onednn::HasInt8Dot();
  if (st->integer) {
    // A channel of zero scale is all zeros: levels 0 at scale 1 say the same, and keep the
    // kernel's bias / scale finite (ComputeInt8).
    if (std::find(st->weights.scales.begin(), st->weights.scales.end(), 0.f) !=
        st->weights.scales.end())
      ForEachInChannel(static_cast<int64_t>(st->weights.levels.size()), channels, outer,
                       [&](int64_t i, int64_t c) {
                         if (st->weights.scales[c] == 0.f) st->weights.levels[i] = 0;
                       });
    st->out_scales.resize(channels);
    for (int64_t c = 0; c < channels; ++c) {
      float& w = st->weights.scales[c];
      if (w == 0.f) w = 1.f;
      st->out_scales[c] = st->range.scale * w;
      if (!std::isnormal(st->out_scales[c])) st->integer = false;
    }
    const Tensor* b =
        st->epilogue.bias && ctx.constant_inputs.size() > 2 ? ctx.constant_inputs[2] : nullptr;
    if (st->integer && b != nullptr && b->dtype() == DType::kFloat &&
        b->NumElements() == channels) {
      st->scaled_bias.resize(channels);
      ScaleBias(b->data<float>(), st->out_scales, st->scaled_bias.data());
    }
  }
  if (st->integer) return OkStatus();
  // The float path: levels times scales where the weights are on the grid (given as int8, or
  // so in float32, the same floats), else the weights as they are.
  if (on_grid) {
    Tensor w(DType::kFloat, f->shape());
    ForEachInChannel(f->NumElements(), channels, outer, [&](int64_t i, int64_t c) {
      w.data<float>()[i] = static_cast<float>(st->weights.levels[i]) * st->weights.scales[c];
    });
    st->filter = std::make_shared<const Tensor>(std::move(w));
  } else {
    st->filter = std::make_shared<const Tensor>(*f);
  }
  st->weights = {};
  return OkStatus();
}

// The weights as oneDNN reads them in the user's layout ([k, n] or transposed [n, k] matrix,
// TF's HWIO or depthwise filter), int8 or float32.
dnnl::memory::desc UserWeights(const Int8State& st, const Shape& f, dnnl::memory::data_type dt) {
  if (st.kind != Kind::kMatMul)
    return onednn::FilterDesc(st.kind == Kind::kDepthwise, 1, f.dims(), dt);
  const int64_t k = st.transpose_b ? f.dim(1) : f.dim(0), n = st.transpose_b ? f.dim(0) : f.dim(1);
  return dnnl::memory::desc({k, n}, dt,
                            st.transpose_b ? dnnl::memory::dims{1, k} : dnnl::memory::dims{n, 1});
}

struct Geometry {
  int64_t batch = 0, in_c = 0, out_c = 0;
  std::array<WindowDim, 3> dims;  // [1], [2]: height and width
  int64_t rows = 0, depth = 0;    // MatMul: [rows, depth] x [depth, out_c]
  std::vector<int64_t> lead;      // MatMul: the input's dims before depth (rows in all)
};

Status MakeGeometry(const Int8State& st, const Shape& in, const Shape& f, Geometry* g) {
  if (st.kind == Kind::kMatMul) {
    const int64_t k = st.transpose_b ? f.dim(1) : f.dim(0);
    if (in.rank() < 2 || in.dim(in.rank() - 1) != k)
      return InvalidArgument("input of shape ", in.ToString(), " does not match weights of shape ",
                             f.ToString());
    g->lead.assign(in.dims().begin(), in.dims().end() - 1);
    g->rows = 1;
    for (int64_t d : g->lead) g->rows *= d;
    g->depth = k;
    g->out_c = st.transpose_b ? f.dim(0) : f.dim(1);
    return OkStatus();
  }
  if (in.rank() != 4 || in.dim(3) != f.dim(2))
    return InvalidArgument("input of shape ", in.ToString(), " does not match filter of shape ",
                           f.ToString(), " (one group)");
  KILN_RETURN_IF_ERROR(MakeWindowDims(st.window, in.dims(), {1, f.dim(0), f.dim(1)}, &g->dims));
  g->batch = in.dim(0);
  g->in_c = in.dim(3);
  g->out_c = OutputChannels(st, f).first;
  return OkStatus();
}

Shape OutputShape(const Int8State& st, const Geometry& g) {
  if (st.kind == Kind::kMatMul) {
    Shape out;
    for (int64_t d : g.lead) out.AddDim(d);
    out.AddDim(g.out_c);
    return out;
  }
  return Shape{g.batch, g.dims[1].out, g.dims[2].out, g.out_c};
}

// The post-ops that end in the output's levels (y / step, then rounded and saturated by the
// conversion to bytes). Where the activation commutes with a positive factor (none, ReLU,
// leaky ReLU, ReLU6), 1 / step joins the output scales and what is left is at most one clip
// of levels: oneDNN 2.6's int8 kernels pay for each post-op per output element, as much as
// the products of a small convolution (a 1x1 expansion of 32 to 128 channels at 14x14 with
// AMX: 6.1 -> 3.9 us). Other activations run on y, then the linear step.
void AppendLevelsPostOps(const Int8CpuState& st, std::vector<float>* scales, dnnl::post_ops* ops) {
  using Act = Epilogue::Act;
  using A = dnnl::algorithm;
  const Epilogue& e = st.epilogue;
  const float step_inv = st.out_range.inv_scale;
  const float sat_lo = st.out_signed ? -128.f : 0.f, sat_hi = st.out_signed ? 127.f : 255.f;
  float lo = st.out_signed ? -127.f : 0.f, hi = sat_hi;
  switch (e.act) {
    case Act::kNone:
      break;
    case Act::kRelu:
      lo = std::max(lo, 0.f);
      break;
    case Act::kRelu6:
      lo = std::max(lo, 0.f);
      hi = std::min(hi, 6.f * step_inv);
      break;
    case Act::kLeakyRelu:
      ops->append_eltwise(1.f, A::eltwise_relu, e.leakyrelu_alpha, 0.f);
      break;
    default:
      onednn::AppendActivation(e, ops);
      ops->append_eltwise(1.f, A::eltwise_linear, step_inv, 0.f);
      if (st.out_signed) ops->append_eltwise(1.f, A::eltwise_clip, -127.f, 127.f);
      return;
  }
  for (float& s : *scales) s *= step_inv;
  if (lo > sat_lo || hi < sat_hi) ops->append_eltwise(1.f, A::eltwise_clip, lo, hi);
}

Result<std::unique_ptr<Int8Primitive>> MakePrimitive(const Int8CpuState& st, const Shape& in,
                                                     const Geometry& g) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const Shape& f = st.filter_shape;
  auto p = std::make_unique<Int8Primitive>();
  p->in_dims.assign(in.dims().begin(), in.dims().end());
  const dt src_dt = st.integer ? (st.signed_levels ? dt::s8 : dt::u8) : dt::f32;
  const dt w_dt = st.integer ? dt::s8 : dt::f32;
  const dnnl::memory::desc user_w = UserWeights(st, f, w_dt);
  const bool matmul = st.kind == Kind::kMatMul;
  double macs = 0;
  if (matmul) {
    p->src_md = dnnl::memory::desc({g.rows, g.depth}, src_dt, tag::ab);
    p->dst_md = dnnl::memory::desc({g.rows, g.out_c}, dt::f32, tag::ab);  // see make_pd
    p->bias_md = dnnl::memory::desc({1, g.out_c}, dt::f32, tag::ab);
    macs =
        static_cast<double>(g.rows) * static_cast<double>(g.depth) * static_cast<double>(g.out_c);
  } else {
    const WindowDim &h = g.dims[1], &w = g.dims[2];
    p->src_md = dnnl::memory::desc({g.batch, g.in_c, h.in, w.in}, src_dt, tag::nhwc);
    p->dst_md = dnnl::memory::desc({g.batch, g.out_c, h.out, w.out}, dt::f32, tag::nhwc);
    p->bias_md = dnnl::memory::desc({g.out_c}, dt::f32, tag::x);
    macs = static_cast<double>(g.batch) * static_cast<double>(h.out) * static_cast<double>(w.out) *
           static_cast<double>(g.out_c) * static_cast<double>(h.k) * static_cast<double>(w.k) *
           static_cast<double>(st.kind == Kind::kDepthwise ? 1 : g.in_c);
  }
  const Epilogue& e = st.epilogue;
  KILN_RETURN_IF_ERROR(onednn::DnnlCall("int8 product setup", [&] {
    const onednn::BuildThreads build(onednn::ThreadsWorth(macs));
    p->threads = build.threads();
    const dnnl::memory::desc w_any(user_w.dims(), w_dt, tag::any);
    const dnnl::memory::desc f32_dst = p->dst_md;
    const auto make_pd = [&](bool activation) -> std::unique_ptr<dnnl::primitive_desc> {
      dnnl::post_ops ops;
      std::vector<float> scales = st.out_scales;
      if (e.add) ops.append_sum(1.f);
      // Output levels: y / step, rounded and saturated by the conversion to bytes (the narrow
      // signed range stops at -127).
      p->dst_levels =
          st.integer && st.output_levels && (activation || e.act == Epilogue::Act::kNone);
      p->dst_md = f32_dst;
      if (p->dst_levels) {
        p->dst_md = dnnl::memory::desc(f32_dst.dims(), st.out_signed ? dt::s8 : dt::u8,
                                       matmul ? tag::ab : tag::nhwc);
        AppendLevelsPostOps(st, &scales, &ops);
      } else if (activation) {
        onednn::AppendActivation(e, &ops);
      }
      dnnl::primitive_attr attr;
      attr.set_post_ops(ops);
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      if (st.integer) attr.set_output_scales(1 << 1, scales);
      if (matmul) {
        auto d = e.bias ? dnnl::matmul::desc(p->src_md, w_any, p->bias_md, p->dst_md)
                        : dnnl::matmul::desc(p->src_md, w_any, p->dst_md);
        return std::make_unique<dnnl::matmul::primitive_desc>(d, attr, onednn::Engine());
      }
      const auto d = onednn::ConvInferenceDesc(p->src_md, w_any, e.bias ? &p->bias_md : nullptr,
                                               p->dst_md, g.dims[1], g.dims[2]);
      return std::make_unique<dnnl::convolution_forward::primitive_desc>(d, attr, onednn::Engine());
    };
    std::unique_ptr<dnnl::primitive_desc> pd;
    try {
      pd = make_pd(true);
    } catch (const dnnl::error&) {
      // An activation oneDNN's integer kernels do not take runs after them.
      if (e.act == Epilogue::Act::kNone) throw;
      pd = make_pd(false);
      p->cpu_activation = true;
    }
    p->weights_md = pd->weights_desc();
    p->scratch_md = pd->scratchpad_desc();
    p->primitive =
        matmul
            ? dnnl::primitive(dnnl::matmul(*static_cast<dnnl::matmul::primitive_desc*>(pd.get())))
            : dnnl::primitive(dnnl::convolution_forward(
                  *static_cast<dnnl::convolution_forward::primitive_desc*>(pd.get())));
    const void* weights =
        st.integer ? static_cast<const void*>(st.weights.levels.data()) : st.filter->raw_data();
    p->packed_weights =
        onednn::PackWeights(dnnl::reorder(dnnl::reorder::primitive_desc(
                                onednn::Engine(), user_w, onednn::Engine(), p->weights_md)),
                            user_w, weights, p->weights_md);
  }));
  return p;
}

// The product's floats as the output's levels (attrs out_fq_*), TF's FakeQuant rounding.
void RoundToOutputLevels(const KernelContext& ctx, const Int8State& st, const float* y,
                         Tensor* out) {
  const Nudged& q = st.out_range;
  const float zero = NudgedZero(q);
  auto* levels = static_cast<uint8_t*>(out->raw_data());
  ctx.threads().ParallelFor(out->NumElements(), 32768, [&](int64_t begin, int64_t end) {
    vmath::QuantizeLevels(y + begin, levels + begin, end - begin, q.min, q.max, q.inv_scale, zero);
  });
}

// The input as the kernel reads it: the FakeQuant's levels as bytes for the integer kernels,
// else its floats; levels given as bytes are read in place or turned back into those floats.
Result<const void*> KernelInput(const KernelContext& ctx, const Int8CpuState& st,
                                const Tensor& input) {
  if (st.input_levels && st.integer) return input.raw_data();
  const int64_t n = input.NumElements();
  const Nudged& q = st.range;
  KILN_ASSIGN_OR_RETURN(void* src, ctx.AllocateTemp(st.integer ? n : n * sizeof(float)));
  ctx.threads().ParallelFor(n, 32768, [&](int64_t begin, int64_t end) {
    if (st.input_levels) {
      // level * step is the FakeQuant's float exactly.
      float* f = static_cast<float*>(src);
      if (st.signed_levels) {
        const auto* l = static_cast<const int8_t*>(input.raw_data());
        for (int64_t i = begin; i < end; ++i) f[i] = static_cast<float>(l[i]) * q.scale;
      } else {
        const auto* l = static_cast<const uint8_t*>(input.raw_data());
        for (int64_t i = begin; i < end; ++i) f[i] = static_cast<float>(l[i]) * q.scale;
      }
    } else if (st.integer) {
      vmath::QuantizeLevels(input.data<float>() + begin, static_cast<uint8_t*>(src) + begin,
                            end - begin, q.min, q.max, q.inv_scale, st.zero);
    } else {
      vmath::FakeQuant(input.data<float>() + begin, static_cast<float*>(src) + begin, end - begin,
                       q.min, q.max, q.scale, q.inv_scale, st.zero, /*divide=*/false);
    }
  });
  return static_cast<const void*>(src);
}

Status ComputeInt8(const KernelContext& ctx) {
  std::optional<Int8CpuState> local;
  const Int8CpuState& st = cpu::CpuStateOf(ctx, &local);
  const Tensor& input = ctx.input(0);
  Geometry g;
  if (Status s = MakeGeometry(st, input.shape(), st.filter_shape, &g); !s.ok())
    return ctx.Error(s.message());
  const Epilogue& e = st.epilogue;
  if (e.bias && (ctx.input(2).rank() != 1 || ctx.input(2).dim(0) != g.out_c))
    return ctx.Error("the bias must be a vector of the ", g.out_c, " output channels, got shape ",
                     ctx.input(2).shape().ToString());
  const Shape out_shape = OutputShape(st, g);
  KILN_ASSIGN_OR_RETURN(Tensor * out, onednn::AllocateOutputWithAddend(ctx, e, e.addend_input(),
                                                                       out_shape, "product"));
  const int64_t n_out = out->NumElements();
  if (n_out == 0) return OkStatus();
  // Where the result's floats go: the output, or scratch rounded to the output levels after.
  const auto float_result = [&]() -> Result<float*> {
    if (!st.output_levels) return out->data<float>();
    KILN_ASSIGN_OR_RETURN(void* t, ctx.AllocateTemp(n_out * sizeof(float)));
    return static_cast<float*>(t);
  };
  if (input.NumElements() == 0) {  // nothing to sum: the epilogue on zeros
    KILN_ASSIGN_OR_RETURN(float* o, float_result());
    for (int64_t i = 0; i < n_out; ++i)
      o[i] = (e.add ? o[i] : 0.f) + (e.bias ? ctx.input(2).data<float>()[i % g.out_c] : 0.f);
    onednn::ApplyActivation(e, o, n_out, ctx.threads());
    if (st.output_levels) RoundToOutputLevels(ctx, st, o, out);
    return OkStatus();
  }
  KILN_ASSIGN_OR_RETURN(const Int8Primitive* p,
                        st.primitives.Get(
                            [&](const Int8Primitive& c) {
                              return std::equal(c.in_dims.begin(), c.in_dims.end(),
                                                input.shape().dims().begin(),
                                                input.shape().dims().end());
                            },
                            [&] { return MakePrimitive(st, input.shape(), g); }));
  KILN_ASSIGN_OR_RETURN(const void* src, KernelInput(ctx, st, input));
  float* y = nullptr;
  if (!p->dst_levels) {
    KILN_ASSIGN_OR_RETURN(y, float_result());
  }
  const float* bias = e.bias ? ctx.input(2).data<float>() : nullptr;
  if (bias != nullptr && st.integer) {  // divided by the scales (ScaleBias), once if constant
    if (!st.scaled_bias.empty()) {
      bias = st.scaled_bias.data();
    } else {
      KILN_ASSIGN_OR_RETURN(void* b, ctx.AllocateTemp(g.out_c * sizeof(float)));
      ScaleBias(bias, st.out_scales, static_cast<float*>(b));
      bias = static_cast<const float*>(b);
    }
  }
  const void* dst = p->dst_levels ? out->raw_data() : y;
  const onednn::MemArg src_arg{DNNL_ARG_SRC, &p->src_md, src};
  const onednn::MemArg w_arg{DNNL_ARG_WEIGHTS, &p->weights_md, p->packed_weights.get()};
  const onednn::MemArg dst_arg{DNNL_ARG_DST, &p->dst_md, dst};
  Status s = bias == nullptr ? onednn::ExecuteBound(ctx, p->primitive, p->scratch_md, p->threads,
                                                    {src_arg, w_arg, dst_arg})
                             : onednn::ExecuteBound(
                                   ctx, p->primitive, p->scratch_md, p->threads,
                                   {src_arg, w_arg, {DNNL_ARG_BIAS, &p->bias_md, bias}, dst_arg});
  KILN_RETURN_IF_ERROR(s);
  if (p->dst_levels) return OkStatus();
  if (p->cpu_activation) onednn::ApplyActivation(e, y, n_out, ctx.threads());
  if (st.output_levels) RoundToOutputLevels(ctx, st, y, out);
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"_KilnInt8Conv2D", ComputeInt8, 0, 0, nullptr, CreateInt8CpuState},
    {"_KilnInt8DepthwiseConv2dNative", ComputeInt8, 0, 0, nullptr, CreateInt8CpuState},
    {"_KilnInt8MatMul", ComputeInt8, 0, 0, nullptr, CreateInt8CpuState},
};

}  // namespace

std::span<const KernelEntry> Int8ProductCpuKernels() { return kCpu; }

}  // namespace kiln::exec
