// ReadSavedModelProto: finding and parsing saved_model.pb / .pbtxt, and the structural checks
// protobuf does not do. The loader uses the same function, so these refusals cover it too.
#include <doctest/doctest.h>
#include <google/protobuf/text_format.h>

#include <filesystem>
#include <string>

#include "cli_test_util.h"
#include "kiln/exec/saved_model.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::cli::testing {
namespace {

namespace fs = std::filesystem;
using exec::ReadSavedModelProto;

std::string ErrorOf(const fs::path& dir) {
  auto r = ReadSavedModelProto(dir);
  REQUIRE(!r.ok());
  return r.status().message();
}

// A minimal valid TF2-like model to break in one place per test.
tensorflow::SavedModel SmallModel() {
  tensorflow::SavedModel sm;
  const char* text = R"pb(
    saved_model_schema_version: 1
    meta_graphs {
      meta_info_def { tags: "serve" }
      graph_def {
        node {
          name: "c"
          op: "Const"
          attr {
            key: "dtype"
            value { type: DT_FLOAT }
          }
          attr {
            key: "value"
            value {
              tensor {
                dtype: DT_FLOAT
                tensor_shape { dim { size: 2 } }
                float_val: 1
              }
            }
          }
        }
        node {
          name: "x"
          op: "Placeholder"
          attr {
            key: "dtype"
            value { type: DT_FLOAT }
          }
        }
      }
      signature_def {
        key: "serving_default"
        value {
          inputs {
            key: "x"
            value {
              name: "x:0"
              dtype: DT_FLOAT
              tensor_shape { dim { size: -1 } }
            }
          }
          outputs {
            key: "y"
            value {
              name: "c:0"
              dtype: DT_FLOAT
              tensor_shape { dim { size: 2 } }
            }
          }
          method_name: "tensorflow/serving/predict"
        }
      }
    })pb";
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &sm));
  return sm;
}

void WriteModel(const fs::path& dir, const tensorflow::SavedModel& sm) {
  std::string bytes;
  REQUIRE(sm.SerializeToString(&bytes));
  WriteText(dir / "saved_model.pb", bytes);
}

TEST_CASE("ReadSavedModelProto reads the TF-written fixtures") {
  auto r = ReadSavedModelProto(Fixture("VarsAndArithmeticObjectGraph"));
  REQUIRE(r.ok());
  CHECK((*r)->meta_graphs_size() == 1);
  CHECK((*r)->meta_graphs(0).signature_def().count("serving_default") == 1);

  TempDir dir;
  WriteModel(dir.path(), SmallModel());
  CHECK(ReadSavedModelProto(dir.path()).ok());
}

TEST_CASE("ReadSavedModelProto: missing directory, missing file, corrupt file") {
  CHECK(ErrorOf("/nonexistent/kiln/dir").find("does not exist") != std::string::npos);

  TempDir empty;
  CHECK(ErrorOf(empty.path()) ==
        "no saved_model.pb or saved_model.pbtxt in " + empty.path().string());

  TempDir truncated;
  const std::string bytes = ReadText(Fixture("VarsAndArithmeticObjectGraph") / "saved_model.pb");
  WriteText(truncated.path() / "saved_model.pb", bytes.substr(0, bytes.size() / 2));
  CHECK(ErrorOf(truncated.path())
            .find("could not parse " + (truncated.path() / "saved_model.pb").string() +
                  " as a SavedModel protocol buffer") != std::string::npos);

  TempDir garbage;
  WriteText(garbage.path() / "saved_model.pbtxt", "meta_graphs { tags: oops");
  const std::string msg = ErrorOf(garbage.path());
  CHECK(msg.find("saved_model.pbtxt") != std::string::npos);
  CHECK(msg.find("line 1") != std::string::npos);

  TempDir nothing;
  WriteText(nothing.path() / "saved_model.pb", "");
  CHECK(ErrorOf(nothing.path()).find("no MetaGraphDef") != std::string::npos);
}

TEST_CASE("ReadSavedModelProto refuses what TensorFlow's CLI or loader would choke on") {
  TempDir dir;

  SUBCASE("a meta graph without tags") {
    auto sm = SmallModel();
    sm.mutable_meta_graphs(0)->mutable_meta_info_def()->clear_tags();
    WriteModel(dir.path(), sm);
    CHECK(ErrorOf(dir.path()).find("MetaGraphDef #0 has no tags") != std::string::npos);
  }
  SUBCASE("a TensorInfo dtype TensorFlow does not name") {
    auto sm = SmallModel();
    (*sm.mutable_meta_graphs(0)->mutable_signature_def())["serving_default"]
        .mutable_inputs()
        ->at("x")
        .set_dtype(static_cast<tensorflow::DataType>(77));
    WriteModel(dir.path(), sm);
    const std::string msg = ErrorOf(dir.path());
    CHECK(msg.find("signature 'serving_default' input 'x'") != std::string::npos);
    CHECK(msg.find("dtype 77 is not a known DataType") != std::string::npos);
  }
  SUBCASE("a shape dimension below -1") {
    auto sm = SmallModel();
    (*sm.mutable_meta_graphs(0)->mutable_signature_def())["serving_default"]
        .mutable_outputs()
        ->at("y")
        .mutable_tensor_shape()
        ->mutable_dim(0)
        ->set_size(-5);
    WriteModel(dir.path(), sm);
    const std::string msg = ErrorOf(dir.path());
    CHECK(msg.find("signature 'serving_default' output 'y'") != std::string::npos);
    CHECK(msg.find("dimension -5") != std::string::npos);
  }
  SUBCASE("a Const with no value") {
    auto sm = SmallModel();
    sm.mutable_meta_graphs(0)->mutable_graph_def()->mutable_node(0)->mutable_attr()->erase("value");
    WriteModel(dir.path(), sm);
    const std::string msg = ErrorOf(dir.path());
    CHECK(msg.find("node 'c' (Const)") != std::string::npos);
    CHECK(msg.find("no value has been provided") != std::string::npos);
  }
  SUBCASE("a Const whose value shape is not fully defined") {
    auto sm = SmallModel();
    (*sm.mutable_meta_graphs(0)->mutable_graph_def()->mutable_node(0)->mutable_attr())["value"]
        .mutable_tensor()
        ->mutable_tensor_shape()
        ->set_unknown_rank(true);
    WriteModel(dir.path(), sm);
    CHECK(ErrorOf(dir.path()).find("not fully defined") != std::string::npos);
  }
  SUBCASE("a Const whose value dtype contradicts its dtype attr") {
    auto sm = SmallModel();
    (*sm.mutable_meta_graphs(0)->mutable_graph_def()->mutable_node(0)->mutable_attr())["dtype"]
        .set_type(tensorflow::DT_INT32);
    WriteModel(dir.path(), sm);
    CHECK(ErrorOf(dir.path()).find("attr 'dtype' says 3") != std::string::npos);
  }
  SUBCASE("a well-known attr of the wrong kind") {
    auto sm = SmallModel();
    (*sm.mutable_meta_graphs(0)->mutable_graph_def()->mutable_node(1)->mutable_attr())["dtype"]
        .set_s("float");
    WriteModel(dir.path(), sm);
    const std::string msg = ErrorOf(dir.path());
    CHECK(msg.find("node 'x' (Placeholder)") != std::string::npos);
    // The same words AttrReader uses when an op's Prepare reads the attr (one kind table).
    CHECK(msg.find("attr 'dtype': expected type, got string") != std::string::npos);
  }
  SUBCASE("an empty list attr may be written as no value, as AttrReader accepts it") {
    auto sm = SmallModel();
    auto* call = sm.mutable_meta_graphs(0)->mutable_graph_def()->add_node();
    call->set_name("call");
    call->set_op("PartitionedCall");
    (*call->mutable_attr())["Tin"];  // nothing set: an empty list(type)
    (*call->mutable_attr())["Tout"].mutable_list();
    WriteModel(dir.path(), sm);
    CHECK(ReadSavedModelProto(dir.path()).ok());
    (*call->mutable_attr())["Tout"].set_i(1);
    WriteModel(dir.path(), sm);
    CHECK(ErrorOf(dir.path()).find("attr 'Tout': expected list(type), got int") !=
          std::string::npos);
  }
  SUBCASE("an object graph child pointing nowhere") {
    auto sm = SmallModel();
    auto* root = sm.mutable_meta_graphs(0)->mutable_object_graph_def()->add_nodes();
    auto* child = root->add_children();
    child->set_node_id(9);
    child->set_local_name("lost");
    WriteModel(dir.path(), sm);
    CHECK(ErrorOf(dir.path()).find("child 'lost' refers to node 9") != std::string::npos);
  }
}

TEST_CASE("the malformed fixtures are refused, each for its own defect") {
  std::string msg = ErrorOf(Fixture("malformed_const_with_no_value"));
  CHECK(msg.find("MetaGraphDef with tag-set ['serve']: node 'Assign/value' (Const)") !=
        std::string::npos);
  msg = ErrorOf(Fixture("malformed_bad_node_attr"));
  CHECK(msg.find("node 'RestoreV2/tensor_names' (Const)") != std::string::npos);
  CHECK(msg.find("no value has been provided") != std::string::npos);
  msg = ErrorOf(Fixture("malformed_negative_shape"));
  CHECK(msg.find("node 'b/initial_value' (Const): attr 'value' has shape (-1, 1)") !=
        std::string::npos);
}

}  // namespace
}  // namespace kiln::cli::testing
