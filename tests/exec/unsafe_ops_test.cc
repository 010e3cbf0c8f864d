// Hostile bundles: ScanUnsafeOps (savedmodel-cli scan, the server's gate) flags checkpoint and
// summary file access except in the bundle's own saver, and the loader refuses asset names
// that leave assets/.
#include "kiln/exec/unsafe_ops.h"

#include <doctest/doctest.h>
#include <google/protobuf/text_format.h>

#include "exec/test_util.h"
#include "kiln/exec/saved_model.h"
#include "loader/loader_common.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace {

using kiln::testing::CopyFixture;
using kiln::testing::Fixture;
using kiln::testing::ReadAll;
using kiln::testing::TempDir;
using kiln::testing::WriteAll;

tensorflow::MetaGraphDef ParseMetaGraph(const std::string& text) {
  tensorflow::MetaGraphDef mg;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &mg));
  return mg;
}

std::string Found(const std::vector<UnsafeOp>& found) {
  std::string s;
  for (const UnsafeOp& u : found) s += u.op + " " + u.node + " in '" + u.function + "'; ";
  return s;
}

// A TF2-shaped bundle: the saver_def's nodes call __traced_save / __traced_restore (SaveV2,
// MergeV2Checkpoints, RestoreV2: not flagged); the serving function calls a helper that
// writes a checkpoint to a path of its choosing (flagged), and a restored function writes a
// summary (flagged).
constexpr char kTf2[] = R"pb(
  graph_def {
    node { name: "saver_filename" op: "Placeholder" }
    node {
      name: "StatefulPartitionedCall_1"
      op: "StatefulPartitionedCall"
      input: "saver_filename"
      attr {
        key: "f"
        value { func { name: "__inference__traced_save_1" } }
      }
    }
    node {
      name: "StatefulPartitionedCall_2"
      op: "StatefulPartitionedCall"
      input: "saver_filename"
      attr {
        key: "f"
        value { func { name: "__inference__traced_restore_2" } }
      }
    }
    node { name: "serving_default_x" op: "Placeholder" }
    node {
      name: "StatefulPartitionedCall"
      op: "StatefulPartitionedCall"
      input: "serving_default_x"
      attr {
        key: "f"
        value { func { name: "__inference_serve_3" } }
      }
    }
    library {
      function {
        signature { name: "__inference__traced_save_1" }
        node_def { name: "SaveV2" op: "SaveV2" }
        node_def { name: "MergeV2Checkpoints" op: "MergeV2Checkpoints" }
      }
      function {
        signature { name: "__inference__traced_restore_2" }
        node_def { name: "RestoreV2" op: "RestoreV2" }
      }
      function {
        signature { name: "__inference_serve_3" }
        node_def {
          name: "cond"
          op: "StatelessIf"
          attr {
            key: "then_branch"
            value { func { name: "evil_write" } }
          }
        }
      }
      function {
        signature { name: "evil_write" }
        node_def { name: "SaveV2" op: "SaveV2" }
        node_def { name: "merge" op: "MergeV2Checkpoints" }
      }
      function {
        signature { name: "__inference_log_4" }
        node_def { name: "writer" op: "CreateSummaryFileWriter" }
        node_def { name: "write" op: "WriteScalarSummary" }
      }
    }
  }
  saver_def {
    filename_tensor_name: "saver_filename:0"
    save_tensor_name: "StatefulPartitionedCall_1:0"
    restore_op_name: "StatefulPartitionedCall_2"
  }
  signature_def {
    key: "serving_default"
    value {
      inputs {
        key: "x"
        value { name: "serving_default_x:0" }
      }
      outputs {
        key: "y"
        value { name: "StatefulPartitionedCall:0" }
      }
    }
  }
  object_graph_def {
    concrete_functions {
      key: "__inference_log_4"
      value {}
    }
  }
)pb";

TEST_CASE("scan flags checkpoint ops reached from a signature, not the bundle's own saver") {
  const auto found = ScanUnsafeOps(ParseMetaGraph(kTf2));
  INFO(Found(found));
  REQUIRE(found.size() == 4);
  CHECK(found[0].op == "SaveV2");
  CHECK(found[0].function == "evil_write");
  CHECK(found[0].why.find("checkpoint") != std::string::npos);
  CHECK(found[1].op == "MergeV2Checkpoints");
  CHECK(found[1].function == "evil_write");
  CHECK(found[2].op == "CreateSummaryFileWriter");
  CHECK(found[3].op == "WriteScalarSummary");
}

// A TF1-shaped bundle: save/ nodes are the saver's; a SaveV2 that a signature's output needs
// is flagged even though the saver_def names that output as its save tensor.
constexpr char kTf1[] = R"pb(
  graph_def {
    node { name: "save/Const" op: "Const" }
    node { name: "save/SaveV2" op: "SaveV2" input: "save/Const" }
    node {
      name: "save/control_dependency"
      op: "Identity"
      input: "save/Const"
      input: "^save/SaveV2"
    }
    node { name: "save/RestoreV2" op: "RestoreV2" input: "save/Const" }
    node { name: "save/restore_all" op: "NoOp" input: "^save/RestoreV2" }
    node { name: "x" op: "Placeholder" }
    node { name: "path" op: "Const" }
    node { name: "evil" op: "SaveV2" input: "path" input: "x" }
    node { name: "y" op: "Identity" input: "x" input: "^evil" }
    node { name: "stray_restore" op: "RestoreV2" input: "path" }
  }
  saver_def {
    filename_tensor_name: "save/Const:0"
    save_tensor_name: "save/control_dependency:0"
    restore_op_name: "save/restore_all"
  }
  signature_def {
    key: "serving_default"
    value {
      outputs {
        key: "y"
        value { name: "y:0" }
      }
    }
  }
)pb";

TEST_CASE("scan flags a TF1 main graph's checkpoint ops outside its saver_def") {
  auto found = ScanUnsafeOps(ParseMetaGraph(kTf1));
  INFO(Found(found));
  REQUIRE(found.size() == 2);
  CHECK(found[0].node == "evil");
  CHECK(found[0].function.empty());
  CHECK(found[1].node == "stray_restore");
  // A saver_def that names the serving output does not hide what the output needs.
  auto mg = ParseMetaGraph(kTf1);
  mg.mutable_saver_def()->set_save_tensor_name("y:0");
  found = ScanUnsafeOps(mg);
  INFO(Found(found));
  CHECK(Found(found).find("SaveV2 evil in ''") != std::string::npos);
}

TEST_CASE("scan finds nothing in the savers of real TF2 and TF1 bundles") {
  for (const char* name : {"VarsAndArithmeticObjectGraph", "half_plus_two_v1", "half_plus_two_v2",
                           "SimpleV1Model", "UninitializedVariable", "SimpleWhileLoop"}) {
    INFO(name);
    tensorflow::SavedModel sm;
    REQUIRE(sm.ParseFromString(ReadAll(Fixture(name) / "saved_model.pb")));
    for (const auto& mg : sm.meta_graphs()) {
      const auto found = ScanUnsafeOps(mg);
      CHECK_MESSAGE(found.empty(), Found(found));
    }
  }
}

TEST_CASE("an asset filename that is absolute or leaves assets/ is refused at load") {
  CHECK(AssetPath("/m", "vocab.txt").value() == "/m/assets/vocab.txt");
  CHECK(AssetPath("/m", "sub/../vocab.txt").ok());
  for (const char* bad : {"/etc/hostname", "../saved_model.pb", "a/../../x", ""})
    CHECK_FALSE(AssetPath("/m", bad).ok());

  TempDir tmp;
  for (const char* name : {"AssetModule", "half_plus_two_v1"}) {
    for (const char* bad : {"/etc/hostname", "../../../../etc/hostname"}) {
      const std::string label = std::string(name) + " " + bad;
      INFO(label);
      const auto dir = CopyFixture(name, tmp);
      tensorflow::SavedModel sm;
      REQUIRE(sm.ParseFromString(ReadAll(dir / "saved_model.pb")));
      auto* mg = sm.mutable_meta_graphs(0);
      if (mg->asset_file_def_size() > 0) {
        mg->mutable_asset_file_def(0)->set_filename(bad);
      } else {  // a TF1 builder's legacy "saved_model_assets" collection
        auto* any =
            (*mg->mutable_collection_def())["saved_model_assets"].mutable_any_list()->mutable_value(
                0);
        tensorflow::AssetFileDef a;
        REQUIRE(a.ParseFromString(any->value()));
        a.set_filename(bad);
        any->set_value(a.SerializeAsString());
      }
      WriteAll(dir / "saved_model.pb", sm.SerializeAsString());
      auto m = SavedModel::Load(dir);
      REQUIRE_FALSE(m.ok());
      INFO(m.status().ToString());
      CHECK(m.status().message().find("asset filename '" + std::string(bad) + "'") !=
            std::string::npos);
      CHECK(m.status().message().find("outside the bundle") != std::string::npos);
      std::filesystem::remove_all(dir);
    }
  }
}

}  // namespace
}  // namespace kiln::exec
