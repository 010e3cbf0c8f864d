// TF Serving's SavedModel warm-up: the requests a model ships in
// assets.extra/tf_serving_warmup_requests (a TFRecord file of PredictionLogs: predict, classify,
// regress and multi-inference logs) are run on a version before it serves, so its first
// clients do not pay the first call's preparation (shape specialisation, weight packing, JIT).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "kiln/core/status.h"
#include "kiln/serve/model_repository.h"

namespace kiln::serve {

inline constexpr char kWarmupFileName[] = "tf_serving_warmup_requests";
// TF Serving's bound (WarmupConsts::kMaxNumRecords): a file with more records fails the load.
inline constexpr int kMaxWarmupRecords = 1000;

// Reads a TFRecord file one record at a time (memory: one record): each record is a
// little-endian uint64 length, its masked CRC32C, the bytes and their masked CRC32C. A cut or
// corrupted record is DATA_LOSS naming its offset; a length beyond what is left of the file is
// refused before anything is allocated.
class TfRecordReader {
 public:
  static Result<TfRecordReader> Open(const std::filesystem::path& file);
  // The next record into *record; false at the end of the file.
  Result<bool> Next(std::string* record);

 private:
  std::filesystem::path file_;
  std::unique_ptr<std::ifstream> in_;
  uint64_t size_ = 0;
  uint64_t offset_ = 0;
};

// Replays the version's warm-up file, if it has one, `iterations` times per record (TF
// Serving's ModelWarmupOptions.num_request_iterations, default 1). Records run on `servable`
// (not yet published), whatever model name and version they name; their signature names count.
// A record that fails, or one of a kind that cannot warm a SavedModel (session_run_log,
// predict_streamed_log), fails the whole replay with the record's index. Returns the number of
// records replayed (0 when the version has no warm-up file).
Result<int> ReplayWarmup(const std::shared_ptr<const Servable>& servable,
                         const std::filesystem::path& version_dir, int iterations = 1);

}  // namespace kiln::serve
