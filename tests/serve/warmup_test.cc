// TF Serving's SavedModel warm-up: assets.extra/tf_serving_warmup_requests (TFRecord of
// PredictionLogs) replayed at load; a failing or damaged file fails the version's load.
#include "kiln/serve/warmup.h"

#include <doctest/doctest.h>

#include <fstream>

#include "bundle/crc32c.h"
#include "kiln/serve/model_repository.h"
#include "serve_test_util.h"
#include "tensorflow/framework.pb.h"
#include "tensorflow_serving/apis/prediction_log.pb.h"

namespace kiln::serve {
namespace {

namespace fs = std::filesystem;
using tensorflow::serving::PredictionLog;
using testing::TempDir;

std::string Le(uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

// TFRecord framing, as tf.io.TFRecordWriter writes it.
std::string Framed(const std::string& data) {
  const std::string len = Le(data.size(), 8);
  return len + Le(crc32c::Mask(crc32c::Value(len)), 4) + data +
         Le(crc32c::Mask(crc32c::Value(data)), 4);
}

PredictionLog PredictLog(const std::string& input_key, int rows,
                         const std::string& signature = "") {
  PredictionLog log;
  auto* req = log.mutable_predict_log()->mutable_request();
  req->mutable_model_spec()->set_name("whatever");  // warm-up ignores the model it names
  if (!signature.empty()) req->mutable_model_spec()->set_signature_name(signature);
  tensorflow::TensorProto& t = (*req->mutable_inputs())[input_key];
  t.set_dtype(tensorflow::DT_FLOAT);
  t.mutable_tensor_shape()->add_dim()->set_size(rows);
  t.mutable_tensor_shape()->add_dim()->set_size(4);
  for (int i = 0; i < rows * 4; ++i) t.add_float_val(0.5f * static_cast<float>(i));
  return log;
}

void WriteWarmup(const fs::path& version_dir, const std::string& bytes) {
  fs::create_directories(version_dir / "assets.extra");
  std::ofstream(version_dir / "assets.extra" / kWarmupFileName, std::ios::binary) << bytes;
}

std::string Records(const std::vector<PredictionLog>& logs) {
  std::string out;
  for (const auto& l : logs) out += Framed(l.SerializeAsString());
  return out;
}

// Loads version 1 of `dir` in a repository; returns its status.
Status LoadStatus(const fs::path& dir, bool warmup = true) {
  RepositoryOptions opts;
  opts.enable_model_warmup = warmup;
  opts.max_load_retries = 0;
  ModelRepository repo(opts);
  KILN_RETURN_IF_ERROR(repo.SetModels({{"m", dir, {}, {}, {}}}));
  KILN_RETURN_IF_ERROR(repo.Poll());
  KILN_ASSIGN_OR_RETURN(auto st, repo.Statuses("m", 1));
  return st[0].status;
}

TEST_CASE("warm-up: the records run on the version before it serves") {
  TempDir dir;
  REQUIRE(testing::ExportDense(dir.path() / "1").ok());
  WriteWarmup(dir.path() / "1",
              Records({PredictLog("x", 2), PredictLog("x", 5, "serving_default")}));
  RepositoryOptions opts;
  ModelRepository repo(opts);
  REQUIRE(repo.SetModels({{"m", dir.path(), {}, {}, {}}}).ok());
  REQUIRE(repo.Poll().ok());
  auto servable = repo.Find("m");
  REQUIRE(servable.ok());
  auto replayed = ReplayWarmup(*servable, dir.path() / "1", 2);
  REQUIRE(replayed.ok());
  CHECK(*replayed == 2);
  // No file: nothing to replay.
  TempDir other;
  CHECK(*ReplayWarmup(*servable, other.path()) == 0);
}

TEST_CASE("warm-up: a request that fails fails the load, naming the record") {
  TempDir dir;
  REQUIRE(testing::ExportDense(dir.path() / "1").ok());
  WriteWarmup(dir.path() / "1", Records({PredictLog("x", 1), PredictLog("not_an_input", 1)}));
  const Status s = LoadStatus(dir.path());
  CHECK_FALSE(s.ok());
  CHECK(s.message().find("warm-up record 1 of") != std::string::npos);
  CHECK(s.message().find("not_an_input") != std::string::npos);
  // --enable_model_warmup=false: the file is not read.
  CHECK(LoadStatus(dir.path(), /*warmup=*/false).ok());

  WriteWarmup(dir.path() / "1", Records({PredictLog("x", 1, "no_such_signature")}));
  const Status sig = LoadStatus(dir.path());
  CHECK(sig.code() == StatusCode::kFailedPrecondition);
  CHECK(sig.message().find("no_such_signature") != std::string::npos);

  PredictionLog classify;
  classify.mutable_classify_log()
      ->mutable_request()
      ->mutable_input()
      ->mutable_example_list()
      ->add_examples();
  WriteWarmup(dir.path() / "1", Records({classify}));
  const Status method = LoadStatus(dir.path());
  // A predict signature answers no classify request (it has no classes or scores output).
  CHECK(method.message().find("neither a 'classes' nor a 'scores' output") != std::string::npos);

  PredictionLog session;
  session.mutable_session_run_log();
  WriteWarmup(dir.path() / "1", Records({session}));
  CHECK(LoadStatus(dir.path()).code() == StatusCode::kUnimplemented);
  WriteWarmup(dir.path() / "1", Records({PredictionLog()}));
  CHECK(LoadStatus(dir.path()).message().find("no log_type") != std::string::npos);
}

TEST_CASE("warm-up: damaged files are DATA_LOSS naming the byte, over 1000 records refused") {
  TempDir dir;
  REQUIRE(testing::ExportDense(dir.path() / "1").ok());
  const std::string good = Records({PredictLog("x", 1), PredictLog("x", 1)});
  struct Case {
    std::string bytes;
    const char* says;
  };
  std::string flipped = good;
  flipped[good.size() / 2] = static_cast<char>(flipped[good.size() / 2] ^ 0x40);
  std::string huge = good;
  huge.replace(
      0, 12,
      Le(uint64_t{1} << 40, 8) + Le(crc32c::Mask(crc32c::Value(Le(uint64_t{1} << 40, 8))), 4));
  for (const Case& c :
       {Case{good.substr(0, good.size() - 3), "longer than what is left"},
        Case{good.substr(0, 7), "header cut short"}, Case{flipped, "checksum does not match"},
        Case{std::string(16, '\0'), "checksum does not match"},
        Case{huge, "longer than what is left"}}) {
    CAPTURE(c.says);
    WriteWarmup(dir.path() / "1", c.bytes);
    const Status s = LoadStatus(dir.path());
    CHECK(s.code() == StatusCode::kDataLoss);
    CHECK(s.message().find(c.says) != std::string::npos);
    CHECK(s.message().find("TFRecord") != std::string::npos);
  }
  WriteWarmup(dir.path() / "1", Framed("not a proto \xff\xff\xff"));
  CHECK(LoadStatus(dir.path()).message().find("not a tensorflow.serving.PredictionLog") !=
        std::string::npos);

  std::string many;
  const std::string one = Framed(PredictLog("x", 1).SerializeAsString());
  for (int i = 0; i <= kMaxWarmupRecords; ++i) many += one;
  WriteWarmup(dir.path() / "1", many);
  const Status s = LoadStatus(dir.path());
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("more than 1000 records") != std::string::npos);
}

}  // namespace
}  // namespace kiln::serve
