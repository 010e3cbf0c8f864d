// What a kernel measured once and need not measure again: cuDNN's fastest convolution algorithm
// for a shape, say. Kept per device for the process, so a kernel's second node of the same
// shape reuses it, and written into serving plans (`savedmodel-cli compile`) so that a later
// load starts with it and its first call measures nothing (XLA's autotune results and TF's
// cuDNN autotune map do the same). Keys are the kernel's own text: every property the choice
// depends on, the device model and library version included, so a record made on another GPU
// never matches. A value is opaque bytes the kernel checks before trusting them (a plan's
// records are verified only for size).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::exec {
class Device;
}

namespace kiln::exec::tuning {

// Records larger than these are refused (Put ignores them; a plan holding one is refused), and
// a device keeps at most kMaxRecords: a model whose shapes change at every call measures each
// new shape, as without records, instead of growing memory without bound.
inline constexpr size_t kMaxKeyBytes = 512;
inline constexpr size_t kMaxValueBytes = 64;
inline constexpr size_t kMaxRecords = 4096;

struct Record {
  std::string key;
  std::string value;
  bool operator==(const Record&) const = default;
};

// The value recorded for `key` on `device`; nullopt when there is none.
std::optional<std::string> Find(const Device& device, std::string_view key);
// Records (or replaces) a value; false when it is too large or the device is full.
bool Put(const Device& device, std::string_view key, std::string_view value);
// Every record of `device`, sorted by key (plans are written deterministically).
std::vector<Record> Export(const Device& device);
// Adds records that `device` does not hold yet (what this process measured wins); returns how
// many were added.
size_t Import(const Device& device, std::span<const Record> records);
// Forgets every record of `device` (tests).
void Clear(const Device& device);

}  // namespace kiln::exec::tuning
