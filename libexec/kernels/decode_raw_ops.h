// The states DecodeRaw / DecodePaddedRaw's and DecodeWav's definitions build
// (kernels/decode_raw_ops.cc) and their CPU kernels read (kernels/cpu/decode_raw_ops.cc).
#pragma once

#include <cstdint>

#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::decode_raw {

struct RawState : OpState {
  DType dtype = DType::kFloat;
  bool swap = false;  // big-endian bytes on this little-endian host
};

struct WavState : OpState {
  int64_t channels = -1, samples = -1;
};

}  // namespace kiln::exec::decode_raw
