// libFuzzer target: .npy and .npz parsing from memory (kiln::ParseNpy / ParseNpz). Any input
// must give a tensor or an error, never a crash, a hang or an unbounded allocation.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kiln/core/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto t = kiln::ParseNpy(bytes);
  if (t.ok()) (void)kiln::SerializeNpy(*t);
  auto z = kiln::ParseNpz(bytes);
  (void)z.ok();
  return 0;
}
