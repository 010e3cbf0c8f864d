// The CPU kernel of Assert (kernels/assert_ops.cc): each tensor summarised as TensorFlow's Assert
// kernel prints it (the first `summarize` elements, flattened, then "..."; floats at the shortest
// precision that round-trips, bools as 1/0, strings C-escaped).
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "core/text_escape.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

// TF's FloatToBuffer / DoubleToBuffer: 6 (15) significant digits when that reads back as the
// same value, else 9 (17).
std::string FormatFloat(double v, bool is_float) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), is_float ? "%.6g" : "%.15g", v);
  const bool round_trips = is_float ? std::strtof(buf, nullptr) == static_cast<float>(v)
                                    : std::strtod(buf, nullptr) == v;
  if (!round_trips) std::snprintf(buf, sizeof(buf), is_float ? "%.9g" : "%.17g", v);
  return buf;
}

template <typename T>
std::string OneElement(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return CEscape(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else if constexpr (std::is_same_v<T, float>) {
    return FormatFloat(v, true);
  } else if constexpr (std::is_same_v<T, double>) {
    return FormatFloat(v, false);
  } else if constexpr (std::is_same_v<T, Half>) {
    return FormatFloat(static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(v)), true);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return FormatFloat(static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(v)), true);
  } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                       std::is_same_v<T, std::complex<double>>) {
    const bool f = std::is_same_v<T, std::complex<float>>;
    return "(" + FormatFloat(v.real(), f) + "," + FormatFloat(v.imag(), f) + ")";
  } else if constexpr (std::is_signed_v<T>) {
    return std::to_string(static_cast<int64_t>(v));
  } else {
    return std::to_string(static_cast<uint64_t>(v));
  }
}

using SummaryTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, std::complex<float>, std::complex<double>, bool, std::string>;

std::string AssertSummary(const Tensor& t, int64_t summarize) {
  const int64_t n = t.NumElements();
  const int64_t limit = summarize < 0 ? n : std::min(summarize, n);
  std::string out;
  Status s = Dispatch<SummaryTypes>(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < limit; ++i) {
      if (i > 0) out += ' ';
      out += OneElement<T>(t.data<T>()[i]);
    }
    return OkStatus();
  });
  if (!s.ok()) return t.DebugString();  // resources and variants
  if (n > limit) out += "...";
  return out;
}

Status ComputeAssert(const KernelContext& ctx) {
  const Tensor& cond = ctx.input(0);
  if (cond.NumElements() != 1 || cond.rank() != 0)
    return ctx.Error("input 'condition' must be a scalar, got shape ", cond.shape().ToString());
  if (cond.scalar<bool>()) return OkStatus();
  const int64_t summarize = ctx.state<TypedOpState<int64_t>>().value;
  std::string msg = "assertion failed: ";
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (i > 1) msg += ' ';
    msg += "[" + AssertSummary(ctx.input(i), summarize) + "]";
  }
  return ctx.Error(msg);
}

constexpr KernelEntry kCpu[] = {
    {"Assert", ComputeAssert},
};

}  // namespace

std::span<const KernelEntry> AssertCpuKernels() { return kCpu; }

}  // namespace kiln::exec
