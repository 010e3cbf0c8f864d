// CRC32C (Castagnoli), as TensorFlow's tensor bundles and LevelDB tables use it, plus the
// "mask" that keeps a CRC stored next to the data it covers from checksumming itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln::crc32c {

// Returns the CRC32C of data[0, n) appended to a stream whose CRC so far is `init`.
uint32_t Extend(uint32_t init, const void* data, size_t n);
inline uint32_t Extend(uint32_t init, std::string_view s) {
  return Extend(init, s.data(), s.size());
}
inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }
inline uint32_t Value(std::string_view s) { return Extend(0, s.data(), s.size()); }
// The CRC32C of A followed by B, from Value(A), Value(B) and B's length (zlib's crc32_combine
// for the Castagnoli polynomial): pieces checksummed on different threads join exactly.
uint32_t Combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

inline constexpr uint32_t kMaskDelta = 0xa282ead8u;

// Rotate right by 15 bits and add a constant (LevelDB's crc32c::Mask).
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

namespace internal {
// The portable (table) path alone, so tests can compare it with the hardware path.
uint32_t ExtendPortableForTest(uint32_t init, const void* data, size_t n);
}  // namespace internal

}  // namespace kiln::crc32c
