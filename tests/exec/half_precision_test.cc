// Half precision through the executor: nodes whose kernels have no float16/bfloat16 form run in
// float32 between casts (executor/half_precision.h), and half-precision regions compute in
// float32 on the host (graph/half_in_float.h), with TensorFlow's dtypes at every boundary.
#include "executor/half_precision.h"

#include <doctest/doctest.h>
#include <google/protobuf/text_format.h>

#include <Eigen/Core>
#include <cmath>

#include "core/native_attrs.h"
#include "device/test_device.h"
#include "kiln/exec/executor.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec {
namespace {

// y = Relu(BiasAdd(MatMul(x, w), b)) in float16: MatMul, BiasAdd and Relu have float16
// kernels; Softmax of the biased product has none (widened). The row's ArgMax (int64 out: never
// narrowed) and the biased product cast to float32.
const char* kHalfLib = R"pb(
  function {
    signature {
      name: "half_dense"
      input_arg { name: "x" type: DT_HALF }
      input_arg { name: "w" type: DT_HALF }
      input_arg { name: "b" type: DT_HALF }
      output_arg { name: "y" type: DT_HALF }
      output_arg { name: "arg" type: DT_INT64 }
      output_arg { name: "f" type: DT_FLOAT }
      output_arg { name: "s" type: DT_HALF }
    }
    node_def {
      name: "softmax"
      op: "Softmax"
      input: "bias:output:0"
      attr {
        key: "T"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "mm"
      op: "MatMul"
      input: "x"
      input: "w"
      attr {
        key: "T"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "bias"
      op: "BiasAdd"
      input: "mm:product:0"
      input: "b"
      attr {
        key: "T"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "relu"
      op: "Relu"
      input: "bias:output:0"
      attr {
        key: "T"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "axis"
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
      name: "am"
      op: "ArgMax"
      input: "mm:product:0"
      input: "axis:output:0"
      attr {
        key: "T"
        value { type: DT_HALF }
      }
      attr {
        key: "Tidx"
        value { type: DT_INT32 }
      }
      attr {
        key: "output_type"
        value { type: DT_INT64 }
      }
    }
    node_def {
      name: "cast"
      op: "Cast"
      input: "bias:output:0"
      attr {
        key: "SrcT"
        value { type: DT_HALF }
      }
      attr {
        key: "DstT"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "y" value: "relu:activations:0" }
    ret { key: "arg" value: "am:output:0" }
    ret { key: "f" value: "cast:y:0" }
    ret { key: "s" value: "softmax:softmax:0" }
  }
)pb";

// Keras's mixed-precision Dense as it exports: a float32 input and kernel, each cast to
// float16 (AutoCast), their MatMul, Relu, the product's Shape (Tensordot takes one), and the
// result cast back to float32 for the caller.
const char* kAutoCastLib = R"pb(
  function {
    signature {
      name: "autocast_dense"
      input_arg { name: "x" type: DT_FLOAT }
      input_arg { name: "w" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
      output_arg { name: "shape" type: DT_INT32 }
    }
    node_def {
      name: "x16"
      op: "Cast"
      input: "x"
      attr {
        key: "SrcT"
        value { type: DT_FLOAT }
      }
      attr {
        key: "DstT"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "w16"
      op: "Cast"
      input: "w"
      attr {
        key: "SrcT"
        value { type: DT_FLOAT }
      }
      attr {
        key: "DstT"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "shape_of_x"
      op: "Shape"
      input: "x16:y:0"
      attr {
        key: "T"
        value { type: DT_HALF }
      }
      attr {
        key: "out_type"
        value { type: DT_INT32 }
      }
    }
    node_def {
      name: "mm"
      op: "MatMul"
      input: "x16:y:0"
      input: "w16:y:0"
      attr {
        key: "T"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "relu"
      op: "Relu"
      input: "mm:product:0"
      attr {
        key: "T"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "out"
      op: "Cast"
      input: "relu:activations:0"
      attr {
        key: "SrcT"
        value { type: DT_HALF }
      }
      attr {
        key: "DstT"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "y" value: "out:y:0" }
    ret { key: "shape" value: "shape_of_x:output:0" }
  }
)pb";

// A weight stored in float16 (`savedmodel-cli quantize --mode float16`) read through a Cast into
// a float32 convolution whose output is scaled per channel (a folded batch norm).
const char* kHalfWeightLib = R"pb(
  function {
    signature {
      name: "half_weight_conv"
      input_arg { name: "x" type: DT_FLOAT }
      input_arg { name: "w" type: DT_HALF }
      input_arg { name: "scale" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
    }
    node_def {
      name: "w32"
      op: "Cast"
      input: "w"
      attr {
        key: "SrcT"
        value { type: DT_HALF }
      }
      attr {
        key: "DstT"
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: "conv"
      op: "Conv2D"
      input: "x"
      input: "w32:y:0"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
      attr {
        key: "strides"
        value { list { i: 1 i: 1 i: 1 i: 1 } }
      }
      attr {
        key: "padding"
        value { s: "VALID" }
      }
    }
    node_def {
      name: "scaled"
      op: "Mul"
      input: "conv:output:0"
      input: "scale"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "y" value: "scaled:z:0" }
  }
)pb";

// Keras's mixed-precision convolution without a bias: AutoCasts in, the batch norm's Cast to
// float32 out.
const char* kLoneConvLib = R"pb(
  function {
    signature {
      name: "lone_half_conv"
      input_arg { name: "x" type: DT_FLOAT }
      input_arg { name: "w" type: DT_FLOAT }
      input_arg { name: "scale" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
    }
    node_def {
      name: "x16"
      op: "Cast"
      input: "x"
      attr {
        key: "SrcT"
        value { type: DT_FLOAT }
      }
      attr {
        key: "DstT"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "w16"
      op: "Cast"
      input: "w"
      attr {
        key: "SrcT"
        value { type: DT_FLOAT }
      }
      attr {
        key: "DstT"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "conv"
      op: "Conv2D"
      input: "x16:y:0"
      input: "w16:y:0"
      attr {
        key: "T"
        value { type: DT_HALF }
      }
      attr {
        key: "strides"
        value { list { i: 1 i: 1 i: 1 i: 1 } }
      }
      attr {
        key: "padding"
        value { s: "VALID" }
      }
    }
    node_def {
      name: "conv32"
      op: "Cast"
      input: "conv:output:0"
      attr {
        key: "SrcT"
        value { type: DT_HALF }
      }
      attr {
        key: "DstT"
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: "scaled"
      op: "Mul"
      input: "conv32:y:0"
      input: "scale"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "y" value: "scaled:z:0" }
  }
)pb";

// Keras's mixed-precision Dense and batch norm as a device runs them: a float16 product, a Cast
// to float32, the folded batch norm's scale and shift, a Cast back, a float16 Relu.
const char* kHalfBatchNormLib = R"pb(
  function {
    signature {
      name: "half_dense_bn"
      input_arg { name: "x" type: DT_HALF }
      input_arg { name: "w" type: DT_HALF }
      input_arg { name: "scale" type: DT_FLOAT }
      input_arg { name: "shift" type: DT_FLOAT }
      output_arg { name: "y" type: DT_HALF }
    }
    node_def {
      name: "mm"
      op: "MatMul"
      input: "x"
      input: "w"
      attr {
        key: "T"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "mm32"
      op: "Cast"
      input: "mm:product:0"
      attr {
        key: "SrcT"
        value { type: DT_HALF }
      }
      attr {
        key: "DstT"
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: "scaled"
      op: "Mul"
      input: "mm32:y:0"
      input: "scale"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: "shifted"
      op: "AddV2"
      input: "scaled:z:0"
      input: "shift"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: "back"
      op: "Cast"
      input: "shifted:z:0"
      attr {
        key: "SrcT"
        value { type: DT_FLOAT }
      }
      attr {
        key: "DstT"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "relu"
      op: "Relu"
      input: "back:y:0"
      attr {
        key: "T"
        value { type: DT_HALF }
      }
    }
    ret { key: "y" value: "relu:activations:0" }
  }
)pb";

Tensor HalfOf(const std::vector<float>& v, const Shape& shape) {
  Tensor t(DType::kHalf, shape);
  for (size_t i = 0; i < v.size(); ++i)
    t.data<Half>()[i].bits = Eigen::numext::bit_cast<uint16_t>(Eigen::half(v[i]));
  return t;
}
float FloatOf(Half h) { return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(h.bits)); }

TEST_CASE("half precision: a Softmax without a float16 kernel runs in float32 between casts") {
  tensorflow::FunctionDefLibrary proto;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(kHalfLib, &proto));
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {{DType::kHalf, PartialShape({2, 3})},
                                         {DType::kHalf, PartialShape({3, 2})},
                                         {DType::kHalf, PartialShape({2})}};
  PrepareOptions options;
  options.half_in_float = false;  // each node by itself, as TF's kernels compute
  auto pf = PreparedFunction::Prepare(*lib.Find("half_dense"), lib, specs, options);
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  CHECK((*pf)->plan_stats().widened >= 1);
  CHECK((*pf)->plan_stats().half_in_float == 0);
  CHECK((*pf)->output_specs()[0].dtype == DType::kHalf);
  CHECK((*pf)->output_specs()[1].dtype == DType::kInt64);
  CHECK((*pf)->output_specs()[2].dtype == DType::kFloat);
  CHECK((*pf)->output_specs()[3].dtype == DType::kHalf);

  // x = [[1, -2, 0.5], [0.25, 3, -1]], w = [[1, 0], [0, 1], [2, -1]]
  const Tensor x = HalfOf({1, -2, 0.5f, 0.25f, 3, -1}, Shape{2, 3});
  const Tensor w = HalfOf({1, 0, 0, 1, 2, -1}, Shape{3, 2});
  const Tensor b = HalfOf({0.5f, -1}, Shape{2});
  std::vector<Tensor> out;
  Status s = (*pf)->Run(std::vector{x, w, b}, &out);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  // product = [[2, -2.5], [-1.75, 4]]; + b = [[2.5, -3.5], [-1.25, 3]]
  REQUIRE(out[0].dtype() == DType::kHalf);
  CHECK(FloatOf(out[0].data<Half>()[0]) == 2.5f);
  CHECK(FloatOf(out[0].data<Half>()[1]) == 0.0f);
  CHECK(FloatOf(out[0].data<Half>()[2]) == 0.0f);
  CHECK(FloatOf(out[0].data<Half>()[3]) == 3.0f);
  CHECK(out[1].data<int64_t>()[0] == 0);
  CHECK(out[1].data<int64_t>()[1] == 1);
  CHECK(out[2].data<float>()[1] == -3.5f);
  CHECK(out[2].data<float>()[2] == -1.25f);
  // softmax([2.5, -3.5]) = [1 / (1 + e^-6), 1 / (1 + e^6)], rounded to float16 once (within
  // one float16 step).
  REQUIRE(out[3].dtype() == DType::kHalf);
  CHECK(std::abs(FloatOf(out[3].data<Half>()[0]) - 1.0f / (1.0f + std::exp(-6.0f))) < 5e-4f);
  CHECK(std::abs(FloatOf(out[3].data<Half>()[1]) - 1.0f / (1.0f + std::exp(6.0f))) < 2e-6f);
}

// On a host-only load the half-precision region (MatMul, BiasAdd, Relu, Softmax) computes in
// float32 and rounds where values leave it: (1 + 2^-10)(1 + 3 * 2^-10) - 1 = 2^-8 + 3 * 2^-20
// keeps its last term until the end; rounding after each op loses it at the MatMul.
TEST_CASE("half precision: a half-precision region computes in float32 on the host") {
  tensorflow::FunctionDefLibrary proto;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(kHalfLib, &proto));
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {{DType::kHalf, PartialShape({1, 1})},
                                         {DType::kHalf, PartialShape({1, 1})},
                                         {DType::kHalf, PartialShape({1})}};
  const Tensor x = HalfOf({1 + std::ldexp(1.0f, -10)}, Shape{1, 1});
  const Tensor w = HalfOf({1 + 3 * std::ldexp(1.0f, -10)}, Shape{1, 1});
  const Tensor b = HalfOf({-1}, Shape{1});
  for (bool in_float : {true, false}) {
    CAPTURE(in_float);
    PrepareOptions options;
    options.half_in_float = in_float;
    auto pf = PreparedFunction::Prepare(*lib.Find("half_dense"), lib, specs, options);
    REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
    CHECK((*pf)->plan_stats().half_in_float == (in_float ? 4 : 0));
    CHECK(((*pf)->plan_stats().widened == 0) == in_float);  // Softmax widens when alone
    // TF's dtypes at the function's boundary either way.
    CHECK((*pf)->output_specs()[0].dtype == DType::kHalf);
    CHECK((*pf)->output_specs()[1].dtype == DType::kInt64);
    CHECK((*pf)->output_specs()[2].dtype == DType::kFloat);
    CHECK((*pf)->output_specs()[3].dtype == DType::kHalf);
    std::vector<Tensor> out;
    Status s = (*pf)->Run(std::vector{x, w, b}, &out);
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    const float lost = in_float ? 3 * std::ldexp(1.0f, -20) : 0.0f;
    CHECK(out[2].data<float>()[0] == std::ldexp(1.0f, -8) + lost);
    // Rounded to float16 once: 2^-8 + 3 * 2^-20 is nearest to 2^-8 + 2^-18.
    CHECK(FloatOf(out[0].data<Half>()[0]) ==
          std::ldexp(1.0f, -8) + (in_float ? std::ldexp(1.0f, -18) : 0.0f));
    CHECK(out[1].data<int64_t>()[0] == 0);
    CHECK(FloatOf(out[3].data<Half>()[0]) == 1.0f);
  }
}

// Floor jumps at integers: the float16 rounding of its input decides its result, so it is not
// computed on the float32 value a Cast was made from (mixed precision's ops.floor(t * 4)).
const char* kFloorLib = R"pb(
  function {
    signature {
      name: "floor_half"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
    }
    node_def {
      name: "x16"
      op: "Cast"
      input: "x"
      attr {
        key: "SrcT"
        value { type: DT_FLOAT }
      }
      attr {
        key: "DstT"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "scaled"
      op: "Mul"
      input: "x16:y:0"
      input: "x16:y:0"
      attr {
        key: "T"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "floor"
      op: "Floor"
      input: "scaled:z:0"
      attr {
        key: "T"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "y32"
      op: "Cast"
      input: "floor:y:0"
      attr {
        key: "SrcT"
        value { type: DT_HALF }
      }
      attr {
        key: "DstT"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "y" value: "y32:y:0" }
  }
)pb";

TEST_CASE("half precision: a Floor of a float16 value sees its float16 rounding") {
  tensorflow::FunctionDefLibrary proto;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(kFloorLib, &proto));
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {{DType::kFloat, PartialShape({2})}};
  auto pf = PreparedFunction::Prepare(*lib.Find("floor_half"), lib, specs);
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  Tensor x(DType::kFloat, Shape{2});
  x.data<float>()[0] = 0.99999f;  // float16: 1, squared 1
  x.data<float>()[1] = 1.41421f;  // float16: 1.4140625, squared 1.99957... rounds to 2
  std::vector<Tensor> out;
  Status s = (*pf)->Run(std::vector{x}, &out);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(out[0].data<float>()[0] == 1.0f);  // TF's; the float32 value would floor to 0
  CHECK(out[0].data<float>()[1] == 2.0f);  // TF's; the float32 square would floor to 1
}

// The region reads the float32 values the AutoCasts were made from, the Shape takes the float32
// input's shape, and the Cast back to float32 reads the region's value: no Cast step runs, and
// the product keeps float32 precision (1 + 2^-12 is not a float16 value).
TEST_CASE("half precision: Keras's AutoCasts around a float32 region run no Cast") {
  tensorflow::FunctionDefLibrary proto;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(kAutoCastLib, &proto));
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {{DType::kFloat, PartialShape({1, 2})},
                                         {DType::kFloat, PartialShape({2, 1})}};
  auto pf = PreparedFunction::Prepare(*lib.Find("autocast_dense"), lib, specs);
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  CHECK((*pf)->plan_stats().half_in_float == 2);
  for (const ScheduledStep& step : (*pf)->Schedule())
    CHECK_MESSAGE(step.op != "Cast", step.node_name);
  Tensor x(DType::kFloat, Shape{1, 2}), w(DType::kFloat, Shape{2, 1});
  x.data<float>()[0] = 1 + std::ldexp(1.0f, -12);
  x.data<float>()[1] = 0;
  w.data<float>()[0] = 1;
  w.data<float>()[1] = 1;
  std::vector<Tensor> out;
  Status s = (*pf)->Run(std::vector{x, w}, &out);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(out[0].data<float>()[0] == 1 + std::ldexp(1.0f, -12));
  CHECK(out[1].data<int32_t>()[0] == 1);
  CHECK(out[1].data<int32_t>()[1] == 2);
}

// A Cast with Truncate=True is no AutoCast to read around: the region reads its truncated
// value (TF's Cast zeroes the mantissa bits float16 lacks: 1 + 3 * 2^-12 becomes 1, where
// rounding gives 1 + 2^-10 and the float32 value stays 1 + 3 * 2^-12).
TEST_CASE("half precision: a region reads a truncating Cast's result, not its float32 input") {
  tensorflow::FunctionDefLibrary proto;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(kAutoCastLib, &proto));
  for (tensorflow::NodeDef& node : *proto.mutable_function(0)->mutable_node_def())
    if (node.name() == "x16") (*node.mutable_attr())["Truncate"].set_b(true);
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {{DType::kFloat, PartialShape({1, 2})},
                                         {DType::kFloat, PartialShape({2, 1})}};
  for (bool in_float : {true, false}) {
    CAPTURE(in_float);
    PrepareOptions options;
    options.half_in_float = in_float;
    auto pf = PreparedFunction::Prepare(*lib.Find("autocast_dense"), lib, specs, options);
    REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
    Tensor x(DType::kFloat, Shape{1, 2}), w(DType::kFloat, Shape{2, 1});
    x.data<float>()[0] = 1 + 3 * std::ldexp(1.0f, -12);
    x.data<float>()[1] = 0;
    w.data<float>()[0] = 1;
    w.data<float>()[1] = 1;
    std::vector<Tensor> out;
    Status s = (*pf)->Run(std::vector{x, w}, &out);
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    CHECK(out[0].data<float>()[0] == 1.0f);
  }
}

// The half-precision rewrite's first look folds no Cast, so fusion takes its own: a float16
// weight's Cast folds there and the per-channel scale folds into the convolution.
TEST_CASE("half precision: a float16 weight's Cast still folds for fusion") {
  tensorflow::FunctionDefLibrary proto;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(kHalfWeightLib, &proto));
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {{DType::kFloat, PartialShape({1, 2, 2, 1})},
                                         {DType::kHalf, PartialShape({1, 1, 1, 2})},
                                         {DType::kFloat, PartialShape({2})}};
  const Tensor w = HalfOf({2, -1}, Shape{1, 1, 1, 2});
  Tensor scale(DType::kFloat, Shape{2});
  scale.data<float>()[0] = 3;
  scale.data<float>()[1] = 0.5f;
  PrepareOptions options;
  options.known_args = {Tensor(), w, scale};
  auto pf = PreparedFunction::Prepare(*lib.Find("half_weight_conv"), lib, specs, options);
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  CHECK((*pf)->plan_stats().fused == 1);
  CHECK((*pf)->plan_stats().steps == 1);
  Tensor x(DType::kFloat, Shape{1, 2, 2, 1});
  for (int i = 0; i < 4; ++i) x.data<float>()[i] = static_cast<float>(i + 1);
  std::vector<Tensor> out;
  Status s = (*pf)->Run(std::vector{x, w, scale}, &out);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  for (int i = 0; i < 4; ++i) {
    CHECK(out[0].data<float>()[2 * i] == 6.0f * static_cast<float>(i + 1));
    CHECK(out[0].data<float>()[2 * i + 1] == -0.5f * static_cast<float>(i + 1));
  }
}

// A convolution alone between its AutoCasts and a Cast to float32 computes in float32 (no Cast
// added), so the per-channel scale after it folds in: one step, float32 precision (1 + 2^-12 is
// not a float16 value).
TEST_CASE("half precision: a lone convolution between casts computes in float32 and fuses") {
  tensorflow::FunctionDefLibrary proto;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(kLoneConvLib, &proto));
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {{DType::kFloat, PartialShape({1, 2, 2, 1})},
                                         {DType::kFloat, PartialShape({1, 1, 1, 2})},
                                         {DType::kFloat, PartialShape({2})}};
  Tensor w(DType::kFloat, Shape{1, 1, 1, 2}), scale(DType::kFloat, Shape{2});
  w.data<float>()[0] = 1;
  w.data<float>()[1] = -1;
  scale.data<float>()[0] = 1;
  scale.data<float>()[1] = 0.5f;
  PrepareOptions options;
  options.known_args = {Tensor(), w, scale};
  auto pf = PreparedFunction::Prepare(*lib.Find("lone_half_conv"), lib, specs, options);
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  CHECK((*pf)->plan_stats().half_in_float == 1);
  CHECK((*pf)->plan_stats().fused == 1);
  CHECK((*pf)->plan_stats().steps == 1);
  Tensor x(DType::kFloat, Shape{1, 2, 2, 1});
  for (int i = 0; i < 4; ++i)
    x.data<float>()[i] = 1 + std::ldexp(1.0f, -12) * static_cast<float>(i);
  std::vector<Tensor> out;
  Status s = (*pf)->Run(std::vector{x, w, scale}, &out);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  for (int i = 0; i < 4; ++i) {
    const float v = 1 + std::ldexp(1.0f, -12) * static_cast<float>(i);
    CHECK(out[0].data<float>()[2 * i] == v);
    CHECK(out[0].data<float>()[2 * i + 1] == -0.5f * v);
  }
}

// With another device in the load, half-precision chains fuse in their own type: the product,
// the float32 batch norm between its Casts and the Relu become one float16 _FusedMatMul with
// the scale folded into the weights (as TF's GPU remapper fuses them). On the host alone the
// region computes in float32 instead (and fuses there).
TEST_CASE("half precision: a chain through a float32 batch norm fuses in float16 for a device") {
  tensorflow::FunctionDefLibrary proto;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(kHalfBatchNormLib, &proto));
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {{DType::kHalf, PartialShape({2, 2})},
                                         {DType::kHalf, PartialShape({2, 2})},
                                         {DType::kFloat, PartialShape({2})},
                                         {DType::kFloat, PartialShape({2})}};
  const Tensor x = HalfOf({1, 2, -1, 0.5f}, Shape{2, 2});
  const Tensor w = HalfOf({1, -1, 2, 0.25f}, Shape{2, 2});
  Tensor scale(DType::kFloat, Shape{2}), shift(DType::kFloat, Shape{2});
  scale.data<float>()[0] = 2;
  scale.data<float>()[1] = -4;
  shift.data<float>()[0] = 0.5f;
  shift.data<float>()[1] = 1;
  // x w = [[5, -0.5], [0, 1.125]]; * scale + shift = [[10.5, 3], [0.5, -3.5]]; relu.
  const float want[] = {10.5f, 3, 0.5f, 0};
  for (bool device : {true, false}) {
    CAPTURE(device);
    PrepareOptions options;
    options.known_args = {Tensor(), w, scale, shift};
    if (device) options.devices = {kiln::testing::GetTestDevice()};
    auto pf = PreparedFunction::Prepare(*lib.Find("half_dense_bn"), lib, specs, options);
    REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
    CHECK((*pf)->plan_stats().fused == 1);
    CHECK((*pf)->plan_stats().half_in_float == (device ? 0 : 1));
    // For the device the batch norm's ops, its Casts and the Relu are gone (the test device's
    // CPU kernels widen the float16 product between Casts of their own).
    int products = 0;
    for (const ScheduledStep& step : (*pf)->Schedule()) {
      const bool absorbed = step.op == "Mul" || step.op == "AddV2" || step.op == "Relu" ||
                            step.node_name == "mm32" || step.node_name == "back";
      CHECK_MESSAGE((!device || !absorbed), step.node_name);
      products += step.op == "_FusedMatMul";
    }
    CHECK(products == 1);
    CHECK((*pf)->output_specs()[0].dtype == DType::kHalf);
    std::vector<Tensor> out;
    Status s = (*pf)->Run(std::vector{x, w, scale, shift}, &out);
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    REQUIRE(out[0].dtype() == DType::kHalf);
    for (int i = 0; i < 4; ++i) CHECK(FloatOf(out[0].data<Half>()[i]) == want[i]);
  }
}

TEST_CASE("half precision: which nodes widen, and which outputs go back to the half type") {
  CHECK(MayWiden("MatMul"));
  CHECK_FALSE(MayWiden("Bitcast"));  // the bits are the value
  CHECK_FALSE(MayWiden("Cast"));

  const PartialShape s({2});
  // Probe read the half type as float64: outputs that followed it carry it.
  const std::vector<TensorSpec> widened = {
      {DType::kFloat, s}, {DType::kFloat, s}, {DType::kInt64, s}};
  const std::vector<TensorSpec> probe = {
      {DType::kDouble, s}, {DType::kFloat, s}, {DType::kInt64, s}};
  CHECK(OutputsToNarrow(widened, &probe) == std::vector<bool>{true, false, false});
  // Without a probe every float32 output goes back.
  CHECK(OutputsToNarrow(widened, nullptr) == std::vector<bool>{true, true, false});

  NativeAttr t;
  t.name = "T";
  t.kind = NativeAttr::Kind::kType;
  t.type = DTypeToProto(DType::kBFloat16);
  const NativeAttrMap attrs({t});
  CHECK(HalfTypeOf(AttrReader(&attrs), {}) == DType::kBFloat16);
  CHECK(HalfTypeOf(AttrReader(&attrs), {{DType::kHalf, s}}) == DType::kInvalid);  // both: no
  CHECK(AttrReader(&attrs).WithHalfAs(DType::kFloat).GetType("T").value() == DType::kFloat);

  auto c = CastNow(HalfOf({1.5f, -3}, Shape{2}), DType::kFloat);
  REQUIRE(c.ok());
  CHECK(c->data<float>()[0] == 1.5f);
  CHECK(c->data<float>()[1] == -3.0f);
}

}  // namespace
}  // namespace kiln::exec
