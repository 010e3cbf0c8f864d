// TF1 control flow (Switch/Merge/Enter/Exit/NextIteration/LoopCond) in a TF1 bundle's graph,
// written node by node as tf.compat.v1's cond and while_loop write them: the loader turns it
// into If and While (loader/tf1_control_flow.h) and the signature gives TF's values. TF's own
// bundles with nested loops, TensorArrays and refs are in tests/tf (tf1_control_flow).
#include <doctest/doctest.h>

#include <initializer_list>
#include <string>

#include "exec/kernel_test_util.h"
#include "exec/test_util.h"
#include "kiln/exec/saved_model.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace {

using tensorflow::DataType;
using testing::Make;

class GraphBuilder {
 public:
  GraphBuilder() : sm_(std::make_unique<tensorflow::SavedModel>()) {
    mg_ = sm_->add_meta_graphs();
    mg_->mutable_meta_info_def()->add_tags("serve");
    mg_->mutable_graph_def()->mutable_versions()->set_producer(1087);
  }

  tensorflow::NodeDef* Node(const std::string& name, const std::string& op,
                            std::initializer_list<std::string> inputs,
                            DataType t = tensorflow::DT_INVALID) {
    auto* n = mg_->mutable_graph_def()->add_node();
    n->set_name(name);
    n->set_op(op);
    for (const std::string& in : inputs) n->add_input(in);
    if (t != tensorflow::DT_INVALID) (*n->mutable_attr())["T"].set_type(t);
    if (op == "Merge") (*n->mutable_attr())["N"].set_i(n->input_size());
    return n;
  }
  void Placeholder(const std::string& name, DataType t) {
    (*Node(name, "Placeholder", {})->mutable_attr())["dtype"].set_type(t);
  }
  void Const(const std::string& name, float v, std::initializer_list<std::string> control = {}) {
    auto* n = Node(name, "Const", control);
    (*n->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
    auto* value = (*n->mutable_attr())["value"].mutable_tensor();
    value->set_dtype(tensorflow::DT_FLOAT);
    value->add_float_val(v);
  }
  void ConstInt(const std::string& name, int v, std::initializer_list<std::string> control = {}) {
    auto* n = Node(name, "Const", control);
    (*n->mutable_attr())["dtype"].set_type(tensorflow::DT_INT32);
    auto* value = (*n->mutable_attr())["value"].mutable_tensor();
    value->set_dtype(tensorflow::DT_INT32);
    value->add_int_val(v);
  }
  void Enter(const std::string& name, const std::string& in, DataType t, bool constant) {
    auto* n = Node(name, "Enter", {in}, t);
    (*n->mutable_attr())["frame_name"].set_s("while/while_context");
    (*n->mutable_attr())["is_constant"].set_b(constant);
    (*n->mutable_attr())["parallel_iterations"].set_i(10);
  }
  void Signature(std::initializer_list<std::pair<std::string, DataType>> inputs,
                 std::initializer_list<std::pair<std::string, std::string>> outputs,
                 DataType out_type = tensorflow::DT_FLOAT) {
    auto& sig = (*mg_->mutable_signature_def())["serving_default"];
    sig.set_method_name("tensorflow/serving/predict");
    for (const auto& [name, t] : inputs) {
      auto& info = (*sig.mutable_inputs())[name];
      info.set_name(name + ":0");
      info.set_dtype(t);
      info.mutable_tensor_shape()->set_unknown_rank(true);
    }
    for (const auto& [key, tensor] : outputs) {
      auto& info = (*sig.mutable_outputs())[key];
      info.set_name(tensor);
      info.set_dtype(key == "i" ? tensorflow::DT_INT32 : out_type);
      info.mutable_tensor_shape()->set_unknown_rank(true);
    }
  }
  Result<std::unique_ptr<SavedModel>> Load() {
    return SavedModel::LoadFromProto(std::move(sm_), "/nonexistent/kiln");
  }

 private:
  std::unique_ptr<tensorflow::SavedModel> sm_;
  tensorflow::MetaGraphDef* mg_;
};

// y = cond(p, x * 2, -x) and s = cond(p, 1, -1) (branches of constants that only the pivot's
// control edge puts in a branch), as tf.compat.v1.cond writes them.
void AddCond(GraphBuilder& b) {
  b.Placeholder("x", tensorflow::DT_FLOAT);
  b.Placeholder("p", tensorflow::DT_BOOL);
  b.Node("cond/Switch", "Switch", {"p", "p"}, tensorflow::DT_BOOL);
  b.Node("cond/switch_t", "Identity", {"cond/Switch:1"}, tensorflow::DT_BOOL);
  b.Node("cond/switch_f", "Identity", {"cond/Switch"}, tensorflow::DT_BOOL);
  b.Node("cond/pred_id", "Identity", {"p"}, tensorflow::DT_BOOL);
  b.Node("cond/Switch_1", "Switch", {"x", "cond/pred_id"}, tensorflow::DT_FLOAT);
  b.Const("cond/two", 2, {"^cond/switch_t"});
  b.Node("cond/mul", "Mul", {"cond/Switch_1:1", "cond/two"}, tensorflow::DT_FLOAT);
  b.Node("cond/neg", "Neg", {"cond/Switch_1"}, tensorflow::DT_FLOAT);
  b.Node("cond/Merge", "Merge", {"cond/neg", "cond/mul"}, tensorflow::DT_FLOAT);
  b.Const("cond/one", 1, {"^cond/switch_t"});
  b.Const("cond/minus_one", -1, {"^cond/switch_f"});
  b.Node("cond/Merge_1", "Merge", {"cond/minus_one", "cond/one"}, tensorflow::DT_FLOAT);
}

TEST_CASE("a TF1 cond runs the branch its predicate picks, constant-only branches included") {
  GraphBuilder b;
  AddCond(b);
  b.Signature({{"x", tensorflow::DT_FLOAT}, {"p", tensorflow::DT_BOOL}},
              {{"y", "cond/Merge:0"}, {"s", "cond/Merge_1:0"}});
  auto m = b.Load();
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  auto sig = (*m)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  for (bool p : {true, false}) {
    INFO("p = " << p);
    auto out = (*sig)->Run({{"x", Make<float>({1, -3}, {2})}, {"p", Make<bool>({p}, {})}});
    REQUIRE_MESSAGE(out.ok(), out.status().ToString());
    CHECK(TensorsEqual(out->at("y"), p ? Make<float>({2, -6}, {2}) : Make<float>({-1, 3}, {2})));
    CHECK(TensorsEqual(out->at("s"), Make<float>({p ? 1.0f : -1.0f}, {})));
  }
}

TEST_CASE("a TF1 while_loop runs to its condition: i counts to n, acc doubles each time") {
  GraphBuilder b;
  b.Placeholder("n", tensorflow::DT_INT32);
  b.Placeholder("acc0", tensorflow::DT_FLOAT);
  b.ConstInt("zero", 0);
  b.Enter("while/Enter", "zero", tensorflow::DT_INT32, false);
  b.Enter("while/Enter_1", "acc0", tensorflow::DT_FLOAT, false);
  b.Enter("while/Enter_2", "n", tensorflow::DT_INT32, true);
  b.Node("while/Merge", "Merge", {"while/Enter", "while/NextIteration"}, tensorflow::DT_INT32);
  b.Node("while/Merge_1", "Merge", {"while/Enter_1", "while/NextIteration_1"},
         tensorflow::DT_FLOAT);
  b.Node("while/Less", "Less", {"while/Merge", "while/Enter_2"}, tensorflow::DT_INT32);
  b.Node("while/LoopCond", "LoopCond", {"while/Less"});
  b.Node("while/Switch", "Switch", {"while/Merge", "while/LoopCond"}, tensorflow::DT_INT32);
  b.Node("while/Switch_1", "Switch", {"while/Merge_1", "while/LoopCond"}, tensorflow::DT_FLOAT);
  b.Node("while/Identity", "Identity", {"while/Switch:1"}, tensorflow::DT_INT32);
  b.Node("while/Identity_1", "Identity", {"while/Switch_1:1"}, tensorflow::DT_FLOAT);
  b.ConstInt("while/one", 1, {"^while/Identity"});
  b.Node("while/add", "AddV2", {"while/Identity", "while/one"}, tensorflow::DT_INT32);
  b.Const("while/two", 2, {"^while/Identity"});
  b.Node("while/mul", "Mul", {"while/Identity_1", "while/two"}, tensorflow::DT_FLOAT);
  b.Node("while/NextIteration", "NextIteration", {"while/add"}, tensorflow::DT_INT32);
  b.Node("while/NextIteration_1", "NextIteration", {"while/mul"}, tensorflow::DT_FLOAT);
  b.Node("while/Exit", "Exit", {"while/Switch"}, tensorflow::DT_INT32);
  b.Node("while/Exit_1", "Exit", {"while/Switch_1"}, tensorflow::DT_FLOAT);
  b.Signature({{"n", tensorflow::DT_INT32}, {"acc0", tensorflow::DT_FLOAT}},
              {{"i", "while/Exit:0"}, {"acc", "while/Exit_1:0"}});
  auto m = b.Load();
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  auto sig = (*m)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  for (int n : {0, 1, 5}) {
    INFO("n = " << n);
    auto out = (*sig)->Run({{"n", Make<int32_t>({n}, {})}, {"acc0", Make<float>({1.5f, -1}, {2})}});
    REQUIRE_MESSAGE(out.ok(), out.status().ToString());
    CHECK(TensorsEqual(out->at("i"), Make<int32_t>({n}, {})));
    const float f = static_cast<float>(1 << n);
    CHECK(TensorsEqual(out->at("acc"), Make<float>({1.5f * f, -f}, {2})));
  }
}

TEST_CASE("TF1 control flow that no cond or while_loop builds is refused, naming the node") {
  GraphBuilder b;
  AddCond(b);
  // A Merge of two values no Switch divided.
  b.Node("bad_merge", "Merge", {"x", "cond/Merge"}, tensorflow::DT_FLOAT);
  b.Signature({{"x", tensorflow::DT_FLOAT}, {"p", tensorflow::DT_BOOL}}, {{"y", "bad_merge:0"}});
  auto m = b.Load();
  REQUIRE_FALSE(m.ok());
  CHECK_MESSAGE(m.status().message().find("Merge 'bad_merge' does not join the two branches") !=
                    std::string::npos,
                m.status().ToString());

  // A node that reads both branches of one conditional.
  GraphBuilder c;
  AddCond(c);
  c.Node("both", "AddV2", {"cond/mul", "cond/neg"}, tensorflow::DT_FLOAT);
  c.Signature({{"x", tensorflow::DT_FLOAT}, {"p", tensorflow::DT_BOOL}}, {{"y", "both:0"}});
  m = c.Load();
  REQUIRE_FALSE(m.ok());
  CHECK_MESSAGE(m.status().message().find("node 'both' (AddV2) takes inputs from both branches") !=
                    std::string::npos,
                m.status().ToString());
}

}  // namespace
}  // namespace kiln::exec
