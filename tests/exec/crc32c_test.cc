#include "bundle/crc32c.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace kiln::crc32c {
namespace {

// `n` bytes from a linear congruential generator whose state starts at `state`.
std::string PseudoRandomBytes(size_t n, uint32_t state) {
  std::string data;
  for (size_t i = 0; i < n; ++i) {
    state = state * 1103515245u + 12345u;
    data.push_back(static_cast<char>(state >> 16));
  }
  return data;
}

TEST_CASE("crc32c: standard check value and RFC 3720 vectors") {
  CHECK(Value("123456789") == 0xE3069283u);
  CHECK(Value("") == 0u);
  std::string zeros(32, '\0'), ones(32, '\xff'), ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  CHECK(Value(zeros) == 0x8A9136AAu);
  CHECK(Value(ones) == 0x62A8AB43u);
  CHECK(Value(ascending) == 0x46DD794Eu);
  CHECK(Value(descending) == 0x113FDB5Cu);
}

TEST_CASE("crc32c: Combine joins the crcs of pieces into the crc of the whole") {
  const std::string data = PseudoRandomBytes(5000, 777);
  const uint32_t whole = Value(data);
  for (size_t split : {0u, 1u, 2u, 3u, 8u, 255u, 256u, 2500u, 4999u, 5000u}) {
    CAPTURE(split);
    const std::string_view a(data.data(), split), b(data.data() + split, data.size() - split);
    CHECK(Combine(Value(a), Value(b), b.size()) == whole);
  }
  // Three pieces, joined left to right.
  const std::string_view x(data.data(), 1234), y(data.data() + 1234, 2000),
      z(data.data() + 3234, data.size() - 3234);
  CHECK(Combine(Combine(Value(x), Value(y), y.size()), Value(z), z.size()) == whole);
}

TEST_CASE("crc32c: Extend over pieces equals the crc of the whole, at every alignment") {
  const std::string data = PseudoRandomBytes(1000, 12345);
  const uint32_t whole = Value(data);
  for (size_t split : {0u, 1u, 3u, 7u, 8u, 9u, 63u, 500u, 999u, 1000u}) {
    CAPTURE(split);
    uint32_t c = Extend(Value(data.data(), split), data.data() + split, data.size() - split);
    CHECK(c == whole);
  }
  // The hardware path (when present) and the table path agree on odd lengths and offsets.
  for (size_t off = 0; off < 9; ++off) {
    for (size_t len : {0u, 1u, 7u, 8u, 15u, 16u, 17u, 255u, 990u}) {
      CAPTURE(off);
      CAPTURE(len);
      CHECK(Value(data.data() + off, len) ==
            internal::ExtendPortableForTest(0, data.data() + off, len));
    }
  }
}

TEST_CASE("crc32c: the three-stream path over large buffers equals the table path") {
  std::vector<uint8_t> data(3 * 4096 * 5 + 123);
  uint32_t x = 12345;
  for (auto& b : data) {
    x = x * 1103515245u + 12345u;
    b = static_cast<uint8_t>(x >> 16);
  }
  for (size_t off : {0u, 1u, 5u}) {
    for (size_t len :
         {size_t{3 * 4096 - 1}, size_t{3 * 4096}, size_t{3 * 4096 + 9}, data.size() - 5}) {
      const uint8_t* p = data.data() + off;
      CHECK(Value(p, len) == internal::ExtendPortableForTest(0, p, len));
      CHECK(Extend(0xdeadbeef, p, len) == internal::ExtendPortableForTest(0xdeadbeef, p, len));
    }
  }
}

TEST_CASE("crc32c: Mask/Unmask as LevelDB and TF define them") {
  for (uint32_t c : {0u, 1u, 0xE3069283u, 0xffffffffu, 0x80000000u}) {
    CAPTURE(c);
    CHECK(Unmask(Mask(c)) == c);
    CHECK(Mask(c) != c);
    CHECK(Mask(Mask(c)) != Mask(c));
  }
  // From the TF-written fixture: mask(crc32c(1.0f little endian)) == 735749505.
  const char one_f[] = {0x00, 0x00, static_cast<char>(0x80), 0x3f};
  CHECK(Mask(Value(one_f, 4)) == 735749505u);
}

}  // namespace
}  // namespace kiln::crc32c
