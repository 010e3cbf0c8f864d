// Helpers shared by the string op families (string_convert_ops, string_text_ops, regex_ops):
// the common Prepare of "string in, same shape out" ops, a parallel loop whose body can fail,
// and the ASCII classes TensorFlow's string kernels use.
#pragma once

#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>

#include "kernels/kernel_util.h"

namespace kiln::exec {

// One input (string, named `name`), one output of dtype `out` and the input's shape.
inline Status PrepareStringUnary(PrepareContext& ctx, std::string_view name, DType out) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, name, DType::kString));
  ctx.outputs = {TensorSpec{out, ctx.inputs[0].shape}};
  return OkStatus();
}

// Runs fn(i) for i in [0, n) over the model's threads; fn returns a Status. The error of the
// lowest failing index is returned, so the message does not depend on the thread count.
template <typename F>
Status ParallelForEach(const KernelContext& ctx, int64_t n, int64_t min_per_thread, F&& fn) {
  std::atomic<int64_t> first_bad{n};
  std::mutex mu;
  Status first_status;
  ctx.threads().ParallelFor(n, min_per_thread, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (i >= first_bad.load(std::memory_order_relaxed)) return;
      Status s = fn(i);
      if (!s.ok()) {
        std::lock_guard lock(mu);
        if (i < first_bad.load(std::memory_order_relaxed)) {
          first_bad.store(i, std::memory_order_relaxed);
          first_status = std::move(s);
        }
        return;
      }
    }
  });
  return first_status;
}

// The whitespace of absl::ascii_isspace: space, \t, \n, \v, \f, \r.
inline bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}
inline std::string_view StripAsciiSpace(std::string_view s) {
  while (!s.empty() && IsAsciiSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsAsciiSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Whether the byte continues a UTF-8 sequence (10xxxxxx).
inline bool IsUtf8Trail(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Parses a number the way TF's StringToNumber does: floats as strtod reads them (decimal, hex,
// inf/infinity, nan, any case; out-of-range values become inf or 0), integers as decimal digits
// with an optional sign ('-' not for unsigned types) that must fit the type. Surrounding ASCII
// whitespace is ignored.
template <typename T>
inline bool ParseNumber(std::string_view text, T* out) {
  std::string_view s = StripAsciiSpace(text);
  if (s.empty()) return false;
  if constexpr (std::is_floating_point_v<T>) {
    const std::string z(s);  // strtod needs a terminator
    char* end = nullptr;
    if constexpr (std::is_same_v<T, float>) {
      *out = std::strtof(z.c_str(), &end);
    } else {
      *out = std::strtod(z.c_str(), &end);
    }
    return end == z.c_str() + z.size();
  } else {
    bool negative = false;
    if (s[0] == '+' || s[0] == '-') {
      negative = s[0] == '-';
      s.remove_prefix(1);
      if (negative && std::is_unsigned_v<T>) return false;
    }
    if (s.empty()) return false;
    using U = std::make_unsigned_t<T>;
    U mag = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), mag);
    if (ec != std::errc() || p != s.data() + s.size()) return false;
    if constexpr (std::is_signed_v<T>) {
      const U limit = static_cast<U>(std::numeric_limits<T>::max()) + (negative ? 1 : 0);
      if (mag > limit) return false;
      *out = negative ? static_cast<T>(U(0) - mag) : static_cast<T>(mag);
    } else {
      *out = mag;
    }
    return true;
  }
}

}  // namespace kiln::exec
