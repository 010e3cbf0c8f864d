// Helpers for the plain-loop references of the nn, image and signal cases: any dtype read as
// double, tensors built from doubles, and TensorFlow's window geometry written out from its
// definition (ceil divisions), independent of the kernels' code.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_tester.h"

namespace kiln::testing {

inline double ValueAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat:
      return t.data<float>()[i];
    case DType::kDouble:
      return t.data<double>()[i];
    case DType::kHalf:
      return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(t.data<Half>()[i].bits));
    case DType::kBFloat16:
      return static_cast<float>(
          Eigen::numext::bit_cast<Eigen::bfloat16>(t.data<BFloat16>()[i].bits));
    case DType::kInt8:
      return t.data<int8_t>()[i];
    case DType::kInt16:
      return t.data<int16_t>()[i];
    case DType::kInt32:
      return t.data<int32_t>()[i];
    case DType::kInt64:
      return static_cast<double>(t.data<int64_t>()[i]);
    case DType::kUInt8:
      return t.data<uint8_t>()[i];
    case DType::kUInt16:
      return t.data<uint16_t>()[i];
    case DType::kUInt32:
      return t.data<uint32_t>()[i];
    case DType::kUInt64:
      return static_cast<double>(t.data<uint64_t>()[i]);
    default:
      FAIL("ValueAt: no double view of ", DTypeShortName(t.dtype()));
      return 0;
  }
}

inline std::vector<double> Doubles(const Tensor& t) {
  std::vector<double> v(t.NumElements());
  for (int64_t i = 0; i < t.NumElements(); ++i) v[i] = ValueAt(t, i);
  return v;
}

// A tensor of `dtype` holding `v` (rounded to nearest for integers, saturated to the type).
inline Tensor FromDoubles(DType dtype, const Shape& shape, const std::vector<double>& v) {
  Tensor t(dtype, shape);
  REQUIRE(static_cast<int64_t>(v.size()) == shape.num_elements());
  auto ints = [&](auto* p) {
    using I = std::remove_pointer_t<decltype(p)>;
    for (size_t i = 0; i < v.size(); ++i) {
      const double r = std::nearbyint(v[i]);
      p[i] = static_cast<I>(
          std::clamp<double>(r, static_cast<double>(std::numeric_limits<I>::lowest()),
                             static_cast<double>(std::numeric_limits<I>::max())));
    }
  };
  for (size_t i = 0; i < v.size(); ++i) {
    switch (dtype) {
      case DType::kFloat:
        t.data<float>()[i] = static_cast<float>(v[i]);
        break;
      case DType::kDouble:
        t.data<double>()[i] = v[i];
        break;
      case DType::kHalf:
        t.data<Half>()[i].bits =
            Eigen::numext::bit_cast<uint16_t>(Eigen::half(static_cast<float>(v[i])));
        break;
      case DType::kBFloat16:
        t.data<BFloat16>()[i].bits =
            Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(static_cast<float>(v[i])));
        break;
      default:
        break;
    }
  }
  switch (dtype) {
    case DType::kInt8:
      ints(t.data<int8_t>());
      break;
    case DType::kInt16:
      ints(t.data<int16_t>());
      break;
    case DType::kInt32:
      ints(t.data<int32_t>());
      break;
    case DType::kInt64:
      ints(t.data<int64_t>());
      break;
    case DType::kUInt8:
      ints(t.data<uint8_t>());
      break;
    case DType::kUInt16:
      ints(t.data<uint16_t>());
      break;
    case DType::kUInt32:
      ints(t.data<uint32_t>());
      break;
    case DType::kUInt64:
      ints(t.data<uint64_t>());
      break;
    default:
      break;
  }
  return t;
}

// One spatial dim of a window op, from the definitions: VALID keeps windows inside the input,
// SAME gives ceil(in / stride) outputs with the padding split (less before), EXPLICIT pads as
// given.
struct RefDim {
  int64_t in = 1, k = 1, stride = 1, dilation = 1, pad_before = 0, pad_after = 0;
  int64_t out = 1;
};

inline RefDim RefWindowDim(const std::string& padding, int64_t in, int64_t k, int64_t stride,
                           int64_t dilation = 1, int64_t pad_before = 0, int64_t pad_after = 0) {
  RefDim d{in, k, stride, dilation, 0, 0, 0};
  const int64_t ek = (k - 1) * dilation + 1;
  if (padding == "VALID") {
    d.out = in >= ek ? (in - ek) / stride + 1 : 0;
  } else if (padding == "SAME") {
    d.out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((d.out - 1) * stride + ek - in, 0);
    d.pad_before = total / 2;
    d.pad_after = total - total / 2;
  } else {
    d.pad_before = pad_before;
    d.pad_after = pad_after;
    const int64_t padded = in + pad_before + pad_after;
    d.out = padded >= ek ? (padded - ek) / stride + 1 : 0;
  }
  return d;
}

// The input coordinate of output o's tap t, or -1 in the padding.
inline int64_t RefIn(const RefDim& d, int64_t o, int64_t t) {
  const int64_t i = o * d.stride - d.pad_before + t * d.dilation;
  return i >= 0 && i < d.in ? i : -1;
}

}  // namespace kiln::testing
