// `savedmodel-cli bench`: the report's keys and counts, generated inputs, the text table, and
// errors for bad flags. Never timings: only how the numbers relate (p50 <= p90, ...).
#include "savedmodel_cli/bench.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "device/test_device.h"

namespace kiln::cli::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;  // keeps the printed key order

const std::string kScalars = Fixture("VarsAndArithmeticObjectGraph").string();   // a, b: ()
const std::string kBatched = Fixture("tf_readvariableop_saved_model").string();  // (-1, 1, 1)

uint64_t FileBytes(const fs::path& dir) {
  uint64_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) total += e.file_size();
  return total;
}

json BenchJson(std::vector<std::string> args) {
  args.insert(args.begin(), "bench");
  args.push_back("--json");
  CliResult r = RunCli(args);
  INFO(r.err);
  REQUIRE(r.rc == 0);
  return json::parse(r.out);
}

std::string BenchError(std::vector<std::string> args) {
  args.insert(args.begin(), "bench");
  CliResult r = RunCli(args);
  CHECK(r.rc != 0);
  CHECK(r.out.empty());
  return r.err;
}

TEST_CASE("bench --json prints exactly the documented keys, in order, with the counts asked") {
  const json j = BenchJson({"--dir", kScalars, "--runs", "7", "--warmup", "2"});
  std::vector<std::string> keys;
  for (const auto& item : j.items()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{"dir",           "signature",
                                         "threads",       "runs",
                                         "warmup",        "bundle_bytes",
                                         "load_ms",       "plan_functions",
                                         "first_call_ms", "p50_us",
                                         "p90_us",        "p99_us",
                                         "mean_us",       "min_us",
                                         "calls_per_s",   "examples_per_s",
                                         "peak_rss_kb",   "rss_after_load_kb",
                                         "inputs",        "cpu_isa",
                                         "device_steps",  "copies",
                                         "copy_bytes",    "half_in_float",
                                         "device_graph",  "io_device"});
  CHECK(j["dir"] == kScalars);
  CHECK(j["signature"] == "serving_default");
  CHECK(j["threads"] == 0);
  CHECK(j["runs"] == 7);
  CHECK(j["warmup"] == 2);
  CHECK(j["bundle_bytes"].get<uint64_t>() == FileBytes(kScalars));
  // Scalar inputs: no batch dim, so no examples/s.
  CHECK(j["examples_per_s"].is_null());
  CHECK(j["inputs"] == json::parse(R"({"a": {"dtype": "float32", "shape": []},
                                       "b": {"dtype": "float32", "shape": []}})"));
  // How the statistics relate, whatever the machine's speed.
  const double mn = j["min_us"], p50 = j["p50_us"], p90 = j["p90_us"], p99 = j["p99_us"];
  CHECK(mn <= p50);
  CHECK(p50 <= p90);
  CHECK(p90 <= p99);
  CHECK(j["mean_us"].get<double>() >= mn);
  CHECK(j["load_ms"].get<double>() > 0);
  CHECK(j["first_call_ms"].get<double>() > 0);
  CHECK(j["calls_per_s"].get<double>() > 0);
  CHECK(j["rss_after_load_kb"].get<int64_t>() > 0);
  CHECK(j["peak_rss_kb"].get<int64_t>() >= j["rss_after_load_kb"].get<int64_t>());
  // The ISA the kernels ran, as kiln/exec/cpu_isa.h names it ("avx2", or "avx2 (capped ...)").
  const std::string isa = j["cpu_isa"];
  CHECK(
      (isa.rfind("baseline", 0) == 0 || isa.rfind("avx2", 0) == 0 || isa.rfind("avx512", 0) == 0));
  // On the host alone: every step on cpu, nothing copied.
  REQUIRE(j["device_steps"].size() == 1);
  CHECK(j["device_steps"]["cpu"].get<int>() > 0);
  CHECK(j["copies"] == 0);
  CHECK(j["copy_bytes"] == 0);
  CHECK(j["half_in_float"] == 0);  // a float32 model
  CHECK(j["device_graph"] == "");  // no --cuda_graphs
  CHECK(j["io_device"] == "");     // no --device_io
}

TEST_CASE("bench --cuda_graphs says why a host-only load records nothing") {
  const json j = BenchJson({"--dir", kScalars, "--runs", "3", "--warmup", "2", "--cuda_graphs"});
  CHECK(j["device_graph"] == "not recorded: every step runs on the host");
}

TEST_CASE("bench --device_io keeps inputs and results on the load's first device") {
  const json host = BenchJson({"--dir", kScalars, "--runs", "3", "--warmup", "1", "--device_io"});
  CHECK(host["io_device"] == "cpu");  // the host alone: nothing to keep elsewhere
  kiln::testing::GetTestDevice();     // registered: findable by name
  const json test = BenchJson(
      {"--dir", kScalars, "--runs", "3", "--warmup", "1", "--device", "test", "--device_io"});
  CHECK(test["io_device"] == "test:0");
  CHECK(test["device_steps"]["test:0"].get<int>() > 0);
}

TEST_CASE("bench --device names a device that is not there: an error listing the devices") {
  const std::string err = BenchError({"--dir", kScalars, "--device", "gpu", "--runs", "1"});
  CHECK(err.find("'gpu'") != std::string::npos);
  CHECK(err.find("available devices: cpu") != std::string::npos);
}

TEST_CASE("bench: a batch dim takes --batch in generated inputs and gives examples/s") {
  const json j = BenchJson(
      {"--dir", kBatched, "--batch", "4", "--runs", "3", "--warmup", "0", "--threads", "2"});
  CHECK(j["runs"] == 3);
  CHECK(j["warmup"] == 0);
  CHECK(j["threads"] == 2);
  CHECK(j["inputs"] == json::parse(R"({"input1": {"dtype": "float32", "shape": [4, 1, 1]},
                                       "input2": {"dtype": "float32", "shape": [4, 1, 1]}})"));
  REQUIRE(j["examples_per_s"].is_number());
  const double calls = j["calls_per_s"], examples = j["examples_per_s"];
  CHECK(examples == doctest::Approx(4 * calls));
}

TEST_CASE("bench: given inputs are used, the others generated, the text table is aligned") {
  CliResult r = RunCli(
      {"bench", "--dir", kScalars, "--input_exprs", "a=2.0", "--runs", "2", "--warmup", "0"});
  INFO(r.err);
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("a: float32 ()\n") != std::string::npos);
  CHECK(r.out.find("b: float32 () (generated)\n") != std::string::npos);
  CHECK(r.out.find("2 timed, after 0 warm-up") != std::string::npos);
  CHECK(r.out.find("examples/s") == std::string::npos);
  // Every row: a label padded to one width, then the value.
  std::vector<std::string> labels;
  size_t value_column = std::string::npos;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const size_t value = line.find_first_not_of(' ', line.find("  "));
    REQUIRE(value != std::string::npos);
    if (value_column == std::string::npos) value_column = value;
    CHECK(value == value_column);
    const std::string label = line.substr(0, line.find("  "));
    if (!label.empty()) labels.push_back(label);
  }
  CHECK(labels == std::vector<std::string>{"model", "signature", "inputs", "threads", "cpu isa",
                                           "bundle size", "load", "first call", "runs", "per call",
                                           "throughput", "memory", "placement"});
}

TEST_CASE("bench: --min_seconds keeps the run count at least --runs") {
  const json j =
      BenchJson({"--dir", kScalars, "--runs", "3", "--warmup", "0", "--min_seconds", "0.01"});
  CHECK(j["runs"].get<int>() >= 3);
}

TEST_CASE("bench: bad flags and inputs are errors that say what was expected") {
  CHECK(BenchError({"--dir", kScalars, "--runs", "0"}).find("--runs must be between 1 and") !=
        std::string::npos);
  CHECK(BenchError({"--dir", kScalars, "--warmup", "-1"}).find("--warmup must be 0 or more") !=
        std::string::npos);
  CHECK(BenchError({"--dir", kScalars, "--threads", "-2"}).find("--threads must be 0") !=
        std::string::npos);
  CHECK(BenchError({"--dir", kScalars, "--batch", "0"}).find("--batch must be at least 1") !=
        std::string::npos);
  CHECK(BenchError({"--dir", kScalars, "--min_seconds", "-1"})
            .find("--min_seconds must be 0 or more") != std::string::npos);
  CHECK(BenchError({"--dir", kScalars, "--runs", "many"}).find("--runs") != std::string::npos);
  CHECK(BenchError({"--runs", "3"}).find("--dir") != std::string::npos);
  CHECK(BenchError({"--dir", kScalars, "--input_exprs", "zz=1.0"})
            .find("has no input named 'zz'; expected inputs: 'a', 'b'") != std::string::npos);
  CHECK(BenchError({"--dir", kScalars, "--input_exprs", "a=[1.0, 2.0]"}).find("input 'a'") !=
        std::string::npos);
  CHECK(BenchError({"--dir", kScalars, "--signature_def", "nope"}).find("nope") !=
        std::string::npos);
  CHECK(BenchError({"--dir", "/nonexistent/kiln/bundle"}).find("/nonexistent/kiln/bundle") !=
        std::string::npos);
}

TEST_CASE("bench is listed by --help") {
  CliResult r = RunCli({"--help"});
  CHECK(r.rc == 0);
  CHECK(r.out.find("bench") != std::string::npos);
}

TEST_CASE("RandomInput: unknown dims, value ranges per dtype, and dtypes with no value") {
  std::mt19937 rng(1);
  auto shape_of = [&](exec::TensorSpec spec) {
    auto t = RandomInput(spec, 5, rng);
    REQUIRE(t.ok());
    return t->shape();
  };
  CHECK(shape_of({DType::kFloat, PartialShape({-1, 3})}) == Shape({5, 3}));
  CHECK(shape_of({DType::kFloat, PartialShape({2, -1, -1})}) == Shape({2, 1, 1}));
  CHECK(shape_of({DType::kFloat, PartialShape::UnknownRank()}) == Shape());

  auto f = RandomInput({DType::kDouble, PartialShape({100})}, 1, rng);
  REQUIRE(f.ok());
  for (int i = 0; i < 100; ++i) {
    const double v = f->flat<double>()[i];
    CHECK(v >= -1.0);
    CHECK(v < 1.0);
  }
  auto n = RandomInput({DType::kInt64, PartialShape({100})}, 1, rng);
  REQUIRE(n.ok());
  for (int i = 0; i < 100; ++i) {
    const int64_t v = n->flat<int64_t>()[i];
    CHECK(v >= 0);
    CHECK(v < 10);
  }
  auto s = RandomInput({DType::kString, PartialShape({20})}, 1, rng);
  REQUIRE(s.ok());
  for (int i = 0; i < 20; ++i) {
    const std::string& v = s->flat<std::string>()[i];
    CHECK(v.size() >= 1);
    CHECK(v.size() <= 8);
    for (char c : v) CHECK((c >= 'a' && c <= 'z'));
  }
  auto h = RandomInput({DType::kHalf, PartialShape({50})}, 1, rng);
  REQUIRE(h.ok());
  for (int i = 0; i < 50; ++i) {
    // IEEE half: finite (exponent field not all ones) and of magnitude below 1.
    const uint16_t bits = h->flat<Half>()[i].bits;
    const int exponent = (bits >> 10) & 0x1f;
    CHECK(exponent < 15);
  }
  auto r = RandomInput({DType::kResource, PartialShape::Scalar()}, 1, rng);
  REQUIRE(!r.ok());
  CHECK(r.status().message().find("cannot generate a resource input") != std::string::npos);
}

TEST_CASE("Percentile is the nearest rank, DirectoryBytes sums regular files") {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  CHECK(Percentile(v, 50) == 50);
  CHECK(Percentile(v, 90) == 90);
  CHECK(Percentile(v, 99) == 99);
  CHECK(Percentile(v, 100) == 100);
  // Against the definition: the smallest value with at least p% of the values at or below it.
  const std::vector<double> seven = {1, 2, 3, 5, 8, 13, 21};
  for (double p : {10.0, 50.0, 90.0, 99.0}) {
    double want = seven.back();
    for (double x : seven) {
      const double at_or_below = static_cast<double>(
          std::count_if(seven.begin(), seven.end(), [x](double y) { return y <= x; }));
      if (at_or_below * 100 >= p * 7) {
        want = x;
        break;
      }
    }
    CHECK(Percentile(seven, p) == want);
  }

  TempDir dir;
  fs::create_directories(dir.path() / "variables");
  WriteText(dir.path() / "saved_model.pb", "123");
  WriteText(dir.path() / "variables" / "data", "12345");
  auto bytes = DirectoryBytes(dir.path());
  REQUIRE(bytes.ok());
  CHECK(*bytes == 8);
}

}  // namespace
}  // namespace kiln::cli::testing
