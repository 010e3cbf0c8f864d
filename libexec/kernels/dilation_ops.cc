// Grayscale morphological dilation (NHWC) and its gradients, as TF's CPU kernels:
//   Dilation2D(input [b, h, w, d], filter [fh, fw, d]): out(b, y, x, c) = max over the taps
//     (i, j) inside the image of input(b, y*sr + i*rr - pad_top, x*sc + j*rc - pad_left, c) +
//     filter(i, j, c); lowest() where no tap is inside.
//   Dilation2DBackpropInput / Dilation2DBackpropFilter(input, filter, out_backprop): each
//     out_backprop value goes to the input pixel / filter tap of its window's first maximum
//     (TF's defaults where the window has none: the window's clamped start, tap (0, 0)).
// strides and rates are [1, r, c, 1]; padding SAME or VALID (TF's windowed output size with
// the effective filter size (f - 1) * rate + 1). Sums in T, in TF's order.
#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

enum class Dil { kForward, kInput, kFilter };

struct DilationState : OpState {
  DType t = DType::kFloat;
  WindowPadding padding = WindowPadding::kValid;
  int64_t stride_r = 1, stride_c = 1, rate_r = 1, rate_c = 1;
};

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

// The output's dims [rows, cols] of an input and filter of known spatial sizes (-1 unknown).
Status DilationDims(const DilationState& st, int64_t in_r, int64_t in_c, int64_t f_r, int64_t f_c,
                    WindowDim* rows, WindowDim* cols) {
  *rows = WindowDim{in_r, std::max<int64_t>(f_r, 1), st.stride_r, st.rate_r};
  *cols = WindowDim{in_c, std::max<int64_t>(f_c, 1), st.stride_c, st.rate_c};
  if (f_r < 0) rows->in = -1;
  if (f_c < 0) cols->in = -1;
  KILN_RETURN_IF_ERROR(ComputeWindowDim(st.padding, rows));
  return ComputeWindowDim(st.padding, cols);
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

// input + filter in T; integers wrap instead of overflowing.
template <typename C>
inline C AddT(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

struct Geom {
  int64_t batch, in_r, in_c, depth, f_r, f_c, out_r, out_c, pad_top, pad_left;
};

// The window of output (b, y, x, channel d): its maximum and where it was found, TF's defaults
// for the places where no tap is inside the image.
template <typename C>
struct WindowMax {
  C value;
  int64_t in_r, in_c, f_r, f_c;
};

template <typename C>
WindowMax<C> FindMax(const DilationState& st, const Geom& g, const C* in, const C* filter,
                     int64_t b, int64_t y, int64_t x, int64_t d) {
  const int64_t r0 = y * st.stride_r - g.pad_top, c0 = x * st.stride_c - g.pad_left;
  WindowMax<C> m{std::numeric_limits<C>::lowest(), std::max<int64_t>(r0, 0),
                 std::max<int64_t>(c0, 0), 0, 0};
  for (int64_t i = 0; i < g.f_r; ++i) {
    const int64_t r = r0 + i * st.rate_r;
    if (r < 0 || r >= g.in_r) continue;
    for (int64_t j = 0; j < g.f_c; ++j) {
      const int64_t c = c0 + j * st.rate_c;
      if (c < 0 || c >= g.in_c) continue;
      const C v = AddT(in[((b * g.in_r + r) * g.in_c + c) * g.depth + d],
                       filter[(i * g.f_c + j) * g.depth + d]);
      if (v > m.value) m = {v, r, c, i, j};
    }
  }
  return m;
}

template <Dil K>
Status ComputeDilation(const KernelContext& ctx) {
  const auto& st = ctx.state<DilationState>();
  const Tensor& input = ctx.input(0);
  const Tensor& filter = ctx.input(1);
  if (input.rank() != 4) {
    return ctx.Error("input 'input' must be 4-dimensional, got shape ", input.shape().ToString());
  }
  if (filter.rank() != 3) {
    return ctx.Error("input 'filter' must be 3-dimensional, got shape ", filter.shape().ToString());
  }
  if (filter.dim(2) != input.dim(3)) {
    return ctx.Error("inputs 'input' ", input.shape().ToString(), " and 'filter' ",
                     filter.shape().ToString(), " must have the same depth");
  }
  WindowDim rows, cols;
  Status s =
      DilationDims(st, input.dim(1), input.dim(2), filter.dim(0), filter.dim(1), &rows, &cols);
  if (!s.ok()) return Wrap(ctx, s);
  const Geom g{input.dim(0),  input.dim(1), input.dim(2), input.dim(3),    filter.dim(0),
               filter.dim(1), rows.out,     cols.out,     rows.pad_before, cols.pad_before};
  const Shape out_shape{g.batch, g.out_r, g.out_c, g.depth};
  if (K != Dil::kForward && ctx.input(2).shape() != out_shape) {
    return ctx.Error("input 'out_backprop' has shape ", ctx.input(2).shape().ToString(),
                     ", expected ", out_shape.ToString());
  }
  const Shape result = K == Dil::kForward ? out_shape
                       : K == Dil::kInput ? input.shape()
                                          : filter.shape();
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, result));
  if (out->NumElements() == 0) return OkStatus();
  return Dispatch<RealTypes>(st.t, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* in = ComputeData<T>(input);
    const C* f = ComputeData<T>(filter);
    C* o = MutableComputeData<T>(out);
    if constexpr (K == Dil::kForward) {
      ctx.threads().ParallelFor(
          g.batch * g.out_r, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, g.out_c * g.depth)),
          [&](int64_t b0, int64_t b1) {
            for (int64_t row = b0; row < b1; ++row) {
              const int64_t b = row / g.out_r, y = row % g.out_r;
              for (int64_t x = 0; x < g.out_c; ++x)
                for (int64_t d = 0; d < g.depth; ++d)
                  o[(row * g.out_c + x) * g.depth + d] = FindMax(st, g, in, f, b, y, x, d).value;
            }
          });
    } else {
      // Channels are independent: each thread takes whole channels and walks the outputs in
      // TF's order, so every sum runs in one order.
      const C* grad = ComputeData<T>(ctx.input(2));
      std::fill_n(o, out->NumElements(), C(0));
      ctx.threads().ParallelFor(g.depth, 1, [&](int64_t d0, int64_t d1) {
        for (int64_t d = d0; d < d1; ++d) {
          for (int64_t b = 0; b < g.batch; ++b) {
            for (int64_t y = 0; y < g.out_r; ++y) {
              for (int64_t x = 0; x < g.out_c; ++x) {
                const WindowMax<C> m = FindMax(st, g, in, f, b, y, x, d);
                const C v = grad[((b * g.out_r + y) * g.out_c + x) * g.depth + d];
                if constexpr (K == Dil::kInput) {
                  if (m.in_r < g.in_r && m.in_c < g.in_c) {
                    C& dst = o[((b * g.in_r + m.in_r) * g.in_c + m.in_c) * g.depth + d];
                    dst = AddT(dst, v);
                  }
                } else {
                  C& dst = o[(m.f_r * g.f_c + m.f_c) * g.depth + d];
                  dst = AddT(dst, v);
                }
              }
            }
          }
        }
      });
    }
    return OkStatus();
  });
}

constexpr OpDefinition kDefs[] = {
    {"Dilation2D", "output", kOpFreshOutputs, PrepareDilation<Dil::kForward>},
    {"Dilation2DBackpropInput", "in_backprop", kOpFreshOutputs, PrepareDilation<Dil::kInput>},
    {"Dilation2DBackpropFilter", "filter_backprop", kOpFreshOutputs, PrepareDilation<Dil::kFilter>},
};

constexpr KernelEntry kCpu[] = {
    {"Dilation2D", ComputeDilation<Dil::kForward>},
    {"Dilation2DBackpropInput", ComputeDilation<Dil::kInput>},
    {"Dilation2DBackpropFilter", ComputeDilation<Dil::kFilter>},
};

}  // namespace

std::span<const OpDefinition> DilationOpDefs() { return kDefs; }
std::span<const KernelEntry> DilationCpuKernels() { return kCpu; }

}  // namespace kiln::exec
