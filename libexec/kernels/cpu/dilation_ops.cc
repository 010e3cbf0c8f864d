// The CPU kernels of Dilation2D, Dilation2DBackpropInput and Dilation2DBackpropFilter
// (kernels/dilation_ops.cc). Sums in T, in TF's order.
#include "kernels/dilation_ops.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using dilation::Dil;
using dilation::DilationDims;
using dilation::DilationState;

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

constexpr KernelEntry kCpu[] = {
    {"Dilation2D", ComputeDilation<Dil::kForward>},
    {"Dilation2DBackpropInput", ComputeDilation<Dil::kInput>},
    {"Dilation2DBackpropFilter", ComputeDilation<Dil::kFilter>},
};

}  // namespace

std::span<const KernelEntry> DilationCpuKernels() { return kCpu; }

}  // namespace kiln::exec
