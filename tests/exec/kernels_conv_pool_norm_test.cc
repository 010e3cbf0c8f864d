// Error paths of the convolution, pooling, normalisation, bias and recurrent families (conv_nd_ops,
// pool_nd_ops, norm_ops, bias_ops, rnn_ops): invalid attrs, dtypes and shapes fail at prepare
// naming the node, the attr or input and what TensorFlow expects; shapes that only show up at run
// time fail in the kernel before anything is written. Values are checked by the op tester
// (tests/ops).
#include <doctest/doctest.h>

#include <string>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;
using testing::Random;

OpRunner BackpropInput(const std::string& padding = "SAME") {
  OpRunner r("Conv2DBackpropInput", "deconv");
  r.T(DType::kFloat).String("padding", padding).IntList("strides", {1, 2, 2, 1});
  return r;
}

TEST_CASE("Conv2DBackpropInput: attrs, dtypes and shapes are checked at load") {
  const TensorSpec filter{DType::kFloat, Shape{3, 3, 2, 4}};
  const TensorSpec dy{DType::kFloat, Shape{1, 3, 3, 4}};
  {
    OpRunner r = BackpropInput("SAME");
    r.ConstantInput(Make<int32_t>({1, 5, 5, 2}, {4})).InputSpec(filter).InputSpec(dy);
    CHECK(r.Prepare().ok());
    CHECK(r.output_specs()[0].shape == PartialShape{1, 5, 5, 2});
  }
  {
    OpRunner r = BackpropInput("FULL");
    r.ConstantInput(Make<int32_t>({1, 5, 5, 2}, {4})).InputSpec(filter).InputSpec(dy);
    CheckError(r.Prepare(), {"node 'deconv'", "attr 'padding'", "\"FULL\""});
  }
  {
    OpRunner r = BackpropInput();
    r.String("data_format", "NCHW");
    r.ConstantInput(Make<int32_t>({1, 2, 5, 5}, {4})).InputSpec(filter).InputSpec(dy);
    Status s = r.Prepare();
    CheckError(s, {"data_format \"NCHW\"", "NHWC"});
    CHECK(s.code() == StatusCode::kUnimplemented);
  }
  {
    OpRunner r("Conv2DBackpropInput", "deconv");
    r.T(DType::kInt64).String("padding", "SAME").IntList("strides", {1, 1, 1, 1});
    r.ConstantInput(Make<int32_t>({1, 5, 5, 2}, {4}))
        .InputSpec({DType::kInt64, Shape{3, 3, 2, 4}})
        .InputSpec({DType::kInt64, Shape{1, 5, 5, 4}});
    CheckError(r.Prepare(), {"attr 'T'", "int64", "not supported"});
  }
  {
    OpRunner r = BackpropInput();
    r.ConstantInput(Make<int32_t>({1, 5, 2}, {3})).InputSpec(filter).InputSpec(dy);
    CheckError(r.Prepare(), {"input 'input_sizes'", "4 (or 2 spatial) entries", "[1, 5, 2]"});
  }
  {
    OpRunner r = BackpropInput();
    r.ConstantInput(Make<int32_t>({1, -5, 5, 2}, {4})).InputSpec(filter).InputSpec(dy);
    CheckError(r.Prepare(), {"input 'input_sizes'", "negative"});
  }
  {
    // out_backprop must be what convolving the input would give: 3x3, not 4x4.
    OpRunner r = BackpropInput();
    r.ConstantInput(Make<int32_t>({1, 5, 5, 2}, {4}))
        .InputSpec(filter)
        .InputSpec({DType::kFloat, Shape{1, 4, 4, 4}});
    CheckError(r.Prepare(),
               {"node 'deconv'", "out_backprop has shape [1, 4, 4, 4]", "[1, 3, 3, 4]"});
  }
  {
    OpRunner r = BackpropInput();
    r.ConstantInput(Make<int32_t>({1, 5, 5, 3}, {4})).InputSpec(filter).InputSpec(dy);
    CheckError(r.Prepare(), {"input depth must equal the filter's in_channels"});
  }
  {
    OpRunner r = BackpropInput();
    r.ConstantInput(Make<int32_t>({1, 5, 5, 4}, {4}))
        .InputSpec({DType::kFloat, Shape{3, 3, 2, 4}})
        .InputSpec(dy);
    Status s = r.Prepare();
    CheckError(s, {"grouped convolution"});
    CHECK(s.code() == StatusCode::kUnimplemented);
  }
}

TEST_CASE("Conv2DBackpropInput: run-time sizes are checked before anything is written") {
  OpRunner r = BackpropInput();
  r.Input(Make<int32_t>({1, 9, 9, 2}, {4}))
      .Input(Random<float>(Shape{3, 3, 2, 4}, 1))
      .Input(Random<float>(Shape{1, 3, 3, 4}, 2));
  CheckError(r.Run().status(),
             {"node 'deconv'", "out_backprop has shape [1, 3, 3, 4]", "[1, 5, 5, 4]"});
  OpRunner neg = BackpropInput();
  neg.Input(Make<int32_t>({1, 5, -5, 2}, {4}))
      .Input(Random<float>(Shape{3, 3, 2, 4}, 1))
      .Input(Random<float>(Shape{1, 3, 3, 4}, 2));
  CheckError(neg.Run().status(), {"input 'input_sizes'", "negative"});
}

TEST_CASE("Conv2DBackpropFilter, depthwise backprops and Conv3D: errors at load") {
  {
    OpRunner r("Conv2DBackpropFilter", "bpf");
    r.T(DType::kFloat).String("padding", "VALID").IntList("strides", {1, 1, 1, 1});
    r.InputSpec({DType::kFloat, Shape{1, 5, 5, 2}})
        .ConstantInput(Make<int32_t>({3, 3, 2}, {3}))
        .InputSpec({DType::kFloat, Shape{1, 3, 3, 4}});
    CheckError(r.Prepare(), {"input 'filter_sizes'", "4 entries"});
  }
  {
    OpRunner r("DepthwiseConv2dNativeBackpropInput", "dw");
    r.T(DType::kFloat).String("padding", "SAME").IntList("strides", {1, 1, 1, 1});
    r.ConstantInput(Make<int32_t>({1, 5, 5, 3}, {4}))
        .InputSpec({DType::kFloat, Shape{3, 3, 2, 2}})
        .InputSpec({DType::kFloat, Shape{1, 5, 5, 4}});
    CheckError(r.Prepare(), {"node 'dw'", "input depth must equal", "[3, 3, 2, 2]"});
  }
  {
    OpRunner r("Conv3D", "c3");
    r.T(DType::kFloat).String("padding", "SAME").IntList("strides", {1, 1, 1, 1});
    r.InputSpec({DType::kFloat, Shape{1, 4, 4, 4, 2}})
        .InputSpec({DType::kFloat, Shape{2, 2, 2, 2, 3}});
    CheckError(r.Prepare(), {"attr 'strides'", "5 entries (NDHWC)", "[1, 1, 1, 1]"});
  }
  {
    OpRunner r("Conv3D", "c3");
    r.T(DType::kFloat).String("padding", "EXPLICIT").IntList("strides", {1, 1, 1, 1, 1});
    r.InputSpec({DType::kFloat, Shape{1, 4, 4, 4, 2}})
        .InputSpec({DType::kFloat, Shape{2, 2, 2, 2, 3}});
    CheckError(r.Prepare(), {"attr 'padding'", "\"SAME\" or \"VALID\"", "EXPLICIT"});
  }
  {
    OpRunner r("Conv3D", "c3");
    r.T(DType::kFloat).String("padding", "SAME").IntList("strides", {1, 1, 1, 1, 1});
    r.InputSpec({DType::kFloat, Shape{1, 4, 4, 2}})
        .InputSpec({DType::kFloat, Shape{2, 2, 2, 2, 3}});
    CheckError(r.Prepare(), {"input 'input'", "expected rank 5"});
  }
  {
    OpRunner r("Conv3DBackpropInputV2", "c3");
    r.T(DType::kFloat)
        .String("padding", "SAME")
        .IntList("strides", {1, 1, 1, 1, 1})
        .Type("Tshape", DType::kFloat);
    r.InputSpec({DType::kFloat, Shape{5}})
        .InputSpec({DType::kFloat, Shape{2, 2, 2, 2, 3}})
        .InputSpec({DType::kFloat, Shape{1, 4, 4, 4, 3}});
    CheckError(r.Prepare(), {"attr 'Tshape'", "float32"});
  }
}

TEST_CASE("Pooling extras: errors at load and at run time") {
  {
    OpRunner r("MaxPool3D", "p");
    r.T(DType::kFloat)
        .String("padding", "SAME")
        .IntList("ksize", {2, 2, 2, 2, 1})
        .IntList("strides", {1, 1, 1, 1, 1});
    r.InputSpec({DType::kFloat, Shape{2, 4, 4, 4, 1}});
    Status s = r.Prepare();
    CheckError(s, {"attr 'ksize'", "batch and channel"});
    CHECK(s.code() == StatusCode::kUnimplemented);
  }
  {
    OpRunner r("AvgPool3D", "p");
    r.T(DType::kInt32)
        .String("padding", "SAME")
        .IntList("ksize", {1, 2, 2, 2, 1})
        .IntList("strides", {1, 1, 1, 1, 1});
    r.InputSpec({DType::kInt32, Shape{2, 4, 4, 4, 1}});
    CheckError(r.Prepare(), {"attr 'T'", "int32"});
  }
  {
    OpRunner r("MaxPoolV2", "p");
    r.T(DType::kFloat).String("padding", "VALID");
    r.Input(Random<float>(Shape{1, 4, 4, 2}, 1))
        .Input(Make<int32_t>({1, 2, 0, 1}, {4}))
        .Input(Make<int32_t>({1, 1, 1, 1}, {4}));
    CheckError(r.Run().status(), {"node 'p'", "input 'ksize'", "positive"});
  }
  {
    OpRunner r("MaxPoolV2", "p");
    r.T(DType::kFloat).String("padding", "VALID");
    r.InputSpec({DType::kFloat, Shape{1, 4, 4, 2}})
        .ConstantInput(Make<int32_t>({1, 2, 2}, {3}))
        .InputSpec({DType::kInt32, Shape{4}});
    CheckError(r.Prepare(), {"input 'ksize'", "4 entries"});
  }
  {
    OpRunner r("MaxPoolWithArgmax", "p");
    r.T(DType::kFloat).Type("Targmax", DType::kFloat).String("padding", "VALID");
    r.IntList("ksize", {1, 2, 2, 1}).IntList("strides", {1, 2, 2, 1});
    r.InputSpec({DType::kFloat, Shape{1, 4, 4, 2}});
    CheckError(r.Prepare(), {"attr 'Targmax'", "int32, int64"});
  }
  {
    OpRunner r("MaxPoolGrad", "g");
    r.T(DType::kFloat)
        .String("padding", "VALID")
        .IntList("ksize", {1, 2, 2, 1})
        .IntList("strides", {1, 2, 2, 1});
    r.InputSpec({DType::kFloat, Shape{1, 4, 4, 2}})
        .InputSpec({DType::kFloat, Shape{1, 2, 2, 2}})
        .InputSpec({DType::kFloat, Shape{1, 3, 2, 2}});
    CheckError(r.Prepare(), {"input 'grad' has shape (1, 3, 2, 2)", "[1, 2, 2, 2]"});
  }
  {
    OpRunner r("AvgPoolGrad", "g");
    r.T(DType::kFloat)
        .String("padding", "VALID")
        .IntList("ksize", {1, 2, 2, 1})
        .IntList("strides", {1, 2, 2, 1});
    r.ConstantInput(Make<int32_t>({1, 4, 4}, {3})).InputSpec({DType::kFloat, Shape{1, 2, 2, 2}});
    CheckError(r.Prepare(), {"input 'orig_input_shape'", "4 entries"});
  }
  {
    // Known only at run time: the gradient does not fit the pooled shape.
    OpRunner r("AvgPoolGrad", "g");
    r.T(DType::kFloat)
        .String("padding", "VALID")
        .IntList("ksize", {1, 2, 2, 1})
        .IntList("strides", {1, 2, 2, 1});
    r.Input(Make<int32_t>({1, 6, 6, 2}, {4})).Input(Random<float>(Shape{1, 2, 2, 2}, 3));
    CheckError(r.Run().status(),
               {"node 'g'", "input 'grad' has shape (1, 2, 2, 2)", "[1, 3, 3, 2]"});
  }
}

TEST_CASE("FusedBatchNorm, FusedBatchNormGradV3, LRN: errors at load and at run time") {
  auto bn = [](const std::string& op, DType t, const Shape& x, int64_t c) {
    OpRunner r(op, "bn");
    r.T(t).Bool("is_training", false);
    if (op != "FusedBatchNorm") r.Type("U", DType::kFloat);
    r.InputSpec({t, x});
    for (int i = 0; i < 4; ++i) r.InputSpec({DType::kFloat, Shape{c}});
    return r;
  };
  CheckError(bn("FusedBatchNormV3", DType::kInt32, Shape{1, 2, 2, 3}, 3).Prepare(),
             {"node 'bn'", "attr 'T'", "int32"});
  CheckError(bn("FusedBatchNorm", DType::kHalf, Shape{1, 2, 2, 3}, 3).Prepare(),
             {"attr 'T'", "float16"});
  CheckError(bn("FusedBatchNormV3", DType::kFloat, Shape{1, 2, 2, 3}, 4).Prepare(),
             {"input 'scale'", "one element per channel of x (3)", "(4,)"});
  CheckError(bn("FusedBatchNormV2", DType::kFloat, Shape{1, 2, 2, 2, 3}, 3).Prepare(),
             {"input 'x' must be 4-dimensional"});
  {
    OpRunner r = bn("FusedBatchNormV3", DType::kFloat, Shape{1, 2, 2, 3}, 3);
    r.String("data_format", "NWHC");
    CheckError(r.Prepare(), {"attr 'data_format'", "NWHC"});
  }
  {
    // Inference reads mean and variance: their length is checked when it is only known at run time.
    OpRunner r("FusedBatchNormV3", "bn");
    r.T(DType::kFloat).Type("U", DType::kFloat).Bool("is_training", false);
    r.Input(Random<float>(Shape{1, 2, 2, 3}, 1))
        .Input(Random<float>(Shape{3}, 2))
        .Input(Random<float>(Shape{3}, 3))
        .Input(Random<float>(Shape{2}, 4), TensorSpec{DType::kFloat, PartialShape{-1}})
        .Input(Random<float>(Shape{3}, 5));
    CheckError(r.Run().status(), {"node 'bn'", "input 'mean'", "(2,)"});
  }
  {
    OpRunner r("FusedBatchNormGradV3", "bng");
    r.T(DType::kFloat).Type("U", DType::kFloat);
    r.InputSpec({DType::kFloat, Shape{1, 2, 2, 3}}).InputSpec({DType::kFloat, Shape{1, 2, 3, 3}});
    for (int i = 0; i < 3; ++i) r.InputSpec({DType::kFloat, Shape{3}});
    r.InputSpec({DType::kFloat, Shape{}});
    CheckError(r.Prepare(), {"'x' and 'y_backprop' must have the same shape"});
  }
  {
    OpRunner r("LRN", "lrn");
    r.T(DType::kFloat).Int("depth_radius", -1).InputSpec({DType::kFloat, Shape{1, 2, 2, 3}});
    CheckError(r.Prepare(), {"attr 'depth_radius'", "-1"});
  }
  {
    OpRunner r("LRN", "lrn");
    r.T(DType::kFloat).InputSpec({DType::kFloat, Shape{2, 3}});
    CheckError(r.Prepare(), {"input 'input'", "expected rank 4"});
  }
}

TEST_CASE("BiasAddGrad, BiasAddV1, LSTMBlockCell: errors") {
  {
    OpRunner r("BiasAddGrad", "bg");
    r.T(DType::kFloat).InputSpec({DType::kFloat, Shape{5}});
    CheckError(r.Prepare(), {"node 'bg'", "input 'out_backprop'", "rank >= 2"});
  }
  {
    OpRunner r("BiasAddGrad", "bg");
    r.T(DType::kFloat).String("data_format", "NDHWC").InputSpec({DType::kFloat, Shape{2, 5}});
    CheckError(r.Prepare(), {"attr 'data_format'", "NDHWC"});
  }
  {
    OpRunner r("BiasAddV1", "b");
    r.T(DType::kFloat).InputSpec({DType::kFloat, Shape{2, 5}}).InputSpec({DType::kFloat, Shape{4}});
    CheckError(r.Prepare(), {"input 'bias' has 4 elements", "(2, 5)"});
  }
  {
    OpRunner r("BiasAddV1", "b");
    r.T(DType::kFloat)
        .Input(Random<float>(Shape{2, 5}, 1), TensorSpec{DType::kFloat, PartialShape{-1, -1}})
        .Input(Random<float>(Shape{4}, 2), TensorSpec{DType::kFloat, PartialShape{-1}});
    CheckError(r.Run().status(), {"node 'b'", "(2, 5)", "(4,)"});
  }
  {
    OpRunner r("LSTMBlockCell", "lstm");
    r.T(DType::kFloat);
    r.InputSpec({DType::kFloat, Shape{2, 3}})
        .InputSpec({DType::kFloat, Shape{2, 4}})
        .InputSpec({DType::kFloat, Shape{2, 4}})
        .InputSpec({DType::kFloat, Shape{6, 16}});  // needs 3 + 4 = 7 rows
    for (int i = 0; i < 3; ++i) r.InputSpec({DType::kFloat, Shape{4}});
    r.InputSpec({DType::kFloat, Shape{16}});
    CheckError(r.Prepare(), {"node 'lstm'", "input 'w'", "7 rows", "(6, 16)"});
  }
  {
    OpRunner r("LSTMBlockCell", "lstm");
    r.T(DType::kDouble);
    for (int i = 0; i < 8; ++i) r.InputSpec({DType::kDouble, PartialShape::UnknownRank()});
    CheckError(r.Prepare(), {"attr 'T'", "float64"});
  }
}

}  // namespace
}  // namespace kiln::exec
