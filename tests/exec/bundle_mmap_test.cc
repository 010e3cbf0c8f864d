// Zero-copy weights: the bundle reader maps the data file read-only and variables alias it;
// a write gets its own copy (the file never changes); unaligned entries are copied; checksums
// and truncation are clear errors, and checksums can be skipped for trusted bundles.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "exec/test_util.h"
#include "kiln/exec/resources.h"
#include "kiln/exec/saved_model.h"
#include "kiln/exec/tensor_bundle.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace {

namespace fs = std::filesystem;
using kiln::testing::CopyFixture;
using kiln::testing::ReadAll;
using kiln::testing::TempDir;
using kiln::testing::WriteAll;

constexpr const char* kGraphKey = "_CHECKPOINTABLE_OBJECT_GRAPH";
constexpr const char* kXKey = "x/.ATTRIBUTES/VARIABLE_VALUE";
constexpr const char* kZKey = "child/z/.ATTRIBUTES/VARIABLE_VALUE";

std::string DataPath(const fs::path& prefix) { return prefix.string() + ".data-00000-of-00001"; }

// What /proc/self/maps says backs `p`: a file's path, "[heap]", or "" (anonymous memory).
std::string MappedFileOf(const void* p) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    in >> range >> perms >> offset >> dev >> inode >> path;
    const size_t dash = range.find('-');
    const uintptr_t lo = std::stoull(range.substr(0, dash), nullptr, 16);
    const uintptr_t hi = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (addr >= lo && addr < hi) return path;
  }
  return "";
}

std::vector<float> Iota(int n, float start) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + static_cast<float>(i);
  return v;
}

Tensor FloatTensor(const std::vector<float>& v) {
  return *Tensor::FromVector<float>(v, Shape{static_cast<int64_t>(v.size())});
}

bool Contains(const Status& s, const std::string& needle) {
  INFO(s.ToString());
  return s.message().find(needle) != std::string::npos;
}

const RestoredVariable& VariableAt(const SavedModel& m, const std::string& path) {
  for (const auto& v : m.variables())
    if (v.path == path) return v;
  FAIL("no variable ", path);
  return m.variables().front();
}

TEST_CASE("mmap: our writer aligns every entry to 64 bytes and tensors alias the mapped file") {
  TempDir dir;
  const fs::path prefix = dir.path() / "variables";
  {
    BundleWriter w(prefix);
    REQUIRE(w.Add("odd", Tensor::StringScalar("abc")).ok());  // 8 bytes: pushes the next one
    REQUIRE(w.Add("f", FloatTensor(Iota(1000, 0.5f))).ok());
    REQUIRE(w.Add("i8", *Tensor::FromVector<int8_t>({1, 2, 3}, Shape{3})).ok());
    REQUIRE(w.Add("d", *Tensor::FromVector<double>({1.5, -2.5}, Shape{2})).ok());
    REQUIRE(w.Finish().ok());
  }
  auto r = BundleReader::Open(prefix);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  for (const auto& key : (*r)->Keys()) {
    CAPTURE(key);
    auto e = (*r)->Entry(key);
    REQUIRE(e.ok());
    CHECK(e->offset() % 64 == 0);
  }
  auto f = (*r)->Read("f");
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  CHECK(TensorsEqual(*f, FloatTensor(Iota(1000, 0.5f))));
  // No copy: the elements are the file's pages, read-only, never written in place.
  CHECK(f->BufferIsReadOnly());
  CHECK(MappedFileOf(f->raw_data()) == fs::canonical(DataPath(prefix)).string());
  CHECK(f->buffer().use_count() == 1);
  CHECK_FALSE(f->BufferIsExclusive());
  // A second read is the same bytes, not another copy.
  auto f2 = (*r)->Read("f");
  REQUIRE(f2.ok());
  CHECK(f2->raw_data() == f->raw_data());
  for (const char* key : {"i8", "d"}) {
    CAPTURE(key);
    auto t = (*r)->Read(key);
    REQUIRE(t.ok());
    CHECK(t->BufferIsReadOnly());
  }
  // A copy of a mapped tensor is an ordinary, writable one.
  Tensor copy = f->DeepCopy();
  CHECK_FALSE(copy.BufferIsReadOnly());
  CHECK(copy.BufferIsExclusive());
  // The mapping outlives the reader: the tensor keeps it.
  r->reset();
  CHECK(f->data<float>()[999] == 999.5f);
  // Strings are decoded, so they are copies.
  auto r2 = BundleReader::Open(prefix);
  REQUIRE(r2.ok());
  auto s = (*r2)->Read("odd");
  REQUIRE(s.ok());
  CHECK(s->scalar<std::string>() == "abc");
  CHECK_FALSE(s->BufferIsReadOnly());
}

TEST_CASE("mmap: entries unaligned for their dtype (TensorFlow's packed layout) are copied") {
  TempDir dir;
  const fs::path prefix = dir.path() / "variables";
  const auto doubles = *Tensor::FromVector<double>({0.25, 1e300, -7}, Shape{3});
  {
    // data_alignment 1 is TensorFlow's SaveV2 layout (bundle_test.cc checks it byte for byte):
    // the 8-byte string and the 1-byte int8 leave the floats at offset 9 and the doubles at 17.
    BundleWriter w(prefix, {.data_alignment = 1});
    REQUIRE(w.Add("odd", Tensor::StringScalar("abc")).ok());
    REQUIRE(w.Add("i8", *Tensor::FromVector<int8_t>({7}, Shape{1})).ok());
    REQUIRE(w.Add("f", FloatTensor(Iota(10, 1.0f))).ok());
    REQUIRE(w.Add("d", doubles).ok());
    REQUIRE(w.Finish().ok());
  }
  auto r = BundleReader::Open(prefix);
  REQUIRE(r.ok());
  CHECK((*r)->Entry("f")->offset() == 9);
  CHECK((*r)->Entry("d")->offset() == 49);
  auto f = (*r)->Read("f");
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  CHECK(TensorsEqual(*f, FloatTensor(Iota(10, 1.0f))));
  CHECK_FALSE(f->BufferIsReadOnly());
  CHECK(MappedFileOf(f->raw_data()) != fs::canonical(DataPath(prefix)).string());
  CHECK(reinterpret_cast<uintptr_t>(f->raw_data()) % alignof(float) == 0);
  auto d = (*r)->Read("d");
  REQUIRE(d.ok());
  CHECK(TensorsEqual(*d, doubles));
  CHECK_FALSE(d->BufferIsReadOnly());
  // A one-byte dtype is aligned anywhere: mapped.
  auto i8 = (*r)->Read("i8");
  REQUIRE(i8.ok());
  CHECK(i8->BufferIsReadOnly());
  CHECK(i8->data<int8_t>()[0] == 7);

  // TensorFlow's own fixture packs 4-byte floats at offsets 0, 4, 8: aligned, so mapped.
  auto tf = BundleReader::Open(kiln::testing::Fixture("VarsAndArithmeticObjectGraph") /
                               "variables" / "variables");
  REQUIRE(tf.ok());
  auto x = (*tf)->Read(kXKey);
  REQUIRE(x.ok());
  CHECK(x->BufferIsReadOnly());
  CHECK(x->scalar<float>() == 1.0f);
}

TEST_CASE("mmap: bools other than 0/1 are copied and normalised, never aliased") {
  TempDir dir;
  const fs::path prefix = dir.path() / "variables";
  Tensor raw(DType::kBool, Shape{4});
  const uint8_t bytes[] = {0, 1, 2, 255};  // as another writer may store "true"
  std::memcpy(raw.raw_data(), bytes, sizeof bytes);
  {
    BundleWriter w(prefix);
    REQUIRE(w.Add("b", raw).ok());  // the checksum covers these bytes
    REQUIRE(w.Add("ok", *Tensor::FromVector<bool>({true, false}, Shape{2})).ok());
    REQUIRE(w.Finish().ok());
  }
  auto r = BundleReader::Open(prefix);
  REQUIRE(r.ok());
  auto b = (*r)->Read("b");
  REQUIRE_MESSAGE(b.ok(), b.status().ToString());
  CHECK_FALSE(b->BufferIsReadOnly());
  const auto* got = static_cast<const uint8_t*>(b->raw_data());
  CHECK(std::vector<int>(got, got + 4) == std::vector<int>{0, 1, 1, 1});
  auto ok = (*r)->Read("ok");
  REQUIRE(ok.ok());
  CHECK(ok->BufferIsReadOnly());
  CHECK(TensorsEqual(*ok, *Tensor::FromVector<bool>({true, false}, Shape{2})));
}

TEST_CASE("mmap: a restored variable aliases the file, and its first write gets its own copy") {
  TempDir dir;
  const fs::path model = CopyFixture("VarsAndArithmeticObjectGraph", dir);
  const fs::path prefix = model / "variables" / "variables";
  const std::string data_before = ReadAll(DataPath(prefix));
  LoadOptions options;
  options.freeze_variables = false;  // assignable through the API
  auto m = SavedModel::Load(model, options);
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  const RestoredVariable& x = VariableAt(**m, "x");
  const void* mapped = nullptr;
  {
    auto value = x.resource->Read();
    REQUIRE(value.ok());
    CHECK(value->BufferIsReadOnly());
    CHECK(MappedFileOf(value->raw_data()) == fs::canonical(DataPath(prefix)).string());
    mapped = value->raw_data();
  }
  // No reader holds x's buffer now, so an update would go in place, but not into the mapping
  // (a PROT_READ page: writing it would crash this test).
  VariableResource* vars[] = {x.resource.get()};
  auto add_one = [](std::span<const Tensor> current, std::vector<Tensor>* next) {
    (*next)[0].scalar<float>() = current[0].scalar<float>() + 1.0f;
    return OkStatus();
  };
  REQUIRE(VariableResource::UpdateMany(vars, add_one).ok());
  const void* own = nullptr;
  {
    auto value = x.resource->Read();
    REQUIRE(value.ok());
    CHECK(value->scalar<float>() == 2.0f);
    CHECK_FALSE(value->BufferIsReadOnly());
    CHECK(value->raw_data() != mapped);
    CHECK(MappedFileOf(value->raw_data()) != fs::canonical(DataPath(prefix)).string());
    own = value->raw_data();
  }
  // Its own buffer now: the next update is in place.
  REQUIRE(VariableResource::UpdateMany(vars, add_one).ok());
  CHECK(x.resource->Read()->raw_data() == own);
  CHECK(x.resource->Read()->scalar<float>() == 3.0f);
  // Calls see the new value: (a + x) * (b + y) / z + 5 with x = 3, y = 2, z = 3.
  auto sig = (*m)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  auto out = (*sig)->Run({{"a", Tensor::Scalar(4.0f)}, {"b", Tensor::Scalar(7.0f)}});
  REQUIRE_MESSAGE(out.ok(), out.status().ToString());
  CHECK(out->at("output_0").scalar<float>() == doctest::Approx((4 + 3) * (7 + 2) / 3.0f + 5));
  // The file is unchanged, and the other variables still alias it.
  CHECK(ReadAll(DataPath(prefix)) == data_before);
  CHECK(VariableAt(**m, "y").resource->Read()->BufferIsReadOnly());
  // Assign stores a copy of a writable value, as before.
  Tensor v = Tensor::Scalar(10.0f);
  REQUIRE(x.resource->Assign(v).ok());
  CHECK_FALSE(x.resource->Read()->SharesBufferWith(v));
}

TEST_CASE(
    "mmap: a rewritten bundle replaces the file, and tensors of the old one keep their bytes") {
  TempDir dir;
  const fs::path prefix = dir.path() / "variables";
  auto write = [&](float start) {
    BundleWriter w(prefix);
    REQUIRE(w.Add("f", FloatTensor(Iota(5000, start))).ok());
    REQUIRE(w.Finish().ok());
  };
  write(0);
  auto r = BundleReader::Open(prefix);
  REQUIRE(r.ok());
  auto old = (*r)->Read("f");
  REQUIRE(old.ok());
  REQUIRE(old->BufferIsReadOnly());
  write(100);  // same prefix: written beside and renamed over, never changed in place
  CHECK(TensorsEqual(*old, FloatTensor(Iota(5000, 0))));
  auto fresh = BundleReader::Open(prefix);
  REQUIRE(fresh.ok());
  CHECK(TensorsEqual(*(*fresh)->Read("f"), FloatTensor(Iota(5000, 100))));
  // No temporary files are left beside the bundle.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    CAPTURE(e.path().string());
    ++files;
  }
  CHECK(files == 2);
  BundleWriter bad(dir.path() / "bad", {.data_alignment = 0});
  REQUIRE(bad.Add("f", Tensor::Scalar(1.0f)).ok());
  const Status s = bad.Finish();
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(Contains(s, "data_alignment 0"));
}

// The fixture's variables, rewritten with the object graph first so that a cut data file
// leaves the graph whole and cuts a variable.
fs::path GraphFirstCopy(const TempDir& dir) {
  const fs::path model = CopyFixture("VarsAndArithmeticObjectGraph", dir);
  const fs::path prefix = model / "variables" / "variables";
  auto r = BundleReader::Open(prefix);
  REQUIRE(r.ok());
  std::vector<std::pair<std::string, Tensor>> entries;
  for (const char* key : {kGraphKey, kXKey, "y/.ATTRIBUTES/VARIABLE_VALUE", kZKey}) {
    auto t = (*r)->Read(key);
    REQUIRE(t.ok());
    entries.emplace_back(key, t->DeepCopy());
  }
  r->reset();
  BundleWriter w(prefix);
  for (const auto& [key, t] : entries) REQUIRE(w.Add(key, t).ok());
  REQUIRE(w.Finish().ok());
  return model;
}

TEST_CASE("mmap: a truncated data file is an error naming the variable, offset and size") {
  TempDir dir;
  const fs::path model = GraphFirstCopy(dir);
  const fs::path prefix = model / "variables" / "variables";
  auto r = BundleReader::Open(prefix);
  REQUIRE(r.ok());
  const int64_t z_offset = (*r)->Entry(kZKey)->offset();
  r->reset();
  const std::string data = ReadAll(DataPath(prefix));
  REQUIRE(static_cast<int64_t>(data.size()) == z_offset + 4);  // z is last
  WriteAll(DataPath(prefix), data.substr(0, static_cast<size_t>(z_offset) + 2));

  auto m = SavedModel::Load(model);
  REQUIRE(!m.ok());
  const Status& s = m.status();
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK(Contains(s, "restoring variable 'child/z'"));
  CHECK(Contains(s, std::string("'") + kZKey + "' needs 4 bytes at offset " +
                        std::to_string(z_offset) + " but the file has " +
                        std::to_string(z_offset + 2) + " bytes"));
  CHECK(Contains(s, DataPath(prefix)));

  // An index entry pointing past the end of the data (an empty file here) is the same error.
  WriteAll(DataPath(prefix), "");
  auto empty = SavedModel::Load(model);
  REQUIRE(!empty.ok());
  CHECK(Contains(empty.status(), "is truncated"));
  CHECK(Contains(empty.status(), "but the file has 0 bytes"));
}

TEST_CASE("mmap: a checksum mismatch names the variable, and verify_checksums = false skips it") {
  TempDir dir;
  const fs::path model = CopyFixture("VarsAndArithmeticObjectGraph", dir);
  const fs::path prefix = model / "variables" / "variables";
  auto r = BundleReader::Open(prefix);
  REQUIRE(r.ok());
  const int64_t x_offset = (*r)->Entry(kXKey)->offset();
  r->reset();
  std::string data = ReadAll(DataPath(prefix));
  float x = 0;
  std::memcpy(&x, data.data() + x_offset, 4);
  REQUIRE(x == 1.0f);
  x = 42.0f;  // a changed weight, its stored checksum left as it was
  std::memcpy(data.data() + x_offset, &x, 4);
  WriteAll(DataPath(prefix), data);

  auto m = SavedModel::Load(model);
  REQUIRE(!m.ok());
  CHECK(m.status().code() == StatusCode::kDataLoss);
  CHECK(Contains(m.status(), "restoring variable 'x'"));
  CHECK(Contains(m.status(), std::string("checksum mismatch for '") + kXKey + "'"));
  CHECK(Contains(m.status(), "4 bytes at offset " + std::to_string(x_offset)));

  // Trusted: loads without checking, and the variable holds what the file holds.
  LoadOptions trusting;
  trusting.verify_checksums = false;
  auto t = SavedModel::Load(model, trusting);
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  auto value = VariableAt(**t, "x").resource->Read();
  REQUIRE(value.ok());
  CHECK(value->scalar<float>() == 42.0f);
  CHECK(value->BufferIsReadOnly());

  // The reader's option alone, on the same file.
  BundleReadOptions skip;
  skip.verify_checksums = false;
  auto rs = BundleReader::Open(prefix, skip);
  REQUIRE(rs.ok());
  auto xs = (*rs)->Read(kXKey);
  REQUIRE(xs.ok());
  CHECK(xs->scalar<float>() == 42.0f);
  auto rv = BundleReader::Open(prefix);
  REQUIRE(rv.ok());
  CHECK(Contains((*rv)->Read(kXKey).status(), "checksum mismatch"));
}

TEST_CASE("mmap: OpenFromMemory tensors alias the given bytes the same way") {
  TempDir dir;
  const fs::path prefix = dir.path() / "variables";
  {
    BundleWriter w(prefix);
    REQUIRE(w.Add("f", FloatTensor(Iota(100, 3.0f))).ok());
    REQUIRE(w.Finish().ok());
  }
  auto r = BundleReader::OpenFromMemory(ReadAll(prefix.string() + ".index"),
                                        {ReadAll(DataPath(prefix))});
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  auto f = (*r)->Read("f");
  REQUIRE(f.ok());
  CHECK(f->BufferIsReadOnly());
  r->reset();  // the bytes live as long as the tensor
  CHECK(TensorsEqual(*f, FloatTensor(Iota(100, 3.0f))));
}

}  // namespace
}  // namespace kiln::exec
