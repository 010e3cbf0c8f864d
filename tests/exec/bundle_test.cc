#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bundle/crc32c.h"
#include "bundle/mapped_file.h"
#include "bundle/sstable.h"
#include "exec/test_util.h"
#include "kiln/exec/tensor_bundle.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace {

namespace fs = std::filesystem;
using kiln::testing::Fixture;
using kiln::testing::ReadAll;
using kiln::testing::TempDir;
using kiln::testing::WriteAll;

constexpr const char* kGraphKey = "_CHECKPOINTABLE_OBJECT_GRAPH";
constexpr const char* kXKey = "x/.ATTRIBUTES/VARIABLE_VALUE";
constexpr const char* kYKey = "y/.ATTRIBUTES/VARIABLE_VALUE";
constexpr const char* kZKey = "child/z/.ATTRIBUTES/VARIABLE_VALUE";

fs::path VarsPrefix() {
  return Fixture("VarsAndArithmeticObjectGraph") / "variables" / "variables";
}

// Copies the fixture bundle's two files into dir and returns the new prefix.
fs::path CopyVars(const TempDir& dir) {
  fs::path prefix = dir.path() / "variables";
  fs::copy_file(VarsPrefix().string() + ".index", prefix.string() + ".index");
  fs::copy_file(VarsPrefix().string() + ".data-00000-of-00001",
                prefix.string() + ".data-00000-of-00001");
  // The fixtures are read-only; copies keep that mode, and tests rewrite them.
  for (const char* suffix : {".index", ".data-00000-of-00001"}) {
    fs::permissions(prefix.string() + suffix, fs::perms::owner_write, fs::perm_options::add);
  }
  return prefix;
}

float ReadScalarFloat(const BundleReader& r, const char* key) {
  auto t = r.Read(key);
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  REQUIRE(t->dtype() == DType::kFloat);
  REQUIRE(t->rank() == 0);
  return t->scalar<float>();
}

TEST_CASE("bundle: reads the TF-written VarsAndArithmeticObjectGraph variables") {
  auto r = BundleReader::Open(VarsPrefix());
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  const BundleReader& reader = **r;
  CHECK(reader.Keys() == std::vector<std::string>{kGraphKey, kZKey, kXKey, kYKey});
  CHECK(reader.Contains(kXKey));
  CHECK_FALSE(reader.Contains("nope"));
  CHECK(ReadScalarFloat(reader, kXKey) == 1.0f);
  CHECK(ReadScalarFloat(reader, kYKey) == 2.0f);
  CHECK(ReadScalarFloat(reader, kZKey) == 3.0f);

  auto entry = reader.Entry(kGraphKey);
  REQUIRE(entry.ok());
  CHECK(entry->offset() == 12);
  CHECK(entry->size() == 256);
  CHECK(entry->crc32c() == 3261104603u);

  auto graph_t = reader.Read(kGraphKey);
  REQUIRE_MESSAGE(graph_t.ok(), graph_t.status().ToString());
  REQUIRE(graph_t->dtype() == DType::kString);
  REQUIRE(graph_t->rank() == 0);
  const std::string& bytes = graph_t->scalar<std::string>();
  CHECK(bytes.size() == 250);
  tensorflow::TrackableObjectGraph graph;
  REQUIRE(graph.ParseFromString(bytes));
  REQUIRE(graph.nodes_size() == 6);
  REQUIRE(graph.nodes(1).attributes_size() == 1);
  CHECK(graph.nodes(1).attributes(0).checkpoint_key() == kXKey);
  CHECK(graph.nodes(1).attributes(0).full_name() == "variable_x");

  auto missing = reader.Read("nope");
  REQUIRE(!missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message().find("'nope'") != std::string::npos);
}

TEST_CASE("bundle: writer reproduces TF's index and data files byte for byte") {
  auto r = BundleReader::Open(VarsPrefix());
  REQUIRE(r.ok());
  auto graph = (*r)->Read(kGraphKey);
  REQUIRE(graph.ok());

  TempDir dir;
  fs::path prefix = dir.path() / "variables";
  // TF packs entries (alignment 1); ours align them to 64 bytes by default.
  BundleWriter w(prefix, {.data_alignment = 1});
  // TF's SaveV2 wrote the variables first, then the object graph: the data file keeps that
  // order, the index is sorted.
  REQUIRE(w.Add(kXKey, Tensor::Scalar<float>(1.0f)).ok());
  REQUIRE(w.Add(kYKey, Tensor::Scalar<float>(2.0f)).ok());
  REQUIRE(w.Add(kZKey, Tensor::Scalar<float>(3.0f)).ok());
  REQUIRE(w.Add(kGraphKey, *graph).ok());
  Status s = w.Finish();
  REQUIRE_MESSAGE(s.ok(), s.ToString());

  const std::string want_index = ReadAll(VarsPrefix().string() + ".index");
  const std::string want_data = ReadAll(VarsPrefix().string() + ".data-00000-of-00001");
  REQUIRE(want_index.size() == 284);
  REQUIRE(want_data.size() == 268);
  CHECK(ReadAll(prefix.string() + ".index") == want_index);
  CHECK(ReadAll(prefix.string() + ".data-00000-of-00001") == want_data);
}

TEST_CASE("bundle: writer rejects duplicate keys, the header key and resource tensors") {
  TempDir dir;
  BundleWriter w(dir.path() / "v");
  REQUIRE(w.Add("a", Tensor::Scalar<int32_t>(1)).ok());
  Status dup = w.Add("a", Tensor::Scalar<int32_t>(2));
  CHECK(dup.code() == StatusCode::kAlreadyExists);
  CHECK(dup.message().find("'a'") != std::string::npos);
  CHECK(w.Add("", Tensor::Scalar<int32_t>(2)).code() == StatusCode::kInvalidArgument);
  Status res = w.Add("r", Tensor(DType::kResource, Shape()));
  CHECK(res.code() == StatusCode::kInvalidArgument);
  CHECK(res.message().find("resource") != std::string::npos);
  CHECK(w.Add("u", Tensor()).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("bundle: string, numeric and empty tensors round-trip") {
  TempDir dir;
  fs::path prefix = dir.path() / "rt";
  auto strings = Tensor::FromVector<std::string>(
      {"", "hello", std::string("nul\0byte", 8), std::string(300, 'x')}, Shape{2, 2});
  REQUIRE(strings.ok());
  auto ints = Tensor::FromVector<int64_t>({-1, 0, 1LL << 40}, Shape{3});
  REQUIRE(ints.ok());
  auto bools = Tensor::FromVector<bool>({true, false, true}, Shape{3});
  REQUIRE(bools.ok());
  auto doubles = Tensor::FromVector<double>({1.5, -2.25, 1e300, 0, 4, 5}, Shape{2, 3});
  REQUIRE(doubles.ok());
  Tensor empty_f(DType::kFloat, Shape{0, 4});
  Tensor empty_s(DType::kString, Shape{0});
  {
    BundleWriter w(prefix);
    REQUIRE(w.Add("s", *strings).ok());
    REQUIRE(w.Add("i", *ints).ok());
    REQUIRE(w.Add("b", *bools).ok());
    REQUIRE(w.Add("d", *doubles).ok());
    REQUIRE(w.Add("ef", empty_f).ok());
    REQUIRE(w.Add("es", empty_s).ok());
    REQUIRE(w.Add("scalar_s", Tensor::StringScalar("only")).ok());
    REQUIRE(w.Finish().ok());
  }
  auto r = BundleReader::Open(prefix);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  CHECK((*r)->Keys() == std::vector<std::string>{"b", "d", "ef", "es", "i", "s", "scalar_s"});
  auto check = [&](const char* key, const Tensor& want) {
    CAPTURE(key);
    auto got = (*r)->Read(key);
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CHECK(TensorsEqual(*got, want));
  };
  check("s", *strings);
  check("i", *ints);
  check("b", *bools);
  check("d", *doubles);
  check("ef", empty_f);
  check("es", empty_s);
  check("scalar_s", Tensor::StringScalar("only"));
}

TEST_CASE("bundle: share_equal_entries stores equal values once and reads every key back") {
  TempDir dir;
  auto a = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Shape{3, 4});
  auto other = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13}, Shape{3, 4});
  auto same_bytes_int =
      Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Shape{12});
  REQUIRE(a.ok());
  REQUIRE(other.ok());
  REQUIRE(same_bytes_int.ok());
  std::memcpy(same_bytes_int->raw_data(), a->raw_data(), 48);  // a's bits, as int32
  const Tensor reshaped = a->Reshaped(Shape{12});
  auto write = [&](const fs::path& prefix, bool share) {
    BundleWriteOptions options;
    options.data_alignment = 1;
    options.share_equal_entries = share;
    BundleWriter w(prefix, options);
    REQUIRE(w.Add("variables/0", *a).ok());
    REQUIRE(w.Add("_all_variables/3", *a).ok());
    REQUIRE(w.Add("flat", reshaped).ok());
    REQUIRE(w.Add("other", *other).ok());
    REQUIRE(w.Add("as_int", *same_bytes_int).ok());
    REQUIRE(w.Add("s", Tensor::StringScalar("x")).ok());
    REQUIRE(w.Add("s2", Tensor::StringScalar("x")).ok());
    REQUIRE(w.Finish().ok());
  };
  write(dir.path() / "plain", false);
  write(dir.path() / "shared", true);
  const auto data_bytes = [&](const char* name) {
    return fs::file_size(dir.path() / (std::string(name) + ".data-00000-of-00001"));
  };
  // Plain: five numeric entries of 48 bytes and two strings. Shared: a's bytes once (its
  // copy and its reshaped view share them), `other` and the int32 entry (another dtype) apart.
  CHECK(data_bytes("plain") - data_bytes("shared") == 2 * 48);
  auto r = BundleReader::Open(dir.path() / "shared");
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  const auto entry = [&](const char* key) {
    auto e = (*r)->Entry(key);
    REQUIRE_MESSAGE(e.ok(), e.status().ToString());
    return *e;
  };
  CHECK(entry("variables/0").offset() == entry("_all_variables/3").offset());
  CHECK(entry("variables/0").offset() == entry("flat").offset());
  CHECK(entry("other").offset() != entry("variables/0").offset());
  CHECK(entry("as_int").offset() != entry("variables/0").offset());
  const auto check = [&](const char* key, const Tensor& want) {
    CAPTURE(key);
    auto got = (*r)->Read(key);
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CHECK(TensorsEqual(*got, want));
  };
  check("variables/0", *a);
  check("_all_variables/3", *a);
  check("flat", reshaped);
  check("other", *other);
  check("as_int", *same_bytes_int);
  check("s2", Tensor::StringScalar("x"));
}

// How many of the pages wholly inside [p, p + bytes) this process has mapped (the present bit
// of /proc/self/pagemap, which an unprivileged process may read); -1 where it cannot be read.
int64_t ResidentPages(const void* p, size_t bytes) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (begin + page - 1) / page, last = (begin + bytes) / page;
  const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  int64_t present = 0;
  for (uintptr_t i = first; i < last; ++i) {
    uint64_t entry = 0;
    if (pread(fd, &entry, sizeof entry, static_cast<off_t>(i * sizeof entry)) != sizeof entry) {
      present = -1;
      break;
    }
    present += static_cast<int64_t>(entry >> 63);
  }
  close(fd);
  return present;
}

TEST_CASE("bundle: a checked entry's mapped pages go back until read, and read the same") {
  TempDir dir;
  const fs::path prefix = dir.path() / "big";
  Tensor big(DType::kFloat, Shape{256, 1024});  // 1 MiB: many whole pages
  for (int64_t i = 0; i < big.NumElements(); ++i)
    big.data<float>()[i] = static_cast<float>(i % 977);
  {
    BundleWriter w(prefix);
    REQUIRE(w.Add("big", big).ok());
    REQUIRE(w.Finish().ok());
  }
  auto r = BundleReader::Open(prefix);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  auto got = (*r)->Read("big");
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  REQUIRE(got->buffer()->read_only());  // a view of the mapped file, not a copy
  const int64_t after_read = ResidentPages(got->raw_data(), big.ByteSize());
  if (after_read < 0) return;  // no /proc/self/pagemap here: nothing to observe
  // The checksum pass read every byte; the pages went back, and reading them again maps them
  // from the file with the same values.
  CHECK(after_read == 0);
  CHECK(TensorsEqual(*got, big));
  CHECK(ResidentPages(got->raw_data(), big.ByteSize()) > 0);
  got->buffer()->ReleasePages();
  CHECK(ResidentPages(got->raw_data(), big.ByteSize()) == 0);
  CHECK(TensorsEqual(*got, big));
  // Memory the process owns is never given back: its values would be lost.
  Tensor owned = big.DeepCopy();
  owned.buffer()->ReleasePages();
  CHECK(TensorsEqual(owned, big));
}

TEST_CASE("mapped file: a checksum across windows is the file's and holds none of its pages") {
  TempDir dir;
  const fs::path path = dir.path() / "data";
  std::string bytes(40u << 20, '\0');  // more than two 16 MiB windows
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 2654435761u) >> 24);
  WriteAll(path, bytes);
  auto file = MappedFile::Open(path.string());
  REQUIRE_MESSAGE(file.ok(), file.status().ToString());
  REQUIRE((*file)->mapped());
  const uint32_t want = crc32c::Value(bytes.data(), bytes.size());
  const ThreadPool pool(2);
  for (const ThreadPool* threads : {static_cast<const ThreadPool*>(nullptr), &pool}) {
    // From an odd offset: windows start wherever the range does and end on window boundaries.
    const char* data = (*file)->data();
    CHECK(ChecksumOf(data + 3, bytes.size() - 3, threads, /*mapped=*/true) ==
          crc32c::Value(bytes.data() + 3, bytes.size() - 3));
    CHECK(ChecksumOf(data, bytes.size(), threads, /*mapped=*/true) == want);
    const int64_t resident = ResidentPages(data, bytes.size());
    if (resident >= 0) CHECK(resident == 0);
    CHECK(ChecksumOf(data, bytes.size(), threads, /*mapped=*/false) == want);
    if (resident >= 0) CHECK(ResidentPages(data, bytes.size()) > 0);  // read, and kept
    (*file)->ReleasePages();
    if (resident >= 0) CHECK(ResidentPages(data, bytes.size()) == 0);
  }
  CHECK(std::memcmp((*file)->data(), bytes.data(), bytes.size()) == 0);
}

TEST_CASE("bundle: a flipped data byte is a checksum error naming the key and the file") {
  TempDir dir;
  fs::path prefix = CopyVars(dir);
  std::string data_path = prefix.string() + ".data-00000-of-00001";
  std::string data = ReadAll(data_path);
  data[5] ^= 0x01;  // inside y (bytes 4..7)
  WriteAll(data_path, data);
  auto r = BundleReader::Open(prefix);
  REQUIRE(r.ok());
  CHECK(ReadScalarFloat(**r, kXKey) == 1.0f);  // untouched neighbours still read
  auto y = (*r)->Read(kYKey);
  REQUIRE(!y.ok());
  CHECK(y.status().code() == StatusCode::kDataLoss);
  CHECK(y.status().message().find("checksum mismatch") != std::string::npos);
  CHECK(y.status().message().find(kYKey) != std::string::npos);
  CHECK(y.status().message().find(data_path) != std::string::npos);

  // A flipped byte inside the string payload (the object graph) is caught too.
  data = ReadAll(VarsPrefix().string() + ".data-00000-of-00001");
  data[200] ^= 0x40;
  WriteAll(data_path, data);
  auto r2 = BundleReader::Open(prefix);
  REQUIRE(r2.ok());
  auto g = (*r2)->Read(kGraphKey);
  REQUIRE(!g.ok());
  CHECK(g.status().message().find("checksum mismatch") != std::string::npos);
  CHECK(g.status().message().find(kGraphKey) != std::string::npos);
}

TEST_CASE("bundle: truncated and missing data files are clear errors naming the file") {
  TempDir dir;
  fs::path prefix = CopyVars(dir);
  std::string data_path = prefix.string() + ".data-00000-of-00001";
  std::string data = ReadAll(data_path);
  WriteAll(data_path, data.substr(0, 100));  // cuts the object graph string
  auto r = BundleReader::Open(prefix);
  REQUIRE(r.ok());
  CHECK(ReadScalarFloat(**r, kZKey) == 3.0f);
  auto g = (*r)->Read(kGraphKey);
  REQUIRE(!g.ok());
  CHECK(g.status().code() == StatusCode::kDataLoss);
  CHECK(g.status().message().find("truncated") != std::string::npos);
  CHECK(g.status().message().find(data_path) != std::string::npos);

  fs::remove(data_path);
  auto r2 = BundleReader::Open(prefix);
  REQUIRE(r2.ok());  // the index alone is readable
  auto x = (*r2)->Read(kXKey);
  REQUIRE(!x.ok());
  CHECK(x.status().code() == StatusCode::kNotFound);
  CHECK(x.status().message().find(data_path) != std::string::npos);
}

TEST_CASE("bundle: truncated index, bad magic and a missing index are clear errors") {
  TempDir dir;
  fs::path prefix = CopyVars(dir);
  std::string index_path = prefix.string() + ".index";
  const std::string index = ReadAll(index_path);

  WriteAll(index_path, index.substr(0, index.size() - 10));
  auto t = BundleReader::Open(prefix);
  REQUIRE(!t.ok());
  CHECK(t.status().code() == StatusCode::kDataLoss);
  CHECK(t.status().message().find(index_path) != std::string::npos);

  std::string bad = index;
  bad[bad.size() - 3] = 'X';
  WriteAll(index_path, bad);
  auto m = BundleReader::Open(prefix);
  REQUIRE(!m.ok());
  CHECK(m.status().message().find("not an sstable (bad magic number)") != std::string::npos);
  CHECK(m.status().message().find(index_path) != std::string::npos);

  bad = index;
  bad[40] ^= 0x02;  // inside the data block: block checksum
  WriteAll(index_path, bad);
  auto c = BundleReader::Open(prefix);
  REQUIRE(!c.ok());
  CHECK(c.status().message().find("block checksum mismatch") != std::string::npos);

  fs::remove(index_path);
  auto n = BundleReader::Open(prefix);
  REQUIRE(!n.ok());
  CHECK(n.status().code() == StatusCode::kNotFound);
  CHECK(n.status().message().find(index_path) != std::string::npos);
}

// Writes an index by hand so tests can put anything in the header and entries.
void WriteIndex(const fs::path& prefix, const tensorflow::BundleHeaderProto* header,
                const std::vector<std::pair<std::string, tensorflow::BundleEntryProto>>& entries) {
  sstable::TableBuilder b;
  if (header) REQUIRE(b.Add("", header->SerializeAsString()).ok());
  for (const auto& [k, e] : entries) REQUIRE(b.Add(k, e.SerializeAsString()).ok());
  WriteAll(prefix.string() + ".index", b.Finish());
}

tensorflow::BundleHeaderProto GoodHeader() {
  tensorflow::BundleHeaderProto h;
  h.set_num_shards(1);
  h.mutable_version()->set_producer(1);
  return h;
}

TEST_CASE("bundle: an entry whose size does not match its shape is refused") {
  TempDir dir;
  fs::path prefix = dir.path() / "v";
  WriteAll(prefix.string() + ".data-00000-of-00001", std::string(8, '\0'));
  tensorflow::BundleEntryProto e;
  e.set_dtype(tensorflow::DT_FLOAT);
  e.mutable_shape();  // scalar: 4 bytes expected
  e.set_size(8);
  e.set_crc32c(crc32c::Mask(crc32c::Value(std::string(8, '\0'))));
  auto header = GoodHeader();
  WriteIndex(prefix, &header, {{"a", e}});
  auto r = BundleReader::Open(prefix);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  auto a = (*r)->Read("a");
  REQUIRE(!a.ok());
  CHECK(a.status().code() == StatusCode::kDataLoss);
  CHECK(a.status().message().find("Invalid size in bundle entry") != std::string::npos);
  CHECK(a.status().message().find("'a'") != std::string::npos);
  CHECK(a.status().message().find("expected 4") != std::string::npos);
}

TEST_CASE("bundle: header problems are refused when opening") {
  TempDir dir;
  fs::path prefix = dir.path() / "v";
  WriteIndex(prefix, nullptr, {});
  auto none = BundleReader::Open(prefix);
  REQUIRE(!none.ok());
  CHECK(none.status().message().find("no header entry") != std::string::npos);

  auto newer = GoodHeader();
  newer.mutable_version()->set_min_consumer(2);
  WriteIndex(prefix, &newer, {});
  auto n = BundleReader::Open(prefix);
  REQUIRE(!n.ok());
  CHECK(n.status().code() == StatusCode::kFailedPrecondition);
  CHECK(n.status().message().find("version 2") != std::string::npos);

  auto zero = GoodHeader();
  zero.set_num_shards(0);
  WriteIndex(prefix, &zero, {});
  auto z = BundleReader::Open(prefix);
  REQUIRE(!z.ok());
  CHECK(z.status().message().find("num_shards") != std::string::npos);

  auto ok = GoodHeader();
  WriteIndex(prefix, &ok, {});
  auto empty = BundleReader::Open(prefix);
  REQUIRE(empty.ok());
  CHECK((*empty)->Keys().empty());
}

TEST_CASE("bundle: reads the two-shard tftrt_2.0 bundle") {
  auto r = BundleReader::Open(Fixture("tftrt_2.0_saved_model") / "variables" / "variables");
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  CHECK((*r)->Keys() == std::vector<std::string>{kGraphKey, "v/.ATTRIBUTES/VARIABLE_VALUE"});
  auto e = (*r)->Entry("v/.ATTRIBUTES/VARIABLE_VALUE");
  REQUIRE(e.ok());
  CHECK(e->shard_id() == 1);
  auto v = (*r)->Read("v/.ATTRIBUTES/VARIABLE_VALUE");
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  CHECK(v->dtype() == DType::kFloat);
  CHECK(v->shape() == Shape{1, 1, 1});
  CHECK(v->flat<float>()[0] == 1.0f);
  auto g = (*r)->Read(kGraphKey);
  REQUIRE_MESSAGE(g.ok(), g.status().ToString());
  tensorflow::TrackableObjectGraph graph;
  CHECK(graph.ParseFromString(g->scalar<std::string>()));
  CHECK(graph.nodes_size() > 1);
}

TEST_CASE("bundle: concurrent reads from one reader agree") {
  auto r = BundleReader::Open(VarsPrefix());
  REQUIRE(r.ok());
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        auto x = (*r)->Read(kXKey);
        auto g = (*r)->Read(kGraphKey);
        if (!x.ok() || x->scalar<float>() != 1.0f || !g.ok() ||
            g->scalar<std::string>().size() != 250)
          ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(bad.load() == 0);
}

}  // namespace
}  // namespace kiln::exec
