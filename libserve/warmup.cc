#include "kiln/serve/warmup.h"

#include <chrono>
#include <fstream>
#include <map>
#include <system_error>

#include "bundle/crc32c.h"
#include "kiln/serve/log.h"
#include "kiln/serve/proto_codec.h"
#include "kiln/serve/server_core.h"
#include "tensorflow/framework.pb.h"
#include "tensorflow_serving/apis/prediction_log.pb.h"

namespace kiln::serve {
namespace fs = std::filesystem;
namespace {

uint64_t LittleEndian(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

Status RunPredict(const std::shared_ptr<const Servable>& servable,
                  const tensorflow::serving::PredictRequest& request) {
  KILN_ASSIGN_OR_RETURN(auto target,
                        ServerCore::TargetOf(servable, request.model_spec().signature_name()));
  const RequestLimits limits;  // the file ships with the model: the server's default bounds
  std::map<std::string, Tensor> inputs;
  for (const auto& [key, proto] : request.inputs()) {
    KILN_ASSIGN_OR_RETURN(Tensor t, TensorFromRequestProto(proto, limits, "input '" + key + "'"));
    inputs.emplace(key, std::move(t));
  }
  return servable->Run(*target.signature, std::move(inputs)).status();
}

Status RunExamples(const ServerCore::Target& target, std::string_view method,
                   const tensorflow::serving::Input& input) {
  KILN_ASSIGN_OR_RETURN(auto examples, SerializedExamples(input));
  if (method == kClassifyMethod) return ServerCore::Classify(target, std::move(examples)).status();
  return ServerCore::Regress(target, std::move(examples)).status();
}

Status RunExamples(const std::shared_ptr<const Servable>& servable,
                   const tensorflow::serving::ModelSpec& spec, std::string_view method,
                   const tensorflow::serving::Input& input) {
  KILN_ASSIGN_OR_RETURN(auto target, ServerCore::TargetOf(servable, spec.signature_name()));
  return RunExamples(target, method, input);
}

Status RunRecord(const std::shared_ptr<const Servable>& servable,
                 const tensorflow::serving::PredictionLog& log) {
  using Log = tensorflow::serving::PredictionLog;
  switch (log.log_type_case()) {
    case Log::kPredictLog:
      return RunPredict(servable, log.predict_log().request());
    case Log::kClassifyLog:
      return RunExamples(servable, log.classify_log().request().model_spec(), kClassifyMethod,
                         log.classify_log().request().input());
    case Log::kRegressLog:
      return RunExamples(servable, log.regress_log().request().model_spec(), kRegressMethod,
                         log.regress_log().request().input());
    case Log::kMultiInferenceLog: {
      const auto& request = log.multi_inference_log().request();
      if (request.tasks_size() == 0)
        return InvalidArgument("Found no tasks in MultiInferenceRequest.");
      std::vector<ServerCore::Target> targets;
      for (const auto& task : request.tasks()) {
        if (task.method_name() != kClassifyMethod && task.method_name() != kRegressMethod)
          return Unimplemented("Unsupported signature method_name: ", task.method_name());
        KILN_ASSIGN_OR_RETURN(auto target,
                              ServerCore::TargetOf(servable, task.model_spec().signature_name()));
        targets.push_back(std::move(target));
      }
      for (int i = 0; i < request.tasks_size(); ++i)
        KILN_RETURN_IF_ERROR(
            RunExamples(targets[i], request.tasks(i).method_name(), request.input()));
      return OkStatus();
    }
    case Log::kSessionRunLog:
      return Unimplemented(
          "session_run_log records cannot warm up a SavedModel (TF Serving "
          "refuses them too); use predict_log");
    case Log::kPredictStreamedLog:
      return Unimplemented(
          "predict_streamed_log records cannot warm up a SavedModel; use "
          "predict_log");
    case Log::LOG_TYPE_NOT_SET:
      break;
  }
  return InvalidArgument("the record holds no request (no log_type set)");
}

}  // namespace

Result<TfRecordReader> TfRecordReader::Open(const fs::path& file) {
  TfRecordReader r;
  r.file_ = file;
  r.in_ = std::make_unique<std::ifstream>(file, std::ios::binary);
  if (!*r.in_) return NotFound("cannot open '", file.string(), "'");
  std::error_code ec;
  r.size_ = fs::file_size(file, ec);
  if (ec) return NotFound("cannot read the size of '", file.string(), "': ", ec.message());
  return r;
}

Result<bool> TfRecordReader::Next(std::string* record) {
  if (offset_ >= size_) return false;
  auto lost = [&](std::string_view what) {
    return DataLoss("'", file_.string(), "': ", what, " at byte ", offset_,
                    "; a warm-up file must be in TFRecord format (uncompressed)");
  };
  const uint64_t left = size_ - offset_;
  if (left < 12) return lost("a record header cut short");
  unsigned char header[12];
  in_->read(reinterpret_cast<char*>(header), sizeof header);
  if (!*in_) return lost("a read error");
  if (crc32c::Mask(crc32c::Value(header, 8)) != LittleEndian(header + 8, 4))
    return lost("a record length whose checksum does not match");
  const uint64_t length = LittleEndian(header, 8);
  if (length > left - 12 || left - 12 - length < 4)
    return lost("a record longer than what is left of the file");
  record->assign(length, '\0');
  unsigned char footer[4];
  in_->read(record->data(), static_cast<std::streamsize>(length));
  in_->read(reinterpret_cast<char*>(footer), sizeof footer);
  if (!*in_) return lost("a read error");
  if (crc32c::Mask(crc32c::Value(*record)) != LittleEndian(footer, 4))
    return lost("a record whose data checksum does not match");
  offset_ += 12 + length + 4;
  return true;
}

Result<int> ReplayWarmup(const std::shared_ptr<const Servable>& servable,
                         const fs::path& version_dir, int iterations) {
  const fs::path file = version_dir / "assets.extra" / kWarmupFileName;
  std::error_code ec;
  if (!fs::exists(file, ec)) return 0;
  const auto start = std::chrono::steady_clock::now();
  KILN_ASSIGN_OR_RETURN(TfRecordReader reader, TfRecordReader::Open(file));
  int count = 0;
  std::string record;
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool more, reader.Next(&record));
    if (!more) break;
    if (count == kMaxWarmupRecords)
      return InvalidArgument("'", file.string(), "' has more than ", kMaxWarmupRecords,
                             " records (TF Serving's bound for a warm-up file)");
    tensorflow::serving::PredictionLog log;
    if (!log.ParseFromString(record))
      return InvalidArgument("warm-up record ", count, " of '", file.string(),
                             "' is not a tensorflow.serving.PredictionLog");
    for (int k = 0; k < iterations; ++k)
      KILN_RETURN_IF_ERROR_CTX(RunRecord(servable, log), "warm-up record ", count, " of '",
                               file.string(), "'");
    ++count;
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  LogEvent("info", "warmup_done",
           {{"model", servable->name()},
            {"version", std::to_string(servable->version())},
            {"records", std::to_string(count)},
            {"ms", std::to_string(static_cast<int64_t>(ms))}});
  return count;
}

}  // namespace kiln::serve
