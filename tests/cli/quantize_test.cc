// `savedmodel-cli quantize`: TensorFlow-written bundles quantized to int8 and half precision
// load and run in kiln close to the float model, with the weights stored narrower in the
// checkpoint and the input bundle untouched; bad requests are clear errors that write nothing.
// tests/tf/test_quantize.py checks that TensorFlow runs the quantized bundles.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "kiln/core/npy.h"
#include "kiln/exec/saved_model.h"
#include "kiln/exec/tensor_bundle.h"

namespace kiln::cli::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Every file of a bundle, by relative path, with its bytes.
std::map<std::string, std::string> Files(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = ReadText(e.path());
  return files;
}

CliResult Quantize(const std::string& in, const fs::path& out, std::vector<std::string> more) {
  std::vector<std::string> args = {"quantize", "--dir", in, "--output_dir", out.string()};
  args.insert(args.end(), more.begin(), more.end());
  return RunCli(args);
}

// The one signature's outputs of the bundle at `dir` for the same generated inputs.
std::map<std::string, Tensor> RunDefault(const fs::path& dir,
                                         const std::map<std::string, Tensor>& in) {
  auto model = exec::SavedModel::Load(dir);
  REQUIRE(model.ok());
  auto sig = (*model)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  auto out = (*sig)->Run(in);
  REQUIRE(out.ok());
  return *out;
}

TEST_CASE("quantize weights_int8: int8 in the checkpoint, outputs close, input untouched") {
  const fs::path in = Fixture("tf_readvariableop_saved_model");
  const auto before = Files(in);
  TempDir tmp;
  const fs::path out = tmp.path() / "q";
  const CliResult r = Quantize(in.string(), out,
                               {"--mode", "weights_int8", "--min_elements", "1", "--report",
                                (tmp.path() / "report.json").string()});
  INFO(r.err);
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("Wrote ") == 0);
  CHECK(Files(in) == before);
  CHECK_FALSE(fs::exists(out / "fingerprint.pb"));
  const json report = json::parse(ReadText(tmp.path() / "report.json"));
  CHECK(report["mode"] == "weights_int8");
  int quantized = 0;
  auto reader = exec::BundleReader::Open(out / "variables" / "variables");
  REQUIRE(reader.ok());
  for (const auto& v : report["variables"]) {
    if (v["stored"] != "int8") continue;
    ++quantized;
    CHECK(v["relative_error"].get<double>() < 0.01);
    auto t = (*reader)->Read(v["checkpoint_key"].get<std::string>());
    REQUIRE(t.ok());
    CHECK(t->dtype() == DType::kInt8);
  }
  CHECK(quantized > 0);
  for (const auto& o : report["outputs"]) CHECK(o["relative_error"].get<double>() < 0.02);

  // The same check outside the command: kiln loads the quantized bundle and agrees.
  std::map<std::string, Tensor> feeds;
  auto model = exec::SavedModel::Load(in);
  REQUIRE(model.ok());
  for (const auto& arg : (*(*model)->GetSignature("serving_default"))->inputs()) {
    Shape s;
    for (int64_t d : arg.spec.shape.dims()) s.AddDim(d < 0 ? 3 : d);
    Tensor t(DType::kFloat, s);
    for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = 0.25f * float(i % 7) - 0.5f;
    feeds[arg.key] = t;
  }
  // kiln folds the dequantization at load: the quantized signature runs the float one's steps.
  auto small = exec::SavedModel::Load(out);
  REQUIRE(small.ok());
  CHECK((*(*small)->GetSignature("serving_default"))->function().plan_stats().steps ==
        (*(*model)->GetSignature("serving_default"))->function().plan_stats().steps);
  const auto want = RunDefault(in, feeds), got = RunDefault(out, feeds);
  REQUIRE(want.size() == got.size());
  for (const auto& [key, w] : want) {
    const Tensor& g = got.at(key);
    REQUIRE(g.shape() == w.shape());
    for (int64_t i = 0; i < w.NumElements(); ++i)
      CHECK(g.data<float>()[i] == doctest::Approx(w.data<float>()[i]).epsilon(0.02));
  }
}

TEST_CASE("quantize float16 and bfloat16 store half-precision variables") {
  const std::string in = Fixture("VarsAndArithmeticObjectGraph").string();
  for (const std::string mode : {"float16", "bfloat16"}) {
    TempDir tmp;
    const CliResult r = Quantize(in, tmp.path() / "q", {"--mode", mode, "--min_elements", "1"});
    INFO(mode, r.err);
    REQUIRE(r.rc == 0);
    CHECK(r.out.find(" stored as " + mode) != std::string::npos);
    auto model = exec::SavedModel::Load(tmp.path() / "q");
    REQUIRE(model.ok());
    bool half = false;
    for (const auto& v : (*model)->variables())
      half |= v.resource->dtype() == (mode == "float16" ? DType::kHalf : DType::kBFloat16);
    CHECK(half);
  }
}

TEST_CASE("quantize refuses bad requests clearly and writes nothing") {
  TempDir tmp;
  const std::string in = Fixture("tf_readvariableop_saved_model").string();
  const auto error = [&](std::vector<std::string> args, const fs::path& out) {
    const CliResult r = Quantize(in, out, std::move(args));
    CHECK(r.rc != 0);
    return r.err;
  };
  const fs::path out = tmp.path() / "q";
  CHECK(error({"--mode", "weights_int8"}, out).find("has no variable to quantize") !=
        std::string::npos);
  CHECK(error({"--mode", "int4"}, out).find("unknown quantization mode 'int4'") !=
        std::string::npos);
  CHECK(error({"--mode", "int8"}, out).find("--mode int8 needs calibration data") !=
        std::string::npos);
  CHECK(error({"--mode", "int8", "--calibration_method", "entropy"}, out)
            .find("expected minmax or percentile") != std::string::npos);
  // int8 stores what products and convolutions read; this model only adds its variables.
  Tensor rows(DType::kFloat, Shape({4, 1, 1}));
  for (int64_t i = 0; i < 4; ++i) rows.data<float>()[i] = 0.5f * float(i);
  REQUIRE(WriteNpy(tmp.path() / "rows.npy", rows).ok());
  const std::string feeds = "input1=" + (tmp.path() / "rows.npy").string() +
                            ";input2=" + (tmp.path() / "rows.npy").string();
  CHECK(error({"--mode", "int8", "--calibration", feeds}, out)
            .find("no float32 matrix product or convolution computes with it") !=
        std::string::npos);
  CHECK(error({"--mode", "weights_int8", "--min_elements", "1", "--exclude", "nope"}, out)
            .find("--exclude 'nope' matches no float32 variable") != std::string::npos);
  CHECK(error({"--mode", "weights_int8", "--min_elements", "1", "--calibration", "x=/no/such.npy"},
              out)
            .find("/no/such.npy") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  CHECK(error({"--mode", "weights_int8", "--min_elements", "1"}, in).find("is the input bundle") !=
        std::string::npos);
  fs::create_directories(out);
  CHECK(error({"--mode", "weights_int8", "--min_elements", "1"}, out).find("--overwrite") !=
        std::string::npos);
  // Nested: an output inside the input, or one holding it (replacing it would delete the
  // input) are refused before anything is written.
  CHECK(error({"--mode", "weights_int8", "--min_elements", "1"}, fs::path(in) / "q")
            .find("is inside the input bundle") != std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(in) / "q"));
  const fs::path holder = tmp.path() / "holder";
  fs::create_directories(holder);
  fs::copy(in, holder / "model", fs::copy_options::recursive);
  const CliResult held = Quantize((holder / "model").string(), holder,
                                  {"--mode", "weights_int8", "--min_elements", "1", "--overwrite"});
  CHECK(held.rc != 0);
  CHECK(held.err.find("holds the input bundle") != std::string::npos);
  CHECK(fs::exists(holder / "model" / "saved_model.pb"));
  const CliResult tf1 = RunCli({"quantize", "--dir", Fixture("half_plus_two_v2").string(),
                                "--output_dir", (tmp.path() / "v1").string(), "--mode", "float16"});
  CHECK(tf1.rc != 0);
  CHECK(tf1.err.find("TF1 SavedModel") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp.path() / "v1"));
}

TEST_CASE("quantize --exclude keeps a variable float32 and says why") {
  TempDir tmp;
  const std::string in = Fixture("tf_readvariableop_saved_model").string();
  const CliResult all = Quantize(in, tmp.path() / "all",
                                 {"--mode", "weights_int8", "--min_elements", "1", "--report",
                                  (tmp.path() / "all.json").string()});
  REQUIRE(all.rc == 0);
  const json report = json::parse(ReadText(tmp.path() / "all.json"));
  std::string first;
  for (const auto& v : report["variables"])
    if (v["stored"] == "int8") first = v["path"];
  REQUIRE(!first.empty());
  const CliResult some = Quantize(in, tmp.path() / "some",
                                  {"--mode", "weights_int8", "--min_elements", "1", "--exclude",
                                   first, "--report", (tmp.path() / "some.json").string()});
  INFO(some.err);
  REQUIRE(some.rc == 0);
  const json some_report = json::parse(ReadText(tmp.path() / "some.json"));
  for (const auto& v : some_report["variables"])
    if (v["path"] == first) CHECK(v["kept_because"] == "excluded (--exclude " + first + ")");
}

}  // namespace
}  // namespace kiln::cli::testing
