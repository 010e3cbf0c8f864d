// Model repository (versions, policies, labels, hot reload), dynamic batching, the unsafe-op
// scan and TF Serving's config files, on small bundles exported by kiln::modules.
#include <doctest/doctest.h>

#include <future>
#include <thread>

#include "kiln/exec/unsafe_ops.h"
#include "kiln/serve/model_repository.h"
#include "kiln/serve/server_config.h"
#include "kiln/serve/server_core.h"
#include "serve_test_util.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::serve {
namespace {

namespace fs = std::filesystem;
using testing::DenseBundle;
using testing::TempDir;

Result<std::vector<float>> RunDense(const Servable& s, const std::vector<float>& x) {
  auto sig = s.model().GetSignature("serving_default");
  if (!sig.ok()) return sig.status();
  KILN_ASSIGN_OR_RETURN(Tensor in,
                        Tensor::FromVector(x, Shape{static_cast<int64_t>(x.size() / 4), 4}));
  KILN_ASSIGN_OR_RETURN(auto out, s.Run(**sig, {{"x", in}}));
  const Tensor& y = out.begin()->second;
  return std::vector<float>(y.flat<float>().begin(), y.flat<float>().end());
}

void CheckClose(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == doctest::Approx(b[i]).epsilon(1e-5));
}

TEST_CASE("repository: latest version served, new versions hot-loaded, old ones unloaded") {
  TempDir dir;
  auto v1 = testing::ExportDense(dir.path() / "m" / "1", 1);
  REQUIRE(v1.ok());
  fs::create_directories(dir.path() / "m" / "not_a_version");
  Metrics metrics;
  RepositoryOptions opts;
  opts.metrics = &metrics;
  ModelRepository repo(opts);
  REQUIRE(repo.SetModels({{"m", dir.path() / "m", {}, {}, {}}}).ok());
  REQUIRE(repo.Poll().ok());
  CHECK(repo.AllModelsAvailable());
  auto s1 = repo.Find("m");
  REQUIRE(s1.ok());
  CHECK((*s1)->version() == 1);

  auto v2 = testing::ExportDense(dir.path() / "m" / "2", 2);
  REQUIRE(v2.ok());
  REQUIRE(repo.Poll().ok());
  auto s2 = repo.Find("m");
  REQUIRE(s2.ok());
  CHECK((*s2)->version() == 2);
  CHECK_FALSE(repo.Find("m", 1).ok());  // latest 1: version 1 unloaded
  // A request that held version 1 across the unload still runs on it.
  const std::vector<float> x = {1, 2, 3, 4};
  auto y1 = RunDense(**s1, x);
  REQUIRE(y1.ok());
  CheckClose(*y1, v1->Apply(x));
  auto y2 = RunDense(**s2, x);
  REQUIRE(y2.ok());
  CheckClose(*y2, v2->Apply(x));

  auto statuses = repo.Statuses("m");
  REQUIRE(statuses.ok());
  REQUIRE(statuses->size() == 2);
  CHECK((*statuses)[0].version == 2);
  CHECK((*statuses)[0].state == VersionState::kAvailable);
  CHECK((*statuses)[1].state == VersionState::kEnd);

  fs::remove_all(dir.path() / "m" / "2");  // removed from disk: back to version 1
  REQUIRE(repo.Poll().ok());
  auto back = repo.Find("m");
  REQUIRE(back.ok());
  CHECK((*back)->version() == 1);
  CHECK(repo.Find("nope").status().code() == StatusCode::kNotFound);
}

TEST_CASE("repository: all / specific policies and labels") {
  TempDir dir;
  for (int v : {1, 2, 3}) REQUIRE(testing::ExportDense(dir.path() / std::to_string(v), v).ok());
  ModelRepository repo(RepositoryOptions{});
  ModelSource all{"all", dir.path(), {VersionPolicy::Kind::kAll, 1, {}}, {}, {}};
  ModelSource specific{"spec",
                       dir.path(),
                       {VersionPolicy::Kind::kSpecific, 1, {1, 3, 9}},
                       {{"stable", 1}, {"canary", 3}},
                       {}};
  REQUIRE(repo.SetModels({all, specific}).ok());
  REQUIRE(repo.Poll().ok());
  for (int v : {1, 2, 3}) CHECK(repo.Find("all", v).ok());
  CHECK(repo.Find("spec", 1).ok());
  CHECK_FALSE(repo.Find("spec", 2).ok());
  auto stable = repo.Find("spec", std::nullopt, "stable");
  REQUIRE(stable.ok());
  CHECK((*stable)->version() == 1);
  auto canary = repo.Find("spec", std::nullopt, "canary");
  REQUIRE(canary.ok());
  CHECK((*canary)->version() == 3);
  CHECK_FALSE(repo.Find("spec", std::nullopt, "nope").ok());
}

TEST_CASE("repository: a broken version is reported and the others still serve") {
  TempDir dir;
  REQUIRE(testing::ExportDense(dir.path() / "1").ok());
  fs::create_directories(dir.path() / "2");
  testing::WriteAll(dir.path() / "2" / "saved_model.pb", "not a proto");
  ModelRepository repo(RepositoryOptions{});
  REQUIRE(repo.SetModels({{"m", dir.path(), {VersionPolicy::Kind::kAll, 1, {}}, {}, {}}}).ok());
  REQUIRE(repo.Poll().ok());
  CHECK(repo.Find("m", 1).ok());
  auto st = repo.Statuses("m", 2);
  REQUIRE(st.ok());
  CHECK((*st)[0].state == VersionState::kEnd);
  CHECK((*st)[0].status.code() == StatusCode::kDataLoss);
}

TEST_CASE("repository: bundles with ops that touch files are refused unless allowed") {
  TempDir dir;
  fs::create_directories(dir.path() / "a");
  testing::CopyFixture("AssetModule", dir);
  fs::rename(dir.path() / "AssetModule", dir.path() / "a" / "1");
  {
    ModelRepository repo(RepositoryOptions{});
    REQUIRE(repo.SetModels({{"a", dir.path() / "a", {}, {}, {}}}).ok());
    REQUIRE(repo.Poll().ok());
    auto st = repo.Statuses("a", 1);
    REQUIRE(st.ok());
    CHECK((*st)[0].status.code() == StatusCode::kPermissionDenied);
    CHECK((*st)[0].status.message().find("ReadFile") != std::string::npos);
  }
  RepositoryOptions allow;
  allow.allowed_unsafe_ops = {"ReadFile"};
  ModelRepository repo(allow);
  REQUIRE(repo.SetModels({{"a", dir.path() / "a", {}, {}, {}}}).ok());
  REQUIRE(repo.Poll().ok());
  CHECK(repo.Find("a", 1).ok());
}

TEST_CASE("scan lists file and host-callback ops wherever they are") {
  tensorflow::MetaGraphDef mg;
  auto* n = mg.mutable_graph_def()->add_node();
  n->set_name("print");
  n->set_op("PrintV2");
  (*n->mutable_attr())["output_stream"].set_s("stderr");  // not a file: fine
  auto* fn = mg.mutable_graph_def()->mutable_library()->add_function();
  fn->mutable_signature()->set_name("f");
  auto* w = fn->add_node_def();
  w->set_name("w");
  w->set_op("WriteFile");
  auto* p = fn->add_node_def();
  p->set_name("p");
  p->set_op("PrintV2");
  (*p->mutable_attr())["output_stream"].set_s("file:///tmp/log");
  auto* cb = fn->add_node_def();
  cb->set_name("cb");
  cb->set_op("EagerPyFunc");
  auto found = exec::ScanUnsafeOps(mg);
  REQUIRE(found.size() == 3);
  CHECK(found[0].op == "WriteFile");
  CHECK(found[0].function == "f");
  CHECK(found[1].op == "PrintV2");
  CHECK(found[2].op == "EagerPyFunc");
}

TEST_CASE("batching: concurrent single requests share batches and get their own answers") {
  TempDir dir;
  auto dense = testing::ExportDense(dir.path() / "1");
  REQUIRE(dense.ok());
  Metrics metrics;
  RepositoryOptions opts;
  opts.metrics = &metrics;
  opts.batching.enabled = true;
  opts.batching.max_batch_size = 8;
  opts.batching.batch_timeout_micros = 5'000'000;  // the batch fills long before this
  ModelRepository repo(opts);
  REQUIRE(repo.SetModels({{"m", dir.path(), {}, {}, {}}}).ok());
  REQUIRE(repo.Poll().ok());
  auto s = repo.Find("m");
  REQUIRE(s.ok());
  std::vector<std::future<Result<std::vector<float>>>> futures;
  for (int i = 0; i < 8; ++i) {
    std::vector<float> x = {float(i), float(i) * 2, -1, 0.5f};
    futures.push_back(std::async(std::launch::async, [s, x] { return RunDense(**s, x); }));
  }
  for (int i = 0; i < 8; ++i) {
    auto y = futures[i].get();
    REQUIRE(y.ok());
    CheckClose(*y, dense->Apply({float(i), float(i) * 2, -1, 0.5f}));
  }
  const std::string prom = metrics.Prometheus();
  CHECK(prom.find("kiln_batch_size_count{model=\"m\"} 1\n") != std::string::npos);
  CHECK(prom.find("kiln_batch_size_bucket{model=\"m\",le=\"8\"} 1\n") != std::string::npos);
}

TEST_CASE("batching: padding to an allowed size keeps each answer right") {
  TempDir dir;
  auto dense = testing::ExportDense(dir.path() / "1");
  REQUIRE(dense.ok());
  Metrics metrics;
  RepositoryOptions opts;
  opts.metrics = &metrics;
  opts.batching.enabled = true;
  opts.batching.max_batch_size = 8;
  opts.batching.allowed_batch_sizes = {4, 8};
  opts.batching.batch_timeout_micros = 1000;
  ModelRepository repo(opts);
  REQUIRE(repo.SetModels({{"m", dir.path(), {}, {}, {}}}).ok());
  REQUIRE(repo.Poll().ok());
  auto s = repo.Find("m");
  REQUIRE(s.ok());
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};  // 3 rows
  auto y = RunDense(**s, x);
  REQUIRE(y.ok());
  CheckClose(*y, dense->Apply(x));
  CHECK(metrics.Prometheus().find("kiln_batch_size_bucket{model=\"m\",le=\"4\"} 1\n") !=
        std::string::npos);
  BatchingOptions bad;
  bad.max_batch_size = 8;
  bad.allowed_batch_sizes = {4, 6};
  CHECK_FALSE(bad.Validate().ok());
}

TEST_CASE("TF Serving config files: model_config_list and batching parameters") {
  auto models = ParseModelConfigText(R"(
    model_config_list {
      config { name: "a" base_path: "/m/a" model_platform: "tensorflow" }
      config {
        name: "b" base_path: "/m/b"
        model_version_policy { specific { versions: 1 versions: 3 } }
        version_labels { key: "stable" value: 1 }
      }
      config { name: "c" base_path: "/m/c" model_version_policy { latest { num_versions: 2 } } }
    })");
  REQUIRE(models.ok());
  REQUIRE(models->size() == 3);
  CHECK((*models)[0].policy.kind == VersionPolicy::Kind::kLatest);
  CHECK((*models)[1].policy.specific == std::vector<int64_t>{1, 3});
  CHECK((*models)[1].labels.at("stable") == 1);
  CHECK((*models)[2].policy.num_latest == 2);
  CHECK_FALSE(ParseModelConfigText("model_config_list { config { name: 1 } }").ok());
  auto b = ParseBatchingParametersText(
      "max_batch_size { value: 16 } batch_timeout_micros { value: 500 } "
      "allowed_batch_sizes: 8 allowed_batch_sizes: 16");
  REQUIRE(b.ok());
  CHECK(b->enabled);
  CHECK(b->max_batch_size == 16);
  CHECK(b->allowed_batch_sizes == std::vector<int64_t>{8, 16});
}

}  // namespace
}  // namespace kiln::serve

namespace kiln::serve {
namespace {

TEST_CASE("metrics: only configured models become label values (issue 24 #6)") {
  TempDir dir;
  REQUIRE(testing::ExportDense(dir.path() / "m" / "1", 1).ok());
  Metrics metrics;
  RepositoryOptions opts;
  opts.metrics = &metrics;
  ModelRepository repo(opts);
  REQUIRE(repo.SetModels({{"m", dir.path() / "m", {}, {}, {}}}).ok());
  metrics.CountRequest("rest_v1", "m", "OK");
  for (int i = 0; i < 100; ++i)
    metrics.CountRequest("rest_v1", "no-such-model-" + std::to_string(i), "NOT_FOUND");
  const std::string text = metrics.Prometheus();
  CHECK(text.find("model=\"m\"") != std::string::npos);
  CHECK(text.find("no-such-model") == std::string::npos);
  CHECK(text.find("model=\"_unknown\",code=\"NOT_FOUND\"} 100") != std::string::npos);
}

}  // namespace
}  // namespace kiln::serve

namespace kiln::serve {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string LoadCount(const Metrics& metrics, std::string_view model, std::string_view result) {
  const std::string text = metrics.Prometheus();
  const std::string key = "kiln_model_loads_total{model=\"" + std::string(model) + "\",result=\"" +
                          std::string(result) + "\"} ";
  const size_t at = text.find(key);
  return at == std::string::npos
             ? "0"
             : text.substr(at + key.size(), text.find('\n', at) - at - key.size());
}

TEST_CASE("repository: ReloadConfig adds and removes models, moves labels, refuses bad labels") {
  TempDir dir;
  for (int v : {1, 2}) REQUIRE(testing::ExportDense(dir.path() / "a" / std::to_string(v), v).ok());
  REQUIRE(testing::ExportDense(dir.path() / "b" / "1", 3).ok());
  ModelRepository repo(RepositoryOptions{});
  const VersionPolicy all{VersionPolicy::Kind::kAll, 1, {}};
  ModelSource a{"a", dir.path() / "a", all, {{"stable", 1}}, {}};
  REQUIRE(repo.SetModels({a}).ok());
  REQUIRE(repo.Poll().ok());
  REQUIRE(repo.CheckVersionLabels({a}).ok());
  CHECK((*repo.Find("a", std::nullopt, "stable"))->version() == 1);

  // Move the label, add b: both take effect in the call.
  a.labels["stable"] = 2;
  ModelSource b{"b", dir.path() / "b", {}, {}, {}};
  std::string not_available;
  REQUIRE(repo.ReloadConfig({a, b}, &not_available).ok());
  CHECK(not_available.empty());
  CHECK((*repo.Find("a", std::nullopt, "stable"))->version() == 2);
  REQUIRE(repo.Find("b").ok());

  // A label on a version that does not serve is refused (TF Serving's message) and nothing
  // changes: b stays, the label stays on 2.
  ModelSource bad = a;
  bad.labels["stable"] = 9;
  Status refused = repo.ReloadConfig({bad});
  CHECK(refused.code() == StatusCode::kFailedPrecondition);
  CHECK(refused.message() ==
        "Request to assign label to version 9 of model a, which is not currently available for "
        "inference");
  CHECK(repo.Find("b").ok());
  CHECK((*repo.Find("a", std::nullopt, "stable"))->version() == 2);

  // Removing a model unloads it; a request that holds it still runs.
  auto held = repo.Find("a");
  REQUIRE(held.ok());
  REQUIRE(repo.ReloadConfig({b}).ok());
  CHECK(repo.Find("a").status().code() == StatusCode::kNotFound);
  CHECK(RunDense(**held, {1, 2, 3, 4}).ok());

  // A new model with no version yet: applied, and reported as not available.
  fs::create_directories(dir.path() / "c");
  REQUIRE(repo.ReloadConfig({b, {"c", dir.path() / "c", {}, {}, {}}}, &not_available).ok());
  CHECK(not_available.find("1 model(s) did not become available: {{name: c") == 0);
  CHECK(repo.Statuses("c").status().message() == "Could not find any versions of model 'c'");
  CHECK(repo.Statuses("b", 5).status().message() == "Could not find version 5 of model 'b'");
}

TEST_CASE("repository: labels on unavailable versions with the TF Serving flag") {
  TempDir dir;
  REQUIRE(testing::ExportDense(dir.path() / "1").ok());
  RepositoryOptions opts;
  opts.allow_version_labels_for_unavailable_models = true;
  ModelRepository repo(opts);
  ModelSource m{"m", dir.path(), {}, {{"canary", 2}}, {}};
  REQUIRE(repo.ReloadConfig({m}).ok());  // a new label may name a version not there yet
  m.labels["canary"] = 3;                // moving it must land on a version that serves
  CHECK(repo.ReloadConfig({m}).code() == StatusCode::kFailedPrecondition);
  m.labels["canary"] = 1;
  CHECK(repo.ReloadConfig({m}).ok());
  ModelRepository strict(RepositoryOptions{});
  CHECK(strict.ReloadConfig({{"m", dir.path(), {}, {{"canary", 2}}, {}}}).code() ==
        StatusCode::kFailedPrecondition);
}

TEST_CASE("repository: a version directory named 007 is version 7, loaded from 007") {
  TempDir dir;
  REQUIRE(testing::ExportDense(dir.path() / "007").ok());
  ModelRepository repo(RepositoryOptions{});
  REQUIRE(repo.SetModels({{"m", dir.path(), {}, {}, {}}}).ok());
  REQUIRE(repo.Poll().ok());
  auto s = repo.Find("m", 7);
  REQUIRE(s.ok());
  CHECK(RunDense(**s, {1, 2, 3, 4}).ok());
}

TEST_CASE("repository: --max_num_load_retries N makes N + 1 tries, as TF Serving") {
  for (int retries : {0, 2}) {
    TempDir dir;
    fs::create_directories(dir.path() / "1");
    testing::WriteAll(dir.path() / "1" / "saved_model.pb", "not a proto");
    Metrics metrics;
    RepositoryOptions opts;
    opts.metrics = &metrics;
    opts.max_load_retries = retries;
    opts.load_retry_interval = std::chrono::milliseconds(0);
    ModelRepository repo(opts);
    REQUIRE(repo.SetModels({{"m", dir.path(), {}, {}, {}}}).ok());
    for (int i = 0; i < 6; ++i) REQUIRE(repo.Poll().ok());
    CHECK(LoadCount(metrics, "m", "error") == std::to_string(retries + 1));
  }
}

TEST_CASE("batching: enable_large_batch_splitting runs a large request as chunks") {
  TempDir dir;
  auto dense = testing::ExportDense(dir.path() / "1");
  REQUIRE(dense.ok());
  Metrics metrics;
  RepositoryOptions opts;
  opts.metrics = &metrics;
  auto params = ParseBatchingParametersText(
      "max_batch_size { value: 4 } batch_timeout_micros { value: 0 } "
      "enable_large_batch_splitting { value: true } max_execution_batch_size { value: 2 } "
      "pad_variable_length_inputs: true");
  REQUIRE(params.ok());
  opts.batching = *params;
  ModelRepository repo(opts);
  REQUIRE(repo.SetModels({{"m", dir.path(), {}, {}, {}}}).ok());
  REQUIRE(repo.Poll().ok());
  auto s = repo.Find("m");
  REQUIRE(s.ok());
  std::vector<float> x;
  for (int i = 0; i < 7 * 4; ++i) x.push_back(static_cast<float>(i % 5) - 1.5f);  // 7 rows
  auto y = RunDense(**s, x);
  REQUIRE(y.ok());
  CheckClose(*y, dense->Apply(x));
  // 7 rows in batches of at most 2: none larger ran.
  const std::string prom = metrics.Prometheus();
  CHECK(prom.find("kiln_batch_size_bucket{model=\"m\",le=\"2\"} 4\n") != std::string::npos);
  CHECK(prom.find("kiln_batch_size_count{model=\"m\"} 4\n") != std::string::npos);
  // Off (the default), a request above max_batch_size runs alone, in one piece.
  BatchingOptions bad = *params;
  bad.max_execution_batch_size = 8;
  CHECK_FALSE(bad.Validate().ok());
}

TEST_CASE("TF Serving config files: its fields parse, other model types are refused") {
  auto models = ParseModelConfigText(R"(
    model_config_list {
      config {
        name: "a" base_path: "/m/a" model_type: TENSORFLOW
        logging_config { sampling_config { sampling_rate: 0.1 } }
      }
    })");
  REQUIRE(models.ok());
  CHECK((*models)[0].name == "a");
  auto other = ParseModelConfigText(
      "model_config_list { config { name: 'a' base_path: '/m/a' model_type: OTHER } }");
  CHECK(other.status().message().find("model_type OTHER; only TENSORFLOW") != std::string::npos);
  auto both = ParseModelConfigText(
      "model_config_list { config { name: 'a' base_path: '/m' model_type: TENSORFLOW "
      "model_platform: 'tensorflow' } }");
  CHECK_FALSE(both.ok());
  CHECK_FALSE(ParseBatchingParametersText("pad_variable_length_inputs { value: true }").ok());
  CHECK(ParseBatchingParametersText("pad_variable_length_inputs: true").ok());
}

}  // namespace
}  // namespace kiln::serve
