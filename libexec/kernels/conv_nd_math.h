// The geometry of the channels-last convolutions of conv_nd_ops.cc and conv_generic_ops.cc over
// three spatial dims (2-D ops have a depth of 1): the sizes of one convolution and where an
// output pixel's taps fall. Their math on the CPU is in kernels/cpu/conv_nd_math.h.
#pragma once

#include <array>
#include <cstdint>

#include "kernels/window_util.h"

namespace kiln::exec::conv_nd {

// Sizes of one convolution over [batch, d0, d1, d2, channels] (2-D: d0 is 1).
struct ConvGeom {
  int64_t batch = 0, in_c = 0, out_c = 0;
  int64_t mult = 1;    // depthwise: out_c = in_c * mult
  int64_t groups = 1;  // grouped Conv3D: filter in-channels = in_c / groups
  std::array<WindowDim, 3> d;
  int64_t InPixels() const { return batch * d[0].in * d[1].in * d[2].in; }
  int64_t OutPixels() const { return batch * d[0].out * d[1].out * d[2].out; }
  int64_t Taps() const { return d[0].k * d[1].k * d[2].k; }
};

// Position of output pixel p: batch and the three output coordinates.
struct Pos {
  int64_t b, z, y, x;
};
inline Pos OutPos(const ConvGeom& g, int64_t p) {
  Pos r;
  r.x = p % g.d[2].out;
  p /= g.d[2].out;
  r.y = p % g.d[1].out;
  p /= g.d[1].out;
  r.z = p % g.d[0].out;
  r.b = p / g.d[0].out;
  return r;
}
inline Pos InPos(const ConvGeom& g, int64_t p) {
  Pos r;
  r.x = p % g.d[2].in;
  p /= g.d[2].in;
  r.y = p % g.d[1].in;
  p /= g.d[1].in;
  r.z = p % g.d[0].in;
  r.b = p / g.d[0].in;
  return r;
}

// The input coordinate tap k of output coordinate o reads along dim w, or -1 when it falls in
// the padding.
inline int64_t InCoord(const WindowDim& w, int64_t o, int64_t k) {
  const int64_t i = o * w.stride - w.pad_before + k * w.dilation;
  return i >= 0 && i < w.in ? i : -1;
}
// The output coordinate whose tap k reads input coordinate i, or -1 when none does.
inline int64_t OutCoord(const WindowDim& w, int64_t i, int64_t k) {
  const int64_t n = i + w.pad_before - k * w.dilation;
  if (n < 0 || n % w.stride != 0) return -1;
  const int64_t o = n / w.stride;
  return o < w.out ? o : -1;
}

}  // namespace kiln::exec::conv_nd
