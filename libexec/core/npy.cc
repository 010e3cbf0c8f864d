// .npy encoding and decoding (NumPy's format.py, "NEP 1"): magic, version, a Python dict
// literal header, then the raw array bytes.
#include "kiln/core/npy.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <optional>
#include <vector>

#include "core/npy_decode.h"
#include "core/npy_pickle.h"
#include "kiln/core/allocator.h"
#include "kiln/core/file_util.h"

namespace kiln {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kAlign = 64;             // numpy.lib.format.ARRAY_ALIGN
constexpr size_t kGrowthAxisDigits = 21;  // numpy.lib.format.GROWTH_AXIS_MAX_DIGITS

struct NpyType {
  char kind;  // 'f', 'i', 'u', 'b', 'c', 'V'
  int size;
  DType dtype;
};

constexpr NpyType kTypes[] = {
    {'f', 4, DType::kFloat},
    {'f', 8, DType::kDouble},
    {'f', 2, DType::kHalf},
    {'i', 1, DType::kInt8},
    {'i', 2, DType::kInt16},
    {'i', 4, DType::kInt32},
    {'i', 8, DType::kInt64},
    {'u', 1, DType::kUInt8},
    {'u', 2, DType::kUInt16},
    {'u', 4, DType::kUInt32},
    {'u', 8, DType::kUInt64},
    {'b', 1, DType::kBool},
    {'c', 8, DType::kComplex64},
    {'c', 16, DType::kComplex128},
    // bfloat16 has no NumPy dtype of its own: NumPy with ml_dtypes (what TensorFlow's .numpy()
    // gives) saves it as a 2-byte void, '<V2', so that is how we read and write it.
    {'V', 2, DType::kBFloat16},
};

constexpr std::string_view kSupported =
    "'<f2', '<f4', '<f8', '|i1', '<i2', '<i4', '<i8', '|u1', '<u2', '<u4', '<u8', '|b1', "
    "'<c8', '<c16', '<V2' (bfloat16)";

// NumPy's fixed-width strings: 'S<n>' (n bytes each) and 'U<n>' (n UTF-32 code points each,
// '<' or '>' byte order); both are padded with NULs, which NumPy drops when reading.
struct NpyStringType {
  bool unicode = false;
  bool big_endian = false;
  size_t width = 0;  // characters per element
};

std::optional<NpyStringType> StringTypeFromDescr(std::string_view descr) {
  if (descr.size() < 2 || (descr[1] != 'S' && descr[1] != 'U')) return std::nullopt;
  if (std::string_view("<>|=").find(descr[0]) == std::string_view::npos) return std::nullopt;
  NpyStringType t;
  t.unicode = descr[1] == 'U';
  t.big_endian = descr[0] == '>' || (descr[0] == '=' && std::endian::native == std::endian::big);
  for (char c : descr.substr(2)) {
    if (!std::isdigit(static_cast<unsigned char>(c)) || t.width > (1u << 24)) return std::nullopt;
    t.width = t.width * 10 + static_cast<size_t>(c - '0');
  }
  return t;
}

// Appends code point c as UTF-8; false for values that are not Unicode scalar values.
bool AppendUtf8(uint32_t c, std::string* out) {
  if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return false;
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
  return true;
}

// A string tensor from fixed-width NumPy strings ('U' becomes UTF-8).
Result<Tensor> DecodeNpyStrings(std::string_view data, const NpyStringType& st, const Shape& shape,
                                std::string_view descr, std::string_view name) {
  const size_t unit = st.unicode ? 4 : 1;
  const size_t elem = st.width * unit;
  const uint64_t n = static_cast<uint64_t>(shape.num_elements());
  if ((elem == 0 && !data.empty()) ||
      (elem > 0 && (n > data.size() / elem || n * elem != data.size())))
    return DataLoss(name, ": .npy data has ", data.size(), " bytes; expected ", n * elem, " for ",
                    descr, " shape ", shape.ToString());
  KILN_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(CpuAllocator(), DType::kString, shape));
  std::string* out = t.data<std::string>();
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view raw = data.substr(i * elem, elem);
    if (!st.unicode) {
      while (!raw.empty() && raw.back() == '\0') raw.remove_suffix(1);
      out[i].assign(raw);
      continue;
    }
    size_t len = st.width;
    auto code = [&](size_t k) {
      uint32_t c = 0;
      for (size_t b = 0; b < 4; ++b) {
        const uint32_t byte = static_cast<unsigned char>(raw[4 * k + b]);
        c |= byte << (8 * (st.big_endian ? 3 - b : b));
      }
      return c;
    };
    while (len > 0 && code(len - 1) == 0) --len;
    for (size_t k = 0; k < len; ++k) {
      if (!AppendUtf8(code(k), &out[i]))
        return DataLoss(name, ": element ", i, " of the ", descr, " array holds ", code(k),
                        ", which is not a Unicode code point");
    }
  }
  return t;
}

struct NumericDescr {
  DType dtype;
  bool big_endian;
};

Result<NumericDescr> DTypeFromDescr(std::string_view descr, std::string_view name) {
  auto unsupported = [&](std::string_view why) {
    return Unimplemented(name, ": unsupported .npy dtype '", descr, "' (", why,
                         "); expected one of ", kSupported, ", in either byte order");
  };
  if (descr.size() < 3) return unsupported("not a simple dtype");
  char order = descr[0];
  char kind = descr[1];
  int size = 0;
  for (char c : descr.substr(2)) {
    if (!std::isdigit(static_cast<unsigned char>(c)) || size > 1000) {
      return unsupported("not a simple dtype");
    }
    size = size * 10 + (c - '0');
  }
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    return unsupported("unknown byte order");
  }
  for (const NpyType& t : kTypes) {
    if (t.kind != kind || t.size != size) continue;
    const bool big =
        size > 1 && (order == '>' || (order == '=' && std::endian::native == std::endian::big));
    // A void ('V2', bfloat16 as ml_dtypes saves it) has no byte order to swap by.
    if (big && kind == 'V') return unsupported("big-endian void");
    return NumericDescr{t.dtype, big};
  }
  return unsupported("no matching tensor dtype");
}

Result<std::string> DescrFromDType(DType dtype) {
  for (const NpyType& t : kTypes) {
    if (t.dtype == dtype) {
      return internal::StrCat(t.size == 1 ? '|' : '<', t.kind, t.size);
    }
  }
  return Unimplemented("dtype ", DTypeShortName(dtype), " has no .npy equivalent");
}

// A cursor over the header's Python literal: {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view name) : in_(text), name_(name) {}

  Status Parse(std::string* descr, bool* fortran, std::vector<int64_t>* shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    KILN_RETURN_IF_ERROR(Expect('{'));
    for (;;) {
      SkipSpace();
      if (Peek() == '}') break;
      KILN_ASSIGN_OR_RETURN(std::string key, ParseString());
      KILN_RETURN_IF_ERROR(Expect(':'));
      if (key == "descr") {
        SkipSpace();
        if (Peek() != '\'' && Peek() != '"') {
          return Unimplemented(name_,
                               ": structured .npy dtypes are not supported (descr is "
                               "not a string)");
        }
        KILN_ASSIGN_OR_RETURN(*descr, ParseString());
        have_descr = true;
      } else if (key == "fortran_order") {
        KILN_ASSIGN_OR_RETURN(*fortran, ParseBool());
        have_fortran = true;
      } else if (key == "shape") {
        KILN_ASSIGN_OR_RETURN(*shape, ParseTuple());
        have_shape = true;
      } else {
        return Error(internal::StrCat("unexpected key '", key, "'"));
      }
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == '}') break;
      return Error("expected ',' or '}'");
    }
    ++pos_;
    SkipSpace();
    if (pos_ != in_.size()) return Error("trailing characters after the header dict");
    if (!have_descr || !have_fortran || !have_shape) {
      return Error("expected the keys 'descr', 'fortran_order' and 'shape'");
    }
    return OkStatus();
  }

 private:
  Status Error(std::string_view what) const {
    return DataLoss(name_, ": malformed .npy header at character ", pos_, ": ", what,
                    " (header: ", in_, ")");
  }
  char Peek() const { return pos_ < in_.size() ? in_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < in_.size() && std::isspace(static_cast<unsigned char>(in_[pos_]))) ++pos_;
  }
  Status Expect(char c) {
    SkipSpace();
    if (Peek() != c) return Error(internal::StrCat("expected '", c, "'"));
    ++pos_;
    return OkStatus();
  }
  Result<std::string> ParseString() {
    SkipSpace();
    char quote = Peek();
    if (quote != '\'' && quote != '"') return Error("expected a quoted string");
    size_t end = in_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return Error("unterminated string");
    std::string s(in_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }
  Result<bool> ParseBool() {
    SkipSpace();
    if (in_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (in_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    return Error("expected True or False");
  }
  Result<std::vector<int64_t>> ParseTuple() {
    KILN_RETURN_IF_ERROR(Expect('('));
    std::vector<int64_t> dims;
    for (;;) {
      SkipSpace();
      if (Peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(Peek()))) return Error("expected a dimension");
      int64_t d = 0;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) {
        if (d > (INT64_MAX - 9) / 10) return Error("dimension too large");
        d = d * 10 + (in_[pos_++] - '0');
      }
      if (Peek() == 'L') ++pos_;  // Python 2 long
      dims.push_back(d);
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() != ')') return Error("expected ',' or ')' in shape");
    }
    ++pos_;
    return dims;
  }

  std::string_view in_;
  std::string_view name_;
  size_t pos_ = 0;
};

std::string ShapeRepr(const Shape& shape) {
  if (shape.rank() == 0) return "()";
  std::string s = "(";
  for (int i = 0; i < shape.rank(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape.dim(i));
  }
  if (shape.rank() == 1) s += ",";
  return s + ")";
}

}  // namespace

Result<NpyHeader> ParseNpyHeader(std::string_view bytes, std::string_view name) {
  if (bytes.size() < 10 || bytes.substr(0, kMagic.size()) != kMagic) {
    return DataLoss(name, ": not a .npy file (expected the magic \\x93NUMPY)");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  size_t header_len, prefix;
  auto byte = [&](size_t i) { return size_t{static_cast<unsigned char>(bytes[i])}; };
  if (major == 1) {
    header_len = byte(8) | byte(9) << 8;
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return DataLoss(name, ": .npy header is truncated");
    header_len = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
    prefix = 12;
  } else {
    return Unimplemented(name, ": .npy format version ", major, ".", minor,
                         " is not supported; expected 1.0, 2.0 or 3.0");
  }
  if (bytes.size() - prefix < header_len) {
    return DataLoss(name, ": .npy header is truncated (", header_len, " bytes announced, ",
                    bytes.size() - prefix, " present)");
  }
  NpyHeader h;
  std::vector<int64_t> dims;
  KILN_RETURN_IF_ERROR(HeaderParser(bytes.substr(prefix, header_len), name)
                           .Parse(&h.descr, &h.fortran_order, &dims));
  size_t elem = 0;
  if (h.descr.size() >= 2 && h.descr[1] == 'O') {  // Python objects: the data is a pickle
    h.dtype = DType::kString;
    h.objects = true;
  } else if (auto st = StringTypeFromDescr(h.descr)) {
    h.dtype = DType::kString;
    h.big_endian = st->big_endian;
    elem = st->width * (st->unicode ? 4 : 1);
  } else {
    KILN_ASSIGN_OR_RETURN(NumericDescr d, DTypeFromDescr(h.descr, name));
    h.dtype = d.dtype;
    h.big_endian = d.big_endian;
    elem = DTypeSize(d.dtype);
  }
  KILN_ASSIGN_OR_RETURN_CTX(h.shape, Shape::FromDims(dims), name, ": .npy shape");
  h.data_offset = prefix + header_len;
  // An empty array (any dimension 0) has no data, whatever its other dimensions.
  // num_elements saturates at INT64_MAX: no file holds that many.
  const auto n = static_cast<uint64_t>(h.shape.num_elements());
  if (n == static_cast<uint64_t>(INT64_MAX) ||
      __builtin_mul_overflow(n, static_cast<uint64_t>(elem), &h.data_bytes))
    h.data_bytes = UINT64_MAX;
  if (h.objects) h.data_bytes = UINT64_MAX;  // whatever the pickle takes
  return h;
}

namespace internal {

namespace {

// C order from Fortran order: element i of `dst` (C order) is the element with the same index
// in `src` (first index fastest).
void FortranToC(const char* src, char* dst, const Shape& shape, size_t elem) {
  const int rank = shape.rank();
  const int64_t n = shape.num_elements();
  std::vector<int64_t> stride(static_cast<size_t>(rank)), index(static_cast<size_t>(rank), 0);
  int64_t s = 1;
  for (int d = 0; d < rank; ++d) {
    stride[static_cast<size_t>(d)] = s;
    s *= shape.dim(d);
  }
  int64_t from = 0;  // element offset in src of `index`
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + static_cast<size_t>(i) * elem, src + static_cast<size_t>(from) * elem, elem);
    for (int d = rank - 1; d >= 0; --d) {  // the next C-order index: last dimension fastest
      const auto k = static_cast<size_t>(d);
      from += stride[k];
      if (++index[k] < shape.dim(d)) break;
      from -= stride[k] * index[k];
      index[k] = 0;
    }
  }
}

// Reverses the bytes of each `unit`-byte word.
void SwapBytes(char* data, size_t bytes, size_t unit) {
  for (size_t at = 0; at + unit <= bytes; at += unit) std::reverse(data + at, data + at + unit);
}

}  // namespace

Result<Tensor> DecodeNpyData(const NpyHeader& h, const NpyDataSource& source, std::string_view name,
                             Allocator* allocator) {
  if (h.objects)
    return Unimplemented(name, ": holds Python objects (pickled), which are read from a .npy ",
                         "file only; save strings as a fixed-width array: numpy.array(values, ",
                         "dtype='S')");
  if (allocator == nullptr) allocator = CpuAllocator();
  const bool strings = h.dtype == DType::kString;
  const bool transpose = h.fortran_order && h.shape.rank() > 1;
  const auto bytes = static_cast<size_t>(h.data_bytes);
  const auto raw_buffer = [&]() {
    return Tensor::Allocate(allocator, DType::kUInt8,
                            Shape{static_cast<int64_t>(std::max<size_t>(bytes, 1))});
  };
  Tensor out, raw;
  if (!strings) {
    KILN_ASSIGN_OR_RETURN(out, Tensor::Allocate(allocator, h.dtype, h.shape));
  }
  if (strings || transpose) {
    KILN_ASSIGN_OR_RETURN(raw, raw_buffer());
  } else {
    raw = out;
  }
  auto* data = static_cast<char*>(raw.raw_data());
  if (bytes > 0) KILN_RETURN_IF_ERROR(source(data, bytes));
  if (transpose && bytes > 0) {
    const auto n = static_cast<size_t>(h.shape.num_elements());
    Tensor c_order = out;
    if (strings) {
      KILN_ASSIGN_OR_RETURN(c_order, raw_buffer());
    }
    FortranToC(data, static_cast<char*>(c_order.raw_data()), h.shape, bytes / n);
    raw = c_order;
    data = static_cast<char*>(raw.raw_data());
  }
  if (strings) {
    const std::optional<NpyStringType> st = StringTypeFromDescr(h.descr);
    return DecodeNpyStrings(std::string_view(data, bytes), *st, h.shape, h.descr, name);
  }
  if (h.big_endian != (std::endian::native == std::endian::big) && DTypeSize(h.dtype) > 1) {
    const bool complex = h.dtype == DType::kComplex64 || h.dtype == DType::kComplex128;
    SwapBytes(data, bytes, DTypeSize(h.dtype) / (complex ? 2 : 1));
  }
  if (h.dtype == DType::kBool) {
    auto* b = reinterpret_cast<uint8_t*>(data);
    for (size_t i = 0; i < bytes; ++i) b[i] = b[i] != 0;
  }
  return out;
}

}  // namespace internal

Result<Tensor> ParseNpy(std::string_view bytes, std::string_view name) {
  KILN_ASSIGN_OR_RETURN(NpyHeader h, ParseNpyHeader(bytes, name));
  std::string_view data = bytes.substr(h.data_offset);
  if (h.objects) return internal::DecodeNpyObjects(data, h.shape, name);
  if (h.data_bytes != data.size()) {
    return DataLoss(name, ": .npy data has ", data.size(), " bytes; expected ",
                    h.data_bytes == UINT64_MAX ? std::string("more") : std::to_string(h.data_bytes),
                    " for ", h.descr, " shape ", h.shape.ToString());
  }
  return internal::DecodeNpyData(
      h,
      [&](char* dst, size_t n) {
        std::memcpy(dst, data.data(), n);
        return OkStatus();
      },
      name);
}

Result<Tensor> ReadNpy(const std::filesystem::path& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  return ParseNpy(bytes, path.string());
}

Result<std::string> SerializeNpy(const Tensor& tensor) {
  if (!tensor.IsInitialized())
    return InvalidArgument("cannot write an uninitialized tensor as .npy");
  // Strings become NumPy bytes ('S', as wide as the longest element; NumPy drops trailing
  // NULs when it reads them back).
  size_t width = 1;
  if (tensor.dtype() == DType::kString)
    for (const std::string& e : tensor.flat<std::string>()) width = std::max(width, e.size());
  std::string descr;
  if (tensor.dtype() == DType::kString) {
    descr = "|S" + std::to_string(width);
  } else {
    KILN_ASSIGN_OR_RETURN(descr, DescrFromDType(tensor.dtype()));
  }
  std::string dict = "{'descr': '" + descr +
                     "', 'fortran_order': False, 'shape': " + ShapeRepr(tensor.shape()) + ", }";
  // NumPy leaves room to grow the first axis in place.
  if (tensor.rank() > 0) {
    size_t digits = std::to_string(tensor.dim(0)).size();
    if (digits < kGrowthAxisDigits) dict.append(kGrowthAxisDigits - digits, ' ');
  }
  std::string out;
  for (int major : {1, 2}) {
    const size_t prefix = major == 1 ? 10 : 12;
    const size_t hlen = dict.size() + 1;  // + '\n'
    const size_t pad = kAlign - (kMagic.size() + 2 + (prefix - 8) + hlen) % kAlign;
    const size_t total = hlen + pad;  // NumPy pads 1..64 bytes, never 0
    if (major == 1 && total > 0xffff) continue;
    out.assign(kMagic);
    out.push_back(static_cast<char>(major));
    out.push_back(0);
    for (size_t i = 0; i < prefix - 8; ++i) out.push_back(static_cast<char>(total >> (8 * i)));
    out += dict;
    out.append(total - hlen, ' ');
    out.push_back('\n');
    break;
  }
  if (tensor.dtype() == DType::kString) {
    for (const std::string& e : tensor.flat<std::string>()) {
      out += e;
      out.append(width - e.size(), '\0');
    }
    return out;
  }
  const size_t bytes = static_cast<size_t>(tensor.NumElements()) * DTypeSize(tensor.dtype());
  out.append(static_cast<const char*>(tensor.raw_data()), bytes);
  return out;
}

Status WriteNpy(const std::filesystem::path& path, const Tensor& tensor) {
  KILN_ASSIGN_OR_RETURN_CTX(std::string bytes, SerializeNpy(tensor), "writing ", path.string());
  return WriteStringToFile(path, bytes);
}

}  // namespace kiln
