// What UniformQuantizedConvolution's definition (kernels/uniform_quantized_conv_ops.cc) and CPU
// kernel (kernels/cpu/uniform_quantized_conv_ops.cc) share: its dimension numbers, read from their
// wire form, and the state the definition builds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/uniform_quantized_util.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::uniform_quantized_conv {

// UniformQuantizedConvolutionDimensionNumbersAttr, read from its wire form (fields 1..9: input
// batch, feature, spatial; kernel input feature, output feature, spatial; output batch, feature,
// spatial).
struct ConvDims {
  int64_t in_batch = 0, in_feature = 1, k_in = 1, k_out = 0, out_batch = 0, out_feature = 1;
  std::vector<int64_t> in_spatial, k_spatial, out_spatial;
};

inline bool ReadVarint(std::string_view s, size_t* pos, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *pos < s.size(); shift += 7) {
    const auto byte = static_cast<uint8_t>(s[(*pos)++]);
    *v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

inline bool ParseConvDims(std::string_view s, ConvDims* d) {
  *d = ConvDims{};
  d->in_batch = d->in_feature = d->k_in = d->k_out = d->out_batch = d->out_feature = 0;
  int64_t* scalars[] = {nullptr,   &d->in_batch, &d->in_feature, nullptr,        &d->k_in,
                        &d->k_out, nullptr,      &d->out_batch,  &d->out_feature};
  std::vector<int64_t>* lists[] = {nullptr, nullptr,        nullptr,       &d->in_spatial,
                                   nullptr, nullptr,        &d->k_spatial, nullptr,
                                   nullptr, &d->out_spatial};
  size_t pos = 0;
  while (pos < s.size()) {
    uint64_t key, v;
    if (!ReadVarint(s, &pos, &key)) return false;
    const uint64_t field = key >> 3, wire = key & 7;
    if (field < 1 || field > 9) return false;
    if (wire == 0) {
      if (!ReadVarint(s, &pos, &v)) return false;
      if (field == 3 || field == 6 || field == 9) {
        lists[field]->push_back(static_cast<int64_t>(v));
      } else {
        *scalars[field] = static_cast<int64_t>(v);
      }
    } else if (wire == 2 && (field == 3 || field == 6 || field == 9)) {  // packed
      uint64_t len;
      if (!ReadVarint(s, &pos, &len) || len > s.size() - pos) return false;
      const size_t end = pos + len;
      while (pos < end) {
        if (!ReadVarint(s, &pos, &v)) return false;
        lists[field]->push_back(static_cast<int64_t>(v));
      }
    } else {
      return false;
    }
  }
  return true;
}

struct ConvState : OpState {
  bool hybrid = false;
  UniformSpec lhs, rhs, out;
  std::vector<int64_t> strides, lhs_dilation, rhs_dilation, explicit_padding;
  std::string padding;
  int64_t feature_groups = 1, batch_groups = 1;
  std::string dimension_numbers;
};

}  // namespace kiln::exec::uniform_quantized_conv
