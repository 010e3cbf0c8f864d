// `show --signature_def K --graph dot|svg`: the drawing of a signature's function graph.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "cli/cli_test_util.h"

namespace kiln::cli {
namespace {

using testing::Fixture;
using testing::RunCli;

TEST_CASE("--graph dot draws the function a signature runs, through its wrapper") {
  auto r = RunCli({"show", "--dir", Fixture("VarsAndArithmeticObjectGraph").string(),
                   "--signature_def", "serving_default", "--graph", "dot"});
  REQUIRE(r.rc == 0);
  CHECK(r.err.empty());
  CHECK(r.out.rfind("digraph \"serving_default\" {", 0) == 0);
  // The wrapper forwards to the traced method; the drawing shows the method's ops.
  CHECK(r.out.find("__inference_signature_wrapper") != std::string::npos);
  CHECK(r.out.find("\\nAddV2\"") != std::string::npos);
  CHECK(r.out.find("\\nReadVariableOp\"") != std::string::npos);
  CHECK(r.out.find("shape=ellipse") != std::string::npos);  // arguments
  CHECK(r.out.find("style=filled") != std::string::npos);   // outputs
  CHECK(r.out.find(" -> ") != std::string::npos);
  CHECK(r.out.back() == '\n');
  CHECK(r.out.substr(r.out.size() - 2) == "}\n");
}

TEST_CASE("--graph dot --output writes the file, and names a missing signature") {
  testing::TempDir tmp;
  const auto file = tmp.path() / "g.dot";
  auto r = RunCli({"show", "--dir", Fixture("x_plus_y_v2_debuginfo").string(), "--signature_def",
                   "serving_default", "--graph", "dot", "--output", file.string()});
  REQUIRE(r.rc == 0);
  CHECK(r.out.empty());
  const std::string text = testing::ReadText(file);
  CHECK(text.find("AddV2") != std::string::npos);

  auto missing = RunCli({"show", "--dir", Fixture("x_plus_y_v2_debuginfo").string(),
                         "--signature_def", "nope", "--graph", "dot"});
  CHECK(missing.rc == 1);
  CHECK(missing.err.find("signature 'nope'") != std::string::npos);
  CHECK(missing.err.find("serving_default") != std::string::npos);

  auto no_sig =
      RunCli({"show", "--dir", Fixture("x_plus_y_v2_debuginfo").string(), "--graph", "dot"});
  CHECK(no_sig.rc == 1);
  CHECK(no_sig.err.find("--signature_def") != std::string::npos);

  auto bad_format = RunCli({"show", "--dir", Fixture("x_plus_y_v2_debuginfo").string(),
                            "--signature_def", "serving_default", "--graph", "png"});
  CHECK(bad_format.rc == 1);
  CHECK(bad_format.err.find("dot or svg") != std::string::npos);
}

TEST_CASE("--graph svg without Graphviz on PATH is a clear error") {
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  ::setenv("PATH", "/nonexistent-kiln-path", 1);
  auto r = RunCli({"show", "--dir", Fixture("x_plus_y_v2_debuginfo").string(), "--signature_def",
                   "serving_default", "--graph", "svg"});
  ::setenv("PATH", saved.c_str(), 1);
  CHECK(r.rc == 1);
  CHECK(r.err.find("Graphviz") != std::string::npos);
  CHECK(r.err.find("`dot`") != std::string::npos);
  CHECK(r.out.empty());
}

}  // namespace
}  // namespace kiln::cli
