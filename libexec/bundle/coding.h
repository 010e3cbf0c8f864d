// Little-endian fixed-width and LEB128 varint encoding, as LevelDB tables and tensor bundles
// use them. Decoders advance a string_view and return false on truncated or overlong input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::coding {

inline void PutFixed32(std::string* dst, uint32_t v) {
  char b[4] = {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
               static_cast<char>(v >> 24)};
  dst->append(b, 4);
}

inline void PutFixed64(std::string* dst, uint64_t v) {
  PutFixed32(dst, static_cast<uint32_t>(v));
  PutFixed32(dst, static_cast<uint32_t>(v >> 32));
}

inline uint32_t DecodeFixed32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{u[0]} | uint32_t{u[1]} << 8 | uint32_t{u[2]} << 16 | uint32_t{u[3]} << 24;
}

inline uint64_t DecodeFixed64(const char* p) {
  return uint64_t{DecodeFixed32(p)} | uint64_t{DecodeFixed32(p + 4)} << 32;
}

inline void PutVarint64(std::string* dst, uint64_t v) {
  while (v >= 0x80) {
    dst->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  dst->push_back(static_cast<char>(v));
}

inline void PutVarint32(std::string* dst, uint32_t v) { PutVarint64(dst, v); }

inline bool GetVarint64(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0, i = 0; shift <= 63 && i < static_cast<int>(in->size()); shift += 7, ++i) {
    uint64_t byte = static_cast<unsigned char>((*in)[i]);
    result |= (byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      in->remove_prefix(i + 1);
      *v = result;
      return true;
    }
  }
  return false;
}

inline bool GetVarint32(std::string_view* in, uint32_t* v) {
  std::string_view save = *in;
  uint64_t v64;
  if (!GetVarint64(in, &v64) || v64 > 0xffffffffu) {
    *in = save;
    return false;
  }
  *v = static_cast<uint32_t>(v64);
  return true;
}

}  // namespace kiln::coding
