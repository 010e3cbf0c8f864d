// What the partition ops' definitions (kernels/partition_ops.cc) and CPU kernels
// (kernels/cpu/partition_ops.cc) share: the shape-prefix check.
#pragma once

#include <cstdint>
#include <span>

namespace kiln::exec::partition {

// ---- DynamicPartition ------------------------------------------------------------------------

inline bool StartsWith(std::span<const int64_t> dims, std::span<const int64_t> prefix) {
  if (prefix.size() > dims.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (dims[i] >= 0 && prefix[i] >= 0 && dims[i] != prefix[i]) return false;
  }
  return true;
}

}  // namespace kiln::exec::partition
