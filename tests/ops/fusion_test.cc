// Prepare-time fusion: the patterns Keras and TF graphs contain become one fused kernel, the
// results equal the unfused graph's, and what must not fuse does not.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "device/test_device.h"
#include "graph/flat_graph.h"
#include "kiln/exec/executor.h"
#include "ops/op_tester.h"
#include "tensorflow/framework.pb.h"

namespace kiln::testing {
namespace {

using exec::FunctionLibrary;
using exec::PreparedFunction;
using exec::PrepareOptions;

// A function built node by node: Input(), Const(), Op(); Output() names the results.
class FnBuilder {
 public:
  FnBuilder() { f_.mutable_signature()->set_name("f"); }
  std::string Input(const std::string& name, tensorflow::DataType type = tensorflow::DT_FLOAT) {
    auto* a = f_.mutable_signature()->add_input_arg();
    a->set_name(name);
    a->set_type(type);
    return name;
  }
  std::string Const(const std::string& name, const Tensor& t) {
    auto* n = f_.add_node_def();
    n->set_name(name);
    n->set_op("Const");
    (*n->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
    REQUIRE(TensorToProto(t, (*n->mutable_attr())["value"].mutable_tensor()).ok());
    return name + ":output:0";
  }
  tensorflow::NodeDef* Op(const std::string& name, const std::string& op,
                          const std::vector<std::string>& inputs, const std::string& out_arg) {
    auto* n = f_.add_node_def();
    n->set_name(name);
    n->set_op(op);
    for (const auto& i : inputs) n->add_input(i);
    (*n->mutable_attr())["T"].set_type(tensorflow::DT_FLOAT);
    last_ = name + ":" + out_arg + ":0";
    return n;
  }
  std::string IntConst(const std::string& name, const std::vector<int32_t>& values,
                       const Shape& shape) {
    auto* n = f_.add_node_def();
    n->set_name(name);
    n->set_op("Const");
    (*n->mutable_attr())["dtype"].set_type(tensorflow::DT_INT32);
    REQUIRE(
        TensorToProto(Make<int32_t>(values, shape), (*n->mutable_attr())["value"].mutable_tensor())
            .ok());
    return name + ":output:0";
  }
  // A Cast of `in` from one type to another; its output.
  std::string Cast(const std::string& name, const std::string& in, tensorflow::DataType from,
                   tensorflow::DataType to) {
    tensorflow::NodeDef* c = Op(name, "Cast", {in}, "y");
    c->mutable_attr()->erase("T");
    (*c->mutable_attr())["SrcT"].set_type(from);
    (*c->mutable_attr())["DstT"].set_type(to);
    return last_;
  }
  const std::string& last() const { return last_; }
  void Output(const std::string& ref, tensorflow::DataType type = tensorflow::DT_FLOAT) {
    const std::string name = "out" + std::to_string(f_.signature().output_arg_size());
    auto* o = f_.mutable_signature()->add_output_arg();
    o->set_name(name);
    o->set_type(type);
    (*f_.mutable_ret())[name] = ref;
  }
  const tensorflow::FunctionDef& fdef() const { return f_; }

 private:
  tensorflow::FunctionDef f_;
  std::string last_;
};

void Strides(tensorflow::NodeDef* n, const char* padding = "SAME") {
  auto* s = (*n->mutable_attr())["strides"].mutable_list();
  for (int i = 0; i < 4; ++i) s->add_i(1);
  (*n->mutable_attr())["padding"].set_s(padding);
}

// The function prepared for the dtypes and shapes of `args` (an empty library: no calls).
std::shared_ptr<const PreparedFunction> PrepareFor(const FnBuilder& b,
                                                   const std::vector<Tensor>& args,
                                                   const PrepareOptions& options = {}) {
  static const tensorflow::FunctionDefLibrary* const proto = new tensorflow::FunctionDefLibrary();
  static const FunctionLibrary* const lib = new FunctionLibrary(*proto);
  std::vector<TensorSpec> specs;
  for (const Tensor& t : args) specs.push_back(TensorSpec{t.dtype(), PartialShape(t.shape())});
  auto fn = PreparedFunction::Prepare(b.fdef(), *lib, specs, options);
  REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
  return *fn;
}

// Runs the function fused and unfused on `args`; returns the fused plan's stats after
// checking the outputs agree.
exec::PlanStats CheckFusedMatchesUnfused(const FnBuilder& b, const std::vector<Tensor>& args) {
  PrepareOptions plain;
  plain.fuse = false;
  const auto unfused = PrepareFor(b, args, plain);
  const auto fused = PrepareFor(b, args);
  std::vector<Tensor> want, got;
  REQUIRE(unfused->Run(args, &want).ok());
  Status s = fused->Run(args, &got);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  REQUIRE(want.size() == got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string diff = CompareTensors(got[i], want[i], 2e-5);
    CHECK_MESSAGE(diff.empty(), "output ", i, ": ", diff);
  }
  return fused->plan_stats();
}

}  // namespace

TEST_CASE("fusion: MatMul + BiasAdd + Relu (a Keras Dense) is one kernel") {
  FnBuilder b;
  const std::string x = b.Input("x");
  const std::string w = b.Const("w", RandomOf(DType::kFloat, Shape{16, 8}, 1));
  const std::string bias = b.Const("b", RandomOf(DType::kFloat, Shape{8}, 2));
  b.Op("mm", "MatMul", {x, w}, "product");
  b.Op("bias", "BiasAdd", {b.last(), bias}, "output");
  b.Op("relu", "Relu", {b.last()}, "activations");
  b.Output(b.last());
  const exec::PlanStats st =
      CheckFusedMatchesUnfused(b, {RandomOf(DType::kFloat, Shape{4, 16}, 3)});
  CHECK(st.fused == 1);
  CHECK(st.steps == 1);
}

TEST_CASE("fusion: a Keras batch norm (x * scale + shift) folds into the convolution") {
  FnBuilder b;
  const std::string x = b.Input("x");
  const std::string w = b.Const("w", RandomOf(DType::kFloat, Shape{3, 3, 4, 6}, 1));
  const std::string scale = b.Const("scale", RandomOf(DType::kFloat, Shape{6}, 2, 0.5, 2));
  const std::string shift = b.Const("shift", RandomOf(DType::kFloat, Shape{1, 1, 1, 6}, 3));
  Strides(b.Op("conv", "Conv2D", {x, w}, "output"));
  b.Op("mul", "Mul", {b.last(), scale}, "z");
  b.Op("add", "AddV2", {b.last(), shift}, "z");
  b.Op("relu6", "Relu6", {b.last()}, "activations");
  b.Output(b.last());
  const exec::PlanStats st =
      CheckFusedMatchesUnfused(b, {RandomOf(DType::kFloat, Shape{2, 5, 5, 4}, 4)});
  CHECK(st.fused == 1);
  CHECK(st.steps == 1);
}

TEST_CASE("fusion: Conv2D + inference FusedBatchNormV3 + Relu") {
  FnBuilder b;
  const std::string x = b.Input("x");
  const std::string w = b.Const("w", RandomOf(DType::kFloat, Shape{3, 3, 3, 5}, 1));
  std::vector<std::string> bn = {x};
  Strides(b.Op("conv", "Conv2D", {x, w}, "output"));
  const std::string conv = b.last();
  const std::string s = b.Const("s", RandomOf(DType::kFloat, Shape{5}, 2, 0.5, 2));
  const std::string o = b.Const("o", RandomOf(DType::kFloat, Shape{5}, 3));
  const std::string m = b.Const("m", RandomOf(DType::kFloat, Shape{5}, 4));
  const std::string v = b.Const("v", RandomOf(DType::kFloat, Shape{5}, 5, 0.1, 2));
  auto* n = b.Op("bn", "FusedBatchNormV3", {conv, s, o, m, v}, "y");
  (*n->mutable_attr())["U"].set_type(tensorflow::DT_FLOAT);
  (*n->mutable_attr())["is_training"].set_b(false);
  (*n->mutable_attr())["epsilon"].set_f(0.001f);
  const std::string y = b.last();
  b.Op("relu", "Relu", {y}, "activations");
  b.Output(b.last());
  if (exec::FindOp("FusedBatchNormV3") == nullptr) return;
  const exec::PlanStats st =
      CheckFusedMatchesUnfused(b, {RandomOf(DType::kFloat, Shape{1, 6, 6, 3}, 6)});
  CHECK(st.fused == 1);
}

TEST_CASE("fusion: a residual add and x * sigmoid(x) join the fused kernel") {
  FnBuilder b;
  const std::string x = b.Input("x");
  const std::string r = b.Input("r");
  const std::string w = b.Const("w", RandomOf(DType::kFloat, Shape{1, 1, 4, 4}, 1));
  const std::string bias = b.Const("b", RandomOf(DType::kFloat, Shape{4}, 2));
  Strides(b.Op("conv", "Conv2D", {x, w}, "output"));
  b.Op("bias", "BiasAdd", {b.last(), bias}, "output");
  b.Op("res", "AddV2", {b.last(), r}, "z");
  b.Output(b.last());  // the residual sum is an output: the chain stops there
  const exec::PlanStats st =
      CheckFusedMatchesUnfused(b, {RandomOf(DType::kFloat, Shape{2, 3, 3, 4}, 3),
                                   RandomOf(DType::kFloat, Shape{2, 3, 3, 4}, 4)});
  CHECK(st.fused == 1);
  CHECK(st.steps == 1);

  FnBuilder s;
  const std::string sx = s.Input("x");
  const std::string sw = s.Const("w", RandomOf(DType::kFloat, Shape{8, 8}, 5));
  const std::string sb = s.Const("b", RandomOf(DType::kFloat, Shape{8}, 6));
  s.Op("mm", "MatMul", {sx, sw}, "product");
  s.Op("bias", "BiasAdd", {s.last(), sb}, "output");
  const std::string pre = s.last();
  s.Op("sig", "Sigmoid", {pre}, "y");
  s.Op("mul", "Mul", {pre, s.last()}, "z");
  s.Output(s.last());
  const exec::PlanStats st2 =
      CheckFusedMatchesUnfused(s, {RandomOf(DType::kFloat, Shape{3, 8}, 7)});
  CHECK(st2.fused == 1);
  CHECK(st2.steps == 1);
}

// Keras 3's swish: x * sigmoid(1.0 * x), then IdentityN(y, x, beta) for its custom gradient,
// the next layer reading IdentityN:0. The IdentityN's read of x no longer keeps the activation
// out of the product.
TEST_CASE("fusion: Keras 3's swish behind an IdentityN joins the fused kernel") {
  FnBuilder b;
  const std::string x = b.Input("x");
  const std::string w = b.Const("w", RandomOf(DType::kFloat, Shape{1, 1, 4, 4}, 1));
  Strides(b.Op("conv", "Conv2D", {x, w}, "output"));
  b.Op("bias", "BiasAdd", {b.last(), b.Const("b", RandomOf(DType::kFloat, Shape{4}, 2))}, "output");
  const std::string pre = b.last();
  const std::string beta = b.Const("beta", Tensor::Scalar(1.0f));
  b.Op("scaled", "Mul", {beta, pre}, "z");
  b.Op("sig", "Sigmoid", {b.last()}, "y");
  b.Op("swish", "Mul", {pre, b.last()}, "z");
  tensorflow::NodeDef* idn = b.Op("idn", "IdentityN", {b.last(), pre, beta}, "output");
  auto* types = (*idn->mutable_attr())["T"].mutable_list();
  types->Clear();
  for (int i = 0; i < 3; ++i) types->add_type(tensorflow::DT_FLOAT);
  b.Op("relu", "Relu", {"idn:output:0"}, "activations");
  b.Output(b.last());
  const exec::PlanStats st =
      CheckFusedMatchesUnfused(b, {RandomOf(DType::kFloat, Shape{2, 3, 3, 4}, 3)});
  CHECK(st.steps == 2);  // the convolution with its swish, then the Relu
}

TEST_CASE("fusion: an intermediate another op also reads is not absorbed") {
  FnBuilder b;
  const std::string x = b.Input("x");
  const std::string w = b.Const("w", RandomOf(DType::kFloat, Shape{4, 4}, 1));
  const std::string bias = b.Const("b", RandomOf(DType::kFloat, Shape{4}, 2));
  b.Op("mm", "MatMul", {x, w}, "product");
  b.Op("bias", "BiasAdd", {b.last(), bias}, "output");
  const std::string pre = b.last();
  b.Op("relu", "Relu", {pre}, "activations");
  b.Output(b.last());
  b.Output(pre);  // the pre-activation is an output too
  const exec::PlanStats st = CheckFusedMatchesUnfused(b, {RandomOf(DType::kFloat, Shape{2, 4}, 3)});
  CHECK(st.fused == 1);  // MatMul + BiasAdd only
  CHECK(st.steps == 2);  // and the Relu on its own
}

TEST_CASE("fusion: functions prepared from the same weights share one folded copy") {
  // A loaded model's signatures, restored functions and shape specialisations fold the same
  // variables: one scaled copy serves them all (a Keras ResNet50 held four of 94 MB).
  FnBuilder b;
  const std::string x = b.Input("x");
  const std::string w = b.Input("w");
  const std::string scale = b.Const("scale", RandomOf(DType::kFloat, Shape{6}, 2, 0.5, 2));
  const std::string shift = b.Const("shift", RandomOf(DType::kFloat, Shape{1, 1, 1, 6}, 3));
  Strides(b.Op("conv", "Conv2D", {x, w}, "output"));
  b.Op("mul", "Mul", {b.last(), scale}, "z");
  b.Op("add", "AddV2", {b.last(), shift}, "z");
  b.Output(b.last());
  const Tensor weights = RandomOf(DType::kFloat, Shape{3, 3, 4, 6}, 1);
  const Tensor input = RandomOf(DType::kFloat, Shape{2, 5, 5, 4}, 4);
  tensorflow::FunctionDefLibrary proto;
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {{DType::kFloat, PartialShape(input.shape())},
                                         {DType::kFloat, PartialShape(weights.shape())}};
  auto folded_weights = [&](const Tensor& w_value) {
    PrepareOptions options;
    options.known_args = {Tensor(), w_value};
    options.keep_graph = true;
    auto fn = PreparedFunction::Prepare(b.fdef(), lib, specs, options);
    REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
    CHECK((*fn)->plan_stats().fused == 1);
    std::vector<Tensor> out;
    const std::vector<Tensor> args = {input, w_value};
    REQUIRE((*fn)->Run(args, &out).ok());
    std::shared_ptr<TensorBuffer> buffer;
    for (const exec::FlatNode& n : (*fn)->final_graph()->nodes)
      if (n.name == "conv/fused_weights" && n.value != nullptr) buffer = n.value->buffer();
    REQUIRE(buffer != nullptr);
    return std::make_pair(buffer, out[0]);
  };
  const auto [first, out1] = folded_weights(weights);
  const auto [second, out2] = folded_weights(weights);
  CHECK(first == second);
  CHECK(CompareTensors(out2, out1, 0).empty());
  // Other weights (equal values, another buffer) get their own copy.
  const auto [third, out3] = folded_weights(weights.DeepCopy());
  CHECK(third != first);
  CHECK(CompareTensors(out3, out1, 0).empty());
}

TEST_CASE("fusion: a shape specialisation runs the generic function's fused graph") {
  // With the batch unknown the residual Add cannot be proven to match the convolution's output,
  // so it stays a separate op; a specialisation for a known batch must not fuse it either (a
  // serving plan's specialisations cannot: they do not fuse), or results would depend on
  // whether a bundle has a plan (on AVX2 oneDNN's fused sum rounds differently).
  FnBuilder b;
  const std::string x = b.Input("x");
  const std::string r = b.Input("r");
  const std::string w = b.Const("w", RandomOf(DType::kFloat, Shape{1, 1, 4, 6}, 1));
  const std::string bias = b.Const("b", RandomOf(DType::kFloat, Shape{6}, 2));
  Strides(b.Op("conv", "Conv2D", {x, w}, "output"));
  b.Op("bias", "BiasAdd", {b.last(), bias}, "output");
  b.Op("add", "AddV2", {b.last(), r}, "z");
  b.Output(b.last());
  tensorflow::FunctionDefLibrary proto;
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {
      {DType::kFloat, *PartialShape::FromDims(std::vector<int64_t>{-1, 5, 5, 4})},
      {DType::kFloat, *PartialShape::FromDims(std::vector<int64_t>{-1, 5, 5, 6})}};
  auto generic = PreparedFunction::Prepare(b.fdef(), lib, specs);
  REQUIRE_MESSAGE(generic.ok(), generic.status().ToString());
  const std::vector<Tensor> args = {RandomOf(DType::kFloat, Shape{2, 5, 5, 4}, 3),
                                    RandomOf(DType::kFloat, Shape{2, 5, 5, 6}, 4)};
  auto special = (*generic)->SpecializedFor(args);
  REQUIRE_MESSAGE(special.ok(), special.status().ToString());
  REQUIRE(*special != generic->get());
  CHECK((*generic)->num_steps() == 2);  // the fused conv + bias, then the Add
  CHECK((*special)->num_steps() == (*generic)->num_steps());
  // The same as preparing the known shapes directly, within float tolerance.
  std::vector<TensorSpec> known;
  for (const Tensor& t : args) known.push_back(TensorSpec{t.dtype(), PartialShape(t.shape())});
  auto direct = PreparedFunction::Prepare(b.fdef(), lib, known);
  REQUIRE(direct.ok());
  std::vector<Tensor> got, want;
  REQUIRE((*generic)->Run(args, &got).ok());
  REQUIRE((*direct)->Run(args, &want).ok());
  CHECK(CompareTensors(got[0], want[0], 1e-5).empty());
}

// A ResNet block's shape: x -> Relu -> 1x1 and 3x3 convolutions -> + the Relu's result (or,
// `conv_reads_addend`, the 3x3 convolution reads the addend itself) -> Relu, then a Tanh.
FnBuilder ResidualBlock(bool conv_reads_addend, bool shape_from_arg = false) {
  FnBuilder b;
  std::string x = b.Input("x");
  if (shape_from_arg) {
    // Reshaped by a value known only when the function runs: no shape, and no arena, for
    // anything after it, however known the arguments' shapes.
    const std::string shape = b.Input("shape", tensorflow::DT_INT32);
    (*b.Op("reshape", "Reshape", {x, shape}, "output")->mutable_attr())["Tshape"].set_type(
        tensorflow::DT_INT32);
    x = b.last();
  }
  b.Op("pre", "Relu", {x}, "activations");
  const std::string y = b.last();
  Strides(b.Op("c1", "Conv2D", {y, b.Const("w1", RandomOf(DType::kFloat, Shape{1, 1, 4, 4}, 1))},
               "output"),
          "VALID");
  Strides(b.Op("c2", "Conv2D",
               {conv_reads_addend ? y : b.last(),
                b.Const("w2", RandomOf(DType::kFloat, Shape{3, 3, 4, 4}, 2))},
               "output"));
  b.Op("bias", "BiasAdd", {b.last(), b.Const("b", RandomOf(DType::kFloat, Shape{4}, 3))}, "output");
  b.Op("add", "AddV2", {b.last(), y}, "z");
  b.Op("relu", "Relu", {b.last()}, "activations");
  b.Op("post", "Tanh", {b.last()}, "y");  // the block's result is not the function's
  b.Output(b.last());
  return b;
}

TEST_CASE("fusion: a residual add of a tensor with the same unknown batch joins the kernel") {
  // Keras exports leave the batch unknown: the Add's operands provably have the same shape
  // when their unknown dims come from the same tensor through ops that keep them (here a Relu,
  // a 1x1 VALID and a 3x3 SAME convolution of stride 1 and a BiasAdd).
  tensorflow::FunctionDefLibrary proto;
  FunctionLibrary lib(proto);
  for (const bool conv_reads_addend : {false, true}) {
    INFO("the convolution reads the addend: ", conv_reads_addend);
    const FnBuilder b = ResidualBlock(conv_reads_addend);
    const std::vector<TensorSpec> specs = {
        {DType::kFloat, *PartialShape::FromDims(std::vector<int64_t>{-1, 5, 5, 4})}};
    auto generic = PreparedFunction::Prepare(b.fdef(), lib, specs);
    REQUIRE_MESSAGE(generic.ok(), generic.status().ToString());
    // Relu, the first convolution (when read), the second with bias, add and Relu, then Tanh.
    CHECK((*generic)->num_steps() == (conv_reads_addend ? 3 : 4));
    for (const int64_t batch : {1, 3}) {
      const std::vector<Tensor> args = {RandomOf(DType::kFloat, Shape{batch, 5, 5, 4}, 4, -1, 1)};
      PrepareOptions plain;
      plain.fuse = false;
      const auto unfused = PrepareFor(b, args, plain);
      std::vector<Tensor> want, got;
      REQUIRE(unfused->Run(args, &want).ok());
      // The generic function (its addend a heap buffer, summed into in place where nothing
      // else reads it) and one prepared for the known shape (the memory plan's arena).
      for (const bool known : {false, true}) {
        INFO("batch ", batch, ", shapes known at prepare time: ", known);
        got.clear();
        const Status s = known ? PrepareFor(b, args)->Run(args, &got) : (*generic)->Run(args, &got);
        REQUIRE_MESSAGE(s.ok(), s.ToString());
        CHECK(CompareTensors(got[0], want[0], 2e-5).empty());
      }
    }
  }
}

TEST_CASE("fusion: a fused addend that dies at the convolution takes the sum in place") {
  // Shapes known only at run time: the addend's heap buffer takes the sum, unless the
  // convolution also reads it.
  for (const bool conv_reads_addend : {false, true}) {
    INFO("the convolution reads the addend: ", conv_reads_addend);
    const FnBuilder b = ResidualBlock(conv_reads_addend, /*shape_from_arg=*/true);
    const std::vector<Tensor> args = {RandomOf(DType::kFloat, Shape{2, 100}, 6, -1, 1),
                                      Make<int32_t>({2, 5, 5, 4}, Shape{4})};
    const exec::PlanStats st = CheckFusedMatchesUnfused(b, args);
    CHECK(st.fused == 1);
    CHECK(st.planned_slots == 0);
  }
}

TEST_CASE("fusion: a fused addend that dies at the convolution lends it its arena block") {
  // Known shapes: the sum is computed in the addend's memory (no copy of it into a new block),
  // unless the convolution also reads that memory.
  for (const bool conv_reads_addend : {false, true}) {
    INFO("the convolution reads the addend: ", conv_reads_addend);
    const FnBuilder b = ResidualBlock(conv_reads_addend);
    const std::vector<Tensor> args = {RandomOf(DType::kFloat, Shape{2, 5, 5, 4}, 5, -1, 1)};
    const exec::PlanStats st = CheckFusedMatchesUnfused(b, args);
    CHECK(st.planned_slots > 0);
    CHECK(st.in_place == (conv_reads_addend ? 0 : 1));
  }
}

TEST_CASE("fusion: a zero Pad of the spatial dims becomes the convolution's explicit padding") {
  // Keras's ZeroPadding2D before a strided DepthwiseConv2D (MobileNet) and Conv2D (ResNet):
  // asymmetric pads, stride 2, on top of the layer's own EXPLICIT padding for the Conv2D.
  for (const std::string op : {"DepthwiseConv2dNative", "Conv2D"}) {
    FnBuilder b;
    const std::string x = b.Input("x");
    const std::string pads = b.IntConst("pads", {0, 0, 0, 1, 1, 2, 0, 0}, Shape{4, 2});
    const std::string w = b.Const("w", RandomOf(DType::kFloat, Shape{3, 3, 3, 2}, 1));
    b.Op("pad", "Pad", {x, pads}, "output");
    tensorflow::NodeDef* conv = b.Op("conv", op, {b.last(), w}, "output");
    auto* strides = (*conv->mutable_attr())["strides"].mutable_list();
    for (int s : {1, 2, 2, 1}) strides->add_i(s);
    if (op == "Conv2D") {
      (*conv->mutable_attr())["padding"].set_s("EXPLICIT");
      auto* e = (*conv->mutable_attr())["explicit_paddings"].mutable_list();
      for (int p : {0, 0, 1, 0, 0, 1, 0, 0}) e->add_i(p);
    } else {
      (*conv->mutable_attr())["padding"].set_s("VALID");
    }
    b.Output(b.last());
    INFO(op);
    const exec::PlanStats st =
        CheckFusedMatchesUnfused(b, {RandomOf(DType::kFloat, Shape{2, 7, 8, 3}, 4)});
    CHECK(st.fused == 1);
    CHECK(st.steps == 1);  // the convolution alone
  }
}

TEST_CASE("fusion: a Pad another op also reads, or with a non-zero batch pad, stays") {
  for (const bool shared : {true, false}) {
    FnBuilder b;
    const std::string x = b.Input("x");
    const std::string pads = b.IntConst("pads",
                                        shared ? std::vector<int32_t>{0, 0, 1, 1, 1, 1, 0, 0}
                                               : std::vector<int32_t>{1, 0, 1, 1, 1, 1, 0, 0},
                                        Shape{4, 2});
    const std::string w = b.Const("w", RandomOf(DType::kFloat, Shape{3, 3, 3, 2}, 1));
    b.Op("pad", "Pad", {x, pads}, "output");
    const std::string padded = b.last();
    Strides(b.Op("conv", "Conv2D", {padded, w}, "output"), "VALID");
    b.Output(b.last());
    if (shared) {
      b.Op("relu", "Relu", {padded}, "activations");
      b.Output(b.last());
    }
    INFO("shared: ", shared);
    const exec::PlanStats st =
        CheckFusedMatchesUnfused(b, {RandomOf(DType::kFloat, Shape{2, 5, 6, 3}, 4)});
    CHECK(st.steps == (shared ? 3 : 2));
  }
}

TEST_CASE("fusion: a Transpose by the identity permutation passes its input on") {
  for (const bool identity : {true, false}) {
    FnBuilder b;
    const std::string x = b.Input("x");
    const std::string perm = b.IntConst(
        "perm", identity ? std::vector<int32_t>{0, 1, 2} : std::vector<int32_t>{0, 2, 1}, Shape{3});
    b.Op("t", "Transpose", {x, perm}, "y");
    b.Op("relu", "Relu", {b.last()}, "activations");
    b.Output(b.last());
    INFO("identity: ", identity);
    const exec::PlanStats st =
        CheckFusedMatchesUnfused(b, {RandomOf(DType::kFloat, Shape{2, 3, 4}, 4)});
    CHECK(st.fused == (identity ? 1 : 0));
    CHECK(st.steps == (identity ? 1 : 2));  // (the Transpose and) the Relu
  }
}

TEST_CASE("fusion: a Transpose that undoes the one before it passes that one's input on") {
  // Keras 3's stacked recurrent layers: time-major and back between them. A composition that
  // is not the identity stays two copies; a first Transpose read elsewhere still runs.
  for (const bool undoes : {true, false}) {
    for (const bool first_read : {false, true}) {
      FnBuilder b;
      const std::string x = b.Input("x");
      b.Op("t1", "Transpose", {x, b.IntConst("p1", {1, 0, 2}, Shape{3})}, "y");
      const std::string t1 = b.last();
      if (first_read) b.Output(t1);
      b.Op("t2", "Transpose",
           {t1,
            b.IntConst("p2", undoes ? std::vector<int32_t>{1, 0, 2} : std::vector<int32_t>{0, 2, 1},
                       Shape{3})},
           "y");
      b.Op("relu", "Relu", {b.last()}, "activations");
      b.Output(b.last());
      INFO("undoes: ", undoes, ", the first also read: ", first_read);
      const exec::PlanStats st =
          CheckFusedMatchesUnfused(b, {RandomOf(DType::kFloat, Shape{2, 3, 4}, 4)});
      CHECK(st.fused == (undoes ? 1 : 0));
      CHECK(st.steps == (undoes ? (first_read ? 2 : 1) : 3));
    }
  }
}

}  // namespace kiln::testing

namespace kiln::testing {

TEST_CASE("fusion: a Keras 3 Conv1D (ExpandDims, Conv2D, Squeeze, BiasAdd, Relu) is one kernel") {
  for (const bool residual : {false, true}) {
    FnBuilder b;
    const std::string x = b.Input("x");
    const std::string axis = b.IntConst("axis", {-3}, Shape{});
    const std::string w = b.Const("w", RandomOf(DType::kFloat, Shape{1, 3, 3, 4}, 1));
    const std::string bias = b.Const("b", RandomOf(DType::kFloat, Shape{4}, 2));
    tensorflow::NodeDef* e = b.Op("expand", "ExpandDims", {x, axis}, "output");
    (*e->mutable_attr())["Tdim"].set_type(tensorflow::DT_INT32);
    Strides(b.Op("conv", "Conv2D", {b.last(), w}, "output"), "SAME");
    tensorflow::NodeDef* sq = b.Op("squeeze", "Squeeze", {b.last()}, "output");
    (*sq->mutable_attr())["squeeze_dims"].mutable_list()->add_i(-3);
    if (residual) {
      // A residual add of the 3-D result does not join (the fused kernel's result is 4-D).
      b.Op("add", "AddV2", {b.last(), b.Const("r", RandomOf(DType::kFloat, Shape{2, 9, 4}, 3))},
           "z");
    } else {
      b.Op("bias", "BiasAdd", {b.last(), bias}, "output");
      b.Op("relu", "Relu", {b.last()}, "activations");
    }
    b.Output(b.last());
    INFO("residual: ", residual);
    const exec::PlanStats st =
        CheckFusedMatchesUnfused(b, {RandomOf(DType::kFloat, Shape{2, 9, 3}, 4)});
    CHECK(st.fused == (residual ? 0 : 1));
    // ExpandDims, the convolution (fused), the Squeeze (and the Add).
    CHECK(st.steps == (residual ? 4 : 3));
  }
}

}  // namespace kiln::testing

namespace kiln::testing {

TEST_CASE("fusion: a causal Conv1D's Pad of the time dim folds through its ExpandDims") {
  FnBuilder b;
  const std::string x = b.Input("x");
  const std::string pads = b.IntConst("pads", {0, 0, 2, 0, 0, 0}, Shape{3, 2});
  const std::string axis = b.IntConst("axis", {-3}, Shape{});
  const std::string w = b.Const("w", RandomOf(DType::kFloat, Shape{1, 3, 3, 4}, 1));
  const std::string bias = b.Const("b", RandomOf(DType::kFloat, Shape{4}, 2));
  b.Op("pad", "Pad", {x, pads}, "output");
  tensorflow::NodeDef* e = b.Op("expand", "ExpandDims", {b.last(), axis}, "output");
  (*e->mutable_attr())["Tdim"].set_type(tensorflow::DT_INT32);
  Strides(b.Op("conv", "Conv2D", {b.last(), w}, "output"), "VALID");
  tensorflow::NodeDef* sq = b.Op("squeeze", "Squeeze", {b.last()}, "output");
  (*sq->mutable_attr())["squeeze_dims"].mutable_list()->add_i(-3);
  b.Op("bias", "BiasAdd", {b.last(), bias}, "output");
  b.Op("tanh", "Tanh", {b.last()}, "y");
  b.Output(b.last());
  const exec::PlanStats st =
      CheckFusedMatchesUnfused(b, {RandomOf(DType::kFloat, Shape{2, 9, 3}, 4)});
  CHECK(st.fused == 2);  // the Pad folded, the bias and activation fused
  CHECK(st.steps == 3);  // ExpandDims, the convolution, the Squeeze
}

}  // namespace kiln::testing

namespace kiln::testing {

// Keras's Dense on a sequence is Tensordot (a MatMul of the flattened rows, then a Reshape whose
// shape is ConcatV2(the input's free dims, [units])), its bias, and Keras's "gelu", which is
// tf.nn.gelu: 0.5 * x * erfc(-x / sqrt(2)). The bias and the GELU fold into the MatMul and the
// Reshape moves after it.
TEST_CASE("fusion: a Dense on a sequence (Tensordot, BiasAdd, exact GELU) is one kernel") {
  FnBuilder b;
  const std::string x = b.Input("x");                              // [rows, 16], flattened
  const std::string free = b.Input("free", tensorflow::DT_INT32);  // known only at run time
  const std::string w = b.Const("w", RandomOf(DType::kFloat, Shape{16, 8}, 1));
  const std::string bias = b.Const("b", RandomOf(DType::kFloat, Shape{8}, 2));
  b.Op("mm", "MatMul", {x, w}, "product");
  const std::string mm = b.last();
  tensorflow::NodeDef* c =
      b.Op("shape", "ConcatV2",
           {free, b.IntConst("units", {8}, Shape{1}), b.IntConst("axis", {0}, Shape{})}, "output");
  (*c->mutable_attr())["T"].set_type(tensorflow::DT_INT32);
  (*c->mutable_attr())["N"].set_i(2);
  (*c->mutable_attr())["Tidx"].set_type(tensorflow::DT_INT32);
  tensorflow::NodeDef* r = b.Op("reshape", "Reshape", {mm, b.last()}, "output");
  (*r->mutable_attr())["Tshape"].set_type(tensorflow::DT_INT32);
  b.Op("bias", "BiasAdd", {b.last(), bias}, "output");
  const std::string y = b.last();
  b.Op("half", "Mul", {b.Const("k_half", Tensor::Scalar<float>(0.5f)), y}, "z");
  const std::string half = b.last();
  b.Op("neg", "Neg", {y}, "y");
  b.Op("scaled", "Mul", {b.last(), b.Const("k_rsqrt2", Tensor::Scalar<float>(0.70710677f))}, "z");
  b.Op("erfc", "Erfc", {b.last()}, "y");
  b.Op("gelu", "Mul", {half, b.last()}, "z");
  b.Output(b.last());
  const exec::PlanStats st = CheckFusedMatchesUnfused(
      b, {RandomOf(DType::kFloat, Shape{6, 16}, 3), Make<int32_t>({2, 3}, {2})});
  CHECK(st.fused == 1);
  CHECK(st.steps == 3);  // the shape's ConcatV2, the fused MatMul, the Reshape
}

}  // namespace kiln::testing

namespace kiln::testing {

// The spellings of a layer norm over the last axis of x (channels 6) that fusion knows:
// Keras 3's (moments with a StopGradient, x * inv + (-mean * inv + beta), inv = rsqrt(var +
// eps) * gamma), the same without gamma and beta, and tf.nn.batch_normalization's
// beta - mean * inv. Returns the result's reference.
namespace {
enum class LayerNormForm { kKeras, kPlain, kSub };
std::string BuildLayerNorm(FnBuilder& b, const std::string& x, LayerNormForm form) {
  const std::string axis = b.IntConst("axis", {-1}, Shape{1});
  auto mean_of = [&](const std::string& name, const std::string& in) {
    tensorflow::NodeDef* m = b.Op(name, "Mean", {in, axis}, "output");
    (*m->mutable_attr())["keep_dims"].set_b(true);
    (*m->mutable_attr())["Tidx"].set_type(tensorflow::DT_INT32);
    return b.last();
  };
  const std::string mean = mean_of("mean", x);
  std::string centre = mean;
  if (form == LayerNormForm::kKeras) {
    b.Op("stop", "StopGradient", {mean}, "output");
    centre = b.last();
  }
  b.Op("sqd", "SquaredDifference", {x, centre}, "z");
  const std::string var = mean_of("variance", b.last());
  b.Op("add_eps", "AddV2", {var, b.Const("eps", Tensor::Scalar<float>(1e-3f))}, "z");
  b.Op("rsqrt", "Rsqrt", {b.last()}, "y");
  std::string inv = b.last();
  if (form != LayerNormForm::kPlain) {
    b.Op("inv", "Mul", {inv, b.Const("gamma", RandomOf(DType::kFloat, Shape{1, 1, 6}, 1, 0.5, 2))},
         "z");
    inv = b.last();
  }
  const std::string beta = b.Const("beta", RandomOf(DType::kFloat, Shape{1, 1, 6}, 2));
  std::string shift;
  if (form == LayerNormForm::kSub) {
    b.Op("mean_inv", "Mul", {mean, inv}, "z");
    b.Op("shift", "Sub", {beta, b.last()}, "z");
    shift = b.last();
  } else {
    b.Op("neg", "Neg", {mean}, "y");
    b.Op("mean_inv", "Mul", {b.last(), inv}, "z");
    shift = b.last();
    if (form == LayerNormForm::kKeras) {
      b.Op("shift", "AddV2", {shift, beta}, "z");
      shift = b.last();
    }
  }
  b.Op("x_inv", "Mul", {x, inv}, "z");
  b.Op("out", "AddV2", {b.last(), shift}, "z");
  return b.last();
}
}  // namespace

// Each spelling becomes one _MklLayerNorm and agrees with the unfused ops.
TEST_CASE("fusion: a layer normalization over the last axis is one _MklLayerNorm") {
  for (const LayerNormForm form :
       {LayerNormForm::kKeras, LayerNormForm::kPlain, LayerNormForm::kSub}) {
    FnBuilder b;
    b.Output(BuildLayerNorm(b, b.Input("x"), form));
    INFO("form ", static_cast<int>(form));
    const exec::PlanStats st =
        CheckFusedMatchesUnfused(b, {RandomOf(DType::kFloat, Shape{2, 5, 6}, 3)});
    CHECK(st.fused == 1);
    CHECK(st.steps == 1);
  }
}

}  // namespace kiln::testing

namespace kiln::testing {

// Keras's mixed precision keeps softmax and layer norm in float32 between a Cast from float16
// and a Cast back. With another device in the load (the test device here, a GPU in use) they
// run in float16 itself, their kernels computing in float32 inside.
TEST_CASE("fusion: a float32 softmax or layer norm between float16 casts runs in float16") {
  for (const bool softmax : {true, false}) {
    FnBuilder b;
    const std::string x16 = b.Input("x", tensorflow::DT_HALF);
    const std::string x = b.Cast("up", x16, tensorflow::DT_HALF, tensorflow::DT_FLOAT);
    std::string y;
    if (softmax) {
      b.Op("softmax", "Softmax", {x}, "softmax");
      y = b.last();
    } else {
      y = BuildLayerNorm(b, x, LayerNormForm::kPlain);
    }
    b.Output(b.Cast("back", y, tensorflow::DT_FLOAT, tensorflow::DT_HALF), tensorflow::DT_HALF);
    INFO("softmax: ", softmax);
    tensorflow::FunctionDefLibrary proto;
    FunctionLibrary lib(proto);
    const Tensor in = RandomOf(DType::kHalf, Shape{3, 8}, 5);
    const std::vector<TensorSpec> specs = {{DType::kHalf, PartialShape(in.shape())}};
    PrepareOptions host, device;
    host.fuse = false;
    device.devices = {GetTestDevice()};
    auto plain = PreparedFunction::Prepare(b.fdef(), lib, specs, host);
    REQUIRE_MESSAGE(plain.ok(), plain.status().ToString());
    auto narrow = PreparedFunction::Prepare(b.fdef(), lib, specs, device);
    REQUIRE_MESSAGE(narrow.ok(), narrow.status().ToString());
    // The graph's Casts are gone (the CPU kernels behind the test device widen a float16
    // softmax between Casts of their own; a GPU's kernels take it as it is).
    for (const exec::ScheduledStep& step : (*narrow)->Schedule()) {
      CHECK_MESSAGE((step.node_name != "up" && step.node_name != "back"), step.node_name);
      CHECK_MESSAGE((softmax || step.op != "Cast"), step.node_name);
    }
    std::vector<Tensor> want, got;
    REQUIRE((*plain)->Run(std::vector{in}, &want).ok());
    Status s = (*narrow)->Run(std::vector{in}, &got);
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    REQUIRE(got[0].dtype() == DType::kHalf);
    const std::string diff = CompareTensors(got[0], want[0], 2e-3);
    CHECK_MESSAGE(diff.empty(), diff);
  }
}

}  // namespace kiln::testing

namespace kiln::testing {

// tf.nn.gelu(approximate=True) (and Hugging Face's "gelu_new"): 0.5 * x * (1 + tanh(sqrt(2 / pi)
// * (x + 0.044715 * x^3))) joins a Dense as the GeluApproximate epilogue.
TEST_CASE("fusion: MatMul + BiasAdd + tanh-approximated GELU is one kernel") {
  FnBuilder b;
  const std::string x = b.Input("x");
  b.Op("mm", "MatMul", {x, b.Const("w", RandomOf(DType::kFloat, Shape{16, 8}, 1))}, "product");
  b.Op("bias", "BiasAdd", {b.last(), b.Const("b", RandomOf(DType::kFloat, Shape{8}, 2))}, "output");
  const std::string y = b.last();
  b.Op("half", "Mul", {b.Const("k_half", Tensor::Scalar<float>(0.5f)), y}, "z");
  const std::string half = b.last();
  b.Op("pow", "Pow", {y, b.Const("k3", Tensor::Scalar<float>(3))}, "z");
  b.Op("cube", "Mul", {b.Const("k_coeff", Tensor::Scalar<float>(0.044715f)), b.last()}, "z");
  b.Op("sum", "AddV2", {y, b.last()}, "z");
  b.Op("scaled", "Mul", {b.Const("k_sqrt", Tensor::Scalar<float>(0.7978846f)), b.last()}, "z");
  b.Op("tanh", "Tanh", {b.last()}, "y");
  b.Op("one", "AddV2", {b.Const("k1", Tensor::Scalar<float>(1)), b.last()}, "z");
  b.Op("gelu", "Mul", {half, b.last()}, "z");
  b.Output(b.last());
  const exec::PlanStats st =
      CheckFusedMatchesUnfused(b, {RandomOf(DType::kFloat, Shape{5, 16}, 3)});
  CHECK(st.fused == 1);
  CHECK(st.steps == 1);
}

}  // namespace kiln::testing

namespace kiln::testing {
namespace {

// Weights that are int8 levels times one scale per output channel (what `quantize --mode
// int8` stores, as the load dequantizes it): each channel reaches level 127 once. `step` > 0:
// every channel's scale.
Tensor Int8LevelWeights(const Shape& shape, int64_t channels, bool outer, uint32_t seed,
                        float step = 0) {
  Tensor levels = RandomOf(DType::kFloat, shape, seed, -127, 127);
  Tensor scales = RandomOf(DType::kFloat, Shape{channels}, seed + 1, 0.001, 0.02);
  const int64_t n = levels.NumElements(), inner = n / channels;
  Tensor w(DType::kFloat, shape);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = outer ? i / inner : i % channels;
    const float q = i < channels * (outer ? inner : 1) && (outer ? i % inner == 0 : true)
                        ? 127.f
                        : std::nearbyint(levels.data<float>()[i]);
    w.data<float>()[i] = q * (step > 0 ? step : scales.data<float>()[c]);
  }
  return w;
}

std::string FakeQuant(FnBuilder& b, const std::string& name, const std::string& x, float lo,
                      float hi, bool narrow) {
  auto* n = b.Op(name, "FakeQuantWithMinMaxArgs", {x}, "outputs");
  n->mutable_attr()->erase("T");
  (*n->mutable_attr())["min"].set_f(lo);
  (*n->mutable_attr())["max"].set_f(hi);
  (*n->mutable_attr())["num_bits"].set_i(8);
  (*n->mutable_attr())["narrow_range"].set_b(narrow);
  return b.last();
}

// How many nodes of the fused function's final graph have bool attr `name` set.
int CountFlag(const FnBuilder& b, const std::vector<Tensor>& args, const std::string& name) {
  PrepareOptions options;
  options.keep_graph = true;
  const auto fn = PrepareFor(b, args, options);
  int count = 0;
  for (const exec::FlatNode& n : fn->final_graph()->nodes)
    if (n.attrs != nullptr)
      if (auto it = n.attrs->find(name); it != n.attrs->end() && it->second.b()) ++count;
  return count;
}

// How many nodes of the fused function's final graph run `op`.
int CountOps(const FnBuilder& b, const std::vector<Tensor>& args, const std::string& op) {
  PrepareOptions options;
  options.keep_graph = true;
  // Held here: a temporary in the loop's range would die before the loop runs.
  const auto fn = PrepareFor(b, args, options);
  int count = 0;
  for (const exec::FlatNode& n : fn->final_graph()->nodes) count += n.op == op ? 1 : 0;
  return count;
}

}  // namespace

// int8 SavedModels: a product whose input passes an 8-bit FakeQuant of a range without a zero
// point and whose weights are int8 levels runs as one integer kernel that rounds its input
// itself (oneDNN u8s8/s8s8 where the CPU has 8-bit dot products, the float path elsewhere: the
// test command runs this under the AVX2 cap too). It equals the FakeQuant graph run as it is.
TEST_CASE("fusion: a FakeQuant input and int8-level weights make one integer product") {
  SUBCASE("Conv2D + BiasAdd + residual Add + Relu, a signed input") {
    FnBuilder b;
    const std::string x = b.Input("x"), r = b.Input("r");
    const std::string q = FakeQuant(b, "fq", x, -2.f, 2.f, true);
    const std::string w = b.Const("w", Int8LevelWeights(Shape{3, 3, 4, 6}, 6, false, 1));
    Strides(b.Op("conv", "Conv2D", {q, w}, "output"));
    b.Op("bias", "BiasAdd", {b.last(), b.Const("b", RandomOf(DType::kFloat, Shape{6}, 2))},
         "output");
    b.Op("res", "AddV2", {b.last(), r}, "z");
    b.Op("relu", "Relu", {b.last()}, "activations");
    b.Output(b.last());
    const std::vector<Tensor> args = {RandomOf(DType::kFloat, Shape{2, 5, 5, 4}, 3, -2.5, 2.5),
                                      RandomOf(DType::kFloat, Shape{2, 5, 5, 6}, 4)};
    const exec::PlanStats st = CheckFusedMatchesUnfused(b, args);
    CHECK(st.steps == 1);
    CHECK(CountOps(b, args, "_KilnInt8Conv2D") == 1);
  }
  SUBCASE("Relu, then a depthwise convolution of an unsigned input") {
    // A depth multiplier above 1 stays float: oneDNN's integer kernel for it is its slow
    // reference path.
    for (const int64_t multiplier : {1, 2}) {
      FnBuilder b;
      b.Op("relu", "Relu", {b.Input("x")}, "activations");
      const std::string q = FakeQuant(b, "fq", b.last(), 0.f, 1.5f, false);
      const std::string w =
          b.Const("w", Int8LevelWeights(Shape{3, 3, 4, multiplier}, 4 * multiplier, false, 5));
      Strides(b.Op("dw", "DepthwiseConv2dNative", {q, w}, "output"));
      b.Op("bias", "BiasAdd",
           {b.last(), b.Const("b", RandomOf(DType::kFloat, Shape{4 * multiplier}, 6))}, "output");
      b.Output(b.last());
      const std::vector<Tensor> args = {RandomOf(DType::kFloat, Shape{1, 6, 6, 4}, 7)};
      INFO("depth multiplier ", multiplier);
      const exec::PlanStats st = CheckFusedMatchesUnfused(b, args);
      CHECK(st.steps == (multiplier == 1 ? 2 : 3));
      CHECK(CountOps(b, args, "_KilnInt8DepthwiseConv2dNative") == (multiplier == 1 ? 1 : 0));
    }
  }
  SUBCASE("one FakeQuant read by two MatMuls, plain and transposed weights") {
    FnBuilder b;
    const std::string q = FakeQuant(b, "fq", b.Input("x"), -1.f, 1.f, true);
    const std::string w = b.Const("w", Int8LevelWeights(Shape{16, 8}, 8, false, 8));
    b.Op("mm", "MatMul", {q, w}, "product");
    b.Op("bias", "BiasAdd", {b.last(), b.Const("b", RandomOf(DType::kFloat, Shape{8}, 9))},
         "output");
    b.Output(b.last());
    const std::string wt = b.Const("wt", Int8LevelWeights(Shape{5, 16}, 5, true, 10));
    auto* t = b.Op("mm_t", "MatMul", {q, wt}, "product");
    (*t->mutable_attr())["transpose_b"].set_b(true);
    b.Output(b.last());
    const std::vector<Tensor> args = {RandomOf(DType::kFloat, Shape{3, 16}, 11, -1.2, 1.2)};
    const exec::PlanStats st = CheckFusedMatchesUnfused(b, args);
    CHECK(st.steps == 2);  // the FakeQuant is gone
    CHECK(CountOps(b, args, "_KilnInt8MatMul") == 2);
  }
}

// Keras's EinsumDense on a sequence: a BatchMatMulV2 of [batch, time, k] by a [k, n] weight.
TEST_CASE("fusion: a batched product by one int8-level weight matrix runs on integers") {
  for (const bool adj_y : {false, true}) {
    FnBuilder b;
    const std::string q = FakeQuant(b, "fq", b.Input("x"), -1.f, 1.f, true);
    const Shape ws = adj_y ? Shape{6, 16} : Shape{16, 6};
    auto* n = b.Op("bmm", "BatchMatMulV2", {q, b.Const("w", Int8LevelWeights(ws, 6, adj_y, 12))},
                   "output");
    (*n->mutable_attr())["adj_y"].set_b(adj_y);
    b.Output(b.last());
    const std::vector<Tensor> args = {RandomOf(DType::kFloat, Shape{2, 5, 16}, 13, -1.2, 1.2)};
    INFO("adj_y ", adj_y);
    const exec::PlanStats st = CheckFusedMatchesUnfused(b, args);
    CHECK(st.steps == 1);
    CHECK(CountOps(b, args, "_KilnInt8MatMul") == 1);
  }
}

// Keras's EinsumDense kernel [d, heads, dim] is quantized with one scale per dim, shared by the
// heads, and read as a [d, heads * dim] matrix: a column's largest level may be below 127.
TEST_CASE(
    "fusion: int8 weights whose channels are coarser than the product's still run on integers") {
  Tensor w = Int8LevelWeights(Shape{16, 6}, 3, false, 14);  // channel = column % 3
  for (int64_t r = 0; r < 16; ++r)
    for (int64_t c = 3; c < 6; ++c) {  // the second head's levels: at most 60
      float& v = w.data<float>()[r * 6 + c];
      const float s = w.data<float>()[c - 3] / 127;  // row 0 holds level 127 for channel c % 3
      v = std::nearbyint(std::fmod(v / s, 61.f)) * s;
    }
  FnBuilder b;
  const std::string q = FakeQuant(b, "fq", b.Input("x"), -1.f, 1.f, true);
  b.Op("bmm", "BatchMatMulV2", {q, b.Const("w", w)}, "output");
  b.Output(b.last());
  const std::vector<Tensor> args = {RandomOf(DType::kFloat, Shape{2, 5, 16}, 15, -1.2, 1.2)};
  CheckFusedMatchesUnfused(b, args);
  CHECK(CountOps(b, args, "_KilnInt8MatMul") == 1);
}

TEST_CASE("fusion: a FakeQuant with a zero point, or weights off the int8 levels, stay float") {
  for (const bool zero_point : {true, false}) {
    FnBuilder b;
    const std::string q =
        FakeQuant(b, "fq", b.Input("x"), zero_point ? -0.5f : -1.f, 1.5f, !zero_point);
    const Tensor w = zero_point ? Int8LevelWeights(Shape{16, 8}, 8, false, 1)
                                : RandomOf(DType::kFloat, Shape{16, 8}, 1);
    b.Op("mm", "MatMul", {q, b.Const("w", w)}, "product");
    b.Output(b.last());
    const std::vector<Tensor> args = {RandomOf(DType::kFloat, Shape{3, 16}, 2)};
    INFO("zero point ", zero_point);
    CheckFusedMatchesUnfused(b, args);
    CHECK(CountOps(b, args, "_KilnInt8MatMul") == 0);
  }
  // A FakeQuant another op also reads stays for that reader.
  FnBuilder b;
  const std::string q = FakeQuant(b, "fq", b.Input("x"), -1.f, 1.f, true);
  b.Op("mm", "MatMul", {q, b.Const("w", Int8LevelWeights(Shape{16, 8}, 8, false, 3))}, "product");
  b.Output(b.last());
  b.Output(q);
  const std::vector<Tensor> args = {RandomOf(DType::kFloat, Shape{3, 16}, 4)};
  const exec::PlanStats st = CheckFusedMatchesUnfused(b, args);
  CHECK(st.steps == 2);
  CHECK(CountOps(b, args, "_KilnInt8MatMul") == 1);
}

// Integer products in a row (MobileNet's convolutions) hand their result to the next one as
// 8-bit levels. Steps of 2^-5 (input), 2^-8 (weights) and 2^-10 (the FakeQuant between) with
// biases 1/16 of a step off the sums' grid keep every value exact and no level a tie, so the
// bytes equal the FakeQuant graph's rounding on every path.
TEST_CASE("fusion: int8 products in a row pass levels as bytes") {
  for (const std::pair<bool, bool>& form :
       {std::pair{false, false}, {true, false}, {false, true}}) {
    const bool also_read = form.first, padded = form.second;
    FnBuilder b;
    const std::string q = FakeQuant(b, "fq", b.Input("x"), 0.f, 255.f / 32, false);
    Strides(b.Op("conv", "Conv2D",
                 {q, b.Const("w", Int8LevelWeights(Shape{3, 3, 4, 6}, 6, false, 1, 1.f / 256))},
                 "output"));
    Tensor bias(DType::kFloat, Shape{6});
    for (int64_t c = 0; c < 6; ++c) bias.data<float>()[c] = (8.f * (c - 3) + 1.f / 16) / 1024;
    b.Op("bias", "BiasAdd", {b.last(), b.Const("b", bias)}, "output");
    b.Op("relu", "Relu", {b.last()}, "activations");
    const std::string a = b.last();
    if (also_read) b.Output(a);  // a reader of the floats keeps them
    std::string padded_a = a;
    if (padded) {  // MobileNet's ZeroPadding2D before a strided depthwise convolution
      b.Op("pad", "Pad", {a, b.IntConst("pads", {0, 0, 0, 1, 1, 2, 0, 0}, Shape{4, 2})}, "output");
      padded_a = b.last();
    }
    const std::string q2 = FakeQuant(b, "fq2", padded_a, 0.f, 255.f / 1024, false);
    tensorflow::NodeDef* dw = b.Op(
        "dw", "DepthwiseConv2dNative",
        {q2, b.Const("w2", Int8LevelWeights(Shape{3, 3, 6, 1}, 6, false, 2, 1.f / 256))}, "output");
    if (padded) {
      auto* strides = (*dw->mutable_attr())["strides"].mutable_list();
      for (int s : {1, 2, 2, 1}) strides->add_i(s);
      (*dw->mutable_attr())["padding"].set_s("VALID");
    } else {
      Strides(dw);
    }
    b.Output(b.last());
    const std::vector<Tensor> args = {RandomOf(DType::kFloat, Shape{2, 6, 6, 4}, 3, -0.1, 0.3)};
    INFO("the first product's floats also read: ", also_read, ", a Pad between: ", padded);
    CheckFusedMatchesUnfused(b, args);
    CHECK(CountOps(b, args, "_KilnInt8Conv2D") == 1);
    CHECK(CountOps(b, args, "_KilnInt8DepthwiseConv2dNative") == 1);
    CHECK(CountOps(b, args, "Pad") == 0);  // folded into the depthwise convolution's padding
    CHECK(CountFlag(b, args, "input_levels") == (also_read ? 0 : 1));
  }
}

// An int8 bundle's residual block: the FakeQuant before the product keeps its input's shape,
// so with the batch unknown the Add still provably has its operands' shape and joins the
// integer product (MobileNetV2's inverted residuals).
TEST_CASE("fusion: a residual add joins an int8 product whose input passes a FakeQuant") {
  FnBuilder b;
  b.Op("pre", "Relu", {b.Input("x")}, "activations");
  const std::string y = b.last();
  const std::string q = FakeQuant(b, "fq", y, 0.f, 255.f / 32, false);
  Strides(b.Op("conv", "Conv2D",
               {q, b.Const("w", Int8LevelWeights(Shape{3, 3, 4, 4}, 4, false, 1, 1.f / 256))},
               "output"));
  b.Op("bias", "BiasAdd", {b.last(), b.Const("b", RandomOf(DType::kFloat, Shape{4}, 3))}, "output");
  b.Op("add", "AddV2", {b.last(), y}, "z");
  b.Output(b.last());
  tensorflow::FunctionDefLibrary proto;
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {
      {DType::kFloat, *PartialShape::FromDims(std::vector<int64_t>{-1, 5, 5, 4})}};
  auto generic = PreparedFunction::Prepare(b.fdef(), lib, specs);
  REQUIRE_MESSAGE(generic.ok(), generic.status().ToString());
  CHECK((*generic)->num_steps() == 2);  // the Relu, then the product with its bias and add
  const std::vector<Tensor> args = {RandomOf(DType::kFloat, Shape{2, 5, 5, 4}, 4, -1, 7)};
  PrepareOptions plain;
  plain.fuse = false;
  std::vector<Tensor> want, got;
  REQUIRE(PrepareFor(b, args, plain)->Run(args, &want).ok());
  REQUIRE((*generic)->Run(args, &got).ok());
  CHECK(CompareTensors(got[0], want[0], 1e-5).empty());
}

}  // namespace kiln::testing

namespace kiln::testing {
namespace {

enum class AttentionForm { kKeras3, kKeras2, kKeras3Mixed, kMasked, kHuggingFace, kOneHead };

// The core of Keras's MultiHeadAttention as each version writes it: Keras 3 (einsum(query, key)
// "BTNH,BSNH->BNTS", the scale on the scores), Keras 2 (einsum(key, query) "aecd,abcd->acbe"),
// Keras 3 in mixed precision (float16 products, the scale and softmax in float32 between
// Casts), and with an additive mask before the softmax; Hugging Face's TF BERT (BatchMatMul of
// [0, 2, 1, 3]-transposed heads, a division by sqrt(d), the mask, softmax of logits + 1e-9, an
// Identity for dropout, the result transposed back); Keras's Attention layer (rank-3
// BatchMatMul, one head).
FnBuilder BuildAttention(AttentionForm form) {
  FnBuilder b;
  if (form == AttentionForm::kHuggingFace || form == AttentionForm::kOneHead) {
    const bool hf = form == AttentionForm::kHuggingFace;
    const std::string q = b.Input("q"), k = b.Input("k"), v = b.Input("v");
    const std::string mask = hf ? b.Input("mask") : "";
    const std::string perm = b.IntConst("perm", {0, 2, 1, 3}, Shape{4});
    auto heads = [&](const std::string& name, const std::string& x) {
      if (!hf) return x;
      b.Op(name, "Transpose", {x, perm}, "y");
      return b.last();
    };
    auto bmm = [&](const std::string& name, const std::string& x, const std::string& y,
                   bool adj_y) {
      tensorflow::NodeDef* n = b.Op(name, "BatchMatMulV2", {x, y}, "output");
      (*n->mutable_attr())["adj_x"].set_b(false);
      (*n->mutable_attr())["adj_y"].set_b(adj_y);
      return b.last();
    };
    const std::string qh = heads("qt", q);
    const std::string kh = heads("kt", k);
    std::string scores = bmm("scores", qh, kh, true);
    b.Op("scaled", hf ? "RealDiv" : "Mul",
         {scores, b.Const("dk", Make<float>({hf ? 4.0f : 0.25f}, Shape{}))}, "z");
    scores = b.last();
    if (hf) {
      b.Op("masked", "AddV2", {scores, mask}, "z");
      b.Op("stable", "AddV2", {b.last(), b.Const("eps", Make<float>({1e-9f}, Shape{}))}, "z");
      scores = b.last();
    }
    b.Op("softmax", "Softmax", {scores}, "softmax");
    b.Op("dropout", "Identity", {b.last()}, "output");
    const std::string probs = b.last();
    const std::string values = heads("vt", v);
    std::string context = bmm("context", probs, values, false);
    if (hf) {
      b.Op("back", "Transpose", {context, perm}, "y");
      context = b.last();
    }
    b.Output(context);
    return b;
  }
  const bool mixed = form == AttentionForm::kKeras3Mixed;
  const tensorflow::DataType dt = mixed ? tensorflow::DT_HALF : tensorflow::DT_FLOAT;
  const std::string q = b.Input("q", dt), k = b.Input("k", dt), v = b.Input("v", dt);
  const std::string mask = form == AttentionForm::kMasked ? b.Input("mask") : "";
  auto einsum = [&](const std::string& name, const std::string& x, const std::string& y,
                    const char* eq) {
    tensorflow::NodeDef* n = b.Op(name, "Einsum", {x, y}, "output");
    (*n->mutable_attr())["T"].set_type(dt);
    (*n->mutable_attr())["N"].set_i(2);
    (*n->mutable_attr())["equation"].set_s(eq);
    return b.last();
  };
  const std::string scale = b.Const("scale", Make<float>({0.25f}, Shape{}));
  std::string scores;
  if (form == AttentionForm::kKeras2) {
    b.Op("scaled_q", "Mul", {q, scale}, "z");
    scores = einsum("scores", k, b.last(), "aecd,abcd->acbe");
  } else {
    scores = einsum("scores", q, k, "BTNH,BSNH->BNTS");
    if (mixed) scores = b.Cast("up", scores, tensorflow::DT_HALF, tensorflow::DT_FLOAT);
    b.Op("scale_scores", "Mul", {scores, scale}, "z");
    scores = b.last();
  }
  if (!mask.empty()) {
    b.Op("masked", "AddV2", {scores, mask}, "z");
    scores = b.last();
  }
  b.Op("softmax", "Softmax", {scores}, "softmax");
  std::string probs = b.last();
  if (mixed) probs = b.Cast("back", probs, tensorflow::DT_FLOAT, tensorflow::DT_HALF);
  const char* eq2 = form == AttentionForm::kKeras2 ? "acbe,aecd->abcd" : "BNTS,BSNH->BTNH";
  b.Output(einsum("context", probs, v, eq2), dt);
  return b;
}

}  // namespace

// With another device in the load (the test device here, a GPU in use), the attention core is
// one _KilnAttention and agrees with the unfused ops; on the host alone nothing changes.
TEST_CASE("fusion: Keras's attention core is one _KilnAttention on a load with a device") {
  for (const AttentionForm form :
       {AttentionForm::kKeras3, AttentionForm::kKeras2, AttentionForm::kKeras3Mixed,
        AttentionForm::kMasked, AttentionForm::kHuggingFace, AttentionForm::kOneHead}) {
    INFO("form ", static_cast<int>(form));
    const FnBuilder b = BuildAttention(form);
    const DType t = form == AttentionForm::kKeras3Mixed ? DType::kHalf : DType::kFloat;
    // q [2, 5, 3, 8], k and v [2, 7, 3, 8] (one head: [2, 5, 8] and [2, 7, 8]); the mask
    // [2, 1, 1, 7] with its last column masked.
    const bool one = form == AttentionForm::kOneHead;
    std::vector<Tensor> args = {RandomOf(t, one ? Shape{2, 5, 8} : Shape{2, 5, 3, 8}, 11, -1, 1),
                                RandomOf(t, one ? Shape{2, 7, 8} : Shape{2, 7, 3, 8}, 12, -1, 1),
                                RandomOf(t, one ? Shape{2, 7, 8} : Shape{2, 7, 3, 8}, 13, -1, 1)};
    if (form == AttentionForm::kMasked || form == AttentionForm::kHuggingFace) {
      Tensor m(DType::kFloat, Shape{2, 1, 1, 7});
      for (int64_t i = 0; i < 14; ++i) m.data<float>()[i] = i % 7 == 6 ? -1e9f : 0.0f;
      args.push_back(m);
    }
    PrepareOptions plain, device;
    plain.fuse = false;
    device.devices = {GetTestDevice()};
    const auto unfused = PrepareFor(b, args, plain);
    const auto fused = PrepareFor(b, args, device);
    const auto host = PrepareFor(b, args);
    int attention = 0;
    for (const exec::ScheduledStep& step : fused->Schedule()) {
      attention += step.op == "_KilnAttention";
      CHECK_MESSAGE((step.op != "Softmax" && step.op != "Einsum" && step.op != "BatchMatMulV2" &&
                     step.op != "Transpose"),
                    step.node_name);
    }
    CHECK(attention == 1);
    for (const exec::ScheduledStep& step : host->Schedule()) CHECK(step.op != "_KilnAttention");
    std::vector<Tensor> want, got;
    REQUIRE(unfused->Run(args, &want).ok());
    Status s = fused->Run(args, &got);
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    REQUIRE(got[0].dtype() == t);
    REQUIRE(got[0].shape() == (one ? Shape({2, 5, 8}) : Shape({2, 5, 3, 8})));
    const std::string diff = CompareTensors(got[0], want[0], t == DType::kHalf ? 2e-3 : 1e-5);
    CHECK_MESSAGE(diff.empty(), diff);
  }
}

// A pattern the kernel does not compute stays as it is: a softmax whose probabilities are read
// twice (returned as well), and values laid out other than [batch, source, heads, dim].
TEST_CASE("fusion: attention that is not the core Keras writes is left alone") {
  for (int variant = 0; variant < 2; ++variant) {
    FnBuilder b;
    const std::string q = b.Input("q"), k = b.Input("k"), v = b.Input("v");
    auto einsum = [&](const std::string& name, const std::string& x, const std::string& y,
                      const char* eq) {
      tensorflow::NodeDef* n = b.Op(name, "Einsum", {x, y}, "output");
      (*n->mutable_attr())["N"].set_i(2);
      (*n->mutable_attr())["equation"].set_s(eq);
      return b.last();
    };
    einsum("scores", q, k, "BTNH,BSNH->BNTS");
    b.Op("softmax", "Softmax", {b.last()}, "softmax");
    const std::string probs = b.last();
    // variant 1: values [batch, heads, source, dim]
    einsum("context", probs, v, variant == 0 ? "BNTS,BSNH->BTNH" : "BNTS,BNSH->BTNH");
    const std::string context = b.last();
    b.Output(context);
    if (variant == 0) b.Output(probs);
    const std::vector<Tensor> args = {
        RandomOf(DType::kFloat, Shape{1, 4, 2, 8}, 21),
        RandomOf(DType::kFloat, Shape{1, 6, 2, 8}, 22),
        RandomOf(DType::kFloat, variant == 0 ? Shape{1, 6, 2, 8} : Shape{1, 2, 6, 8}, 23)};
    PrepareOptions device;
    device.devices = {GetTestDevice()};
    for (const exec::ScheduledStep& step : PrepareFor(b, args, device)->Schedule())
      CHECK_MESSAGE(step.op != "_KilnAttention", "variant ", variant);
  }
}

}  // namespace kiln::testing

namespace kiln::testing {

// LoadOptions::precision fp16 / bf16 on a load with an accelerator (the test device here): the
// float32 products, activations and softmax run in the half type, a Cast where float32 enters
// and leaves (the result stays float32), Exp stays float32; results agree with float32 within
// the half type's precision. Without an accelerator nothing changes.
TEST_CASE("precision: a float32 model runs in half precision on a load with a device") {
  FnBuilder b;
  const std::string x = b.Input("x");
  b.Op("mm1", "MatMul", {x, b.Const("w1", RandomOf(DType::kFloat, Shape{16, 8}, 1, -0.5, 0.5))},
       "product");
  b.Op("bias", "BiasAdd", {b.last(), b.Const("b1", RandomOf(DType::kFloat, Shape{8}, 2))},
       "output");
  b.Op("relu", "Relu", {b.last()}, "activations");
  const std::string hidden = b.last();
  b.Op("mm2", "MatMul", {hidden, b.Const("w2", RandomOf(DType::kFloat, Shape{8, 4}, 3, -0.5, 0.5))},
       "product");
  b.Op("softmax", "Softmax", {b.last()}, "softmax");
  b.Output(b.last());
  b.Op("exp", "Exp", {hidden}, "y");  // kept float32
  b.Output(b.last());
  const std::vector<Tensor> args = {RandomOf(DType::kFloat, Shape{3, 16}, 4, -1, 1)};
  PrepareOptions plain;
  plain.fuse = false;
  std::vector<Tensor> want;
  REQUIRE(PrepareFor(b, args, plain)->Run(args, &want).ok());
  for (const exec::Precision p : {exec::Precision::kFloat16, exec::Precision::kBFloat16}) {
    INFO(exec::PrecisionName(p));
    PrepareOptions device;
    device.devices = {GetTestDevice()};
    device.precision = p;
    const auto fn = PrepareFor(b, args, device);
    CHECK(fn->plan_stats().float_to_half >= 5);  // the products, bias, relu, softmax
    int casts = 0, exps = 0;
    for (const exec::ScheduledStep& step : fn->Schedule()) {
      casts += step.op == "Cast";
      exps += step.op == "Exp";
    }
    CHECK(casts >= 2);  // x in; the results out (the test device widens on its own, too)
    CHECK(exps == 1);
    std::vector<Tensor> got;
    Status s = fn->Run(args, &got);
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    REQUIRE(got.size() == 2);
    for (size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i].dtype() == DType::kFloat);
      const std::string diff =
          CompareTensors(got[i], want[i], p == exec::Precision::kFloat16 ? 1e-2 : 5e-2);
      CHECK_MESSAGE(diff.empty(), "output ", i, ": ", diff);
    }
    // The host alone: nothing changes.
    PrepareOptions host;
    host.precision = p;
    CHECK(PrepareFor(b, args, host)->plan_stats().float_to_half == 0);
  }
}

// Precision::kTF32 marks the float32 products (after fusion: the fused node too) for the GPU's
// TF32 math; other nodes and other precisions carry no mark.
TEST_CASE("precision: tf32 marks the float32 products and convolutions") {
  FnBuilder b;
  const std::string x = b.Input("x");
  b.Op("mm", "MatMul", {x, b.Const("w", RandomOf(DType::kFloat, Shape{16, 8}, 1))}, "product");
  b.Op("bias", "BiasAdd", {b.last(), b.Const("b", RandomOf(DType::kFloat, Shape{8}, 2))}, "output");
  b.Op("tanh", "Tanh", {b.last()}, "y");
  b.Output(b.last());
  const std::vector<Tensor> args = {RandomOf(DType::kFloat, Shape{2, 16}, 3)};
  for (const bool tf32 : {true, false}) {
    PrepareOptions options;
    options.keep_graph = true;
    if (tf32) options.precision = exec::Precision::kTF32;
    const auto fn = PrepareFor(b, args, options);
    const exec::FlatGraph* g = fn->final_graph();
    REQUIRE(g != nullptr);
    int marked = 0, products = 0;
    for (const exec::FlatNode& n : g->nodes) {
      if (n.op == "_FusedMatMul" || n.op == "MatMul") ++products;
      Result<bool> mark = n.reader().GetBool("_kiln_allow_tf32", false);
      if (mark.ok() && *mark) {
        ++marked;
        CHECK(n.op == "_FusedMatMul");
      }
    }
    CHECK(products == 1);
    CHECK(marked == (tf32 ? 1 : 0));
    std::vector<Tensor> out;
    CHECK(fn->Run(args, &out).ok());  // the CPU's kernels ignore the mark
  }
}

}  // namespace kiln::testing

namespace kiln::testing {

// TF's dilated convolution (tf.nn.convolution's with_space_to_batch, as Keras writes every
// Conv1D, Conv2D and DepthwiseConv2D with dilation_rate > 1): SpaceToBatchND, the dense
// convolution (VALID), BatchToSpaceND, with the paddings and crops TF computes for the padding.
struct DilatedConv {
  std::string op = "Conv2D";
  bool conv1d = false;       // ExpandDims / Squeeze around a 2-D convolution of [N, 1, W, C]
  bool squeeze_all = false;  // a Squeeze without squeeze_dims (not folded)
  bool shared_s2b = false;   // the SpaceToBatchND also read by another op (not folded)
  std::vector<int32_t> block, paddings, crops;
};

FnBuilder BuildDilated(const DilatedConv& d, const Shape& w_shape) {
  FnBuilder b;
  const std::string x = b.Input("x");
  const int m = static_cast<int>(d.block.size());
  const std::string block = b.IntConst("block", d.block, Shape{m});
  const std::string pads = b.IntConst("paddings", d.paddings, Shape{m, 2});
  const std::string crops = b.IntConst("crops", d.crops, Shape{m, 2});
  const std::string w = b.Const("w", RandomOf(DType::kFloat, w_shape, 1));
  const int64_t channels = d.op == "Conv2D" ? w_shape.dim(3) : w_shape.dim(2) * w_shape.dim(3);
  const std::string bias = b.Const("b", RandomOf(DType::kFloat, Shape{channels}, 2));
  auto int_attrs = [](tensorflow::NodeDef* n, const char* third) {
    (*n->mutable_attr())["Tblock_shape"].set_type(tensorflow::DT_INT32);
    (*n->mutable_attr())[third].set_type(tensorflow::DT_INT32);
  };
  int_attrs(b.Op("s2b", "SpaceToBatchND", {x, block, pads}, "output"), "Tpaddings");
  const std::string blocked = b.last();
  if (d.conv1d) {
    tensorflow::NodeDef* e =
        b.Op("expand", "ExpandDims", {b.last(), b.IntConst("axis", {1}, Shape{})}, "output");
    (*e->mutable_attr())["Tdim"].set_type(tensorflow::DT_INT32);
  }
  Strides(b.Op("conv", d.op, {b.last(), w}, "output"), "VALID");
  if (d.conv1d) {
    tensorflow::NodeDef* sq = b.Op("squeeze", "Squeeze", {b.last()}, "output");
    if (!d.squeeze_all) (*sq->mutable_attr())["squeeze_dims"].mutable_list()->add_i(1);
  }
  int_attrs(b.Op("b2s", "BatchToSpaceND", {b.last(), block, crops}, "output"), "Tcrops");
  b.Op("bias", "BiasAdd", {b.last(), bias}, "output");
  b.Op("relu", "Relu", {b.last()}, "activations");
  b.Output(b.last());
  if (d.shared_s2b) {
    b.Op("neg", "Neg", {blocked}, "y");
    b.Output(b.last());
  }
  return b;
}

TEST_CASE("fusion: SpaceToBatchND, a convolution and BatchToSpaceND are one dilated convolution") {
  SUBCASE("a causal Conv1D of dilation 4 (its Pad made by the caller: crops 0)") {
    DilatedConv d;
    d.conv1d = true;
    d.block = {4};
    d.paddings = {8, 2};  // the causal 2 * 4 before, 2 more to reach a multiple of 4
    d.crops = {0, 2};
    const exec::PlanStats st = CheckFusedMatchesUnfused(
        BuildDilated(d, Shape{1, 3, 3, 5}), {RandomOf(DType::kFloat, Shape{2, 22, 3}, 4)});
    CHECK(st.fused == 2);  // dilated, then the bias and Relu fused
    CHECK(st.steps == 3);  // ExpandDims, the convolution, the Squeeze
  }
  SUBCASE("a Conv2D and a DepthwiseConv2dNative, SAME, dilations 2 x 3, batch 1") {
    for (const std::string op : {"Conv2D", "DepthwiseConv2dNative"}) {
      DilatedConv d;
      d.op = op;
      d.block = {2, 3};
      // H 9: SAME pads 2 + 2, and 1 more; W 10: 3 + 3, and 2 more (TF's
      // required_space_to_batch_paddings); the extra rows are cropped.
      d.paddings = {2, 3, 3, 5};
      d.crops = {0, 1, 0, 2};
      INFO(op);
      const exec::PlanStats st = CheckFusedMatchesUnfused(
          BuildDilated(d, Shape{3, 3, 3, 2}), {RandomOf(DType::kFloat, Shape{1, 9, 10, 3}, 4)});
      CHECK(st.fused == 2);
      CHECK(st.steps == 1);
    }
  }
  SUBCASE("left as written: a Squeeze of every size-1 dim, a shared SpaceToBatchND") {
    for (const bool squeeze_all : {true, false}) {
      DilatedConv d;
      d.conv1d = true;
      d.squeeze_all = squeeze_all;
      d.shared_s2b = !squeeze_all;
      d.block = {2};
      d.paddings = {2, 0};
      d.crops = {0, 0};
      INFO("squeeze_all: ", squeeze_all);
      const exec::PlanStats st = CheckFusedMatchesUnfused(
          BuildDilated(d, Shape{1, 3, 3, 4}), {RandomOf(DType::kFloat, Shape{1, 8, 3}, 4)});
      CHECK(st.fused == 0);
      // SpaceToBatchND, ExpandDims, the convolution, Squeeze, BatchToSpaceND, BiasAdd, Relu
      // (and the Neg).
      CHECK(st.steps == (squeeze_all ? 7 : 8));
    }
  }
}

}  // namespace kiln::testing

namespace kiln::testing {

// Keras's BatchNormalization after a Conv2D(activation="relu") is x * s + t after the
// activation: it joins the fused convolution as _KilnScaleShift (one oneDNN post-op pair).
// The fused_ops of the fused function's last fused node, comma-separated.
std::string LastFusedOps(const FnBuilder& b, const std::vector<Tensor>& args) {
  PrepareOptions options;
  options.keep_graph = true;
  const auto fn = PrepareFor(b, args, options);
  std::string ops;
  for (const exec::FlatNode& n : fn->final_graph()->nodes) {
    if (n.attrs == nullptr || n.op.rfind("_Fused", 0) != 0) continue;
    const auto it = n.attrs->find("fused_ops");
    if (it == n.attrs->end()) continue;
    ops.clear();
    for (const std::string& f : it->second.list().s()) ops += (ops.empty() ? "" : ",") + f;
  }
  return ops;
}

TEST_CASE("fusion: a per-channel scale and shift after the activation join the convolution") {
  // With positive scales after a ReLU or LeakyReLU the scale folds into the weights and only
  // the shift stays after the activation (_KilnShift); otherwise both (_KilnScaleShift).
  for (const std::string op : {"Conv2D", "DepthwiseConv2dNative"}) {
    for (const bool positive : {false, true}) {
      for (const bool nan : {false, true}) {
        // Depthwise convolutions skip the NaN check (docs/tf-compat.md, "Non-finite values").
        if (nan && op != "Conv2D") continue;
        FnBuilder b;
        const std::string x = b.Input("x");
        const int64_t out_c = op == "Conv2D" ? 16 : 3;
        const std::string w =
            b.Const("w", RandomOf(DType::kFloat, Shape{3, 3, 3, op == "Conv2D" ? 16 : 1}, 1));
        const std::string bias = b.Const("b", RandomOf(DType::kFloat, Shape{out_c}, 2));
        Strides(b.Op("conv", op, {x, w}, "output"), "SAME");
        b.Op("bias", "BiasAdd", {b.last(), bias}, "output");
        const char* act = op == "Conv2D" ? "Relu" : positive ? "LeakyRelu" : "Relu6";
        b.Op("act", act, {b.last()}, "activations");
        const Tensor scale = positive ? RandomOf(DType::kFloat, Shape{out_c}, 3, 0.5, 2)
                                      : RandomOf(DType::kFloat, Shape{out_c}, 3);
        b.Op("mul", "Mul", {b.last(), b.Const("s", scale)}, "z");
        b.Op("add", "AddV2", {b.last(), b.Const("t", RandomOf(DType::kFloat, Shape{out_c}, 4))},
             "z");
        b.Op("sub", "Sub", {b.last(), b.Const("u", RandomOf(DType::kFloat, Shape{1, out_c}, 5))},
             "z");
        b.Output(b.last());
        Tensor input = RandomOf(DType::kFloat, Shape{2, 7, 8, 3}, 6);
        // A NaN takes the kernel's path that keeps it (oneDNN's ReLU would make it 0).
        if (nan) input.data<float>()[17] = std::nanf("");
        INFO(op, ", positive scales: ", positive, ", NaN in: ", nan);
        const exec::PlanStats st = CheckFusedMatchesUnfused(b, {input});
        CHECK(st.fused == 1);
        CHECK(st.steps == 1);
        CHECK(LastFusedOps(b, {input}) ==
              std::string("BiasAdd,") + act + (positive ? ",_KilnShift" : ",_KilnScaleShift"));
      }
    }
  }
}

TEST_CASE("fusion: a 1x1 convolution of one pixel runs as a row times its filter") {
  // A squeeze-and-excite block's products at batch 1 (row_product.h), with a residual add and a
  // scale and shift after the activation; two rows take a oneDNN matmul, a 3x3 image oneDNN's
  // convolution. One pixel keeps a NaN (oneDNN's thin convolutions skip that check:
  // docs/tf-compat.md, "Non-finite values").
  for (const Shape& in_shape : {Shape{1, 1, 1, 24}, Shape{2, 1, 1, 24}, Shape{1, 3, 3, 24}}) {
    for (const bool residual : {false, true}) {
      for (const bool nan : {false, true}) {
        if (nan && in_shape.num_elements() != 24) continue;
        FnBuilder b;
        const std::string x = b.Input("x");
        const std::string r = b.Input("r");
        Strides(b.Op("conv", "Conv2D",
                     {x, b.Const("w", RandomOf(DType::kFloat, Shape{1, 1, 24, 40}, 1))}, "output"),
                "SAME");
        b.Op("bias", "BiasAdd", {b.last(), b.Const("b", RandomOf(DType::kFloat, Shape{40}, 2))},
             "output");
        if (residual) b.Op("res", "AddV2", {b.last(), r}, "z");
        b.Op("act", "Relu6", {b.last()}, "activations");
        b.Op("mul", "Mul", {b.last(), b.Const("s", RandomOf(DType::kFloat, Shape{40}, 3))}, "z");
        b.Op("add", "AddV2", {b.last(), b.Const("t", RandomOf(DType::kFloat, Shape{40}, 4))}, "z");
        b.Output(b.last());
        Tensor input = RandomOf(DType::kFloat, in_shape, 5, -2, 2);
        if (nan) input.data<float>()[7] = std::nanf("");
        Shape out_shape = in_shape;
        out_shape.set_dim(3, 40);
        INFO("input ", in_shape.ToString(), ", residual: ", residual, ", NaN in: ", nan);
        const exec::PlanStats st =
            CheckFusedMatchesUnfused(b, {input, RandomOf(DType::kFloat, out_shape, 6)});
        CHECK(st.fused == 1);
        CHECK(st.steps == 1);
      }
    }
  }
}

TEST_CASE("fusion: a Dense(activation=...) and a batch norm after it are one _FusedMatMul") {
  // One row (the vector loop) and five (oneDNN), with and without a residual add before the
  // activation (its addend comes after the scale and shift among the inputs).
  for (const int64_t rows : {1, 5}) {
    for (const bool residual : {false, true}) {
      FnBuilder b;
      const std::string x = b.Input("x");
      const std::string r = b.Input("r");
      b.Op("mm", "MatMul", {x, b.Const("w", RandomOf(DType::kFloat, Shape{3, 4}, 1))}, "product");
      b.Op("bias", "BiasAdd", {b.last(), b.Const("b", RandomOf(DType::kFloat, Shape{4}, 2))},
           "output");
      if (residual) b.Op("res", "AddV2", {b.last(), r}, "z");
      b.Op("relu", "Relu", {b.last()}, "activations");
      b.Op("mul", "Mul", {b.last(), b.Const("s", RandomOf(DType::kFloat, Shape{4}, 3))}, "z");
      b.Op("add", "AddV2", {b.last(), b.Const("t", RandomOf(DType::kFloat, Shape{4}, 4))}, "z");
      b.Output(b.last());
      INFO("rows: ", rows, ", residual: ", residual);
      const exec::PlanStats st = CheckFusedMatchesUnfused(
          b,
          {RandomOf(DType::kFloat, Shape{rows, 3}, 5), RandomOf(DType::kFloat, Shape{rows, 4}, 6)});
      CHECK(st.fused == 1);
      CHECK(st.steps == 1);
    }
  }
}

TEST_CASE("fusion: a scale after the activation known only at run time stays") {
  FnBuilder b;
  const std::string x = b.Input("x");
  const std::string s = b.Input("s");
  Strides(b.Op("conv", "Conv2D", {x, b.Const("w", RandomOf(DType::kFloat, Shape{1, 1, 3, 4}, 1))},
               "output"),
          "SAME");
  b.Op("bias", "BiasAdd", {b.last(), b.Const("b", RandomOf(DType::kFloat, Shape{4}, 2))}, "output");
  b.Op("relu", "Relu", {b.last()}, "activations");
  b.Op("mul", "Mul", {b.last(), s}, "z");
  b.Output(b.last());
  const exec::PlanStats st = CheckFusedMatchesUnfused(
      b, {RandomOf(DType::kFloat, Shape{1, 2, 2, 3}, 4), RandomOf(DType::kFloat, Shape{4}, 5)});
  CHECK(st.fused == 1);  // the bias and Relu
  CHECK(st.steps == 2);  // the fused convolution and the Mul
}

}  // namespace kiln::testing

namespace kiln::testing {

// Keras's hard_swish (MobileNetV3): x * (relu6(x + 3) / 6), or (x * relu6(x + 3)) / 6 as
// keras.activations.hard_swish writes it; the sixth a RealDiv by 6 or a Mul by 1/6.
TEST_CASE("fusion: Keras's hard_swish after a convolution or a product is one fused kernel") {
  for (const bool matmul : {false, true}) {
    for (const bool outer_sixth : {false, true}) {
      for (const bool div : {false, true}) {
        FnBuilder b;
        const std::string x = b.Input("x");
        if (matmul) {
          b.Op("mm", "MatMul", {x, b.Const("w", RandomOf(DType::kFloat, Shape{3, 8}, 1))},
               "product");
        } else {
          Strides(b.Op("conv", "Conv2D",
                       {x, b.Const("w", RandomOf(DType::kFloat, Shape{3, 3, 3, 8}, 1))}, "output"),
                  "SAME");
        }
        b.Op("bias", "BiasAdd", {b.last(), b.Const("b", RandomOf(DType::kFloat, Shape{8}, 2))},
             "output");
        const std::string v = b.last();
        b.Op("add3", "AddV2", {v, b.Const("three", Make<float>({3.f}, Shape{}))}, "z");
        b.Op("relu6", "Relu6", {b.last()}, "activations");
        auto sixth = [&](const std::string& in) {
          if (div) {
            b.Op("sixth", "RealDiv", {in, b.Const("six", Make<float>({6.f}, Shape{}))}, "z");
          } else {
            b.Op("sixth", "Mul", {in, b.Const("inv6", Make<float>({1.f / 6.f}, Shape{}))}, "z");
          }
        };
        if (outer_sixth) {
          b.Op("mul", "Mul", {v, b.last()}, "z");
          sixth(b.last());
        } else {
          sixth(b.last());
          b.Op("mul", "Mul", {v, b.last()}, "z");
        }
        b.Output(b.last());
        INFO("matmul: ", matmul, ", (x * relu6) / 6: ", outer_sixth, ", RealDiv: ", div);
        // Products on both sides of -3 and 3, where the pieces of hard_swish meet.
        const exec::PlanStats st = CheckFusedMatchesUnfused(
            b, {RandomOf(DType::kFloat, matmul ? Shape{5, 3} : Shape{2, 6, 7, 3}, 3, -6, 6)});
        CHECK(st.fused == 1);
        CHECK(st.steps == 1);
      }
    }
  }
}

}  // namespace kiln::testing
