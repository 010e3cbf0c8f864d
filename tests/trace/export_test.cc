// Saving a module as a SavedModel — structure, checkpoint, determinism, atomicity,
// refusals — and loading it back with kiln::exec.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "kiln/core/file_util.h"
#include "kiln/exec/saved_model.h"
#include "kiln/exec/tensor_bundle.h"
#include "kiln/modules/dense.h"
#include "kiln/modules/sequential.h"
#include "kiln/trace/trace.h"
#include "tensorflow/saved_model.pb.h"
#include "trace/trace_test_util.h"

namespace kiln::trace {
namespace {

namespace fs = std::filesystem;
using testing::CapturePrints;
using testing::DemoModule;
using testing::ReadAll;
using testing::TempDir;

// DemoModule after addprint(5) and addprint(50): x = 56.
void RunSeedCalls(DemoModule& demo) {
  CapturePrints quiet;
  REQUIRE(demo.addprint(Tensor::Scalar(5.0f)).ok());
  REQUIRE(demo.addprint(Tensor::Scalar(50.0f)).ok());
}

std::vector<std::pair<std::string, int>> Children(const tensorflow::SavedObject& o) {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& c : o.children()) out.emplace_back(c.local_name(), c.node_id());
  return out;
}

TEST_CASE("the SavedModel of DemoModule has TensorFlow's signatures, saver and object graph") {
  DemoModule demo;
  RunSeedCalls(demo);
  auto exported = BuildSavedModel(demo, {{"serving_default", &demo.addprint}});
  REQUIRE(exported.ok());
  const tensorflow::SavedModel& sm = *exported->saved_model;
  CHECK(sm.saved_model_schema_version() == 1);
  REQUIRE(sm.meta_graphs_size() == 1);
  const tensorflow::MetaGraphDef& mg = sm.meta_graphs(0);
  CHECK(mg.meta_info_def().tags_size() == 1);
  CHECK(mg.meta_info_def().tags(0) == "serve");
  CHECK(mg.meta_info_def().stripped_default_attrs());
  CHECK(mg.graph_def().versions().min_consumer() == 12);

  // Signatures.
  std::set<std::string> keys;
  for (const auto& [k, v] : mg.signature_def()) keys.insert(k);
  CHECK(keys == std::set<std::string>{"__saved_model_init_op", "serving_default"});
  const auto& serving = mg.signature_def().at("serving_default");
  CHECK(serving.method_name() == "tensorflow/serving/predict");
  REQUIRE(serving.inputs().count("a") == 1);
  CHECK(serving.inputs().at("a").name() == "serving_default_a:0");
  CHECK(serving.inputs().at("a").dtype() == tensorflow::DT_FLOAT);
  CHECK(serving.inputs().at("a").tensor_shape().dim_size() == 0);
  CHECK_FALSE(serving.inputs().at("a").tensor_shape().unknown_rank());
  REQUIRE(serving.outputs().count("output_0") == 1);
  CHECK(serving.outputs().at("output_0").name() == "StatefulPartitionedCall:0");
  const auto& init = mg.signature_def().at("__saved_model_init_op");
  CHECK(init.outputs().at("__saved_model_init_op").name() == "NoOp");
  CHECK(init.outputs().at("__saved_model_init_op").tensor_shape().unknown_rank());
  CHECK(init.method_name().empty());

  // Saver and init op.
  CHECK(mg.saver_def().filename_tensor_name() == "saver_filename:0");
  CHECK(mg.saver_def().save_tensor_name() == "StatefulPartitionedCall_1:0");
  CHECK(mg.saver_def().restore_op_name() == "StatefulPartitionedCall_2");
  CHECK(mg.saver_def().version() == tensorflow::SaverDef::V2);
  CHECK(mg.collection_def().at("saved_model_main_op").node_list().value(0) == "NoOp");

  // Main graph: the variable handle and the signature call wired to it.
  std::map<std::string, const tensorflow::NodeDef*> nodes;
  for (const auto& n : mg.graph_def().node()) nodes[n.name()] = &n;
  REQUIRE(nodes.count("x") == 1);
  CHECK(nodes["x"]->op() == "VarHandleOp");
  CHECK(nodes["x"]->attr().at("shared_name").s() == "x");
  REQUIRE(nodes.count("StatefulPartitionedCall") == 1);
  const auto* call = nodes["StatefulPartitionedCall"];
  CHECK(std::vector<std::string>(call->input().begin(), call->input().end()) ==
        std::vector<std::string>{"serving_default_a", "x"});
  CHECK(call->attr().at("f").func().name() == "__inference_signature_wrapper_1");
  CHECK(nodes["serving_default_a"]->op() == "Placeholder");
  CHECK(nodes["saver_filename"]->attr().at("dtype").type() == tensorflow::DT_STRING);

  // Library: method, signature wrapper, save and restore, numbered in that order.
  std::vector<std::string> fns;
  for (const auto& f : mg.graph_def().library().function()) fns.push_back(f.signature().name());
  CHECK(fns == std::vector<std::string>{"__inference_addprint_0", "__inference_signature_wrapper_1",
                                        "__inference__traced_save_2",
                                        "__inference__traced_restore_3"});
  const auto& wrapper = mg.graph_def().library().function(1);
  CHECK(wrapper.node_def(0).op() == "StatefulPartitionedCall");
  CHECK(wrapper.node_def(0).attr().at("f").func().name() == "__inference_addprint_0");
  CHECK(wrapper.signature().input_arg(1).type() == tensorflow::DT_RESOURCE);

  // Object graph: root {x, signatures, addprint}; signatures -> serving_default.
  const tensorflow::SavedObjectGraph& og = mg.object_graph_def();
  REQUIRE(og.nodes_size() == 5);
  CHECK(Children(og.nodes(0)) ==
        std::vector<std::pair<std::string, int>>{{"x", 1}, {"signatures", 2}, {"addprint", 3}});
  CHECK(og.nodes(0).user_object().identifier() == "_generic_user_object");
  CHECK(og.nodes(0).user_object().version().producer() == 1);
  CHECK(og.nodes(1).variable().dtype() == tensorflow::DT_FLOAT);
  CHECK(og.nodes(1).variable().trainable());
  CHECK(og.nodes(2).user_object().identifier() == "signature_map");
  CHECK(og.nodes(2).user_object().version().min_consumer() == 1);
  CHECK(Children(og.nodes(2)) == std::vector<std::pair<std::string, int>>{{"serving_default", 4}});
  const auto& fn = og.nodes(3).function();
  REQUIRE(fn.concrete_functions_size() == 1);
  CHECK(fn.concrete_functions(0) == "__inference_addprint_0");
  CHECK(fn.function_spec().fullargspec().named_tuple_value().name() == "FullArgSpec");
  CHECK_FALSE(fn.function_spec().is_method());
  CHECK(fn.function_spec().input_signature().tuple_value().values_size() == 1);
  CHECK(og.nodes(4).bare_concrete_function().concrete_function_name() ==
        "__inference_signature_wrapper_1");
  CHECK(og.nodes(4).bare_concrete_function().argument_keywords(0) == "a");

  // Concrete functions: both bound to x (node 1).
  REQUIRE(og.concrete_functions().size() == 2);
  for (const char* name : {"__inference_addprint_0", "__inference_signature_wrapper_1"}) {
    const auto& cf = og.concrete_functions().at(name);
    REQUIRE(cf.bound_inputs_size() == 1);
    CHECK(cf.bound_inputs(0) == 1);
  }
  const auto& method = og.concrete_functions().at("__inference_addprint_0");
  const auto& args = method.canonicalized_input_signature().tuple_value();
  REQUIRE(args.values_size() == 2);
  CHECK(args.values(0).tuple_value().values(0).tensor_spec_value().name() == "a");
  CHECK(args.values(1).has_dict_value());
  CHECK(method.output_signature().tensor_spec_value().dtype() == tensorflow::DT_FLOAT);
  const auto& sig_fn = og.concrete_functions().at("__inference_signature_wrapper_1");
  CHECK(sig_fn.canonicalized_input_signature()
            .tuple_value()
            .values(1)
            .dict_value()
            .fields()
            .at("a")
            .tensor_spec_value()
            .name() == "a");
  CHECK(sig_fn.output_signature().dict_value().fields().count("output_0") == 1);

  // Checkpoint: x = 56 under its path key, and an object graph that mirrors the ids.
  REQUIRE(exported->checkpoint.count("x/.ATTRIBUTES/VARIABLE_VALUE") == 1);
  CHECK(exported->checkpoint.at("x/.ATTRIBUTES/VARIABLE_VALUE").scalar<float>() == 56.0f);
  REQUIRE(exported->checkpoint.count("_CHECKPOINTABLE_OBJECT_GRAPH") == 1);
  tensorflow::TrackableObjectGraph tog;
  REQUIRE(tog.ParseFromString(
      exported->checkpoint.at("_CHECKPOINTABLE_OBJECT_GRAPH").scalar<std::string>()));
  REQUIRE(tog.nodes_size() == og.nodes_size());
  CHECK(tog.nodes(0).children(0).local_name() == "x");
  CHECK(tog.nodes(0).children(0).node_id() == 1);
  REQUIRE(tog.nodes(1).attributes_size() == 1);
  CHECK(tog.nodes(1).attributes(0).name() == "VARIABLE_VALUE");
  CHECK(tog.nodes(1).attributes(0).checkpoint_key() == "x/.ATTRIBUTES/VARIABLE_VALUE");
}

TEST_CASE("checkpoint keys escape '.' and '/' as TensorFlow does") {
  CHECK(CheckpointKey({"child", "z"}) == "child/z/.ATTRIBUTES/VARIABLE_VALUE");
  CHECK(CheckpointKey({"a.b", "c/d"}) == "a..b/c.Sd/.ATTRIBUTES/VARIABLE_VALUE");
}

TEST_CASE("nested modules: object ids breadth first, checkpoint keys by path") {
  modules::Sequential model;
  model.Add<modules::Dense>(4, modules::Activation::kRelu, 10);
  model.Add<modules::Dense>(1);
  model.layers()[1]->set_trainable(false);
  Function& call = model.AddMethod("call", {{"x", DType::kFloat, PartialShape{-1, 10}}},
                                   [&model](const Values& a) { return Values{model(a[0])}; });
  auto exported = BuildSavedModel(model, {{"serving_default", &call}});
  REQUIRE(exported.ok());
  const auto& og = exported->saved_model->meta_graphs(0).object_graph_def();
  CHECK(Children(og.nodes(0)) == std::vector<std::pair<std::string, int>>{
                                     {"dense", 1}, {"dense_1", 2}, {"signatures", 3}, {"call", 8}});
  CHECK(Children(og.nodes(1)) ==
        std::vector<std::pair<std::string, int>>{{"kernel", 4}, {"bias", 5}});
  CHECK(og.nodes(4).variable().trainable());
  CHECK_FALSE(og.nodes(6).variable().trainable());  // dense_1/kernel of a frozen layer
  const auto& cf = og.concrete_functions().at("__inference_call_0");
  CHECK(std::vector<int>(cf.bound_inputs().begin(), cf.bound_inputs().end()) ==
        std::vector<int>{4, 5, 6, 7});
  std::set<std::string> keys;
  for (const auto& [k, v] : exported->checkpoint) keys.insert(k);
  CHECK(keys == std::set<std::string>{"_CHECKPOINTABLE_OBJECT_GRAPH",
                                      "dense/bias/.ATTRIBUTES/VARIABLE_VALUE",
                                      "dense/kernel/.ATTRIBUTES/VARIABLE_VALUE",
                                      "dense_1/bias/.ATTRIBUTES/VARIABLE_VALUE",
                                      "dense_1/kernel/.ATTRIBUTES/VARIABLE_VALUE"});
  const auto& sd = exported->saved_model->meta_graphs(0).signature_def().at("serving_default");
  CHECK(sd.inputs().at("x").tensor_shape().dim(0).size() == -1);
  CHECK(sd.inputs().at("x").tensor_shape().dim(1).size() == 10);
  CHECK(sd.outputs().at("output_0").tensor_shape().dim(1).size() == 1);
}

TEST_CASE("Save writes a bundle whose variables hold the values by checkpoint key") {
  DemoModule demo;
  RunSeedCalls(demo);
  TempDir tmp;
  const fs::path dir = tmp.path() / "demo";
  REQUIRE(Save(demo, dir, {{"serving_default", &demo.addprint}}).ok());
  CHECK(fs::exists(dir / "saved_model.pb"));
  auto reader = exec::BundleReader::Open(dir / "variables" / "variables");
  REQUIRE(reader.ok());
  CHECK((*reader)->Keys() ==
        std::vector<std::string>{"_CHECKPOINTABLE_OBJECT_GRAPH", "x/.ATTRIBUTES/VARIABLE_VALUE"});
  auto x = (*reader)->Read("x/.ATTRIBUTES/VARIABLE_VALUE");
  REQUIRE(x.ok());
  CHECK(x->scalar<float>() == 56.0f);
  auto graph = (*reader)->Read("_CHECKPOINTABLE_OBJECT_GRAPH");
  REQUIRE(graph.ok());
  CHECK(graph->dtype() == DType::kString);
}

TEST_CASE("saving over a directory replaces the bundle and keeps the user's other files") {
  DemoModule demo;
  RunSeedCalls(demo);
  TempDir tmp;
  const fs::path dir = tmp.path() / "demo";
  fs::create_directories(dir / "assets.extra");
  fs::create_directories(dir / "variables");
  REQUIRE(WriteStringToFile(dir / "train.py", "# the user's source").ok());
  REQUIRE(WriteStringToFile(dir / "assets.extra" / "tf_serving_warmup_requests", "warm").ok());
  REQUIRE(WriteStringToFile(dir / "assets.extra" / "kiln.plan", "stale plan").ok());
  REQUIRE(WriteStringToFile(dir / "variables" / "variables.data-00001-of-00002", "old").ok());
  REQUIRE(Save(demo, dir, {{"serving_default", &demo.addprint}}).ok());
  CHECK(ReadAll(dir / "train.py") == "# the user's source");
  CHECK(ReadAll(dir / "assets.extra" / "tf_serving_warmup_requests") == "warm");
  CHECK_FALSE(fs::exists(dir / "assets.extra" / "kiln.plan"));  // of the old bundle
  CHECK_FALSE(fs::exists(dir / "variables" / "variables.data-00001-of-00002"));
  CHECK(fs::exists(dir / "saved_model.pb"));
  CHECK(exec::BundleReader::Open(dir / "variables" / "variables").ok());
}

TEST_CASE("saving the same module twice gives byte-identical files") {
  modules::Sequential model;
  model.Add<modules::Dense>(3, modules::Activation::kRelu, 5);
  model.Add<modules::Dense>(2, modules::Activation::kSoftmax);
  Function& call = model.AddMethod("call", {{"x", DType::kFloat, PartialShape{-1, 5}}},
                                   [&model](const Values& a) { return Values{model(a[0])}; });
  TempDir tmp;
  REQUIRE(Save(model, tmp.path() / "one", {{"serving_default", &call}}).ok());
  REQUIRE(Save(model, tmp.path() / "two", {{"serving_default", &call}}).ok());
  for (const char* file :
       {"saved_model.pb", "variables/variables.index", "variables/variables.data-00000-of-00001"}) {
    INFO(file);
    const std::string one = ReadAll(tmp.path() / "one" / file);
    CHECK(one.size() > 0);
    CHECK(one == ReadAll(tmp.path() / "two" / file));
  }
}

TEST_CASE("a signature that captures a variable outside the module tree is refused") {
  Module root("root");
  Variable outside = Variable::Create("counter", Tensor::Scalar(0.0f));
  Function& bump = root.AddMethod("bump", {{"a", DType::kFloat}}, [outside](const Values& a) {
    return Values{outside.AssignAdd(a[0])};
  });
  auto exported = BuildSavedModel(root, {{"serving_default", &bump}});
  REQUIRE_FALSE(exported.ok());
  CHECK(exported.status().message().find("'counter'") != std::string::npos);
  CHECK(exported.status().message().find("not reachable") != std::string::npos);

  Function standalone("standalone", {{"a", DType::kFloat}},
                      [outside](const Values& a) { return Values{outside.Read() + a[0]}; });
  Module empty("empty");
  auto refused = BuildSavedModel(empty, {{"serving_default", &standalone}});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("signature 'serving_default'") != std::string::npos);
}

TEST_CASE("saving fails clearly and leaves the previous bundle intact") {
  TempDir tmp;
  DemoModule demo;
  RunSeedCalls(demo);

  SUBCASE("missing parent directories are made, as tf.saved_model.save makes them") {
    const fs::path dir = tmp.path() / "models" / "demo" / "1";
    REQUIRE(Save(demo, dir, {{"serving_default", &demo.addprint}}).ok());
    CHECK(fs::exists(dir / "saved_model.pb"));
  }

  SUBCASE("a parent that cannot be made is named") {
    REQUIRE(WriteStringToFile(tmp.path() / "file", "x").ok());
    const fs::path dir = tmp.path() / "file" / "sub" / "bundle";
    Status s = Save(demo, dir, {{"serving_default", &demo.addprint}});
    REQUIRE_FALSE(s.ok());
    CHECK(s.message().find("cannot create its parent") != std::string::npos);
    CHECK(ReadAll(tmp.path() / "file") == "x");
  }

  SUBCASE("a failing export does not touch an existing bundle") {
    const fs::path dir = tmp.path() / "bundle";
    REQUIRE(Save(demo, dir, {{"serving_default", &demo.addprint}}).ok());
    const std::string before = ReadAll(dir / "saved_model.pb");
    const std::string vars_before = ReadAll(dir / "variables" / "variables.data-00000-of-00001");
    Variable outside = Variable::Create("outside", Tensor::Scalar(1.0f));
    Function bad("bad", {{"a", DType::kFloat}},
                 [outside](const Values& a) { return Values{outside.Read() + a[0]}; });
    REQUIRE_FALSE(Save(demo, dir, {{"serving_default", &bad}}).ok());
    CHECK(ReadAll(dir / "saved_model.pb") == before);
    CHECK(ReadAll(dir / "variables" / "variables.data-00000-of-00001") == vars_before);
    // A successful save replaces it whole.
    CHECK(demo.x.SetValue(Tensor::Scalar(7.0f)).ok());
    REQUIRE(Save(demo, dir, {{"serving_default", &demo.addprint}}).ok());
    CHECK(ReadAll(dir / "variables" / "variables.data-00000-of-00001") != vars_before);
    std::vector<std::string> entries;
    for (const auto& e : fs::directory_iterator(tmp.path())) {
      entries.push_back(e.path().filename().string());
    }
    CHECK(entries == std::vector<std::string>{"bundle"});  // no temporary left behind
  }

  SUBCASE("the parent is a file, not a directory") {
    const fs::path file = tmp.path() / "plain_file";
    REQUIRE(WriteStringToFile(file, "keep me").ok());
    Status s = Save(demo, file / "bundle", {{"serving_default", &demo.addprint}});
    REQUIRE_FALSE(s.ok());
    CHECK(s.message().find("plain_file") != std::string::npos);
    CHECK(ReadAll(file) == "keep me");
  }

  SUBCASE("the target is a file in the way") {
    const fs::path file = tmp.path() / "occupied";
    REQUIRE(WriteStringToFile(file, "keep me").ok());
    REQUIRE_FALSE(Save(demo, file, {{"serving_default", &demo.addprint}}).ok());
    CHECK(ReadAll(file) == "keep me");
  }

  SUBCASE("the parent directory is not writable") {
    if (::geteuid() == 0) return;  // root writes anywhere
    const fs::path parent = tmp.path() / "locked";
    fs::create_directories(parent);
    REQUIRE(Save(demo, parent / "bundle", {{"serving_default", &demo.addprint}}).ok());
    const std::string before = ReadAll(parent / "bundle" / "saved_model.pb");
    ::chmod(parent.c_str(), 0555);
    Status s = Save(demo, parent / "bundle", {{"serving_default", &demo.addprint}});
    ::chmod(parent.c_str(), 0755);
    REQUIRE_FALSE(s.ok());
    CHECK(s.message().find("locked") != std::string::npos);
    CHECK(ReadAll(parent / "bundle" / "saved_model.pb") == before);
  }
}

TEST_CASE("a saved DemoModule loads with kiln::exec and continues from x = 56") {
  TempDir tmp;
  const fs::path dir = tmp.path() / "demo";
  {
    DemoModule demo;
    RunSeedCalls(demo);
    REQUIRE(Save(demo, dir, {{"serving_default", &demo.addprint}}).ok());
  }
  auto model = exec::SavedModel::Load(dir);
  REQUIRE_MESSAGE(model.ok(), model.status().ToString());
  CapturePrints prints;
  auto sig = (*model)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  auto out = (*sig)->Run({{"a", Tensor::Scalar(5.0f)}});
  REQUIRE_MESSAGE(out.ok(), out.status().ToString());
  CHECK(out->at("output_0").scalar<float>() == 61.0f);
  auto fn = (*model)->GetFunction("addprint");
  REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
  const Tensor five = Tensor::Scalar(5.0f);
  auto again = (*fn)->Call({&five, 1});
  REQUIRE_MESSAGE(again.ok(), again.status().ToString());
  CHECK(again->at(0).scalar<float>() == 66.0f);
  CHECK(prints.text() == "61\n66\n");
}

TEST_CASE("a saved MLP gives the eager outputs when loaded") {
  modules::Sequential model("mlp");
  model.Add<modules::Dense>(32, modules::Activation::kRelu, 20);
  model.Add<modules::Dense>(5, modules::Activation::kSoftmax);
  Function& predict = model.AddMethod("predict", {{"x", DType::kFloat, PartialShape{-1, 20}}},
                                      [&model](const Values& a) { return Values{model(a[0])}; });
  Tensor x(DType::kFloat, Shape{3, 20});
  for (int64_t i = 0; i < x.NumElements(); ++i) x.flat<float>()[i] = 0.05f * (i % 17) - 0.3f;
  auto eager = model(x).tensor();
  REQUIRE(eager.ok());
  TempDir tmp;
  REQUIRE(Save(model, tmp.path() / "mlp", {{"serving_default", &predict}}).ok());
  auto loaded = exec::SavedModel::Load(tmp.path() / "mlp");
  REQUIRE_MESSAGE(loaded.ok(), loaded.status().ToString());
  auto out = (*(*loaded)->GetSignature("serving_default"))->Run({{"x", x}});
  REQUIRE_MESSAGE(out.ok(), out.status().ToString());
  const Tensor& y = out->at("output_0");
  REQUIRE(y.shape() == eager->shape());
  for (int64_t i = 0; i < y.NumElements(); ++i) {
    CHECK(std::abs(y.flat<float>()[i] - eager->flat<float>()[i]) <= 1e-5f);
  }
}

}  // namespace
}  // namespace kiln::trace
