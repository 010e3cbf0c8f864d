// `savedmodel-cli run --input_examples` on half_plus_two_v1, whose classify and regress
// signatures take serialized tf.Examples ('inputs') and ParseExample a float feature 'x' to
// compute y = 0.5 * x + 2. Every expected output here is what TensorFlow's saved_model_cli
// printed for the same command (TF 2.20).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli_test_util.h"
#include "kiln/core/npy.h"

namespace kiln::cli::testing {
namespace {

const std::string kExampleModel = Fixture("half_plus_two_v1").string();

CliResult RunSignature(const std::string& signature, std::vector<std::string> extra) {
  std::vector<std::string> args = {"run",   "--dir",           kExampleModel, "--tag_set",
                                   "serve", "--signature_def", signature};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunCli(args);
}

TEST_CASE("run --input_examples feeds one serialized tf.Example per dict") {
  CliResult r =
      RunSignature("regress_x_to_y",
                   {"--input_examples", R"(inputs=[{"x": [1.0]}, {"x": [4.5]}, {"x": [-2.5]}])"});
  INFO(r.err);
  CHECK(r.rc == 0);
  CHECK(r.err == "");
  CHECK(r.out == "Result for output key outputs:\n[[2.5 ]\n [4.25]\n [0.75]]\n");

  r = RunSignature("classify_x_to_y",
                   {"--input_examples", R"(inputs=[{"x": [3.0]}, {"x": [-1.0]}])"});
  CHECK(r.rc == 0);
  CHECK(r.out == "Result for output key scores:\n[[3.5]\n [1.5]]\n");

  // Features the graph does not read are carried along and ignored; of a repeated key, the last.
  r = RunSignature("regress_x_to_y",
                   {"--input_examples",
                    R"(inputs=[{"x": [1.0], "name": ["café"], "id": [7, -3], "raw": [b"\n"]}];)"
                    R"(inputs=[{"x": [7.0]}])"});
  CHECK(r.rc == 0);
  CHECK(r.out == "Result for output key outputs:\n[[5.5]]\n");

  r = RunSignature("regress_x_to_y2",
                   {"--input_examples", R"(inputs=[{"x": [3.0], "x2": [10.0]}])"});
  CHECK(r.rc == 0);
  CHECK(r.out == "Result for output key outputs:\n[[4.5]]\n");
}

TEST_CASE("run --input_examples wins over --inputs and --input_exprs, with TensorFlow's warning") {
  const std::string warning =
      "WARNING: input_key inputs has been specified in multiple options. Value in "
      "--input_examples will be used.\n";
  CliResult r = RunSignature("regress_x_to_y", {"--input_exprs", R"(inputs=[b"junk"])",
                                                "--input_examples", R"(inputs=[{"x": [1.0]}])"});
  CHECK(r.rc == 0);
  CHECK(r.err == warning);
  CHECK(r.out == "Result for output key outputs:\n[[2.5]]\n");

  TempDir dir;
  const std::string npy = (dir.path() / "junk.npy").string();
  Tensor junk(DType::kString, Shape{1});
  junk.data<std::string>()[0] = "junk";
  REQUIRE(WriteNpy(npy, junk).ok());
  r = RunSignature("regress_x_to_y",
                   {"--inputs", "inputs=" + npy, "--input_examples", R"(inputs=[{"x": [8.0]}])"});
  CHECK(r.rc == 0);
  CHECK(r.err == warning);
  CHECK(r.out == "Result for output key outputs:\n[[6.]]\n");
}

TEST_CASE("run --input_examples: errors name the input, the example and the feature") {
  // The first value of a list picks its kind: an int64_list the graph's float feature refuses.
  CliResult r =
      RunSignature("regress_x_to_y", {"--input_examples", R"(inputs=[{"x": [2.0]}, {"x": [3]}])"});
  CHECK(r.rc != 0);
  CHECK(r.out == "");
  CHECK(r.err.find("Key: x, Index: 1.  Data types don't match. Data type: int64 but expected "
                   "type: float") != std::string::npos);

  r = RunSignature("regress_x_to_y", {"--input_examples", R"(examples=[{"x": [1.0]}])"});
  CHECK(r.rc != 0);
  CHECK(r.err.find("has no input named 'examples'; expected inputs: 'inputs'") !=
        std::string::npos);

  r = RunSignature("serving_default", {"--input_examples", R"(x=[{"x": [1.0]}])"});
  CHECK(r.rc != 0);
  CHECK(r.err.find("--input_examples input 'x': the signature's input is float32") !=
        std::string::npos);

  // Refused before the model loads: a missing directory is not what the error is about.
  r = RunCli({"run", "--dir", "/nonexistent", "--tag_set", "serve", "--signature_def",
              "regress_x_to_y", "--input_examples", R"(inputs=[{"x": []}])"});
  CHECK(r.rc != 0);
  CHECK(r.err.find("--input_examples input 'inputs', example 0, feature 'x': the list is empty") !=
        std::string::npos);
  r = RunSignature("regress_x_to_y", {"--input_examples", R"(inputs={"x": [1.0]})"});
  CHECK(r.rc != 0);
  CHECK(r.err.find("tf.Example input must be a list of dictionaries") != std::string::npos);
}

TEST_CASE("bench --input_examples feeds the given examples") {
  CliResult r = RunCli({"bench", "--dir", kExampleModel, "--signature_def", "regress_x_to_y",
                        "--input_examples", R"(inputs=[{"x": [1.0]}, {"x": [2.0]}])", "--runs", "2",
                        "--warmup", "0"});
  INFO(r.err);
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("inputs: string (2,)\n") != std::string::npos);
  CHECK(r.out.find("generated") == std::string::npos);
}

}  // namespace
}  // namespace kiln::cli::testing
