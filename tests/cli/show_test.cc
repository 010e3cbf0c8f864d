// `savedmodel-cli show`: golden text of TensorFlow 2.21's saved_model_cli for real TF-written
// bundles, the other show modes, errors, and the JSON form.
#include "savedmodel_cli/show.h"

#include <doctest/doctest.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_test_util.h"
#include "kiln/exec/saved_model.h"
#include "savedmodel_cli/model_info.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::cli::testing {
namespace {

namespace fs = std::filesystem;

void CheckGolden(const std::string& fixture) {
  CAPTURE(fixture);
  CliResult r = RunCli({"show", "--dir", Fixture(fixture).string(), "--all"});
  CHECK(r.rc == 0);
  CHECK(r.err == "");
  const std::string golden = ReadText(Golden(fixture + ".show_all.txt"));
  REQUIRE(!golden.empty());
  CHECK(r.out == golden);
}

TEST_CASE("show --all matches saved_model_cli byte for byte") {
  // Goldens derived from TF 2.21's saved_model_cli.py (see docs/cli.md); every byte counts,
  // including "Method name is: " with its trailing space for the init op.
  CheckGolden("VarsAndArithmeticObjectGraph");
  CheckGolden("x_plus_y_v2_debuginfo");
  CheckGolden("half_plus_two_v1");
  CheckGolden("SimpleWhileLoop");
  CheckGolden("AssetModule");
  CheckGolden("CyclicModule");
}

TEST_CASE("show --all golden details that are easy to get wrong") {
  const std::string golden = ReadText(Golden("VarsAndArithmeticObjectGraph.show_all.txt"));
  CHECK(golden.find("  Method name is: \n") != std::string::npos);
  CHECK(golden.rfind("\nMetaGraphDef with tag-set: 'serve' contains", 0) == 0);
  CHECK(
      golden.find("name: StatefulPartitionedCall:0\n  Method name is: tensorflow/serving/predict\n"
                  "The MetaGraph with tag set ['serve'] contains the following ops: {'AddV2', ") !=
      std::string::npos);
  CHECK(golden.find("\n\nConcrete Functions:\n  Function Name: 'compute'\n    Option #1\n") !=
        std::string::npos);
  // A bundle with an object graph but no function children ends right after the header, with
  // no newline (print('\nConcrete Functions:', end='')).
  const std::string cyclic = ReadText(Golden("CyclicModule.show_all.txt"));
  CHECK(cyclic.size() > 20);
  CHECK(cyclic.substr(cyclic.size() - 20) == "\nConcrete Functions:");
  // TF1 bundles have no functions section at all.
  const std::string v1 = ReadText(Golden("half_plus_two_v1.show_all.txt"));
  CHECK(v1.find("Concrete Functions") == std::string::npos);
}

TEST_CASE("every non-malformed fixture prints with show --all, every malformed one is refused") {
  int good = 0, bad = 0;
  for (const auto& entry : fs::directory_iterator(KILN_FIXTURES_DIR)) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    CAPTURE(name);
    CliResult r = RunCli({"show", "--dir", entry.path().string(), "--all"});
    if (name.rfind("malformed_", 0) == 0) {
      ++bad;
      CHECK(r.rc != 0);
      CHECK(r.out == "");
      CHECK(r.err.find("savedmodel-cli: error: ") == 0);
      CHECK(r.err.find("saved_model.pb") != std::string::npos);
    } else {
      ++good;
      CHECK(r.rc == 0);
      CHECK(r.err == "");
      CHECK(
          r.out.find("MetaGraphDef with tag-set: 'serve' contains the following SignatureDefs:") !=
          std::string::npos);
      CHECK(r.out.find("The MetaGraph with tag set ['serve'] contains the following ops: {") !=
            std::string::npos);
    }
  }
  CHECK(good >= 13);
  CHECK(bad == 3);
}

TEST_CASE("malformed fixtures are refused with a message saying what is wrong") {
  CliResult r = RunCli({"show", "--dir", Fixture("malformed_const_with_no_value").string()});
  CHECK(r.rc == 1);
  CHECK(r.err.find("node 'Assign/value' (Const)") != std::string::npos);
  CHECK(r.err.find("no value has been provided") != std::string::npos);

  r = RunCli({"show", "--dir", Fixture("malformed_bad_node_attr").string(), "--all"});
  CHECK(r.rc == 1);
  // The Const sits in the restore function, with its value attr misspelt "valwe".
  CHECK(r.err.find("function '__inference__traced_restore_33090' node 'RestoreV2/tensor_names'") !=
        std::string::npos);
  CHECK(r.err.find("no value has been provided") != std::string::npos);

  r = RunCli({"show", "--dir", Fixture("malformed_negative_shape").string(), "--all"});
  CHECK(r.rc == 1);
  CHECK(r.err.find("node 'b/initial_value' (Const)") != std::string::npos);
  CHECK(r.err.find("(-1, 1)") != std::string::npos);
  CHECK(r.err.find("not fully defined") != std::string::npos);
}

TEST_CASE("show --placement lists each step's device and the copies between devices") {
  CliResult r =
      RunCli({"show", "--dir", Fixture("VarsAndArithmeticObjectGraph").string(), "--placement"});
  CHECK(r.rc == 0);
  CHECK(r.out ==
        "Devices, in priority order: cpu\n"
        "signature 'serving_default':\n"
        "  5 steps: cpu 5; copies 0\n"
        "    StatefulPartitionedCall/add      AddV2                    cpu\n"
        "    StatefulPartitionedCall/add_1    AddV2                    cpu\n"
        "    StatefulPartitionedCall/mul      Mul                      cpu\n"
        "    StatefulPartitionedCall/truediv  RealDiv                  cpu\n"
        "    StatefulPartitionedCall/add_2    AddV2                    cpu\n");
  CliResult gpu = RunCli({"show", "--dir", Fixture("VarsAndArithmeticObjectGraph").string(),
                          "--placement", "--device", "gpu"});
  CHECK(gpu.rc == 1);
  CHECK(gpu.out.empty());
  CHECK(gpu.err.find("available devices: cpu") != std::string::npos);
}

TEST_CASE("show without flags lists the tag-sets") {
  CliResult r = RunCli({"show", "--dir", Fixture("half_plus_two_v1").string()});
  CHECK(r.rc == 0);
  CHECK(r.out == "The given SavedModel contains the following tag-sets:\n'serve'\n");
}

TEST_CASE("show --tag_set lists the SignatureDef keys, sorted") {
  CliResult r =
      RunCli({"show", "--dir", Fixture("half_plus_two_v1").string(), "--tag_set", "serve"});
  CHECK(r.rc == 0);
  CHECK(r.out ==
        "The given SavedModel MetaGraphDef contains SignatureDefs with the following keys:\n"
        "SignatureDef key: \"classify_x2_to_y3\"\n"
        "SignatureDef key: \"classify_x_to_y\"\n"
        "SignatureDef key: \"regress_x2_to_y3\"\n"
        "SignatureDef key: \"regress_x_to_y\"\n"
        "SignatureDef key: \"regress_x_to_y2\"\n"
        "SignatureDef key: \"serving_default\"\n");
}

TEST_CASE("show --tag_set --signature_def prints one signature without indentation") {
  CliResult r = RunCli({"show", "--dir", Fixture("VarsAndArithmeticObjectGraph").string(),
                        "--tag_set", "serve", "--signature_def", "serving_default"});
  CHECK(r.rc == 0);
  CHECK(r.out ==
        "The given SavedModel SignatureDef contains the following input(s):\n"
        "  inputs['a'] tensor_info:\n"
        "      dtype: DT_FLOAT\n"
        "      shape: ()\n"
        "      name: serving_default_a:0\n"
        "  inputs['b'] tensor_info:\n"
        "      dtype: DT_FLOAT\n"
        "      shape: ()\n"
        "      name: serving_default_b:0\n"
        "The given SavedModel SignatureDef contains the following output(s):\n"
        "  outputs['output_0'] tensor_info:\n"
        "      dtype: DT_FLOAT\n"
        "      shape: ()\n"
        "      name: StatefulPartitionedCall:0\n"
        "Method name is: tensorflow/serving/predict\n");

  // Rank-1 shapes print without the tuple comma; unknown rank as unknown_rank.
  r = RunCli({"show", "--dir", Fixture("half_plus_two_v1").string(), "--tag_set", "serve",
              "--signature_def", "classify_x_to_y"});
  CHECK(r.rc == 0);
  CHECK(r.out.find("      shape: unknown_rank\n      name: tf_example:0\n") != std::string::npos);
  CHECK(r.out.find("      shape: (-1, 1)\n      name: y:0\n") != std::string::npos);
  CHECK(r.out.find("Method name is: tensorflow/serving/classify\n") != std::string::npos);
}

TEST_CASE("show --list_ops: TF's ops line, then the ops kiln cannot run") {
  CliResult r = RunCli(
      {"show", "--dir", Fixture("half_plus_two_v1").string(), "--tag_set", "serve", "--list_ops"});
  CHECK(r.rc == 0);
  CHECK(r.out.rfind("The MetaGraph with tag set ['serve'] contains the following ops: {", 0) == 0);
  for (const char* op : {"'VariableV2'", "'Add'", "'RestoreV2'", "'ParseExample'", "'NoOp'"})
    CHECK(r.out.find(op) != std::string::npos);
  CHECK(r.out.find("\nkiln can run every op of this MetaGraph.\n") != std::string::npos);
  // Then the op families a build with only some (KILN_OP_FAMILIES) needs for it.
  const std::string families = "\nOp families it uses (KILN_OP_FAMILIES): ";
  const size_t at = r.out.find(families);
  REQUIRE(at != std::string::npos);
  const std::string line =
      r.out.substr(at + families.size(), r.out.find('\n', at + 1) - at - families.size()) + ";";
  for (const char* family : {"Basic;", "Math;", "ParseExample;", "RefVariable;"})
    CHECK_MESSAGE(line.find(family) != std::string::npos, line);

  // Without a tag-set: every MetaGraph (TensorFlow only says a tag-set is needed).
  r = RunCli({"show", "--dir", Fixture("half_plus_two_v1").string(), "--list_ops"});
  CHECK(r.rc == 0);
  CHECK(r.out.rfind("The MetaGraph with tag set ['serve'] contains the following ops: {", 0) == 0);
  CHECK(r.out.find("kiln can run every op of this MetaGraph.\n") != std::string::npos);

  r = RunCli({"show", "--dir", Fixture("tftrt_2.0_saved_model").string(), "--list_ops"});
  CHECK(r.out.find("Ops kiln cannot run: {'TRTEngineOp'}\n") != std::string::npos);
  r = RunCli({"show", "--dir", Fixture("VarsAndArithmeticObjectGraph").string(), "--tag_set",
              "serve", "--list_ops"});
  CHECK(r.out.find("kiln can run every op of this MetaGraph.\n") != std::string::npos);
  r = RunCli({"show", "--dir", Fixture("tftrt_2.0_saved_model").string(), "--tag_set", "serve",
              "--list_ops", "--json"});
  CHECK(r.out.find("\"unsupported_ops\": [\n    \"TRTEngineOp\"\n  ]") != std::string::npos);
  CHECK(r.out.find("\"op_families\": [") != std::string::npos);
}

TEST_CASE("show errors name the missing tag-set or signature and list what exists") {
  CliResult r = RunCli({"show", "--dir", Fixture("half_plus_two_v1").string(), "--tag_set", "gpu"});
  CHECK(r.rc != 0);
  CHECK(r.out == "");
  CHECK(r.err.find("'gpu'") != std::string::npos);
  CHECK(r.err.find("available tag-sets: 'serve'") != std::string::npos);

  r = RunCli({"show", "--dir", Fixture("VarsAndArithmeticObjectGraph").string(), "--tag_set",
              "serve", "--signature_def", "serving_defualt"});
  CHECK(r.rc != 0);
  CHECK(r.out == "");
  CHECK(r.err.find("'serving_defualt'") != std::string::npos);
  CHECK(r.err.find("__saved_model_init_op, serving_default") != std::string::npos);

  r = RunCli({"show", "--dir", "/nonexistent/kiln/model"});
  CHECK(r.rc != 0);
  CHECK(r.err.find("/nonexistent/kiln/model") != std::string::npos);
  CHECK(r.err.find("does not exist") != std::string::npos);

  r = RunCli({"show", "--dir", Fixture("half_plus_two_v1").string(), "--signature_def", "x"});
  CHECK(r.rc != 0);
  CHECK(r.err.find("--tag_set") != std::string::npos);

  r = RunCli({"show"});  // --dir is required
  CHECK(r.rc != 0);
  CHECK(r.err.find("--dir") != std::string::npos);
}

TEST_CASE("the ops set follows ops_used_by_graph_def") {
  // Ops of functions reached through (Stateful)PartitionedCall count; function names do not.
  auto model = exec::ReadSavedModelProto(Fixture("VarsAndArithmeticObjectGraph"));
  REQUIRE(model.ok());
  const auto ops = OpsUsedByGraphDef((*model)->meta_graphs(0).graph_def());
  auto has = [&](const std::string& op) {
    return std::find(ops.begin(), ops.end(), op) != ops.end();
  };
  CHECK(has("AddV2"));
  CHECK(has("RealDiv"));  // only inside __inference_compute_34
  CHECK(has("StatefulPartitionedCall"));
  CHECK(!has("__inference_compute_34"));
  CHECK(std::is_sorted(ops.begin(), ops.end()));

  // Functions named only by While's body/cond attrs are not followed, as in TF.
  tensorflow::GraphDef g;
  auto* fn = g.mutable_library()->add_function();
  fn->mutable_signature()->set_name("body_1");
  fn->add_node_def()->set_op("Sub");
  auto* node = g.add_node();
  node->set_op("StatelessWhile");
  (*node->mutable_attr())["body"].mutable_func()->set_name("body_1");
  CHECK(OpsUsedByGraphDef(g) == std::vector<std::string>{"StatelessWhile"});
  // A node whose op names a library function pulls that function's ops in.
  g.add_node()->set_op("body_1");
  CHECK(OpsUsedByGraphDef(g) == std::vector<std::string>{"StatelessWhile", "Sub"});
}

TEST_CASE("show reads saved_model.pbtxt when there is no saved_model.pb") {
  auto model = exec::ReadSavedModelProto(Fixture("VarsAndArithmeticObjectGraph"));
  REQUIRE(model.ok());
  TempDir dir;
  std::string text;
  google::protobuf::TextFormat::Printer printer;
  printer.SetHideUnknownFields(true);  // fields our schema omits have no names to print
  REQUIRE(printer.PrintToString(**model, &text));
  // TF fields our schema does not declare are skipped, not refused.
  WriteText(dir.path() / "saved_model.pbtxt", "future_field: \"x\"\n" + text);
  CliResult r = RunCli({"show", "--dir", dir.path().string(), "--all"});
  CHECK(r.rc == 0);
  CHECK(r.out == ReadText(Golden("VarsAndArithmeticObjectGraph.show_all.txt")));
}

TEST_CASE("show prints functions' non-tensor arguments and keyword arguments as TF does") {
  // A hand-made object graph: f(x, 7, True, None, 'm', [1, 2]) and a kwargs-only signature.
  tensorflow::SavedModel sm;
  auto* mg = sm.add_meta_graphs();
  mg->mutable_meta_info_def()->add_tags("serve");
  auto* og = mg->mutable_object_graph_def();
  auto* root = og->add_nodes();
  auto* c1 = root->add_children();
  c1->set_node_id(1);
  c1->set_local_name("f");
  auto* c2 = root->add_children();
  c2->set_node_id(2);
  c2->set_local_name("bare");
  og->add_nodes()->mutable_function()->add_concrete_functions("__inference_f_1");
  auto* bare = og->add_nodes()->mutable_bare_concrete_function();
  bare->set_concrete_function_name("__inference_w_2");
  const char* f_sig = R"pb(
    tuple_value {
      values {
        tuple_value {
          values {
            tensor_spec_value {
              name: "x"
              shape { dim { size: -1 } }
              dtype: DT_INT32
            }
          }
          values { int64_value: 7 }
          values { bool_value: true }
          values { none_value {} }
          values { string_value: "m" }
          values {
            list_value {
              values { int64_value: 1 }
              values { float64_value: 2.5 }
            }
          }
        }
      }
      values { dict_value {} }
    })pb";
  const char* w_sig = R"pb(
    tuple_value {
      values { tuple_value {} }
      values {
        dict_value {
          fields {
            key: "b"
            value { tensor_spec_value { name: "b" dtype: DT_FLOAT } }
          }
          fields {
            key: "a"
            value { tensor_spec_value { name: "a" dtype: DT_FLOAT } }
          }
        }
      }
    })pb";
  auto& cfs = *og->mutable_concrete_functions();
  REQUIRE(google::protobuf::TextFormat::ParseFromString(
      f_sig, cfs["__inference_f_1"].mutable_canonicalized_input_signature()));
  REQUIRE(google::protobuf::TextFormat::ParseFromString(
      w_sig, cfs["__inference_w_2"].mutable_canonicalized_input_signature()));

  std::ostringstream out;
  ShowOptions options;
  options.all = true;
  REQUIRE(ShowText(sm, options, out).ok());
  CHECK(out.str() ==
        "\nMetaGraphDef with tag-set: 'serve' contains the following SignatureDefs:\n"
        "The MetaGraph with tag set ['serve'] contains the following ops: set()\n"
        "\nConcrete Functions:\n"
        "  Function Name: 'bare'\n"
        "        Named Argument #1\n"
        "          a\n"
        "        Named Argument #2\n"
        "          b\n"
        "\n  Function Name: 'f'\n"
        "    Option #1\n"
        "      Callable with:\n"
        "        Argument #1\n"
        "          x: TensorSpec(shape=(None,), dtype=tf.int32, name='x')\n"
        "        Argument #2\n"
        "          DType: int\n"
        "          Value: 7\n"
        "        Argument #3\n"
        "          DType: bool\n"
        "          Value: True\n"
        "        Argument #4\n"
        "          DType: NoneType\n"
        "          Value: None\n"
        "        Argument #5\n"
        "          m\n"
        "        Argument #6\n"
        "          DType: list\n"
        "          Value: [1, 2.5, \b\b]\n");
}

TEST_CASE("show --json gives the same facts") {
  CliResult r = RunCli(
      {"show", "--dir", Fixture("VarsAndArithmeticObjectGraph").string(), "--all", "--json"});
  REQUIRE(r.rc == 0);
  const auto doc = nlohmann::json::parse(r.out);
  REQUIRE(doc["meta_graphs"].size() == 1);
  const auto& mg = doc["meta_graphs"][0];
  CHECK(mg["tags"] == nlohmann::json::array({"serve"}));
  const auto& sig = mg["signatures"]["serving_default"];
  CHECK(sig["method_name"] == "tensorflow/serving/predict");
  CHECK(sig["inputs"]["a"]["dtype"] == "DT_FLOAT");
  CHECK(sig["inputs"]["a"]["shape"] == nlohmann::json::array());
  CHECK(sig["inputs"]["a"]["name"] == "serving_default_a:0");
  CHECK(sig["inputs"]["b"]["name"] == "serving_default_b:0");
  CHECK(sig["outputs"]["output_0"]["name"] == "StatefulPartitionedCall:0");
  const auto& init = mg["signatures"]["__saved_model_init_op"];
  CHECK(init["method_name"] == "");
  CHECK(init["outputs"]["__saved_model_init_op"]["shape"].is_null());  // unknown rank
  CHECK(init["outputs"]["__saved_model_init_op"]["dtype"] == "DT_INVALID");
  const auto& ops = mg["ops"];
  CHECK(std::find(ops.begin(), ops.end(), "RealDiv") != ops.end());
  REQUIRE(doc["functions"].size() == 1);
  const auto& fn = doc["functions"][0];
  CHECK(fn["name"] == "compute");
  CHECK(fn["kind"] == "function");
  const auto& cf = fn["concrete_functions"][0];
  CHECK(cf["name"] == "__inference_compute_34");
  REQUIRE(cf["args"].size() == 2);
  CHECK(cf["args"][0] == nlohmann::json({{"type", "TensorSpec"},
                                         {"name", "a"},
                                         {"dtype", "float32"},
                                         {"shape", nlohmann::json::array()}}));
  CHECK(cf["kwargs"] == nlohmann::json::object());

  // Unknown dims are -1; TF1 bundles have "functions": null.
  r = RunCli({"show", "--dir", Fixture("half_plus_two_v1").string(), "--all", "--json"});
  REQUIRE(r.rc == 0);
  const auto v1 = nlohmann::json::parse(r.out);
  CHECK(v1["functions"].is_null());
  CHECK(v1["meta_graphs"][0]["signatures"]["serving_default"]["inputs"]["x"]["shape"] ==
        nlohmann::json::array({-1, 1}));

  // The narrower modes.
  r = RunCli({"show", "--dir", Fixture("half_plus_two_v1").string(), "--json"});
  REQUIRE(r.rc == 0);
  CHECK(nlohmann::json::parse(r.out) == nlohmann::json::parse(R"({"tag_sets": [["serve"]]})"));
  r = RunCli({"show", "--dir", Fixture("VarsAndArithmeticObjectGraph").string(), "--json",
              "--tag_set", "serve"});
  REQUIRE(r.rc == 0);
  CHECK(nlohmann::json::parse(r.out)["signature_keys"] ==
        nlohmann::json::array({"__saved_model_init_op", "serving_default"}));
  r = RunCli({"show", "--dir", Fixture("VarsAndArithmeticObjectGraph").string(), "--json",
              "--tag_set", "serve", "--signature_def", "serving_default"});
  REQUIRE(r.rc == 0);
  const auto one = nlohmann::json::parse(r.out)["signature"];
  CHECK(one["key"] == "serving_default");
  CHECK(one["inputs"]["a"]["dtype"] == "DT_FLOAT");
}

}  // namespace
}  // namespace kiln::cli::testing
