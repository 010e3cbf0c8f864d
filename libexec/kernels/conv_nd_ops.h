// The convolution kinds of kernels/conv_nd_ops.cc, their op state, where their inputs are and
// the checks of their sizes, shared by the definitions and the CPU kernels.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/conv_nd_math.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"
#include "kiln/core/dtype.h"
#include "kiln/core/status.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::conv_nd_ops {

enum class ConvKind {
  kConv3D,           // Conv3D(input, filter)
  kBackpropInput,    // Conv2DBackpropInput / Conv3DBackpropInputV2(input_sizes, filter, dy)
  kBackpropFilter,   // Conv2DBackpropFilter(input, filter_sizes, dy)
  kDepthwiseInput,   // DepthwiseConv2dNativeBackpropInput(input_sizes, filter, dy)
  kDepthwiseFilter,  // DepthwiseConv2dNativeBackpropFilter(input, filter_sizes, dy)
};

struct ConvState : OpState {
  WindowSpec attrs;
  DType dtype = DType::kFloat;
  // A 2-D backprop's input and filter dims when Prepare knew every size: a device's state can
  // make its objects for them once (the CPU's oneDNN primitive).
  std::vector<int64_t> prepare_in, prepare_filter;
};

constexpr bool IsDepthwise(ConvKind k) {
  return k == ConvKind::kDepthwiseInput || k == ConvKind::kDepthwiseFilter;
}

// The filter's in-channel count as the input's channels, for messages: depthwise filters are
// [.., in_c, mult], regular ones [.., in_c, out_c]. Conv3D may be grouped (TF's rule,
// ConvGroups); the backprops may not.
inline Status CheckChannels(ConvKind kind, int64_t in_c, int64_t filter_in_c, int64_t out_c,
                            const std::string& in_shape, const std::string& filter_shape) {
  if (kind == ConvKind::kConv3D) {
    Result<int64_t> groups = ConvGroups(in_c, filter_in_c, out_c);
    if (groups.ok()) return OkStatus();
    return InvalidArgument(groups.status().message(), "; input has shape ", in_shape,
                           ", filter has shape ", filter_shape);
  }
  if (in_c < 0 || filter_in_c < 0 || in_c == filter_in_c) return OkStatus();
  if (!IsDepthwise(kind) && filter_in_c > 0 && in_c % filter_in_c == 0) {
    return Unimplemented("grouped convolution (input depth ", in_c, ", filter depth ", filter_in_c,
                         ") is not supported; input has shape ", in_shape, ", filter has shape ",
                         filter_shape);
  }
  return InvalidArgument("input depth must equal the filter's in_channels: input has shape ",
                         in_shape, ", filter has shape ", filter_shape);
}

// Builds the geometry from full input, filter and output-backprop dims (out_backprop empty for
// Conv3D) and checks they agree; errors say what TensorFlow expects.
inline Status MakeGeom(ConvKind kind, const WindowSpec& a, std::span<const int64_t> in,
                       std::span<const int64_t> filter, std::span<const int64_t> dy,
                       conv_nd::ConvGeom* g) {
  const int rank = a.spatial + 2;
  auto str = [](std::span<const int64_t> v) {
    return DimsString(std::vector<int64_t>(v.begin(), v.end()));
  };
  for (int64_t v : in)
    if (v < 0) return InvalidArgument("input shape ", str(in), " has a negative dimension");
  for (int64_t v : filter)
    if (v < 0) return InvalidArgument("filter shape ", str(filter), " has a negative dimension");
  KILN_RETURN_IF_ERROR(CheckElementCount(in, "input shape"));
  KILN_RETURN_IF_ERROR(CheckElementCount(filter, "filter shape"));
  KILN_RETURN_IF_ERROR(
      CheckChannels(kind, in[rank - 1], filter[rank - 2], filter[rank - 1], str(in), str(filter)));
  std::array<int64_t, 3> k{1, 1, 1};
  for (int i = 0; i < a.spatial; ++i) k[3 - a.spatial + i] = filter[i];
  g->batch = in[0];
  g->in_c = in[rank - 1];
  if (IsDepthwise(kind)) {
    g->mult = filter[rank - 1];
    g->out_c = g->in_c * g->mult;
  } else {
    g->out_c = filter[rank - 1];
    if (kind == ConvKind::kConv3D) {
      KILN_ASSIGN_OR_RETURN(g->groups, ConvGroups(g->in_c, filter[rank - 2], g->out_c));
    }
  }
  KILN_RETURN_IF_ERROR(MakeWindowDims(a, in, k, &g->d));
  if (dy.empty()) return OkStatus();
  std::vector<int64_t> want = {g->batch};
  for (int i = 3 - a.spatial; i < 3; ++i) want.push_back(g->d[i].out);
  want.push_back(g->out_c);
  if (!std::equal(want.begin(), want.end(), dy.begin(), dy.end())) {
    return InvalidArgument("out_backprop has shape ", str(dy), " but the convolution of input ",
                           str(in), " with filter ", str(filter), " gives ", DimsString(want));
  }
  return OkStatus();
}

// Positions of the inputs per kind: which input holds the sizes of the output, which the data.
struct ConvIo {
  int sizes = -1;   // input_sizes / filter_sizes input, -1 none
  int input = -1;   // the image input (not for input backprops)
  int filter = -1;  // the filter input (not for filter backprops)
  int dy = -1;
};
constexpr ConvIo IoOf(ConvKind k) {
  switch (k) {
    case ConvKind::kConv3D:
      return {-1, 0, 1, -1};
    case ConvKind::kBackpropInput:
    case ConvKind::kDepthwiseInput:
      return {0, -1, 1, 2};
    case ConvKind::kBackpropFilter:
    case ConvKind::kDepthwiseFilter:
      return {1, 0, -1, 2};
  }
  return {};
}

// input_sizes with 4 (5) entries, or 2 (3) spatial ones for which the batch comes from
// out_backprop and the channels from the filter; filter_sizes with all entries.
inline Result<std::vector<int64_t>> SizesFromValues(ConvKind kind, int spatial,
                                                    const std::vector<int64_t>& v,
                                                    std::span<const int64_t> filter,
                                                    std::span<const int64_t> dy) {
  const bool input_sizes = IoOf(kind).filter >= 0;
  const size_t rank = static_cast<size_t>(spatial) + 2;
  const char* name = input_sizes ? "input_sizes" : "filter_sizes";
  for (int64_t d : v)
    if (d < 0)
      return InvalidArgument("input '", name, "' ", DimsString(v), " has a negative entry");
  if (v.size() == rank) return v;
  if (input_sizes && spatial == 2 && v.size() == 2) {
    std::vector<int64_t> full = {dy.empty() ? -1 : dy[0]};
    full.insert(full.end(), v.begin(), v.end());
    full.push_back(filter.empty() ? -1 : filter[rank - 2]);
    return full;
  }
  return InvalidArgument("input '", name, "' must have ", rank,
                         input_sizes && spatial == 2 ? " (or 2 spatial) entries" : " entries",
                         ", got ", DimsString(v));
}

using ConvBackpropInputTypes = TypeList<float, double, Half, BFloat16, int32_t>;

}  // namespace kiln::exec::conv_nd_ops
