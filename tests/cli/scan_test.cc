// savedmodel-cli scan: ops that touch files or the host, as TF's saved_model_cli scan reports.
#include <doctest/doctest.h>

#include "cli/cli_test_util.h"

namespace kiln::cli {
namespace {

using testing::Fixture;
using testing::RunCli;

TEST_CASE("scan names ReadFile in AssetModule and finds nothing in a plain model") {
  auto asset = RunCli({"scan", "--dir", Fixture("AssetModule").string()});
  CHECK(asset.rc == 0);
  CHECK(asset.out.find("contains the following ops that touch files or the host: {'ReadFile'}") !=
        std::string::npos);
  CHECK(asset.out.find("ReadFile node 'ReadFile' in function '__inference_read_file_") !=
        std::string::npos);
  auto plain = RunCli(
      {"scan", "--dir", Fixture("VarsAndArithmeticObjectGraph").string(), "--tag_set", "serve"});
  CHECK(plain.rc == 0);
  CHECK(plain.out.find("does not contain the ops") != std::string::npos);
  auto wrong = RunCli({"scan", "--dir", Fixture("AssetModule").string(), "--tag_set", "gpu"});
  CHECK(wrong.rc == 1);
  CHECK(wrong.err.find("no MetaGraphDef with tag-set 'gpu'") != std::string::npos);
}

}  // namespace
}  // namespace kiln::cli
