// TF1 tensor arrays through their ops (writes seen by later reads, clear-after-read, growth,
// zeros for unwritten elements) and the error paths of the tensor array and TensorList bulk
// ops, with TensorFlow's messages.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "exec/kernel_test_util.h"
#include "kernels/tensor_list.h"
#include "kiln/exec/executor.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

struct Array {
  Tensor handle, flow;
};

Array NewArray(int32_t size, const PartialShape& elem, bool clear = true, bool dynamic = false,
               bool identical = false) {
  auto outs = OpRunner("TensorArrayV3")
                  .Type("dtype", DType::kFloat)
                  .ShapeAttr("element_shape", elem)
                  .Bool("clear_after_read", clear)
                  .Bool("dynamic_size", dynamic)
                  .Bool("identical_element_shapes", identical)
                  .String("tensor_array_name", "ta")
                  .Input(Tensor::Scalar<int32_t>(size))
                  .Run();
  REQUIRE_MESSAGE(outs.ok(), outs.status().ToString());
  return {(*outs)[0], (*outs)[1]};
}

Status Write(const Array& a, int32_t index, const Tensor& value) {
  return OpRunner("TensorArrayWriteV3")
      .T(value.dtype())
      .Input(a.handle)
      .Input(Tensor::Scalar<int32_t>(index))
      .Input(value)
      .Input(a.flow)
      .Run()
      .status();
}

Result<Tensor> Read(const Array& a, int32_t index, DType dtype = DType::kFloat) {
  return OpRunner("TensorArrayReadV3")
      .Type("dtype", dtype)
      .Input(a.handle)
      .Input(Tensor::Scalar<int32_t>(index))
      .Input(a.flow)
      .Run1();
}

int32_t Size(const Array& a) {
  auto s = OpRunner("TensorArraySizeV3").Input(a.handle).Input(a.flow).Run1();
  REQUIRE(s.ok());
  return s->scalar<int32_t>();
}

Tensor F(const std::vector<float>& v) {
  return Make<float>(v, Shape{static_cast<int64_t>(v.size())});
}

TEST_CASE("tensor arrays: writes are read back, each array is its own") {
  const Array a = NewArray(3, PartialShape::UnknownRank(), /*clear=*/false);
  const Array b = NewArray(3, PartialShape::UnknownRank(), /*clear=*/false);
  REQUIRE(Write(a, 0, F({1, 2})).ok());
  REQUIRE(Write(a, 2, F({3})).ok());  // shapes may differ without identical_element_shapes
  REQUIRE(Write(b, 0, F({9})).ok());
  auto r0 = Read(a, 0);
  REQUIRE(r0.ok());
  CHECK(TensorsEqual(*r0, F({1, 2})));
  auto again = Read(a, 0);  // clear_after_read = false: readable again
  REQUIRE(again.ok());
  CHECK(TensorsEqual(*again, F({1, 2})));
  auto rb = Read(b, 0);
  REQUIRE(rb.ok());
  CHECK(TensorsEqual(*rb, F({9})));
  CHECK(Size(a) == 3);
  // Gathering elements of different shapes fails, naming both.
  CheckError(OpRunner("TensorArrayGatherV3")
                 .Type("dtype", DType::kFloat)
                 .Input(a.handle)
                 .Input(Make<int32_t>({0, 2}, Shape{2}))
                 .Input(a.flow)
                 .Run()
                 .status(),
             {"inconsistent shapes", "(2,)", "(1,)"});
  // Reading an unwritten element of unknown shape fails.
  CheckError(Read(a, 1).status(), {"index 1", "never written", "not fully defined"});
}

TEST_CASE("tensor arrays: clear_after_read, zeros, growth and dtype checks") {
  const Array a = NewArray(2, PartialShape{2});
  REQUIRE(Write(a, 0, F({1, 2})).ok());
  REQUIRE(Read(a, 0).ok());
  CheckError(Read(a, 0).status(), {"could not read index 0 twice", "clear_after_read"});
  auto zeros = Read(a, 1);  // never written, fully known element shape
  REQUIRE(zeros.ok());
  CHECK(TensorsEqual(*zeros, F({0, 0})));
  CheckError(Write(a, 0, F({5, 6})), {"index 0", "already been written"});
  CheckError(Write(a, 1, F({5, 6, 7})), {"value shape is (3,)", "element shape: (2,)"});
  CheckError(Write(a, 5, F({5, 6})), {"index 5", "not resizeable and size is: 2"});
  CheckError(Read(a, 1, DType::kInt32).status(),
             {"TensorArray dtype is float32 but op uses dtype int32"});

  const Array d = NewArray(1, PartialShape::UnknownRank(), true, /*dynamic=*/true,
                           /*identical=*/true);
  REQUIRE(Write(d, 4, F({1})).ok());
  CHECK(Size(d) == 5);
  CheckError(Write(d, 2, F({1, 2})), {"value shape is (2,)", "element shape: (1,)"});

  auto scatter = OpRunner("TensorArrayScatterV3")
                     .T(DType::kFloat)
                     .Input(d.handle)
                     .Input(Make<int32_t>({0, 1}, Shape{2}))
                     .Input(Make<float>({1, 2, 3}, Shape{3, 1}))
                     .Input(d.flow)
                     .Run();
  CheckError(scatter.status(), {"one row per index", "(3, 1)"});
  CheckError(OpRunner("TensorArrayV3")
                 .Type("dtype", DType::kFloat)
                 .Input(Tensor::Scalar<int32_t>(-1))
                 .Run()
                 .status(),
             {"size should be >= 0"});
  CheckError(OpRunner("TensorArrayReadV3")
                 .Type("dtype", DType::kFloat)
                 .Input(Tensor::Scalar<float>(0))
                 .Input(Tensor::Scalar<int32_t>(0))
                 .Input(Tensor::Scalar<float>(0))
                 .Prepare(),
             {"input 'handle'", "resource"});
}

TEST_CASE("tensor arrays: the ops in one graph, ordered by their flow") {
  // TensorArrayV3 -> Write(1, x) -> Write(0, y) -> Gather([0, 1]) in a TF1-style function.
  tensorflow::FunctionDef f;
  auto* sig = f.mutable_signature();
  sig->set_name("ta_graph");
  auto* x = sig->add_input_arg();
  x->set_name("x");
  x->set_type(tensorflow::DT_FLOAT);
  auto* y = sig->add_input_arg();
  y->set_name("y");
  y->set_type(tensorflow::DT_FLOAT);
  auto* out = sig->add_output_arg();
  out->set_name("out");
  out->set_type(tensorflow::DT_FLOAT);
  auto node = [&](const std::string& name, const std::string& op, std::vector<std::string> inputs) {
    auto* n = f.add_node_def();
    n->set_name(name);
    n->set_op(op);
    for (const std::string& i : inputs) n->add_input(i);
    return n;
  };
  auto* size = node("size", "Const", {});
  (*size->mutable_attr())["dtype"].set_type(tensorflow::DT_INT32);
  REQUIRE(
      TensorToProto(Tensor::Scalar<int32_t>(2), (*size->mutable_attr())["value"].mutable_tensor())
          .ok());
  auto* idx0 = node("i0", "Const", {});
  (*idx0->mutable_attr())["dtype"].set_type(tensorflow::DT_INT32);
  REQUIRE(
      TensorToProto(Tensor::Scalar<int32_t>(0), (*idx0->mutable_attr())["value"].mutable_tensor())
          .ok());
  auto* idx1 = node("i1", "Const", {});
  (*idx1->mutable_attr())["dtype"].set_type(tensorflow::DT_INT32);
  REQUIRE(
      TensorToProto(Tensor::Scalar<int32_t>(1), (*idx1->mutable_attr())["value"].mutable_tensor())
          .ok());
  auto* ind = node("ind", "Const", {});
  (*ind->mutable_attr())["dtype"].set_type(tensorflow::DT_INT32);
  REQUIRE(TensorToProto(Make<int32_t>({0, 1}, Shape{2}),
                        (*ind->mutable_attr())["value"].mutable_tensor())
              .ok());
  auto* ta = node("ta", "TensorArrayV3", {"size:output:0"});
  (*ta->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
  auto* w1 = node("w1", "TensorArrayWriteV3", {"ta:handle:0", "i1:output:0", "x", "ta:flow:0"});
  (*w1->mutable_attr())["T"].set_type(tensorflow::DT_FLOAT);
  auto* w0 = node("w0", "TensorArrayWriteV3", {"ta:handle:0", "i0:output:0", "y", "w1:flow_out:0"});
  (*w0->mutable_attr())["T"].set_type(tensorflow::DT_FLOAT);
  auto* g = node("g", "TensorArrayGatherV3", {"ta:handle:0", "ind:output:0", "w0:flow_out:0"});
  (*g->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
  (*f.mutable_ret())["out"] = "g:value:0";

  FunctionLibrary lib;
  const std::vector<TensorSpec> specs = {TensorSpec{DType::kFloat, PartialShape{2}},
                                         TensorSpec{DType::kFloat, PartialShape{2}}};
  auto fn = PreparedFunction::Prepare(f, lib, specs);
  REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
  for (int run = 0; run < 2; ++run) {  // a new array every run: the writes never collide
    const std::vector<Tensor> args = {F({1, 2}), F({3, 4})};
    std::vector<Tensor> outs;
    REQUIRE((*fn)->Run(args, &outs).ok());
    CHECK(TensorsEqual(outs[0], Make<float>({3, 4, 1, 2}, Shape{2, 2})));
  }
}

TEST_CASE("tensor arrays: split pieces are read back, gradient arrays add repeated writes") {
  Array a = NewArray(2, PartialShape::UnknownRank());
  REQUIRE(OpRunner("TensorArraySplitV3")
              .T(DType::kFloat)
              .Input(a.handle)
              .Input(Make<float>({1, 2, 3, 4, 5, 6}, {3, 2}))
              .Input(Make<int64_t>({1, 2}, {2}))
              .Input(a.flow)
              .Run()
              .ok());
  auto second = Read(a, 1);
  REQUIRE(second.ok());
  CHECK(TensorsEqual(*second, Make<float>({3, 4, 5, 6}, {2, 2})));
  CheckError(OpRunner("TensorArraySplitV3")
                 .T(DType::kFloat)
                 .Input(a.handle)
                 .Input(Make<float>({1, 2}, {2}))
                 .Input(Make<int64_t>({1}, {1}))
                 .Input(a.flow)
                 .Run()
                 .status(),
             {"sum of lengths is 1"});

  Array b = NewArray(3, PartialShape{2});
  auto grad = [&](const std::string& source) {
    auto outs =
        OpRunner("TensorArrayGradV3").String("source", source).Input(b.handle).Input(b.flow).Run();
    REQUIRE(outs.ok());
    return Array{(*outs)[0], (*outs)[1]};
  };
  Array g = grad("gradients");
  CHECK(Size(g) == 3);
  REQUIRE(Write(g, 1, Make<float>({1, 2}, {2})).ok());
  // The same source gives the same array: this write adds to the first.
  REQUIRE(Write(grad("gradients"), 1, Make<float>({10, 20}, {2})).ok());
  auto sum = Read(g, 1);
  REQUIRE(sum.ok());
  CHECK(TensorsEqual(*sum, Make<float>({11, 22}, {2})));
  // Another source, another array.
  CHECK(Read(grad("other"), 1).ok());  // never written: zeros of [2]
  CheckError(Write(g, 0, Make<float>({1, 2, 3}, {3})), {"incompatible"});
}

TEST_CASE("tensor list bulk ops: errors") {
  using exec::TensorList;
  auto list = [](std::vector<Tensor> items, PartialShape shape = PartialShape{-1}) {
    return TensorList::Wrap(
        std::make_shared<const TensorList>(DType::kFloat, shape, std::move(items)));
  };
  const Tensor l = list({F({1, 2}), Tensor(), F({3})});
  CheckError(OpRunner("TensorListGather")
                 .Type("element_dtype", DType::kFloat)
                 .Input(l)
                 .Input(Make<int32_t>({0, 7}, Shape{2}))
                 .Input(Make<int32_t>({-1}, Shape{1}))
                 .Run()
                 .status(),
             {"gather element 7 in a list with 3 elements"});
  CheckError(OpRunner("TensorListGather")
                 .Type("element_dtype", DType::kFloat)
                 .Input(l)
                 .Input(Make<int32_t>({0, 2}, Shape{2}))
                 .Input(Make<int32_t>({-1}, Shape{1}))
                 .Run()
                 .status(),
             {"element 2 has shape (1,)"});
  CheckError(OpRunner("TensorListGather")
                 .Type("element_dtype", DType::kFloat)
                 .Input(list({}))
                 .Input(Make<int32_t>({}, Shape{0}))
                 .Input(Make<int32_t>({-1}, Shape{1}))
                 .Run()
                 .status(),
             {"gather 0 elements", "non-fully-defined"});
  CheckError(OpRunner("TensorListGather")
                 .Type("element_dtype", DType::kInt32)
                 .Input(l)
                 .Input(Make<int32_t>({0}, Shape{1}))
                 .Input(Make<int32_t>({-1}, Shape{1}))
                 .Run()
                 .status(),
             {"holds float32 elements", "element_dtype is int32"});
  CheckError(OpRunner("TensorListConcatV2")
                 .Type("element_dtype", DType::kFloat)
                 .Type("shape_type", DType::kInt32)
                 .Input(list({F({1}), Tensor()}, PartialShape{-1, 2}))
                 .Input(Make<int32_t>({-1, 2}, Shape{2}))
                 .Input(Make<int64_t>({}, Shape{0}))
                 .Run()
                 .status(),
             {"(1,)", "differs from the other elements"});
  CheckError(OpRunner("TensorListConcatV2")
                 .Type("element_dtype", DType::kFloat)
                 .Type("shape_type", DType::kInt32)
                 .Input(list({Tensor()}, PartialShape{-1, 2}))
                 .Input(Make<int32_t>({-1, 2}, Shape{2}))
                 .Input(Make<int64_t>({}, Shape{0}))
                 .Run()
                 .status(),
             {"unset tensor at index 0 but leading_dims has only 0 elements"});
  CheckError(OpRunner("TensorListScatterIntoExistingList")
                 .Type("element_dtype", DType::kFloat)
                 .Input(l)
                 .Input(Make<float>({1, 2}, Shape{2, 1}))
                 .Input(Make<int32_t>({0, -1}, Shape{2}))
                 .Run()
                 .status(),
             {"indices[1] = -1 is negative"});
  CheckError(OpRunner("TensorListScatterIntoExistingList")
                 .Type("element_dtype", DType::kFloat)
                 .Input(l)
                 .Input(Make<float>({1, 2}, Shape{2, 1}))
                 .Input(Make<int32_t>({0, 1 << 30}, Shape{2}))
                 .Run()
                 .status(),
             {"would grow the list past"});
  CheckError(
      OpRunner("TensorListResize").Input(l).Input(Tensor::Scalar<int32_t>(-1)).Run().status(),
      {"non-negative, got -1"});
}

}  // namespace
}  // namespace kiln::exec
