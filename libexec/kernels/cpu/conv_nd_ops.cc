// The CPU kernels of the ops in kernels/conv_nd_ops.cc. One channels-last implementation over
// three spatial dims serves them all (2-D ops have a depth of 1; the math is in conv_nd_math.h):
//   - forward: patches of the input [pixels, taps * in_c] times the filter [taps * in_c, out_c];
//   - input backprop: for every input pixel, the out_backprop values its taps reach, gathered
//     into a row [taps * out_c] and multiplied by the filter transposed per tap
//     [taps * out_c, in_c]; every input pixel is computed once, so no scatter;
//   - filter backprop: patches transposed times out_backprop, summed over fixed groups of pixel
//     chunks and then over the groups in order.
// float32 2-D input and filter backprops run oneDNN's backward kernels instead (below, "oneDNN
// backprops"). Chunks have sizes fixed by the shapes, never by the thread count, so results are
// identical on any number of threads. Half and bfloat16 compute in float.
#include "kernels/conv_nd_ops.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/conv_nd_math.h"
#include "kernels/cpu/conv_nd_math.h"
#include "kernels/cpu/cpu_state.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/primitive_cache.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using conv_nd::ConvBackpropFilter;
using conv_nd::ConvBackpropInput;
using conv_nd::ConvForward;
using conv_nd::ConvGeom;
using conv_nd::DepthwiseBackpropFilter;
using conv_nd::DepthwiseBackpropInput;
using conv_nd::InCoord;

using conv_nd_ops::ConvBackpropInputTypes;
using conv_nd_ops::ConvIo;
using conv_nd_ops::ConvKind;
using conv_nd_ops::ConvState;
using conv_nd_ops::IoOf;
using conv_nd_ops::MakeGeom;
using conv_nd_ops::SizesFromValues;

// ---- oneDNN backprops -------------------------------------------------------------------------

// Conv2DBackpropInput / Conv2DBackpropFilter on float32 through oneDNN's backward-data and
// backward-weights convolutions (JIT kernels for the CPU at hand, NHWC in and out). The batch
// is cut into sub-batches of a size fixed by the shapes; each runs a primitive built for one
// thread (onednn::BuildThreads(1)) on whichever pool thread takes it next. So results do
// not depend on the thread count (the filter backprop sums one partial per sub-batch, in
// order), and a thread the OS runs late takes fewer sub-batches instead of a fixed share (the
// region still ends at OpenMP's barrier).
struct DnnlBwdConv {
  std::vector<int64_t> in_dims, filter_dims;  // the key
  int64_t sub = 1, chunks = 0;                // images per sub-batch, sub-batches
  struct Prim {
    dnnl::memory::desc src_md, dst_md, weights_md, scratch_md;
    dnnl::primitive primitive;
  };
  Prim full, tail;  // tail: the last sub-batch when sub does not divide the batch
  dnnl::memory::desc user_weights_md;
  bool weights_plain = true;  // the kernel's weights layout is TF's HWIO
  dnnl::reorder reorder;      // input backprop: HWIO -> kernel's; filter backprop: back
  const Prim& For(int64_t chunk) const {
    return chunk == chunks - 1 && tail.primitive ? tail : full;
  }
};

// The CPU kernel's state: the definition's, with the 2-D float32 backprops' oneDNN primitives
// per shape (CreateConvNdCpuState makes the one of the sizes Prepare knew).
// Input channels below which ColBackpropInput beats oneDNN's backward-data kernels.
constexpr int64_t kColBackpropMaxInChannels = 3;

// 2-D float32 backprops run on oneDNN (made at prepare time when the shapes are known, or per
// shape when running); the rest on the generic path.
bool UsesDnnl(const ConvState& st) { return st.attrs.spatial == 2 && st.dtype == DType::kFloat; }

// Conv3D on float32 through oneDNN's forward convolution (NDHWC in and out), per shape, with
// the filter packed once while the same tensor is given (a frozen variable's, a constant's): a
// video network's first layer gathers 3 channels per tap in the generic path's patch matrix,
// 3x slower than the product itself.
struct DnnlConv3D {
  std::vector<int64_t> in_dims, filter_dims;  // the key
  dnnl::memory::desc src_md, dst_md, user_weights_md, weights_md, scratch_md;
  dnnl::convolution_forward primitive;
  dnnl::reorder weights_reorder;
  int threads = 1;
  // The filter packed for the primitive, and the buffer it was packed from.
  mutable std::mutex mu;
  mutable std::weak_ptr<TensorBuffer> packed_from;
  mutable std::shared_ptr<void> packed;
};

bool Conv3DUsesDnnl(const ConvState& st) {
  return st.attrs.spatial == 3 && st.dtype == DType::kFloat;
}

struct ConvCpuState : ConvState {
  using Prepared = ConvState;
  explicit ConvCpuState(const ConvState& prepared) : ConvState(prepared) {}
  cpu::PrimitiveCache<DnnlBwdConv> primitives;
  cpu::PrimitiveCache<DnnlConv3D> forward;
  // oneDNN refused the shapes Prepare knew, which every run has: the generic path runs.
  bool dnnl_refused = false;
};

Result<std::unique_ptr<DnnlConv3D>> MakeDnnlConv3D(const WindowSpec& a, std::span<const int64_t> in,
                                                   std::span<const int64_t> filter) {
  ConvGeom g;
  KILN_RETURN_IF_ERROR(MakeGeom(ConvKind::kConv3D, a, in, filter, {}, &g));
  if (g.groups != 1) return Unimplemented("grouped Conv3D");
  auto c = std::make_unique<DnnlConv3D>();
  c->in_dims.assign(in.begin(), in.end());
  c->filter_dims.assign(filter.begin(), filter.end());
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const WindowDim &z = g.d[0], &h = g.d[1], &w = g.d[2];
  c->src_md = dnnl::memory::desc({g.batch, g.in_c, z.in, h.in, w.in}, dt::f32, tag::ndhwc);
  c->dst_md = dnnl::memory::desc({g.batch, g.out_c, z.out, h.out, w.out}, dt::f32, tag::ndhwc);
  const dnnl::memory::dims wdims = {g.out_c, g.in_c, z.k, h.k, w.k};
  c->user_weights_md = dnnl::memory::desc(wdims, dt::f32, tag::dhwio);  // TF's [kd, kh, kw, i, o]
  const double macs = static_cast<double>(g.OutPixels()) * static_cast<double>(g.out_c) *
                      static_cast<double>(g.Taps()) * static_cast<double>(g.in_c);
  KILN_RETURN_IF_ERROR(onednn::DnnlCall("Conv3D setup", [&] {
    const onednn::BuildThreads build(onednn::ThreadsWorth(macs));
    c->threads = build.threads();
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, c->src_md,
        dnnl::memory::desc(wdims, dt::f32, tag::any), c->dst_md, {z.stride, h.stride, w.stride},
        {z.dilation - 1, h.dilation - 1, w.dilation - 1},  // oneDNN: 0 is dense
        {z.pad_before, h.pad_before, w.pad_before}, {z.pad_after, h.pad_after, w.pad_after});
    const dnnl::convolution_forward::primitive_desc pd(desc, attr, onednn::Engine());
    c->weights_md = pd.weights_desc();
    c->scratch_md = pd.scratchpad_desc();
    c->primitive = dnnl::convolution_forward(pd);
    c->weights_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(
        onednn::Engine(), c->user_weights_md, onednn::Engine(), c->weights_md));
  }));
  return c;
}

// The Conv3D through oneDNN; false in *ran where oneDNN does not take the shapes (the generic
// path runs then).
Status DnnlConv3DForward(const KernelContext& ctx, const ConvCpuState& st,
                         std::span<const int64_t> in, std::span<const int64_t> filter, Tensor* out,
                         bool* ran) {
  *ran = false;
  auto matches = [&](const DnnlConv3D& c) {
    return std::equal(c.in_dims.begin(), c.in_dims.end(), in.begin(), in.end()) &&
           std::equal(c.filter_dims.begin(), c.filter_dims.end(), filter.begin(), filter.end());
  };
  Result<const DnnlConv3D*> found =
      st.forward.Get(matches, [&] { return MakeDnnlConv3D(st.attrs, in, filter); });
  if (!found.ok()) return OkStatus();
  const DnnlConv3D& c = **found;
  const Tensor& f = ctx.input(1);
  std::shared_ptr<void> weights;
  {
    std::lock_guard lock(c.mu);
    if (c.packed != nullptr && c.packed_from.lock() == f.buffer()) weights = c.packed;
  }
  if (weights == nullptr) {
    KILN_RETURN_IF_ERROR(onednn::DnnlCall("Conv3D filter packing", [&] {
      weights =
          onednn::PackWeights(c.weights_reorder, c.user_weights_md, f.raw_data(), c.weights_md);
    }));
    std::lock_guard lock(c.mu);
    c.packed = weights;
    c.packed_from = f.buffer();
  }
  const onednn::MemArg src{DNNL_ARG_SRC, &c.src_md, ctx.input(0).raw_data()};
  const onednn::MemArg wts{DNNL_ARG_WEIGHTS, &c.weights_md, weights.get()};
  const onednn::MemArg dst{DNNL_ARG_DST, &c.dst_md, out->raw_data()};
  KILN_RETURN_IF_ERROR(
      onednn::ExecuteBound(ctx, c.primitive, c.scratch_md, c.threads, {src, wts, dst}));
  *ran = true;
  return OkStatus();
}

// About this many sub-batches: enough for the pool's threads to even out, few enough that each
// primitive call has real work.
constexpr int64_t kBwdSubBatches = 16;

Result<std::unique_ptr<DnnlBwdConv>> MakeDnnlBwdConv(bool filter_backprop, const WindowSpec& a,
                                                     std::span<const int64_t> in,
                                                     std::span<const int64_t> filter) {
  ConvGeom g;
  KILN_RETURN_IF_ERROR(
      MakeGeom(filter_backprop ? ConvKind::kBackpropFilter : ConvKind::kBackpropInput, a, in,
               filter, {}, &g));
  if (g.batch == 0 || g.in_c == 0 || g.out_c == 0 || g.Taps() == 0 || g.OutPixels() == 0)
    return InvalidArgument("empty convolution");
  auto c = std::make_unique<DnnlBwdConv>();
  c->in_dims.assign(in.begin(), in.end());
  c->filter_dims.assign(filter.begin(), filter.end());
  c->sub = (g.batch + kBwdSubBatches - 1) / kBwdSubBatches;
  c->chunks = (g.batch + c->sub - 1) / c->sub;
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const WindowDim& h = g.d[1];
  const WindowDim& w = g.d[2];
  c->user_weights_md = dnnl::memory::desc({g.out_c, g.in_c, h.k, w.k}, dt::f32, tag::hwio);
  KILN_RETURN_IF_ERROR(onednn::DnnlCall("backward convolution setup", [&] {
    onednn::BuildThreads one_thread(1);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::memory::desc w_any({g.out_c, g.in_c, h.k, w.k}, dt::f32, tag::any);
    const dnnl::memory::dims strides = {h.stride, w.stride};
    const dnnl::memory::dims dilation = {h.dilation - 1, w.dilation - 1};
    const dnnl::memory::dims pad_l = {h.pad_before, w.pad_before};
    const dnnl::memory::dims pad_r = {h.pad_after, w.pad_after};
    auto make = [&](int64_t n, DnnlBwdConv::Prim* p) {
      p->src_md = dnnl::memory::desc({n, g.in_c, h.in, w.in}, dt::f32, tag::nhwc);
      p->dst_md = dnnl::memory::desc({n, g.out_c, h.out, w.out}, dt::f32, tag::nhwc);
      const auto algo = dnnl::algorithm::convolution_direct;
      dnnl::convolution_forward::primitive_desc hint(
          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algo, p->src_md, w_any,
                                          p->dst_md, strides, dilation, pad_l, pad_r),
          onednn::Engine());
      if (filter_backprop) {
        dnnl::convolution_backward_weights::primitive_desc pd(
            dnnl::convolution_backward_weights::desc(algo, p->src_md, w_any, p->dst_md, strides,
                                                     dilation, pad_l, pad_r),
            attr, onednn::Engine(), hint);
        p->weights_md = pd.diff_weights_desc();
        p->scratch_md = pd.scratchpad_desc();
        p->primitive = dnnl::convolution_backward_weights(pd);
      } else {
        dnnl::convolution_backward_data::primitive_desc pd(
            dnnl::convolution_backward_data::desc(algo, p->src_md, w_any, p->dst_md, strides,
                                                  dilation, pad_l, pad_r),
            attr, onednn::Engine(), hint);
        p->weights_md = pd.weights_desc();
        p->scratch_md = pd.scratchpad_desc();
        p->primitive = dnnl::convolution_backward_data(pd);
      }
    };
    make(c->sub, &c->full);
    const int64_t last = g.batch - (c->chunks - 1) * c->sub;
    if (last != c->sub) {
      make(last, &c->tail);
      // Both must agree on the weights' layout: one reorder serves every sub-batch.
      if (c->tail.weights_md != c->full.weights_md) throw dnnl::error(dnnl_unimplemented, "layout");
    }
    c->weights_plain = c->full.weights_md == c->user_weights_md;
    if (!c->weights_plain) {
      c->reorder =
          filter_backprop
              ? dnnl::reorder(dnnl::reorder::primitive_desc(onednn::Engine(), c->full.weights_md,
                                                            onednn::Engine(), c->user_weights_md))
              : dnnl::reorder(dnnl::reorder::primitive_desc(onednn::Engine(), c->user_weights_md,
                                                            onednn::Engine(), c->full.weights_md));
    }
  }));
  return c;
}

// The primitive for these shapes: the one made at prepare time, else one made now and kept.
Result<const DnnlBwdConv*> FindDnnlBwdConv(const ConvCpuState& st, bool filter_backprop,
                                           std::span<const int64_t> in,
                                           std::span<const int64_t> filter) {
  auto matches = [&](const DnnlBwdConv& c) {
    return std::equal(c.in_dims.begin(), c.in_dims.end(), in.begin(), in.end()) &&
           std::equal(c.filter_dims.begin(), c.filter_dims.end(), filter.begin(), filter.end());
  };
  return st.primitives.Get(matches,
                           [&] { return MakeDnnlBwdConv(filter_backprop, st.attrs, in, filter); });
}

// Runs chunk(c, worker) for every sub-batch c; each pool thread takes the next one free.
template <typename F>
void ForSubBatches(const KernelContext& ctx, int64_t chunks, int64_t workers, F chunk) {
  std::atomic<int64_t> next{0};
  ctx.threads().ParallelFor(workers, 1, [&](int64_t begin, int64_t end) {
    for (int64_t w = begin; w < end; ++w) {
      for (int64_t c = next.fetch_add(1); c < chunks; c = next.fetch_add(1)) chunk(c, w);
    }
  });
}

// Runs `c`'s backward primitive on every sub-batch, each worker with a scratch area of its own;
// args(p, b0, chunk) binds the call's three memories (sub-batch `chunk` starts at image b0).
// Returns the first error any worker met.
template <typename Args>
Status RunBwdSubBatches(const KernelContext& ctx, const DnnlBwdConv& c, const char* what,
                        Args args) {
  const int64_t workers = std::min<int64_t>(ctx.threads().num_threads(), c.chunks);
  const size_t scratch = std::max(c.full.scratch_md.get_size(), c.tail.scratch_md.get_size());
  KILN_ASSIGN_OR_RETURN(void* smem, ctx.AllocateTemp(std::max<size_t>(1, scratch * workers)));
  std::vector<Status> errors(workers);
  ForSubBatches(ctx, c.chunks, workers, [&](int64_t chunk, int64_t w) {
    const DnnlBwdConv::Prim& p = c.For(chunk);
    Status s = onednn::DnnlCall(what, [&] {
      const auto [m0, m1, m2] = args(p, chunk * c.sub, chunk);
      Status e = onednn::ExecuteOnThread(
          p.primitive, p.scratch_md, static_cast<char*>(smem) + w * scratch,
          {{m0.first, &m0.second}, {m1.first, &m1.second}, {m2.first, &m2.second}});
      if (!e.ok()) throw dnnl::error(dnnl_runtime_error, what);
    });
    if (!s.ok() && errors[w].ok()) errors[w] = s;
  });
  for (const Status& s : errors)
    if (!s.ok()) return ctx.Error(s.message());
  return OkStatus();
}

using BwdArg = std::pair<int, dnnl::memory>;

// dx from the filter and dy (shapes checked by the caller).
Status DnnlBackpropInput(const KernelContext& ctx, const DnnlBwdConv& c, const ConvGeom& g,
                         const float* filter, const float* dy, float* dx) {
  const void* weights = filter;
  if (!c.weights_plain) {
    KILN_ASSIGN_OR_RETURN(void* packed, ctx.AllocateTemp(c.full.weights_md.get_size()));
    KILN_RETURN_IF_ERROR(onednn::DnnlCall("weights reorder", [&] {
      dnnl::memory user(c.user_weights_md, onednn::Engine(), const_cast<float*>(filter));
      dnnl::memory mem(c.full.weights_md, onednn::Engine(), packed);
      c.reorder.execute(onednn::ThreadStream(), user, mem);
    }));
    weights = packed;
  }
  const int64_t in_image = g.d[1].in * g.d[2].in * g.in_c;
  const int64_t out_image = g.d[1].out * g.d[2].out * g.out_c;
  return RunBwdSubBatches(
      ctx, c, "backward-data convolution",
      [&](const DnnlBwdConv::Prim& p, int64_t b0, int64_t /*chunk*/) {
        const dnnl::engine& eng = onednn::Engine();
        return std::array<BwdArg, 3>{
            BwdArg{DNNL_ARG_DIFF_DST,
                   dnnl::memory(p.dst_md, eng, const_cast<float*>(dy + b0 * out_image))},
            BwdArg{DNNL_ARG_WEIGHTS, dnnl::memory(p.weights_md, eng, const_cast<void*>(weights))},
            BwdArg{DNNL_ARG_DIFF_SRC, dnnl::memory(p.src_md, eng, dx + b0 * in_image)}};
      });
}

// dx of a 2-D float32 convolution with few input channels (a network's first layer): oneDNN's
// backward-data kernels vectorise over input channels and crawl with one. Instead, per
// sub-batch, cols = dy W^T (one sgemm: [pixels, out_c] x [out_c, taps * in_c]) and each image's
// dx sums its columns back (col2im) in a fixed order.
Status ColBackpropInput(const KernelContext& ctx, const ConvGeom& g, const float* filter,
                        const float* dy, float* dx) {
  const int64_t k = g.Taps() * g.in_c;
  const int64_t out_px = g.d[1].out * g.d[2].out, in_image = g.d[1].in * g.d[2].in * g.in_c;
  const int64_t sub = (g.batch + kBwdSubBatches - 1) / kBwdSubBatches;
  const int64_t chunks = (g.batch + sub - 1) / sub;
  const int64_t workers = std::min<int64_t>(ctx.threads().num_threads(), chunks);
  const int64_t slot = sub * out_px * k;
  KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(float) * slot * workers));
  std::vector<Status> errors(workers);
  ForSubBatches(ctx, chunks, workers, [&](int64_t chunk, int64_t w) {
    const int64_t b0 = chunk * sub, nb = std::min(sub, g.batch - b0);
    float* cols = static_cast<float*>(mem) + w * slot;
    {
      // On this thread only, so the product does not depend on the thread count.
      onednn::BuildThreads one_thread(1);
      Status s = onednn::Sgemm(false, true, nb * out_px, k, g.out_c, dy + b0 * out_px * g.out_c,
                               g.out_c, filter, g.out_c, 0.0f, cols, k);
      if (!s.ok()) {
        if (errors[w].ok()) errors[w] = s;
        return;
      }
    }
    for (int64_t b = 0; b < nb; ++b) {
      float* img = dx + (b0 + b) * in_image;
      std::fill(img, img + in_image, 0.0f);
      for (int64_t p = 0; p < out_px; ++p) {
        const int64_t oy = p / g.d[2].out, ox = p % g.d[2].out;
        const float* row = cols + (b * out_px + p) * k;
        for (int64_t ky = 0; ky < g.d[1].k; ++ky) {
          const int64_t iy = InCoord(g.d[1], oy, ky);
          if (iy < 0) continue;
          for (int64_t kx = 0; kx < g.d[2].k; ++kx) {
            const int64_t ix = InCoord(g.d[2], ox, kx);
            if (ix < 0) continue;
            float* dst = img + (iy * g.d[2].in + ix) * g.in_c;
            const float* src = row + (ky * g.d[2].k + kx) * g.in_c;
            for (int64_t c = 0; c < g.in_c; ++c) dst[c] += src[c];
          }
        }
      }
    }
  });
  for (const Status& s : errors)
    if (!s.ok()) return ctx.Error(s.message());
  return OkStatus();
}

// df from the input and dy: one partial per sub-batch, summed in sub-batch order.
Status DnnlBackpropFilter(const KernelContext& ctx, const DnnlBwdConv& c, const ConvGeom& g,
                          const float* in, const float* dy, float* df) {
  const int64_t fsize = static_cast<int64_t>(c.full.weights_md.get_size() / sizeof(float));
  KILN_ASSIGN_OR_RETURN(void* pmem, ctx.AllocateTemp(sizeof(float) * fsize * c.chunks));
  auto* partials = static_cast<float*>(pmem);
  const int64_t in_image = g.d[1].in * g.d[2].in * g.in_c;
  const int64_t out_image = g.d[1].out * g.d[2].out * g.out_c;
  KILN_RETURN_IF_ERROR(RunBwdSubBatches(
      ctx, c, "backward-weights convolution",
      [&](const DnnlBwdConv::Prim& p, int64_t b0, int64_t chunk) {
        const dnnl::engine& eng = onednn::Engine();
        return std::array<BwdArg, 3>{
            BwdArg{DNNL_ARG_SRC,
                   dnnl::memory(p.src_md, eng, const_cast<float*>(in + b0 * in_image))},
            BwdArg{DNNL_ARG_DIFF_DST,
                   dnnl::memory(p.dst_md, eng, const_cast<float*>(dy + b0 * out_image))},
            BwdArg{DNNL_ARG_DIFF_WEIGHTS,
                   dnnl::memory(p.weights_md, eng, partials + chunk * fsize)}};
      }));
  // The sum of the partials, element by element in sub-batch order (the kernel's layout may
  // pad, so the whole buffer is summed), straight into df when the layout is TF's.
  float* sum = c.weights_plain ? df : partials;
  ctx.threads().ParallelFor(fsize, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      float acc = partials[i];
      for (int64_t k = 1; k < c.chunks; ++k) acc += partials[k * fsize + i];
      sum[i] = acc;
    }
  });
  if (!c.weights_plain) {
    KILN_RETURN_IF_ERROR(onednn::DnnlCall("weights reorder", [&] {
      dnnl::memory mem(c.full.weights_md, onednn::Engine(), partials);
      dnnl::memory user(c.user_weights_md, onednn::Engine(), df);
      c.reorder.execute(onednn::ThreadStream(), mem, user);
    }));
  }
  return OkStatus();
}

// The CPU kernel's state of a 2-D float32 backprop whose sizes Prepare knew: its oneDNN
// primitive now. A convolution oneDNN cannot take (or an empty one) runs the generic path.
template <ConvKind kKind>
Status CreateConvNdCpuState(PrepareContext& ctx) {
  ConvCpuState* st = cpu::ReplaceWithCpuState<ConvCpuState>(ctx);
  if (!UsesDnnl(*st) || st->prepare_in.empty()) return OkStatus();
  if (kKind == ConvKind::kBackpropInput && st->prepare_in.back() <= kColBackpropMaxInChannels)
    return OkStatus();  // ColBackpropInput runs
  auto c = MakeDnnlBwdConv(kKind == ConvKind::kBackpropFilter, st->attrs, st->prepare_in,
                           st->prepare_filter);
  if (c.ok()) {
    st->primitives.SetPrepared(std::move(c).value());
  } else {
    st->dnnl_refused = true;
  }
  return OkStatus();
}

template <ConvKind kKind, typename List>
Status ComputeConvNd(const KernelContext& ctx) {
  const auto& st = ctx.state<ConvState>();
  const int spatial = st.attrs.spatial, rank = spatial + 2;
  const ConvIo io = IoOf(kKind);
  auto dims_of = [](const Tensor& t) {
    return std::vector<int64_t>(t.shape().dims().begin(), t.shape().dims().end());
  };
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (i == io.sizes) continue;
    if (ctx.input(i).rank() != rank) {
      return ctx.Error("input ", i, " must have rank ", rank, ", got shape ",
                       ctx.input(i).shape().ToString());
    }
  }
  std::vector<int64_t> in, filter, dy;
  if (io.input >= 0) in = dims_of(ctx.input(io.input));
  if (io.filter >= 0) filter = dims_of(ctx.input(io.filter));
  if (io.dy >= 0) dy = dims_of(ctx.input(io.dy));
  if (io.sizes >= 0) {
    const Tensor& sizes = ctx.input(io.sizes);
    if (sizes.rank() != 1) {
      return ctx.Error("input ", io.sizes, " (sizes) must be a vector, got shape ",
                       sizes.shape().ToString());
    }
    auto v = SizesFromValues(kKind, spatial, IndexValues(sizes), filter, dy);
    if (!v.ok()) return Wrap(ctx, v.status());
    (io.filter >= 0 ? in : filter) = *v;
  }
  ConvGeom g;
  Status s = MakeGeom(kKind, st.attrs, in, filter, dy, &g);
  if (!s.ok()) return Wrap(ctx, s);
  std::vector<int64_t> out_dims;
  if (kKind == ConvKind::kConv3D) {
    out_dims = {g.batch};
    for (int i = 3 - spatial; i < 3; ++i) out_dims.push_back(g.d[i].out);
    out_dims.push_back(g.out_c);
  } else {
    out_dims = io.filter >= 0 ? in : filter;
  }
  KILN_ASSIGN_OR_RETURN(Shape out_shape, Shape::FromDims(out_dims));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  if constexpr (kKind == ConvKind::kConv3D) {
    if (Conv3DUsesDnnl(st) && out->NumElements() > 0 && g.Taps() > 0 && g.in_c > 0) {
      std::optional<ConvCpuState> local;
      bool ran = false;
      KILN_RETURN_IF_ERROR(
          DnnlConv3DForward(ctx, cpu::CpuStateOf(ctx, &local), in, filter, out, &ran));
      if (ran) return OkStatus();
    }
  }
  if constexpr (kKind == ConvKind::kBackpropInput || kKind == ConvKind::kBackpropFilter) {
    constexpr bool kFilter = kKind == ConvKind::kBackpropFilter;
    if (UsesDnnl(st) && g.batch > 0 && g.in_c > 0 && g.out_c > 0 && g.Taps() > 0 &&
        g.OutPixels() > 0) {
      if (!kFilter && g.in_c <= kColBackpropMaxInChannels)
        return ColBackpropInput(ctx, g, ctx.input(io.filter).data<float>(),
                                ctx.input(io.dy).data<float>(), out->data<float>());
      // Shapes oneDNN cannot take fall through to the generic path.
      std::optional<ConvCpuState> local;
      const ConvCpuState& cpu_state = cpu::CpuStateOf(ctx, &local);
      Result<const DnnlBwdConv*> c =
          cpu_state.dnnl_refused ? Result<const DnnlBwdConv*>(Unimplemented("refused at prepare"))
                                 : FindDnnlBwdConv(cpu_state, kFilter, in, filter);
      if (c.ok()) {
        const float* d = ctx.input(io.dy).data<float>();
        if constexpr (kFilter) {
          return DnnlBackpropFilter(ctx, **c, g, ctx.input(io.input).data<float>(), d,
                                    out->data<float>());
        } else {
          return DnnlBackpropInput(ctx, **c, g, ctx.input(io.filter).data<float>(), d,
                                   out->data<float>());
        }
      }
    }
  }
  return Dispatch<List>(st.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using A = Acc<C>;
    auto acc_in = [&](int i) -> Result<const A*> {
      const Tensor& t = ctx.input(i);
      return AccCopy<C>(ctx, ComputeData<T>(t), t.NumElements());
    };
    AccOutput<C> result;
    KILN_RETURN_IF_ERROR(result.Init(ctx, MutableComputeData<T>(out), out->NumElements()));
    const A* x = nullptr;
    const A* f = nullptr;
    const A* d = nullptr;
    if (io.input >= 0) {
      KILN_ASSIGN_OR_RETURN(x, acc_in(io.input));
    }
    if (io.filter >= 0) {
      KILN_ASSIGN_OR_RETURN(f, acc_in(io.filter));
    }
    if (io.dy >= 0) {
      KILN_ASSIGN_OR_RETURN(d, acc_in(io.dy));
    }
    switch (kKind) {
      case ConvKind::kConv3D:
        KILN_RETURN_IF_ERROR(ConvForward<A>(ctx, g, x, f, result.data()));
        break;
      case ConvKind::kBackpropInput:
        KILN_RETURN_IF_ERROR(ConvBackpropInput<A>(ctx, g, f, d, result.data()));
        break;
      case ConvKind::kBackpropFilter:
        KILN_RETURN_IF_ERROR(ConvBackpropFilter<A>(ctx, g, x, d, result.data()));
        break;
      case ConvKind::kDepthwiseInput:
        DepthwiseBackpropInput<A>(ctx, g, f, d, result.data());
        break;
      case ConvKind::kDepthwiseFilter:
        DepthwiseBackpropFilter<A>(ctx, g, x, d, result.data());
        break;
    }
    result.Finish();
    return OkStatus();
  });
}

constexpr KernelEntry kCpu[] = {
    {"Conv3D", ComputeConvNd<ConvKind::kConv3D, FloatTypes>, 0, 0, nullptr,
     CreateConvNdCpuState<ConvKind::kConv3D>},
    {"Conv2DBackpropInput", ComputeConvNd<ConvKind::kBackpropInput, ConvBackpropInputTypes>, 0, 0,
     nullptr, CreateConvNdCpuState<ConvKind::kBackpropInput>},
    {"Conv3DBackpropInputV2", ComputeConvNd<ConvKind::kBackpropInput, FloatTypes>},
    {"Conv2DBackpropFilter", ComputeConvNd<ConvKind::kBackpropFilter, FloatTypes>, 0, 0, nullptr,
     CreateConvNdCpuState<ConvKind::kBackpropFilter>},
    {"Conv3DBackpropFilterV2", ComputeConvNd<ConvKind::kBackpropFilter, FloatTypes>},
    {"DepthwiseConv2dNativeBackpropInput", ComputeConvNd<ConvKind::kDepthwiseInput, FloatTypes>},
    {"DepthwiseConv2dNativeBackpropFilter", ComputeConvNd<ConvKind::kDepthwiseFilter, FloatTypes>},
};

}  // namespace

std::span<const KernelEntry> ConvNdCpuKernels() { return kCpu; }

}  // namespace kiln::exec
