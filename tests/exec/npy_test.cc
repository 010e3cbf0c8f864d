#include "kiln/core/npy.h"

#include <doctest/doctest.h>

#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include "exec/test_util.h"

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

ZipMember Stored(std::string name, std::string data) {
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
  auto fortran =
      ParseNpy(HandNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", four), "f.npy");
  REQUIRE(!fortran.ok());
  CHECK(fortran.status().message().find("f.npy") != std::string::npos);
  CHECK(fortran.status().message().find("Fortran") != std::string::npos);

  auto big = ParseNpy(HandNpy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", four));
  REQUIRE(!big.ok());
  CHECK(big.status().message().find("big-endian") != std::string::npos);
  CHECK(big.status().message().find("'<f4'") != std::string::npos);

  auto unicode =
      ParseNpy(HandNpy("{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", four));
  REQUIRE(!unicode.ok());  // 2 x 3 code points need 24 bytes
  CHECK(unicode.status().message().find("8 bytes; expected 24 for <U3") != std::string::npos);

  auto objects =
      ParseNpy(HandNpy("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", four));
  REQUIRE(!objects.ok());
  CHECK(objects.status().message().find("Python objects") != std::string::npos);
  CHECK(objects.status().message().find("dtype='U'") != std::string::npos);

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

}  // namespace
}  // namespace kiln
