// libFuzzer target: .npy and .npz parsing from memory (kiln::ParseNpy / ParseNpz / NpzReader).
// Any input must give a tensor or an error, never a crash, a hang or an unbounded allocation.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kiln/core/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto t = kiln::ParseNpy(bytes);
  if (t.ok()) (void)kiln::SerializeNpy(*t);
  auto z = kiln::ParseNpz(bytes);
  (void)z.ok();
  // One array at a time, header first, as savedmodel-cli run reads them.
  if (auto npz = kiln::NpzReader::Open(bytes); npz.ok()) {
    for (const std::string& key : npz->keys()) {
      if (npz->Header(key).ok()) (void)npz->Read(key).ok();
    }
  }
  return 0;
}
