// The pooling kinds of kernels/pool_nd_ops.cc, their op state and forward output dims, shared by
// the definitions and the CPU kernels.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/type_lists.h"
#include "kernels/window_util.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::pool_nd {

enum class PoolKind {
  kMax3D,
  kAvg3D,
  kMaxV2,
  kMaxWithArgmax,
  kMaxGrad,
  kMaxGradV2,  // ksize and strides as inputs 3 and 4
  kMaxGrad3D,
  kAvgGrad,
  kAvgGrad3D,
  kMaxGradGrad,
  kMaxGradGradV2,  // ksize and strides as inputs 3 and 4
  kMaxGradGrad3D,
  kMaxGradWithArgmax,
};

constexpr bool IsMaxGrad(PoolKind k) {
  return k == PoolKind::kMaxGrad || k == PoolKind::kMaxGradV2 || k == PoolKind::kMaxGrad3D;
}
constexpr bool IsAvgGrad(PoolKind k) {
  return k == PoolKind::kAvgGrad || k == PoolKind::kAvgGrad3D;
}
constexpr bool IsGradGrad(PoolKind k) {
  return k == PoolKind::kMaxGradGrad || k == PoolKind::kMaxGradGradV2 ||
         k == PoolKind::kMaxGradGrad3D;
}
// The first of the ksize and strides inputs, or 0 when they are attrs.
constexpr int WindowInput(PoolKind k) {
  return k == PoolKind::kMaxV2                                        ? 1
         : k == PoolKind::kMaxGradV2 || k == PoolKind::kMaxGradGradV2 ? 3
                                                                      : 0;
}

struct PoolState : OpState {
  WindowSpec attrs;
  DType dtype = DType::kFloat;
  bool include_batch_in_index = false;
};

inline std::vector<int64_t> ForwardDims(const WindowSpec& a, std::span<const int64_t> in,
                                        const std::array<WindowDim, 3>& d) {
  std::vector<int64_t> out = {in[0]};
  for (int i = 3 - a.spatial; i < 3; ++i) out.push_back(d[i].out);
  out.push_back(in[in.size() - 1]);
  return out;
}

template <PoolKind kKind>
constexpr int SpatialOf() {
  return kKind == PoolKind::kMax3D || kKind == PoolKind::kAvg3D || kKind == PoolKind::kMaxGrad3D ||
                 kKind == PoolKind::kAvgGrad3D || kKind == PoolKind::kMaxGradGrad3D
             ? 3
             : 2;
}

using MaxPool3DTypes = TypeList<float, Half, BFloat16>;

}  // namespace kiln::exec::pool_nd
