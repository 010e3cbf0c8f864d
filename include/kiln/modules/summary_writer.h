// SummaryWriter: TensorBoard event files, tf.summary.create_file_writer's counterpart.
//
//   KILN_ASSIGN_OR_RETURN(auto writer, modules::SummaryWriter::Create("out/logs/train"));
//   KILN_RETURN_IF_ERROR(writer->Graph(*concrete_function));   // the traced graph, once
//   KILN_RETURN_IF_ERROR(writer->Scalar("loss", loss, step));  // per step
//
//   tensorboard --logdir out/logs
//
// Writes <logdir>/events.out.tfevents.<seconds>.<host>.<pid>.<n>.v2 as TF2's file writer
// names it: TFRecord framing (length, masked CRC32C of the length, the serialized Event, its
// masked CRC32C), a first Event with file_version "brain.Event:2", then one Event per call.
// Scalars are written as TF2's tf.summary.scalar writes them: a float32 scalar tensor with the
// "scalars" plugin's metadata, which TensorBoard reads. Every event is flushed when written, so
// TensorBoard sees a run that is still training.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "kiln/core/status.h"

namespace tensorflow {
class Event;
class GraphDef;
}  // namespace tensorflow

namespace kiln::trace {
class ConcreteFunction;
}  // namespace kiln::trace

namespace kiln::modules {

class SummaryWriter {
 public:
  // Creates `logdir` (and its parents) when missing and opens a new event file in it.
  static Result<std::unique_ptr<SummaryWriter>> Create(const std::filesystem::path& logdir);
  ~SummaryWriter();
  SummaryWriter(const SummaryWriter&) = delete;
  SummaryWriter& operator=(const SummaryWriter&) = delete;

  // tf.summary.scalar(tag, value, step).
  Status Scalar(std::string_view tag, double value, int64_t step);
  // tf.summary.graph: the GraphDef TensorBoard's graph dashboard draws.
  Status Graph(const tensorflow::GraphDef& graph, int64_t step = 0);
  // A traced function's graph, as tf.summary.trace_export writes it.
  Status Graph(const trace::ConcreteFunction& function, int64_t step = 0);
  // Any event (its wall_time is set when zero).
  Status Write(tensorflow::Event& event);
  Status Flush();

  const std::filesystem::path& path() const { return path_; }

 private:
  SummaryWriter(std::filesystem::path path, FILE* file) : path_(std::move(path)), file_(file) {}
  Status WriteRecord(const std::string& data);

  std::filesystem::path path_;
  FILE* file_;
};

}  // namespace kiln::modules
