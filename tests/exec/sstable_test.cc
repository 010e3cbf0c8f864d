#include "bundle/sstable.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "bundle/coding.h"
#include "bundle/crc32c.h"

namespace kiln::sstable {
namespace {

TEST_CASE("sstable: FindShortSuccessor and FindShortestSeparator") {
  std::string k = "y/.ATTRIBUTES/VARIABLE_VALUE";
  FindShortSuccessor(&k);
  CHECK(k == "z");
  k = "_CHECKPOINTABLE_OBJECT_GRAPH";
  FindShortSuccessor(&k);
  CHECK(k == "`");
  k = std::string("\xff\xff", 2);
  FindShortSuccessor(&k);
  CHECK(k == std::string("\xff\xff", 2));

  std::string s = "abcdef";
  FindShortestSeparator(&s, "abzzz");
  CHECK(s == "abd");
  s = "abc";
  FindShortestSeparator(&s, "abcd");  // a prefix: unchanged
  CHECK(s == "abc");
  s = "abc";
  FindShortestSeparator(&s, "abd");  // next byte is the limit's: unchanged
  CHECK(s == "abc");
}

TEST_CASE("sstable: empty table layout and round trip") {
  TableBuilder b;
  std::string file = b.Finish();
  // Empty metaindex (8 + 5), empty index (8 + 5), footer 48.
  CHECK(file.size() == 13 + 13 + 48);
  auto entries = ReadTable(file, "empty");
  REQUIRE(entries.ok());
  CHECK(entries->empty());
}

TEST_CASE("sstable: many entries over several small blocks read back in order") {
  Options opts;
  opts.block_size = 256;
  TableBuilder b(opts);
  std::vector<std::pair<std::string, std::string>> want;
  for (int i = 0; i < 500; ++i) {
    char key[32];
    std::snprintf(key, sizeof(key), "key/%05d/suffix", i);
    want.emplace_back(key,
                      std::string(static_cast<size_t>(i % 37), static_cast<char>('a' + i % 26)));
  }
  want.emplace_back("zz-large", std::string(600, 'L'));  // >= 2 x block size: own block
  for (auto& [k, v] : want) REQUIRE(b.Add(k, v).ok());
  std::string file = b.Finish();
  auto got = ReadTable(file, "t");
  REQUIRE(got.ok());
  REQUIRE(got->size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK((*got)[i].key == want[i].first);
    CHECK((*got)[i].value == want[i].second);
  }
}

TEST_CASE("sstable: keys must increase") {
  TableBuilder b;
  REQUIRE(b.Add("b", "1").ok());
  Status s = b.Add("a", "2");
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("'a' after 'b'") != std::string::npos);
  CHECK(b.Add("b", "dup").code() == StatusCode::kInvalidArgument);
}

std::string SmallTable() {
  TableBuilder b;
  REQUIRE(b.Add("alpha", "1").ok());
  REQUIRE(b.Add("beta", "2").ok());
  return b.Finish();
}

TEST_CASE("sstable: reader rejects bad magic, short files and flipped bytes") {
  std::string good = SmallTable();
  REQUIRE(ReadTable(good, "f").ok());

  std::string bad_magic = good;
  bad_magic[bad_magic.size() - 1] ^= 1;
  auto r = ReadTable(bad_magic, "some/file.index");
  REQUIRE(!r.ok());
  CHECK(r.status().message() == "some/file.index: not an sstable (bad magic number)");

  auto s = ReadTable(good.substr(0, 20), "short.index");
  REQUIRE(!s.ok());
  CHECK(s.status().code() == StatusCode::kDataLoss);
  CHECK(s.status().message().find("short.index") != std::string::npos);

  std::string flipped = good;
  flipped[3] ^= 0x10;  // inside the data block
  auto f = ReadTable(flipped, "x.index");
  REQUIRE(!f.ok());
  CHECK(f.status().message().find("block checksum mismatch") != std::string::npos);
}

TEST_CASE("sstable: a Snappy-compressed block is refused clearly") {
  std::string file = SmallTable();
  // Rewrite the data block's trailer with type 1 and a valid checksum so only the type is
  // wrong. The block starts at 0: "alpha" entry 3 + 5 + 1 bytes, "beta" 3 + 4 + 1, one
  // restart (4) and the restart count (4) => 25 bytes.
  const size_t block_size = 25;
  file[block_size] = 1;
  uint32_t crc = crc32c::Extend(crc32c::Value(file.data(), block_size), "\x01", 1);
  std::string masked;
  coding::PutFixed32(&masked, crc32c::Mask(crc));
  file.replace(block_size + 1, 4, masked);
  auto r = ReadTable(file, "c.index");
  REQUIRE(!r.ok());
  CHECK(r.status().code() == StatusCode::kUnimplemented);
  CHECK(r.status().message().find("Snappy") != std::string::npos);
}

}  // namespace
}  // namespace kiln::sstable
