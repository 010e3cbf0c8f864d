// TensorList ops (TF 2's tf.TensorArray): round trips through the kernels, immutability of
// lists, the errors, and a While loop that fills a reserved list and stacks it.
#include <doctest/doctest.h>
#include <google/protobuf/text_format.h>

#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kiln/exec/executor.h"

namespace kiln::testing {
namespace {

Tensor I32(int32_t v) { return Tensor::Scalar(v); }
// An element_shape input: the dims, -1 for unknown ones.
Tensor ShapeOf(const std::vector<int32_t>& dims) {
  return Make<int32_t>(dims, Shape{static_cast<int64_t>(dims.size())});
}
Tensor UnknownShape() { return I32(-1); }

Tensor Reserve(DType dt, const Tensor& shape, int32_t n) {
  auto r = OpRunner("TensorListReserve")
               .Type("element_dtype", dt)
               .Type("shape_type", DType::kInt32)
               .Input(shape)
               .Input(I32(n))
               .Run1();
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return *r;
}

Result<Tensor> SetItem(const Tensor& list, int32_t i, const Tensor& item) {
  return OpRunner("TensorListSetItem")
      .Type("element_dtype", item.dtype())
      .Input(list)
      .Input(I32(i))
      .Input(item)
      .Run1();
}

Result<Tensor> GetItem(const Tensor& list, int32_t i, DType dt,
                       const Tensor& shape = UnknownShape()) {
  return OpRunner("TensorListGetItem")
      .Type("element_dtype", dt)
      .Input(list)
      .Input(I32(i))
      .Input(shape)
      .Run1();
}

Result<Tensor> Stack(const Tensor& list, DType dt, const Tensor& shape = UnknownShape(),
                     int64_t num_elements = -1) {
  return OpRunner("TensorListStack")
      .Type("element_dtype", dt)
      .Int("num_elements", num_elements)
      .Input(list)
      .Input(shape)
      .Run1();
}

int32_t Length(const Tensor& list) {
  auto r = OpRunner("TensorListLength").Input(list).Run1();
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return r->scalar<int32_t>();
}

TEST_CASE("reserve, set, get, length and stack round trip, lists are immutable") {
  Tensor empty = Reserve(DType::kFloat, ShapeOf({2}), 3);
  CHECK(empty.dtype() == DType::kVariant);
  CHECK(empty.rank() == 0);
  CHECK(Length(empty) == 3);

  auto l1 = SetItem(empty, 1, Make<float>({1, 2}, Shape{2}));
  REQUIRE_MESSAGE(l1.ok(), l1.status().ToString());
  auto l2 = SetItem(*l1, 2, Make<float>({3, 4}, Shape{2}));
  REQUIRE_MESSAGE(l2.ok(), l2.status().ToString());

  auto item = GetItem(*l2, 2, DType::kFloat);
  REQUIRE_MESSAGE(item.ok(), item.status().ToString());
  CheckClose<float>(*item, Make<float>({3, 4}, Shape{2}));
  // Never set: zeros of the (fully known) element shape.
  item = GetItem(*l2, 0, DType::kFloat);
  REQUIRE_MESSAGE(item.ok(), item.status().ToString());
  CheckClose<float>(*item, Make<float>({0, 0}, Shape{2}));
  // l1 was not changed by the second SetItem.
  item = GetItem(*l1, 2, DType::kFloat);
  REQUIRE(item.ok());
  CheckClose<float>(*item, Make<float>({0, 0}, Shape{2}));

  auto stacked = Stack(*l2, DType::kFloat, ShapeOf({2}), 3);
  REQUIRE_MESSAGE(stacked.ok(), stacked.status().ToString());
  CheckClose<float>(*stacked, Make<float>({0, 0, 1, 2, 3, 4}, Shape{3, 2}));
}

TEST_CASE("SetItem shares the item's buffer instead of copying it") {
  Tensor list = Reserve(DType::kFloat, UnknownShape(), 1);
  Tensor big = Make<float>({1, 2, 3, 4}, Shape{4});
  auto l1 = SetItem(list, 0, big);
  REQUIRE(l1.ok());
  auto back = GetItem(*l1, 0, DType::kFloat);
  REQUIRE(back.ok());
  CHECK(back->SharesBufferWith(big));
}

TEST_CASE("FromTensor splits along the first dim, Stack puts it back") {
  Tensor t = Make<int32_t>({1, 2, 3, 4, 5, 6}, Shape{3, 2});
  auto list = OpRunner("TensorListFromTensor")
                  .Type("element_dtype", DType::kInt32)
                  .Type("shape_type", DType::kInt32)
                  .Input(t)
                  .Input(ShapeOf({-1}))
                  .Run1();
  REQUIRE_MESSAGE(list.ok(), list.status().ToString());
  CHECK(Length(*list) == 3);
  auto row = GetItem(*list, 1, DType::kInt32, ShapeOf({2}));
  REQUIRE(row.ok());
  CheckClose<int32_t>(*row, Make<int32_t>({3, 4}, Shape{2}));
  auto back = Stack(*list, DType::kInt32);
  REQUIRE_MESSAGE(back.ok(), back.status().ToString());
  CHECK(TensorsEqual(*back, t));

  // The list keeps the element_shape it was given: (None,).
  auto shape =
      OpRunner("TensorListElementShape").Type("shape_type", DType::kInt64).Input(*list).Run1();
  REQUIRE_MESSAGE(shape.ok(), shape.status().ToString());
  CHECK(TensorsEqual(*shape, Make<int64_t>({-1}, Shape{1})));
}

TEST_CASE("strings stack too") {
  Tensor t = Make<std::string>({"a", "bb", "ccc"}, Shape{3});
  auto list = OpRunner("TensorListFromTensor")
                  .Type("element_dtype", DType::kString)
                  .Input(t)
                  .Input(UnknownShape())
                  .Run1();
  REQUIRE_MESSAGE(list.ok(), list.status().ToString());
  auto item = GetItem(*list, 2, DType::kString);
  REQUIRE(item.ok());
  CHECK(item->scalar<std::string>() == "ccc");
  auto back = Stack(*list, DType::kString);
  REQUIRE_MESSAGE(back.ok(), back.status().ToString());
  CHECK(TensorsEqual(*back, t));
}

TEST_CASE("PushBack and PopBack, EmptyTensorList honours max_num_elements") {
  auto empty = OpRunner("EmptyTensorList")
                   .Type("element_dtype", DType::kFloat)
                   .Type("shape_type", DType::kInt32)
                   .Input(UnknownShape())
                   .Input(I32(2))
                   .Run1();
  REQUIRE_MESSAGE(empty.ok(), empty.status().ToString());
  CHECK(Length(*empty) == 0);
  auto push = [](const Tensor& list, float v) {
    return OpRunner("TensorListPushBack")
        .Type("element_dtype", DType::kFloat)
        .Input(list)
        .Input(Tensor::Scalar(v))
        .Run1();
  };
  auto l1 = push(*empty, 1.5f);
  REQUIRE(l1.ok());
  auto l2 = push(*l1, 2.5f);
  REQUIRE(l2.ok());
  CHECK(Length(*l2) == 2);
  CheckError(push(*l2, 3.5f).status(), {"full list", "maximum of 2"});

  auto popped = OpRunner("TensorListPopBack")
                    .Type("element_dtype", DType::kFloat)
                    .Input(*l2)
                    .Input(UnknownShape())
                    .Run();
  REQUIRE_MESSAGE(popped.ok(), popped.status().ToString());
  CHECK(Length((*popped)[0]) == 1);
  CHECK((*popped)[1].scalar<float>() == 2.5f);
  CHECK(Length(*l2) == 2);  // the input list is unchanged

  auto stacked = Stack(*l2, DType::kFloat);
  REQUIRE(stacked.ok());
  CheckClose<float>(*stacked, Make<float>({1.5f, 2.5f}, Shape{2}));

  CheckError(OpRunner("TensorListPopBack")
                 .Type("element_dtype", DType::kFloat)
                 .Input(*empty)
                 .Input(UnknownShape())
                 .Run()
                 .status(),
             {"empty list"});
}

TEST_CASE("errors name the index and size, and the dtypes") {
  Tensor list = Reserve(DType::kFloat, UnknownShape(), 3);
  CheckError(GetItem(list, 3, DType::kFloat).status(), {"index 3", "size 3"});
  CheckError(GetItem(list, -1, DType::kFloat).status(), {"index -1", "size 3"});
  CheckError(SetItem(list, 7, Tensor::Scalar(1.0f)).status(), {"index 7", "size 3"});
  CheckError(SetItem(list, 0, Tensor::Scalar(int32_t{1})).status(), {"float32", "int32"});
  CheckError(GetItem(list, 0, DType::kInt32).status(), {"float32", "int32"});
  // Unset element of unknown shape: nothing to make zeros of.
  CheckError(GetItem(list, 0, DType::kFloat).status(), {"element 0", "never set"});
  CheckError(Stack(list, DType::kFloat).status(), {"not fully defined"});
  CheckError(Stack(list, DType::kFloat, ShapeOf({2}), 5).status(),
             {"num_elements is 5", "3 elements"});

  Tensor shaped = Reserve(DType::kFloat, ShapeOf({2}), 1);
  CheckError(SetItem(shaped, 0, Make<float>({1, 2, 3}, Shape{3})).status(), {"(3,)", "(2,)"});

  auto l = SetItem(list, 0, Make<float>({1, 2}, Shape{2}));
  REQUIRE(l.ok());
  auto l2 = SetItem(*l, 1, Make<float>({1, 2, 3}, Shape{3}));
  REQUIRE(l2.ok());
  CheckError(Stack(*l2, DType::kFloat).status(), {"element 1", "(3,)"});

  // SetItem past the end grows the list when asked to.
  auto grown = OpRunner("TensorListSetItem")
                   .Type("element_dtype", DType::kFloat)
                   .Bool("resize_if_index_out_of_bounds", true)
                   .Input(list)
                   .Input(I32(5))
                   .Input(Tensor::Scalar(1.0f))
                   .Run1();
  REQUIRE_MESSAGE(grown.ok(), grown.status().ToString());
  CHECK(Length(*grown) == 6);
}

TEST_CASE("AddN of lists refuses other lengths, dtypes and element shapes") {
  auto add = [](const Tensor& a, const Tensor& b) {
    return OpRunner("AddN").T(DType::kVariant).Int("N", 2).Input(a).Input(b).Run1().status();
  };
  const Tensor three = Reserve(DType::kFloat, ShapeOf({2}), 3);
  CheckError(add(three, Reserve(DType::kFloat, ShapeOf({2}), 1)), {"lengths 3 and 1"});
  CheckError(add(three, Reserve(DType::kInt32, ShapeOf({2}), 3)), {"float32", "int32"});
  CheckError(add(three, Reserve(DType::kFloat, ShapeOf({4}), 3)), {"(2,)", "(4,)"});
  const Tensor any = Reserve(DType::kFloat, UnknownShape(), 3);
  auto a = SetItem(any, 0, Make<float>({1, 2}, Shape{2}));
  auto b = SetItem(any, 0, Make<float>({1, 2, 3}, Shape{3}));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CheckError(add(*a, *b), {"shapes (2,) and (3,)"});
}

TEST_CASE("a non-list variant and a wrong element_shape encoding are refused") {
  CheckError(OpRunner("TensorListLength").Input(Tensor(DType::kVariant, Shape())).Run1().status(),
             {"input_handle", "empty"});
  CheckError(OpRunner("TensorListReserve")
                 .Type("element_dtype", DType::kFloat)
                 .Input(I32(3))
                 .Input(I32(1))
                 .Run1()
                 .status(),
             {"element_shape", "-1"});
}

TEST_CASE("Prepare infers GetItem and Stack shapes from a constant element_shape") {
  OpRunner stack("TensorListStack");
  stack.Type("element_dtype", DType::kFloat)
      .Int("num_elements", 4)
      .InputSpec(TensorSpec{DType::kVariant, PartialShape::Scalar()})
      .ConstantInput(ShapeOf({-1, 3}));
  REQUIRE(stack.Prepare().ok());
  CHECK(stack.output_specs()[0] == TensorSpec{DType::kFloat, PartialShape{4, -1, 3}});

  OpRunner get("TensorListGetItem");
  get.Type("element_dtype", DType::kInt32)
      .InputSpec(TensorSpec{DType::kVariant, PartialShape::Scalar()})
      .InputSpec(TensorSpec{DType::kInt32, PartialShape::Scalar()})
      .ConstantInput(ShapeOf({2}));
  REQUIRE(get.Prepare().ok());
  CHECK(get.output_specs()[0] == TensorSpec{DType::kInt32, PartialShape{2}});
}

// squares(n): reserve n int32 slots, while i != n: list[i] = i * i; i += 1; then stack.
const char* kSquaresLib = R"pb(
  function {
    signature {
      name: "sq_cond"
      input_arg { name: "i" type: DT_INT32 }
      input_arg { name: "n" type: DT_INT32 }
      input_arg { name: "list" type: DT_VARIANT }
      output_arg { name: "go" type: DT_BOOL }
    }
    node_def {
      name: "left"
      op: "Sub"
      input: "n"
      input: "i"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
    }
    node_def {
      name: "go"
      op: "Cast"
      input: "left:z:0"
      attr {
        key: "SrcT"
        value { type: DT_INT32 }
      }
      attr {
        key: "DstT"
        value { type: DT_BOOL }
      }
    }
    ret { key: "go" value: "go:y:0" }
  }
  function {
    signature {
      name: "sq_body"
      input_arg { name: "i" type: DT_INT32 }
      input_arg { name: "n" type: DT_INT32 }
      input_arg { name: "list" type: DT_VARIANT }
      output_arg { name: "i_out" type: DT_INT32 }
      output_arg { name: "n_out" type: DT_INT32 }
      output_arg { name: "list_out" type: DT_VARIANT }
    }
    node_def {
      name: "one"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_INT32
            tensor_shape {}
            int_val: 1
          }
        }
      }
    }
    node_def {
      name: "sq"
      op: "Mul"
      input: "i"
      input: "i"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
    }
    node_def {
      name: "set"
      op: "TensorListSetItem"
      input: "list"
      input: "i"
      input: "sq:z:0"
      attr {
        key: "element_dtype"
        value { type: DT_INT32 }
      }
    }
    node_def {
      name: "next"
      op: "AddV2"
      input: "i"
      input: "one:output:0"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
    }
    ret { key: "i_out" value: "next:z:0" }
    ret { key: "n_out" value: "n" }
    ret { key: "list_out" value: "set:output_handle:0" }
  }
  function {
    signature {
      name: "squares"
      input_arg { name: "n" type: DT_INT32 }
      output_arg { name: "out" type: DT_INT32 }
    }
    node_def {
      name: "zero"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_INT32
            tensor_shape {}
            int_val: 0
          }
        }
      }
    }
    node_def {
      name: "unknown"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_INT32
            tensor_shape {}
            int_val: -1
          }
        }
      }
    }
    node_def {
      name: "scalar_shape"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_INT32
            tensor_shape { dim { size: 0 } }
          }
        }
      }
    }
    node_def {
      name: "reserve"
      op: "TensorListReserve"
      input: "unknown:output:0"
      input: "n"
      attr {
        key: "element_dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "shape_type"
        value { type: DT_INT32 }
      }
    }
    node_def {
      name: "loop"
      op: "StatelessWhile"
      input: "zero:output:0"
      input: "n"
      input: "reserve:handle:0"
      attr {
        key: "T"
        value { list { type: DT_INT32 type: DT_INT32 type: DT_VARIANT } }
      }
      attr {
        key: "cond"
        value { func { name: "sq_cond" } }
      }
      attr {
        key: "body"
        value { func { name: "sq_body" } }
      }
    }
    node_def {
      name: "stack"
      op: "TensorListStack"
      input: "loop:output:2"
      input: "scalar_shape:output:0"
      attr {
        key: "element_dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "num_elements"
        value { i: -1 }
      }
    }
    ret { key: "out" value: "stack:tensor:0" }
  }
)pb";

TEST_CASE("a While loop writes i*i into a reserved list and stacks it") {
  tensorflow::FunctionDefLibrary proto;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(kSquaresLib, &proto));
  exec::FunctionLibrary lib(proto);
  auto pf = exec::PreparedFunction::Prepare(
      *lib.Find("squares"), lib, std::vector{TensorSpec{DType::kInt32, PartialShape::Scalar()}});
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  CHECK((*pf)->output_specs()[0] == TensorSpec{DType::kInt32, PartialShape{-1}});
  std::vector<Tensor> out;
  REQUIRE((*pf)->Run(std::vector{I32(5)}, &out).ok());
  CHECK(TensorsEqual(out[0], Make<int32_t>({0, 1, 4, 9, 16}, Shape{5})));
  Status s = (*pf)->Run(std::vector{I32(0)}, &out);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(out[0].shape() == Shape{0});
}

}  // namespace
}  // namespace kiln::testing
