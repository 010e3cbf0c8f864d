#include "kiln/modules/padding.h"

#include <algorithm>
#include <string>

namespace kiln::modules {

std::string_view PaddingName(Padding p) { return p == Padding::kSame ? "same" : "valid"; }

Result<Padding> PaddingFromName(std::string_view name) {
  if (name == "valid" || name == "VALID") return Padding::kValid;
  if (name == "same" || name == "SAME") return Padding::kSame;
  return InvalidArgument("unknown padding '", name, "' (expected valid or same)");
}

int64_t ConvOutputLength(int64_t input, int64_t kernel, Padding padding, int64_t stride,
                         int64_t dilation) {
  if (input < 0) return -1;
  const int64_t dilated = kernel + (kernel - 1) * (dilation - 1);
  const int64_t covered = padding == Padding::kSame ? input : input - dilated + 1;
  if (covered <= 0) return covered;
  return (covered + stride - 1) / stride;
}

int64_t DeconvOutputLength(int64_t input, int64_t kernel, Padding padding, int64_t stride,
                           int64_t dilation) {
  if (input < 0) return -1;
  const int64_t dilated = kernel + (kernel - 1) * (dilation - 1);
  if (padding == Padding::kSame) return input * stride;
  return input * stride + std::max<int64_t>(dilated - stride, 0);
}

Result<std::vector<int64_t>> SpatialOption(const std::vector<int64_t>& value, int n,
                                           std::string_view what) {
  if (value.size() != 1 && value.size() != static_cast<size_t>(n)) {
    return InvalidArgument(what, ": expected 1 or ", n, " values, got ", value.size());
  }
  std::vector<int64_t> out(n, value[0]);
  if (value.size() == static_cast<size_t>(n)) out = value;
  for (int64_t v : out) {
    if (v <= 0) return InvalidArgument(what, ": values must be positive, got ", v);
  }
  return out;
}

}  // namespace kiln::modules
