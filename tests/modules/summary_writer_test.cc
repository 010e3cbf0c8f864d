// SummaryWriter: the records parse back (TFRecord framing and CRCs checked here with the
// bundle reader's CRC32C), scalars carry tf.summary.scalar's tensor and metadata, and an
// unwritable log directory is an error naming it. tests/tf/test_tensorboard.py reads the files
// with TensorBoard and TensorFlow themselves.
#include "kiln/modules/summary_writer.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bundle/crc32c.h"
#include "tensorflow/event.pb.h"
#include "tensorflow/framework.pb.h"

namespace kiln::modules {
namespace {

namespace fs = std::filesystem;

uint64_t ReadLittleEndian(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

// Every record's payload, after checking both of its CRCs.
std::vector<tensorflow::Event> ReadEvents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<tensorflow::Event> events;
  size_t at = 0;
  while (at < bytes.size()) {
    REQUIRE(at + 12 <= bytes.size());
    const uint64_t n = ReadLittleEndian(bytes, at, 8);
    CHECK(ReadLittleEndian(bytes, at + 8, 4) == crc32c::Mask(crc32c::Value(bytes.data() + at, 8)));
    REQUIRE(at + 12 + n + 4 <= bytes.size());
    const std::string data = bytes.substr(at + 12, n);
    CHECK(ReadLittleEndian(bytes, at + 12 + n, 4) == crc32c::Mask(crc32c::Value(data)));
    REQUIRE(events.emplace_back().ParseFromString(data));
    at += 12 + n + 4;
  }
  return events;
}

fs::path TempDir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / (name + "." + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

TEST_CASE("SummaryWriter writes framed events: the file version, then tf.summary.scalar's") {
  const fs::path logdir = TempDir("kiln_summary_writer") / "run";  // parents are created
  fs::path path;
  {
    auto writer = SummaryWriter::Create(logdir);
    REQUIRE(writer.ok());
    path = (*writer)->path();
    CHECK(path.parent_path() == logdir);
    CHECK(path.filename().string().rfind("events.out.tfevents.", 0) == 0);
    REQUIRE((*writer)->Scalar("loss", 0.25, 3).ok());
    // Flushed as written: readable before the writer closes.
    CHECK(ReadEvents(path).size() == 2);
  }
  const std::vector<tensorflow::Event> events = ReadEvents(path);
  REQUIRE(events.size() == 2);
  CHECK(events[0].file_version() == "brain.Event:2");
  CHECK(events[0].wall_time() > 0);
  CHECK(events[1].step() == 3);
  REQUIRE(events[1].summary().value_size() == 1);
  const tensorflow::Summary::Value& v = events[1].summary().value(0);
  CHECK(v.tag() == "loss");
  CHECK(v.metadata().plugin_data().plugin_name() == "scalars");
  CHECK(v.tensor().dtype() == tensorflow::DT_FLOAT);
  CHECK(v.tensor().tensor_shape().dim_size() == 0);
  float value = 0;
  REQUIRE(v.tensor().tensor_content().size() == sizeof(value));
  std::memcpy(&value, v.tensor().tensor_content().data(), sizeof(value));
  CHECK(value == 0.25F);
  fs::remove_all(logdir.parent_path());
}

TEST_CASE("SummaryWriter names a log directory it cannot create") {
  const fs::path dir = TempDir("kiln_summary_writer_file");
  fs::create_directories(dir);
  std::ofstream(dir / "file") << "not a directory";
  auto writer = SummaryWriter::Create(dir / "file" / "logs");
  REQUIRE_FALSE(writer.ok());
  CHECK(writer.status().message().find((dir / "file" / "logs").string()) != std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln::modules
