#include "bundle/tensor_slices.h"

#include <bit>
#include <charconv>

namespace kiln::exec::tensor_slices {
namespace {

// TF's OrderedCode (tensorflow/core/lib/strings/ordered_code.cc), the three writers the slice
// keys use.
void WriteNumIncreasing(std::string* dest, uint64_t v) {
  unsigned char buf[9];
  int len = 0;
  while (v > 0) {
    ++len;
    buf[9 - len] = static_cast<unsigned char>(v & 0xff);
    v >>= 8;
  }
  buf[9 - len - 1] = static_cast<unsigned char>(len);
  const size_t n = static_cast<size_t>(len) + 1;
  dest->append(reinterpret_cast<const char*>(buf + 9 - n), n);
}

void WriteString(std::string* dest, std::string_view s) {
  for (char c : s) {
    if (c == '\0') {
      dest->append("\0\xff", 2);
    } else if (c == '\xff') {
      dest->append("\xff\0", 2);
    } else {
      dest->push_back(c);
    }
  }
  dest->append("\0\1", 2);
}

void WriteSignedNumIncreasing(std::string* dest, int64_t val) {
  // The first byte's leading bits (and for 9 and 10 bytes the second's) give the length.
  static constexpr unsigned char kHeader[11][2] = {{0, 0},    {0x80, 0},    {0xc0, 0},   {0xe0, 0},
                                                   {0xf0, 0}, {0xf8, 0},    {0xfc, 0},   {0xfe, 0},
                                                   {0xff, 0}, {0xff, 0x80}, {0xff, 0xc0}};
  static constexpr int kBitsToLength[64] = {1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 3, 3,
                                            3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5,
                                            5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7,
                                            7, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 10};
  const auto x = static_cast<uint64_t>(val < 0 ? ~val : val);
  if (x < 64) {
    dest->push_back(static_cast<char>(kHeader[1][0] ^ static_cast<unsigned char>(val)));
    return;
  }
  const unsigned char sign = val < 0 ? 0xff : 0;
  unsigned char buf[10] = {sign, sign};
  const auto u = static_cast<uint64_t>(val);
  for (int i = 0; i < 8; ++i) buf[2 + i] = static_cast<unsigned char>(u >> (56 - 8 * i));
  const int len = kBitsToLength[64 - std::countl_zero(x)];
  unsigned char* begin = buf + 10 - len;
  begin[0] ^= kHeader[len][0];
  begin[1] ^= kHeader[len][1];
  dest->append(reinterpret_cast<const char*>(begin), static_cast<size_t>(len));
}

Result<int64_t> ParseInt(std::string_view s, std::string_view spec) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    return InvalidArgument("shape_and_slice '", spec, "': '", s, "' is not an integer");
  return v;
}

}  // namespace

std::string EncodeTensorNameSlice(std::string_view name, const Extents& slice) {
  std::string key;
  WriteNumIncreasing(&key, 0);
  WriteString(&key, name);
  WriteNumIncreasing(&key, slice.size());
  for (const auto& [start, length] : slice) {
    WriteSignedNumIncreasing(&key, start);
    WriteSignedNumIncreasing(&key, length);
  }
  return key;
}

Result<ShapeAndSlice> ParseShapeAndSlice(std::string_view spec) {
  std::vector<std::string_view> tokens;
  for (size_t i = 0; i < spec.size();) {
    const size_t sp = spec.find(' ', i);
    const size_t end = sp == std::string_view::npos ? spec.size() : sp;
    if (end > i) tokens.push_back(spec.substr(i, end - i));
    i = end + 1;
  }
  if (tokens.empty())
    return InvalidArgument("shape_and_slice '", spec, "' has no shape and no slice");
  ShapeAndSlice out;
  std::vector<int64_t> dims;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(int64_t d, ParseInt(tokens[i], spec));
    if (d < 0) return InvalidArgument("shape_and_slice '", spec, "': dimension ", d, " < 0");
    dims.push_back(d);
  }
  KILN_ASSIGN_OR_RETURN(out.full, Shape::FromDims(dims));
  const std::string_view slice = tokens.back();
  for (size_t i = 0, d = 0; i <= slice.size(); ++d) {
    const size_t colon = slice.find(':', i);
    const size_t end = colon == std::string_view::npos ? slice.size() : colon;
    const std::string_view extent = slice.substr(i, end - i);
    if (d >= dims.size())
      return InvalidArgument("shape_and_slice '", spec, "': more extents than the ", dims.size(),
                             " dimensions");
    if (extent == "-") {
      out.slice.emplace_back(0, dims[d]);
    } else {
      const size_t comma = extent.find(',');
      if (comma == std::string_view::npos)
        return InvalidArgument("shape_and_slice '", spec, "': extent '", extent,
                               "' is neither '-' nor 'start,length'");
      KILN_ASSIGN_OR_RETURN(int64_t start, ParseInt(extent.substr(0, comma), spec));
      KILN_ASSIGN_OR_RETURN(int64_t length, ParseInt(extent.substr(comma + 1), spec));
      if (start < 0 || length < 0 || start > dims[d] || length > dims[d] - start)
        return InvalidArgument("shape_and_slice '", spec, "': extent '", extent,
                               "' does not fit dimension ", d, " of size ", dims[d]);
      out.slice.emplace_back(start, length);
    }
    i = end + 1;
  }
  if (out.slice.size() != dims.size())
    return InvalidArgument("shape_and_slice '", spec, "' has ", out.slice.size(), " extents for ",
                           dims.size(), " dimensions");
  return out;
}

}  // namespace kiln::exec::tensor_slices
