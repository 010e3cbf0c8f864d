// Table-driven CRC32C (slicing-by-8), with the SSE4.2 crc32 instruction when the CPU has it.
#include "bundle/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define KILN_CRC32C_HAVE_SSE42_PATH 1
#endif

namespace kiln::crc32c {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

inline uint32_t LoadLE32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// Works on the pre-inverted register value.
uint32_t ExtendPortable(uint32_t crc, const uint8_t* p, size_t n) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    crc = kTables[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    --n;
  }
  while (n >= 8) {
    uint32_t lo = LoadLE32(p) ^ crc;
    uint32_t hi = LoadLE32(p + 4);
    crc = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^
          kTables[4][lo >> 24] ^ kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^
          kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = kTables[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

#ifdef KILN_CRC32C_HAVE_SSE42_PATH
__attribute__((target("sse4.2"))) uint32_t ExtendSse42Serial(uint32_t crc, const uint8_t* p,
                                                             size_t n) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    crc = _mm_crc32_u8(crc, *p++);
    --n;
  }
  uint64_t c64 = crc;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c64 = _mm_crc32_u64(c64, word);
    p += 8;
    n -= 8;
  }
  crc = static_cast<uint32_t>(c64);
  while (n-- > 0) crc = _mm_crc32_u8(crc, *p++);
  return crc;
}

// The crc32 instruction has a latency of 3 cycles and a throughput of 1: three independent
// streams over consecutive blocks run three times as fast as one. A block's register is moved
// past the next block's kStride bytes by a linear map (appending zeros to a CRC register is
// linear over GF(2)), tabulated per byte of the register.
constexpr size_t kStride = 4096;
using ShiftTables = std::array<std::array<uint32_t, 256>, 4>;

const ShiftTables& StrideShift() {
  static const ShiftTables tables = [] {
    ShiftTables t{};
    static const std::array<uint8_t, kStride> zeros{};
    std::array<uint32_t, 32> basis{};
    for (int bit = 0; bit < 32; ++bit)
      basis[bit] = ExtendSse42Serial(uint32_t{1} << bit, zeros.data(), kStride);
    for (int k = 0; k < 4; ++k)
      for (uint32_t b = 0; b < 256; ++b) {
        uint32_t v = 0;
        for (int bit = 0; bit < 8; ++bit)
          if ((b >> bit) & 1) v ^= basis[8 * k + bit];
        t[k][b] = v;
      }
    return t;
  }();
  return tables;
}

inline uint32_t ShiftStride(const ShiftTables& t, uint32_t crc) {
  return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^ t[3][crc >> 24];
}

__attribute__((target("sse4.2"))) uint32_t ExtendSse42(uint32_t crc, const uint8_t* p, size_t n) {
  if (n < 3 * kStride) return ExtendSse42Serial(crc, p, n);
  while ((reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    crc = _mm_crc32_u8(crc, *p++);
    --n;
  }
  const ShiftTables& shift = StrideShift();
  while (n >= 3 * kStride) {
    uint64_t a = crc, b = 0, c = 0;
    for (size_t i = 0; i < kStride; i += 8) {
      uint64_t wa, wb, wc;
      std::memcpy(&wa, p + i, 8);
      std::memcpy(&wb, p + kStride + i, 8);
      std::memcpy(&wc, p + 2 * kStride + i, 8);
      a = _mm_crc32_u64(a, wa);
      b = _mm_crc32_u64(b, wb);
      c = _mm_crc32_u64(c, wc);
    }
    crc = ShiftStride(shift,
                      ShiftStride(shift, static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b)) ^
          static_cast<uint32_t>(c);
    p += 3 * kStride;
    n -= 3 * kStride;
  }
  return ExtendSse42Serial(crc, p, n);
}

bool CpuHasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

uint32_t Extend(uint32_t init, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t crc = ~init;
#ifdef KILN_CRC32C_HAVE_SSE42_PATH
  if (CpuHasSse42()) return ~ExtendSse42(crc, p, n);
#endif
  return ~ExtendPortable(crc, p, n);
}

namespace {

// Multiplies the 32x32 matrix over GF(2) `mat` (one column per bit) by `vec`.
uint32_t Gf2Times(const uint32_t* mat, uint32_t vec) {
  uint32_t sum = 0;
  for (; vec != 0; vec >>= 1, ++mat)
    if ((vec & 1) != 0) sum ^= *mat;
  return sum;
}

void Gf2Square(uint32_t* square, const uint32_t* mat) {
  for (int n = 0; n < 32; ++n) square[n] = Gf2Times(mat, mat[n]);
}

}  // namespace

uint32_t Combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
  if (len_b == 0) return crc_a;
  // odd: the operator for one zero bit; squared, the operators for 2, 4, 8, ... zero bits.
  uint32_t odd[32];
  uint32_t even[32];
  odd[0] = 0x82f63b78u;  // CRC-32C, reflected
  for (int n = 1; n < 32; ++n) odd[n] = uint32_t{1} << (n - 1);
  Gf2Square(even, odd);  // 2 zero bits
  Gf2Square(odd, even);  // 4 zero bits
  // Apply len_b zero bytes to crc_a, one bit of len_b at a time (the first square is a byte).
  for (;;) {
    Gf2Square(even, odd);
    if ((len_b & 1) != 0) crc_a = Gf2Times(even, crc_a);
    len_b >>= 1;
    if (len_b == 0) break;
    Gf2Square(odd, even);
    if ((len_b & 1) != 0) crc_a = Gf2Times(odd, crc_a);
    len_b >>= 1;
    if (len_b == 0) break;
  }
  return crc_a ^ crc_b;
}

namespace internal {
// Exposed for tests: the table path must agree with the hardware path.
uint32_t ExtendPortableForTest(uint32_t init, const void* data, size_t n) {
  return ~ExtendPortable(~init, static_cast<const uint8_t*>(data), n);
}
}  // namespace internal

}  // namespace kiln::crc32c
