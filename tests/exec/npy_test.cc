#include "kiln/core/npy.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include "core/npy_decode.h"
#include "exec/test_util.h"
#include "kiln/core/allocator.h"

#if __has_include(<zlib.h>)
#include <zlib.h>
#define KILN_TEST_HAVE_ZLIB 1
#endif

namespace kiln {
namespace {

using kiln::testing::TempDir;
using kiln::testing::WriteAll;

// ---- helpers ---------------------------------------------------------------------------------

// Plain bitwise CRC-32 (zip's), independent of the library under test.
uint32_t ZipCrc32(std::string_view s) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
  }
  return ~c;
}

void Put16(std::string* s, uint32_t v) {
  s->push_back(static_cast<char>(v));
  s->push_back(static_cast<char>(v >> 8));
}
void Put32(std::string* s, uint32_t v) {
  Put16(s, v & 0xffff);
  Put16(s, v >> 16);
}
void Put64(std::string* s, uint64_t v) {
  Put32(s, static_cast<uint32_t>(v));
  Put32(s, static_cast<uint32_t>(v >> 32));
}

struct ZipMember {
  std::string name;
  std::string data;     // uncompressed
  std::string stored;   // bytes in the archive
  uint16_t method = 0;  // 0 stored, 8 deflate
};

// A minimal zip writer. With zip64, both headers carry 0xffffffff sizes (and the central one
// a 0xffffffff offset) plus zip64 extra fields holding the real values.
std::string MakeZip(const std::vector<ZipMember>& members, bool zip64 = false) {
  std::string out, central;
  for (const ZipMember& m : members) {
    const uint32_t offset = static_cast<uint32_t>(out.size());
    const uint32_t crc = ZipCrc32(m.data);
    Put32(&out, 0x04034b50);
    Put16(&out, 20);
    Put16(&out, 0);
    Put16(&out, m.method);
    Put16(&out, 0);
    Put16(&out, 0x21);
    Put32(&out, crc);
    std::string local_extra;
    if (zip64) {  // as zipfile.open(..., force_zip64=True) writes it
      Put16(&local_extra, 1);
      Put16(&local_extra, 16);
      Put64(&local_extra, m.data.size());
      Put64(&local_extra, m.stored.size());
    }
    Put32(&out, zip64 ? 0xffffffffu : static_cast<uint32_t>(m.stored.size()));
    Put32(&out, zip64 ? 0xffffffffu : static_cast<uint32_t>(m.data.size()));
    Put16(&out, static_cast<uint32_t>(m.name.size()));
    Put16(&out, static_cast<uint32_t>(local_extra.size()));
    out += m.name;
    out += local_extra;
    out += m.stored;

    std::string extra;
    if (zip64) {
      Put16(&extra, 1);
      Put16(&extra, 24);
      Put64(&extra, m.data.size());
      Put64(&extra, m.stored.size());
      Put64(&extra, offset);
    }
    Put32(&central, 0x02014b50);
    Put16(&central, 45);
    Put16(&central, 45);
    Put16(&central, 0);
    Put16(&central, m.method);
    Put16(&central, 0);
    Put16(&central, 0x21);
    Put32(&central, crc);
    Put32(&central, zip64 ? 0xffffffffu : static_cast<uint32_t>(m.stored.size()));
    Put32(&central, zip64 ? 0xffffffffu : static_cast<uint32_t>(m.data.size()));
    Put16(&central, static_cast<uint32_t>(m.name.size()));
    Put16(&central, static_cast<uint32_t>(extra.size()));
    Put16(&central, 0);
    Put16(&central, 0);
    Put16(&central, 0);
    Put32(&central, 0);
    Put32(&central, zip64 ? 0xffffffffu : offset);
    central += m.name;
    central += extra;
  }
  const uint32_t cd_offset = static_cast<uint32_t>(out.size());
  out += central;
  Put32(&out, 0x06054b50);
  Put16(&out, 0);
  Put16(&out, 0);
  Put16(&out, static_cast<uint32_t>(members.size()));
  Put16(&out, static_cast<uint32_t>(members.size()));
  Put32(&out, static_cast<uint32_t>(central.size()));
  Put32(&out, cd_offset);
  Put16(&out, 0);
  return out;
}

ZipMember Stored(std::string name, const std::string& data) {
  ZipMember m{std::move(name), data, data, 0};
  return m;
}

#ifdef KILN_TEST_HAVE_ZLIB
ZipMember Deflated(std::string name, std::string data) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&zs, data.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(data.data());
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return ZipMember{std::move(name), std::move(data), std::move(out), 8};
}
#endif

template <typename T>
Tensor Make(std::vector<T> v, Shape s) {
  auto t = Tensor::FromVector<T>(v, s);
  REQUIRE(t.ok());
  return *t;
}

// A .npy file from a header dict literal and raw data, with the given format version.
std::string HandNpy(std::string_view dict, std::string_view data, int major = 1) {
  std::string header(dict);
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 16 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  if (major == 1) {
    Put16(&out, static_cast<uint32_t>(header.size()));
  } else {
    Put32(&out, static_cast<uint32_t>(header.size()));
  }
  return out + header + std::string(data);
}

template <typename T>
std::string RawBytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// ---- .npy ------------------------------------------------------------------------------------

TEST_CASE("npy: every supported dtype round-trips through bytes and files") {
  std::vector<Tensor> tensors = {
      Make<float>({1.5f, -2, 3, 4, 5, 6}, Shape{2, 3}),
      Make<double>({1e-300, 2.5}, Shape{2}),
      Make<int32_t>({-7, 0, 7}, Shape{3, 1}),
      Make<int64_t>({-(1LL << 40), 1LL << 62}, Shape{2}),
      Make<uint8_t>({0, 255, 128}, Shape{3}),
      Make<int8_t>({-128, 127}, Shape{1, 2}),
      Make<int16_t>({-32768, 32767}, Shape{2}),
      Make<uint16_t>({65535, 1}, Shape{2}),
      Make<uint32_t>({4000000000u}, Shape{1}),
      Make<uint64_t>({18000000000000000000ull, 3}, Shape{2}),
      Make<bool>({true, false, true, true}, Shape{2, 2}),
      Make<std::complex<float>>({{1, 2}, {3, -4}}, Shape{2}),
      Make<std::complex<double>>({{1, 2}}, Shape{1}),
      Make<Half>({Half{0x3c00}, Half{0xc000}}, Shape{2}),
      Make<BFloat16>({BFloat16{0x3fc0}, BFloat16{0x4000}}, Shape{2}),
      Tensor::Scalar<float>(42.0f),
      Tensor(DType::kInt32, Shape{0, 3}),
      // Empty behind a non-zero dimension (a batch of empty sequences).
      Tensor(DType::kFloat, Shape{2, 0}),
      Tensor(DType::kFloat, Shape{2, 0, 3}),
  };
  TempDir dir;
  int i = 0;
  for (const Tensor& t : tensors) {
    CAPTURE(t.DebugString());
    auto bytes = SerializeNpy(t);
    REQUIRE_MESSAGE(bytes.ok(), bytes.status().ToString());
    // Data starts 64-byte aligned, as NumPy writes it.
    CHECK((bytes->size() - t.ByteSize()) % 64 == 0);
    auto back = ParseNpy(*bytes);
    REQUIRE_MESSAGE(back.ok(), back.status().ToString());
    CHECK(TensorsEqual(*back, t));

    auto path = dir.path() / ("t" + std::to_string(i++) + ".npy");
    REQUIRE(WriteNpy(path, t).ok());
    auto from_file = ReadNpy(path);
    REQUIRE_MESSAGE(from_file.ok(), from_file.status().ToString());
    CHECK(TensorsEqual(*from_file, t));
  }
}

TEST_CASE("npy: header bytes are NumPy's") {
  auto bytes = SerializeNpy(Make<float>({1, 2, 3}, Shape{3}));
  REQUIRE(bytes.ok());
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  std::string want = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict;
  want += std::string(128 - 1 - want.size(), ' ') + "\n";
  REQUIRE(bytes->size() == 128 + 12);
  CHECK(bytes->substr(0, 128) == want);

  auto scalar = SerializeNpy(Tensor::Scalar<uint8_t>(7));
  REQUIRE(scalar.ok());
  CHECK(scalar->find("{'descr': '|u1', 'fortran_order': False, 'shape': (), }") == 10);
  // bfloat16 as NumPy with ml_dtypes saves it: a 2-byte void.
  auto bf16 = SerializeNpy(Make<BFloat16>({BFloat16{0x3fc0}, BFloat16{0x4000}}, Shape{2}));
  REQUIRE(bf16.ok());
  CHECK(bf16->find("{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }") == 10);
  auto matrix = SerializeNpy(Tensor(DType::kBool, Shape{2, 3}));
  REQUIRE(matrix.ok());
  CHECK(matrix->find("'descr': '|b1'") != std::string::npos);
  CHECK(matrix->find("'shape': (2, 3), }") != std::string::npos);
}

TEST_CASE("npy: hand-written headers of versions 1, 2 and 3 parse") {
  const std::string data = RawBytes<int64_t>({1, -2, 3, -4});
  for (int major : {1, 2, 3}) {
    CAPTURE(major);
    auto t = ParseNpy(
        HandNpy("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }", data, major));
    REQUIRE_MESSAGE(t.ok(), t.status().ToString());
    CHECK(TensorsEqual(*t, Make<int64_t>({1, -2, 3, -4}, Shape{2, 2})));
  }
  // Key order, double quotes, no trailing comma, Python 2 longs, '=' byte order.
  auto t = ParseNpy(HandNpy("{\"shape\": (3L,), \"fortran_order\": False, \"descr\": \"=i4\"}",
                            RawBytes<int32_t>({5, 6, 7})));
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  CHECK(TensorsEqual(*t, Make<int32_t>({5, 6, 7}, Shape{3})));
  // A bool byte other than 0/1 reads as true.
  auto b = ParseNpy(HandNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                            std::string("\x00\x02", 2)));
  REQUIRE(b.ok());
  CHECK(b->flat<bool>()[0] == false);
  CHECK(b->flat<bool>()[1] == true);
}

TEST_CASE("npy: unsupported and malformed files are refused with what was expected") {
  const std::string four = RawBytes<float>({1, 2});
  auto big_void =
      ParseNpy(HandNpy("{'descr': '>V2', 'fortran_order': False, 'shape': (2,), }", four), "v.npy");
  REQUIRE(!big_void.ok());
  CHECK(big_void.status().message().find("v.npy") != std::string::npos);
  CHECK(big_void.status().message().find("big-endian void") != std::string::npos);
  CHECK(big_void.status().message().find("'<f4'") != std::string::npos);

  auto half_float =
      ParseNpy(HandNpy("{'descr': '<f3', 'fortran_order': False, 'shape': (2,), }", four));
  REQUIRE(!half_float.ok());
  CHECK(half_float.status().message().find("no matching tensor dtype") != std::string::npos);

  auto unicode =
      ParseNpy(HandNpy("{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", four));
  REQUIRE(!unicode.ok());  // 2 x 3 code points need 24 bytes
  CHECK(unicode.status().message().find("8 bytes; expected 24 for <U3") != std::string::npos);

  auto objects =
      ParseNpy(HandNpy("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", four));
  REQUIRE(!objects.ok());  // not a pickle
  CHECK(objects.status().message().find("pickled object array") != std::string::npos);

  std::string bad_code(4, '\0');
  bad_code[2] = '\x11';  // 0x110000 is not a code point
  auto not_unicode =
      ParseNpy(HandNpy("{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }", bad_code));
  REQUIRE(!not_unicode.ok());
  CHECK(not_unicode.status().message().find("not a Unicode code point") != std::string::npos);

  auto structured =
      ParseNpy(HandNpy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", four));
  REQUIRE(!structured.ok());
  CHECK(structured.status().message().find("structured") != std::string::npos);

  auto short_data =
      ParseNpy(HandNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", four), "s.npy");
  REQUIRE(!short_data.ok());
  CHECK(short_data.status().code() == StatusCode::kDataLoss);
  CHECK(short_data.status().message().find("8 bytes; expected 12") != std::string::npos);

  auto missing_key = ParseNpy(HandNpy("{'descr': '<f4', 'shape': (2,), }", four));
  REQUIRE(!missing_key.ok());
  CHECK(missing_key.status().message().find("fortran_order") != std::string::npos);

  auto not_npy = ParseNpy("PK\x03\x04 definitely not npy", "z.npy");
  REQUIRE(!not_npy.ok());
  CHECK(not_npy.status().message().find("not a .npy file") != std::string::npos);

  auto v9 = ParseNpy(std::string("\x93NUMPY\x09\x00\x00\x00", 10));
  REQUIRE(!v9.ok());
  CHECK(v9.status().code() == StatusCode::kUnimplemented);

  auto missing = ReadNpy("/nonexistent/dir/a.npy");
  REQUIRE(!missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message().find("/nonexistent/dir/a.npy") != std::string::npos);

  auto res = SerializeNpy(Tensor(DType::kResource, Shape{}));
  REQUIRE(!res.ok());
  CHECK(res.status().message().find("resource") != std::string::npos);
}

TEST_CASE("npy: NumPy fixed-width strings ('S' bytes, 'U' unicode) read as string tensors") {
  // numpy.array([b'ab', b'c'], dtype='S2'): NUL-padded, NULs dropped when read.
  auto bytes = ParseNpy(HandNpy("{'descr': '|S2', 'fortran_order': False, 'shape': (2,), }",
                                std::string("abc\0", 4)));
  REQUIRE_MESSAGE(bytes.ok(), bytes.status().ToString());
  CHECK(TensorsEqual(*bytes, Make<std::string>({"ab", "c"}, Shape{2})));
  // numpy.array(['h\u00e9', 'x'], dtype='<U2'): UTF-32 code points, read as UTF-8.
  std::string utf32;
  for (uint32_t c : {0x68u, 0xe9u, 0x78u, 0u})
    for (int b = 0; b < 4; ++b) utf32.push_back(static_cast<char>((c >> (8 * b)) & 0xff));
  auto text =
      ParseNpy(HandNpy("{'descr': '<U2', 'fortran_order': False, 'shape': (2, 1), }", utf32));
  REQUIRE_MESSAGE(text.ok(), text.status().ToString());
  CHECK(TensorsEqual(*text, Make<std::string>({"h\xc3\xa9", "x"}, Shape{2, 1})));
  // Big-endian 'U' too.
  std::string be(4, '\0');
  be[3] = 'z';
  auto big = ParseNpy(HandNpy("{'descr': '>U1', 'fortran_order': False, 'shape': (), }", be));
  REQUIRE(big.ok());
  CHECK(big->scalar<std::string>() == "z");
  // Written as 'S' as wide as the longest element, and read back the same.
  const Tensor words = Make<std::string>({"", "abc", "h\xc3\xa9"}, Shape{3});
  auto npy = SerializeNpy(words);
  REQUIRE(npy.ok());
  CHECK(npy->find("'descr': '|S3'") != std::string::npos);
  auto back = ParseNpy(*npy);
  REQUIRE(back.ok());
  CHECK(TensorsEqual(*back, words));
}

// Big-endian bytes of each element of `v`.
template <typename T>
std::string BigEndianBytes(const std::vector<T>& v) {
  std::string out = RawBytes(v);
  for (size_t at = 0; at < out.size(); at += sizeof(T))
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(at),
                 out.begin() + static_cast<std::ptrdiff_t>(at + sizeof(T)));
  return out;
}

TEST_CASE("npy: big-endian arrays are read byte-swapped, as numpy.load reads them") {
  auto f4 = ParseNpy(HandNpy("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }",
                             BigEndianBytes<float>({1.5f, -2, 3, 1e30f})));
  REQUIRE_MESSAGE(f4.ok(), f4.status().ToString());
  CHECK(TensorsEqual(*f4, Make<float>({1.5f, -2, 3, 1e30f}, Shape{2, 2})));
  auto i8 = ParseNpy(HandNpy("{'descr': '>i8', 'fortran_order': False, 'shape': (3,), }",
                             BigEndianBytes<int64_t>({-1, 1LL << 40, 7})));
  REQUIRE_MESSAGE(i8.ok(), i8.status().ToString());
  CHECK(TensorsEqual(*i8, Make<int64_t>({-1, 1LL << 40, 7}, Shape{3})));
  auto u2 = ParseNpy(HandNpy("{'descr': '>u2', 'fortran_order': False, 'shape': (2,), }",
                             BigEndianBytes<uint16_t>({0x1234, 65535})));
  REQUIRE_MESSAGE(u2.ok(), u2.status().ToString());
  CHECK(TensorsEqual(*u2, Make<uint16_t>({0x1234, 65535}, Shape{2})));
  // Complex numbers swap each part on its own.
  auto c8 = ParseNpy(HandNpy("{'descr': '>c8', 'fortran_order': False, 'shape': (1,), }",
                             BigEndianBytes<float>({1.25f, -4})));
  REQUIRE_MESSAGE(c8.ok(), c8.status().ToString());
  CHECK(TensorsEqual(*c8, Make<std::complex<float>>({{1.25f, -4}}, Shape{1})));
  // float16, and single bytes ('>i1' is what '|i1' is).
  auto f2 = ParseNpy(HandNpy("{'descr': '>f2', 'fortran_order': False, 'shape': (1,), }",
                             BigEndianBytes<uint16_t>({0x3c00})));
  REQUIRE_MESSAGE(f2.ok(), f2.status().ToString());
  CHECK(f2->flat<Half>()[0].bits == 0x3c00);
  auto i1 = ParseNpy(HandNpy("{'descr': '>i1', 'fortran_order': False, 'shape': (2,), }",
                             RawBytes<int8_t>({-3, 4})));
  REQUIRE_MESSAGE(i1.ok(), i1.status().ToString());
  CHECK(TensorsEqual(*i1, Make<int8_t>({-3, 4}, Shape{2})));
}

TEST_CASE("npy: Fortran-order arrays are read into C order") {
  // numpy.asfortranarray(numpy.arange(6).reshape(2, 3)): column by column.
  auto m = ParseNpy(HandNpy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
                            RawBytes<int32_t>({0, 3, 1, 4, 2, 5})));
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  CHECK(TensorsEqual(*m, Make<int32_t>({0, 1, 2, 3, 4, 5}, Shape{2, 3})));
  // Rank 3, big-endian too: element (i, j, k) lies at i + 2 j + 6 k.
  std::vector<double> fortran(24), c_order(24);
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < 3; ++j)
      for (size_t k = 0; k < 4; ++k) {
        const auto v = static_cast<double>(100 * i + 10 * j + k);
        c_order[i * 12 + j * 4 + k] = v;
        fortran[i + 2 * j + 6 * k] = v;
      }
  auto cube = ParseNpy(HandNpy("{'descr': '>f8', 'fortran_order': True, 'shape': (2, 3, 4), }",
                               BigEndianBytes(fortran)));
  REQUIRE_MESSAGE(cube.ok(), cube.status().ToString());
  CHECK(TensorsEqual(*cube, Make<double>(c_order, Shape{2, 3, 4})));
  // Rank 1 and empty arrays are the same in both orders; strings move whole.
  auto v = ParseNpy(
      HandNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", RawBytes<float>({1, 2})));
  REQUIRE(v.ok());
  CHECK(TensorsEqual(*v, Make<float>({1, 2}, Shape{2})));
  auto empty = ParseNpy(HandNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (0, 3), }", ""));
  REQUIRE(empty.ok());
  CHECK(empty->shape() == Shape{0, 3});
  auto words = ParseNpy(HandNpy("{'descr': '|S2', 'fortran_order': True, 'shape': (2, 2), }",
                                std::string("a\0c\0bbdd", 8)));
  REQUIRE_MESSAGE(words.ok(), words.status().ToString());
  CHECK(TensorsEqual(*words, Make<std::string>({"a", "bb", "c", "dd"}, Shape{2, 2})));
}

// An allocator that has no memory to give.
class NoMemory final : public Allocator {
 public:
  void* Allocate(size_t) override { return nullptr; }
  void Deallocate(void*, size_t) override {}
  std::string_view Name() const override { return "empty"; }
};

TEST_CASE("npy: an array too big for the memory there is is a ResourceExhausted error") {
  // The header of a (268435456, 2) float32 array: 2 GiB of data. Decoding it must not abort
  // the program when the memory cannot be had (TensorBuffer's unchecked constructor does).
  const std::string npy =
      HandNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (268435456, 2), }", "");
  auto header = ParseNpyHeader(npy, "big.npy");
  REQUIRE_MESSAGE(header.ok(), header.status().ToString());
  CHECK(header->data_bytes == (uint64_t{1} << 31));
  CHECK(header->data_offset == npy.size());
  bool read = false;
  NoMemory none;
  auto t = internal::DecodeNpyData(
      *header,
      [&](char*, size_t) {
        read = true;
        return OkStatus();
      },
      "big.npy", &none);
  REQUIRE(!t.ok());
  CHECK(t.status().code() == StatusCode::kResourceExhausted);
  CHECK(t.status().message().find("2147483648 bytes") != std::string::npos);
  CHECK(!read);  // nothing is read before the memory is there
}

TEST_CASE("npy: the header alone says dtype, shape and data size") {
  const std::string npy = HandNpy("{'descr': '>i8', 'fortran_order': True, 'shape': (3, 5), }",
                                  "(the data is not needed)");
  auto h = ParseNpyHeader(npy.substr(0, npy.find('\n') + 1), "h.npy");
  REQUIRE_MESSAGE(h.ok(), h.status().ToString());
  CHECK(h->dtype == DType::kInt64);
  CHECK(h->shape == Shape{3, 5});
  CHECK(h->fortran_order);
  CHECK(h->big_endian);
  CHECK(h->descr == ">i8");
  CHECK(h->data_bytes == 120);
  // A count of bytes that overflows is "more than any file": never matched by the data.
  auto huge = ParseNpyHeader(HandNpy(
      "{'descr': '<c16', 'fortran_order': False, 'shape': (4611686018427387904, 2), }", ""));
  REQUIRE_MESSAGE(huge.ok(), huge.status().ToString());
  CHECK(huge->data_bytes == UINT64_MAX);
  auto parsed = ParseNpy(HandNpy(
      "{'descr': '<c16', 'fortran_order': False, 'shape': (4611686018427387904, 2), }", "1234"));
  REQUIRE(!parsed.ok());
  CHECK(parsed.status().message().find("4 bytes; expected more") != std::string::npos);
}

// ---- .npz ------------------------------------------------------------------------------------

TEST_CASE("npz: stored archives (numpy.savez) read back by name") {
  Tensor a = Make<float>({1, 2, 3, 4}, Shape{2, 2});
  Tensor b = Make<int64_t>({9}, Shape{});
  std::string zip =
      MakeZip({Stored("a.npy", *SerializeNpy(a)), Stored("arr_1.npy", *SerializeNpy(b))});
  TempDir dir;
  auto path = dir.path() / "x.npz";
  WriteAll(path, zip);
  auto got = ReadNpz(path);
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  REQUIRE(got->size() == 2);
  CHECK(TensorsEqual(got->at("a"), a));
  CHECK(TensorsEqual(got->at("arr_1"), b));

  // zip64 extra fields (as zipfile writes with force_zip64, which numpy uses).
  auto z64 = ParseNpz(MakeZip({Stored("a.npy", *SerializeNpy(a))}, true));
  REQUIRE_MESSAGE(z64.ok(), z64.status().ToString());
  CHECK(TensorsEqual(z64->at("a"), a));
}

#ifdef KILN_TEST_HAVE_ZLIB
TEST_CASE("npz: deflated archives (numpy.savez_compressed) read back") {
  std::vector<float> big(10000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 17);
  Tensor a = Make<float>(big, Shape{100, 100});
  Tensor b = Make<uint8_t>({1, 2, 3}, Shape{3});
  ZipMember da = Deflated("weights.npy", *SerializeNpy(a));
  CHECK(da.stored.size() < da.data.size() / 4);  // really compressed
  auto got = ParseNpz(MakeZip({da, Deflated("b.npy", *SerializeNpy(b))}), "c.npz");
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  CHECK(TensorsEqual(got->at("weights"), a));
  CHECK(TensorsEqual(got->at("b"), b));
  auto z64 = ParseNpz(MakeZip({da}, true), "c64.npz");
  REQUIRE_MESSAGE(z64.ok(), z64.status().ToString());
  CHECK(TensorsEqual(z64->at("weights"), a));

  // Corrupt deflate data is a clear error naming the entry.
  ZipMember broken = da;
  for (size_t i = 10; i < 40; ++i) broken.stored[i] = static_cast<char>(0xff);
  auto bad = ParseNpz(MakeZip({broken}), "c.npz");
  REQUIRE(!bad.ok());
  CHECK(bad.status().message().find("c.npz") != std::string::npos);
  CHECK(bad.status().message().find("weights.npy") != std::string::npos);
}
#else
TEST_CASE("npz: deflated archives") { MESSAGE("zlib.h not available to tests: skipped"); }
#endif

TEST_CASE("npz: corrupt and foreign archives are refused clearly") {
  Tensor a = Make<int32_t>({1, 2}, Shape{2});
  std::string zip = MakeZip({Stored("a.npy", *SerializeNpy(a))});
  std::string flipped = zip;
  flipped[30 + 5 + 130] ^= 0x01;  // in the array data of a.npy
  auto crc = ParseNpz(flipped, "f.npz");
  REQUIRE(!crc.ok());
  CHECK(crc.status().message().find("CRC-32 mismatch") != std::string::npos);
  CHECK(crc.status().message().find("'a.npy'") != std::string::npos);

  auto not_zip = ParseNpz(std::string(100, 'x'), "junk.npz");
  REQUIRE(!not_zip.ok());
  CHECK(not_zip.status().message().find("junk.npz") != std::string::npos);

  auto foreign = ParseNpz(MakeZip({Stored("readme.txt", "hello")}), "r.npz");
  REQUIRE(!foreign.ok());
  CHECK(foreign.status().message().find("'readme.txt' is not a .npy array") != std::string::npos);

  auto truncated = ParseNpz(zip.substr(0, zip.size() - 30), "t.npz");
  REQUIRE(!truncated.ok());
  CHECK(truncated.status().code() == StatusCode::kDataLoss);
}

TEST_CASE("npz: NpzReader lists the arrays and decodes only the one asked for") {
  Tensor a = Make<float>({1, 2, 3, 4}, Shape{2, 2});
  Tensor b = Make<int32_t>({5, 6, 7}, Shape{3});
  ZipMember broken = Stored("b.npy", *SerializeNpy(b));
  broken.stored.back() ^= 0x40;  // the CRC (of `data`) no longer matches what is stored
  const std::string zip = MakeZip({Stored("a.npy", *SerializeNpy(a)), broken});
  auto npz = NpzReader::Open(zip, "two.npz");
  REQUIRE_MESSAGE(npz.ok(), npz.status().ToString());
  CHECK(npz->keys() == std::vector<std::string>{"a", "b"});
  CHECK(npz->Contains("b"));
  CHECK(!npz->Contains("c"));
  // Only 'a' is decoded: the corrupt 'b' does not stand in the way.
  auto got = npz->Read("a");
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  CHECK(TensorsEqual(*got, a));
  // The header of 'b' reads without its data (so without its CRC); the data is then refused.
  auto hb = npz->Header("b");
  REQUIRE_MESSAGE(hb.ok(), hb.status().ToString());
  CHECK(hb->dtype == DType::kInt32);
  CHECK(hb->shape == Shape{3});
  auto bad = npz->Read("b");
  REQUIRE(!bad.ok());
  CHECK(bad.status().message().find("CRC-32 mismatch") != std::string::npos);
  CHECK(!ParseNpz(zip, "two.npz").ok());  // every array: 'b' too
  auto missing = npz->Header("c");
  REQUIRE(!missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message().find("'a', 'b'") != std::string::npos);

  // A header that promises other data than the entry holds is refused before any data is read.
  ZipMember lying = Stored("x.npy", HandNpy("{'descr': '<f4', 'fortran_order': False, "
                                            "'shape': (268435456, 2), }",
                                            RawBytes<float>({1, 2})));
  const std::string lying_zip = MakeZip({lying});  // the reader views the bytes
  auto liar = NpzReader::Open(lying_zip, "l.npz");
  REQUIRE(liar.ok());
  auto lh = liar->Header("x");
  REQUIRE(!lh.ok());
  CHECK(lh.status().code() == StatusCode::kDataLoss);
  CHECK(lh.status().message().find("8 bytes; expected 2147483648") != std::string::npos);
}

#ifdef KILN_TEST_HAVE_ZLIB
TEST_CASE("npz: deflated entries inflate into the tensor, in C order and byte-swapped") {
  // A big-endian Fortran-order array, deflated: its header is inflated first, then its data.
  std::vector<int64_t> fortran(600), c_order(600);
  for (size_t i = 0; i < 20; ++i)
    for (size_t j = 0; j < 30; ++j) {
      c_order[i * 30 + j] = static_cast<int64_t>(i * 1000 + j);
      fortran[i + 20 * j] = static_cast<int64_t>(i * 1000 + j);
    }
  ZipMember m =
      Deflated("f.npy", HandNpy("{'descr': '>i8', 'fortran_order': True, 'shape': (20, 30), }",
                                BigEndianBytes(fortran), 2));
  const std::string zip =
      MakeZip({m, Deflated("s.npy", *SerializeNpy(Make<std::string>({"x", "yz"}, Shape{2})))});
  auto npz = NpzReader::Open(zip, "d.npz");
  REQUIRE_MESSAGE(npz.ok(), npz.status().ToString());
  auto h = npz->Header("f");
  REQUIRE_MESSAGE(h.ok(), h.status().ToString());
  CHECK(h->shape == Shape{20, 30});
  auto t = npz->Read("f");
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  CHECK(TensorsEqual(*t, Make<int64_t>(c_order, Shape{20, 30})));
  auto s = npz->Read("s");
  REQUIRE_MESSAGE(s.ok(), s.status().ToString());
  CHECK(TensorsEqual(*s, Make<std::string>({"x", "yz"}, Shape{2})));

  // Deflate data that goes on past the declared size is refused.
  const std::string npy = *SerializeNpy(Make<float>({1, 2, 3}, Shape{3}));
  ZipMember longer = Deflated("g.npy", npy + "!");
  longer.data = npy;  // the zip headers declare (and checksum) one byte less than it inflates to
  const std::string longer_zip = MakeZip({longer});
  auto l = NpzReader::Open(longer_zip, "g.npz");
  REQUIRE(l.ok());
  auto lt = l->Read("g");
  REQUIRE(!lt.ok());
  CHECK(lt.status().code() == StatusCode::kDataLoss);
  CHECK(lt.status().message().find("longer than the declared size") != std::string::npos);
}
#endif

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

Result<Tensor> ObjectNpy(std::string_view shape, std::string_view pickle_hex) {
  return ParseNpy(
      HandNpy("{'descr': '|O', 'fortran_order': False, 'shape': " + std::string(shape) + ", }",
              FromHex(pickle_hex)),
      "o.npy");
}

}  // namespace

TEST_CASE("an .npy of bytes and str objects reads as a string array, its pickle never run") {
  // numpy 2.4's np.save(np.array([b'a\0', 'h\u00e9'], dtype=object)): protocol 4.
  auto t = ObjectNpy(
      "(2,)",
      "80049595000000000000008c166e756d70792e5f636f72652e6d756c74696172726179948c0c5f7265636f6e"
      "7374727563749493948c056e756d7079948c076e6461727261799493944b0085944301629487945294284b01"
      "4b02859468038c0564747970659493948c024f3894898887945294284b038c017c944e4e4e4affffffff4aff"
      "ffffff4b3f749462895d942843026100948c0368c3a994657494622e");
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  CHECK(t->shape() == Shape{2});
  CHECK(t->flat<std::string>()[0] == std::string("a\0", 2));  // the NUL an 'S' array drops
  CHECK(t->flat<std::string>()[1] == "h\xc3\xa9");            // str as UTF-8

  // Protocol 2 (GLOBAL lines; bytes as _codecs.encode(.., 'latin1') and bytes()), shape (3, 1).
  auto p2 = ObjectNpy(
      "(3, 1)",
      "8002636e756d70792e5f636f72652e6d756c746961727261790a5f7265636f6e7374727563740a7100636e756d"
      "70790a6e6461727261790a71014b00857102635f636f646563730a656e636f64650a71035801000000627104"
      "58060000006c6174696e317105867106527107877108527109284b014b034b0186710a636e756d70790a6474"
      "7970650a710b58020000004f38710c898887710d52710e284b0358010000007c710f4e4e4e4affffffff4aff"
      "ffffff4b3f74711062895d71112868035802000000610071126805867113527114580300000068c3a9711563"
      "5f5f6275696c74696e5f5f0a62797465730a71162952711765747118622e");
  REQUIRE_MESSAGE(p2.ok(), p2.status().ToString());
  CHECK(p2->shape() == (Shape{3, 1}));
  CHECK(p2->flat<std::string>()[0] == std::string("a\0", 2));
  CHECK(p2->flat<std::string>()[1] == "h\xc3\xa9");
  CHECK(p2->flat<std::string>()[2].empty());

  // A pickle that would call os.system('true') is refused; nothing runs.
  auto evil =
      ObjectNpy("(1,)", "800363706f7369780a73797374656d0a710058040000007472756571018571025271032e");
  REQUIRE(!evil.ok());
  CHECK(evil.status().message().find("not a numpy array") != std::string::npos);

  // An int element is named.
  auto mixed = ObjectNpy(
      "(2,)",
      "80049590000000000000008c166e756d70792e5f636f72652e6d756c74696172726179948c0c5f7265636f6e"
      "7374727563749493948c056e756d7079948c076e6461727261799493944b0085944301629487945294284b01"
      "4b02859468038c0564747970659493948c024f3894898887945294284b038c017c944e4e4e4affffffff4aff"
      "ffffff4b3f749462895d94284b0143017894657494622e");
  REQUIRE(!mixed.ok());
  CHECK(mixed.status().message().find("element 0 is not bytes or str but int") !=
        std::string::npos);

  // The header's shape must be the pickle's; a truncated pickle is named.
  auto shape = ObjectNpy(
      "(3,)",
      "80049595000000000000008c166e756d70792e5f636f72652e6d756c74696172726179948c0c5f7265636f6e"
      "7374727563749493948c056e756d7079948c076e6461727261799493944b0085944301629487945294284b01"
      "4b02859468038c0564747970659493948c024f3894898887945294284b038c017c944e4e4e4affffffff4aff"
      "ffffff4b3f749462895d942843026100948c0368c3a994657494622e");
  REQUIRE(!shape.ok());
  CHECK(shape.status().message().find("not the header's") != std::string::npos);
  auto cut = ObjectNpy("(2,)", "80049595000000000000008c166e756d7079");
  REQUIRE(!cut.ok());
  CHECK(cut.status().message().find("o.npy") != std::string::npos);
}

}  // namespace kiln
