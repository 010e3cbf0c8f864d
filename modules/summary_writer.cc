// SummaryWriter (kiln/modules/summary_writer.h): TensorBoard's event files, as TensorFlow's
// EventsWriter and SummaryFileWriter write them.
#include "kiln/modules/summary_writer.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "bundle/crc32c.h"
#include "kiln/trace/concrete_function.h"
#include "tensorflow/event.pb.h"
#include "tensorflow/framework.pb.h"

namespace kiln::modules {
namespace {

double WallTime() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

void AppendLittleEndian(std::string& s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

Result<std::unique_ptr<SummaryWriter>> SummaryWriter::Create(const std::filesystem::path& logdir) {
  std::error_code ec;
  std::filesystem::create_directories(logdir, ec);
  if (ec)
    return PermissionDenied("summary writer: cannot create the log directory ", logdir.string(),
                            ": ", ec.message());
  // TF2's name: events.out.tfevents.<seconds, 10 digits>.<host>.<pid>.<writer number>.v2; the
  // pid and a per-process count keep two writers started in one second apart.
  static std::atomic<int> writers{0};
  const auto seconds = static_cast<long long>(WallTime());
  char name[64];
  std::snprintf(name, sizeof(name), "events.out.tfevents.%010lld.", seconds);
  const std::filesystem::path path =
      logdir / (name + HostName() + "." + std::to_string(::getpid()) + "." +
                std::to_string(writers.fetch_add(1)) + ".v2");
  FILE* file = std::fopen(path.c_str(), "wbx");  // x: never overwrite another run's events
  if (file == nullptr)
    return PermissionDenied("summary writer: cannot create the event file ", path.string(), ": ",
                            std::strerror(errno));
  std::unique_ptr<SummaryWriter> writer(new SummaryWriter(path, file));
  tensorflow::Event first;
  first.set_file_version("brain.Event:2");
  KILN_RETURN_IF_ERROR(writer->Write(first));
  return writer;
}

SummaryWriter::~SummaryWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

Status SummaryWriter::Scalar(std::string_view tag, double value, int64_t step) {
  tensorflow::Event event;
  event.set_step(step);
  tensorflow::Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(std::string(tag));
  // tf.summary.scalar: the value cast to float32, as a scalar tensor in tensor_content.
  tensorflow::TensorProto* t = v->mutable_tensor();
  t->set_dtype(tensorflow::DT_FLOAT);
  t->mutable_tensor_shape();
  const auto f = static_cast<float>(value);
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof(bits));
  std::string content;
  AppendLittleEndian(content, bits, 4);
  t->set_tensor_content(content);
  // The metadata TF 2.21's tf.summary.scalar writes: the plugin's name, empty content, no
  // data_class (TensorBoard infers it from the plugin).
  v->mutable_metadata()->mutable_plugin_data()->set_plugin_name("scalars");
  return Write(event);
}

Status SummaryWriter::Graph(const tensorflow::GraphDef& graph, int64_t step) {
  tensorflow::Event event;
  event.set_step(step);
  if (!graph.SerializeToString(event.mutable_graph_def()))
    return Internal("summary writer: cannot serialize the graph for ", path_.string());
  return Write(event);
}

Status SummaryWriter::Graph(const trace::ConcreteFunction& function, int64_t step) {
  return Graph(function.graph_def(), step);
}

Status SummaryWriter::Write(tensorflow::Event& event) {
  if (event.wall_time() == 0) event.set_wall_time(WallTime());
  std::string data;
  if (!event.SerializeToString(&data))
    return Internal("summary writer: cannot serialize an event for ", path_.string());
  KILN_RETURN_IF_ERROR(WriteRecord(data));
  return Flush();
}

// TFRecord: length (uint64 LE), masked CRC32C of those 8 bytes, the data, masked CRC32C of it.
Status SummaryWriter::WriteRecord(const std::string& data) {
  std::string record;
  record.reserve(data.size() + 16);
  AppendLittleEndian(record, data.size(), 8);
  AppendLittleEndian(record, crc32c::Mask(crc32c::Value(record.data(), 8)), 4);
  record += data;
  AppendLittleEndian(record, crc32c::Mask(crc32c::Value(data)), 4);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size())
    return Unavailable("summary writer: cannot write to ", path_.string(), ": ",
                       std::strerror(errno));
  return OkStatus();
}

Status SummaryWriter::Flush() {
  if (std::fflush(file_) != 0)
    return Unavailable("summary writer: cannot write to ", path_.string(), ": ",
                       std::strerror(errno));
  return OkStatus();
}

}  // namespace kiln::modules
