// Conv (TF's generic convolution), FusedPadConv2D and FusedResizeAndPadConv2D beyond the op
// tester's cases: shape inference with unknown dims, TF's refusals and messages, and the fused
// kernels' TF-specific results (the row cache that later images of a batch read).
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <string>
#include <vector>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;
using testing::Random;

OpRunner ConvOp(const std::vector<int64_t>& strides, const std::string& padding = "SAME") {
  OpRunner r("Conv", "conv");
  r.T(DType::kFloat).IntList("strides", strides).String("padding", padding);
  return r;
}

Status PrepareConv(OpRunner r, const PartialShape& in, const PartialShape& filter) {
  r.InputSpec({DType::kFloat, in}).InputSpec({DType::kFloat, filter});
  return r.Prepare();
}

TEST_CASE("Conv infers its output shape, the batch dims restored when it can tell") {
  {
    OpRunner r = ConvOp({1, 2, 2, 1});
    r.InputSpec({DType::kFloat, PartialShape{-1, 7, -1, 3}})
        .InputSpec({DType::kFloat, PartialShape{3, 3, 3, 8}});
    REQUIRE(r.Prepare().ok());
    CHECK(r.output_specs()[0].shape == PartialShape{-1, 4, -1, 8});
  }
  {
    OpRunner r = ConvOp({1, 1, 1, 1, 1}, "VALID");
    r.Int("batch_dims", 2)
        .InputSpec({DType::kFloat, PartialShape{4, 2, 5, 6, 7, 3}})
        .InputSpec({DType::kFloat, PartialShape{2, 2, 2, 3, 5}});
    REQUIRE(r.Prepare().ok());
    CHECK(r.output_specs()[0].shape == PartialShape{4, 2, 4, 5, 6, 5});
  }
  {
    // An unknown batch dim might be 0, which keeps TF's flattened shape: rank unknown.
    OpRunner r = ConvOp({1, 1, 1, 1});
    r.Int("batch_dims", 2)
        .InputSpec({DType::kFloat, PartialShape{-1, 2, 5, 6, 3}})
        .InputSpec({DType::kFloat, PartialShape{3, 3, 3, 4}});
    REQUIRE(r.Prepare().ok());
    CHECK(r.output_specs()[0].shape.unknown_rank());
  }
  {
    OpRunner r = ConvOp({1, 1, 1, 1});
    r.Int("batch_dims", 2)
        .InputSpec({DType::kFloat, PartialShape{0, 2, 5, 6, 3}})
        .InputSpec({DType::kFloat, PartialShape{3, 3, 3, 4}});
    REQUIRE(r.Prepare().ok());
    CHECK(r.output_specs()[0].shape == PartialShape{0, 5, 6, 4});
  }
}

TEST_CASE("Conv refuses what TF's CPU kernel refuses, with its messages") {
  const PartialShape in{1, 5, 6, 3}, filter{3, 2, 3, 4};
  {
    OpRunner r = ConvOp({1, 1, 1, 1});
    r.Int("groups", 2);
    Status s = PrepareConv(r, in, filter);
    CheckError(s, {"node 'conv'", "Grouped/Depthwise Convolutions are not supported yet."});
    CHECK(s.code() == StatusCode::kUnimplemented);
  }
  {
    OpRunner r = ConvOp({1, 1, 1, 1});
    r.String("data_format", "CHANNELS_FIRST");
    Status s = PrepareConv(r, PartialShape{1, 3, 5, 6}, filter);
    CheckError(s, {"only supports the NHWC tensor format on the CPU", "NCHW"});
    CHECK(s.code() == StatusCode::kUnimplemented);
  }
  {
    OpRunner r = ConvOp({1, 1, 1, 1, 1});
    r.String("data_format", "CHANNELS_FIRST");
    CheckError(PrepareConv(r, PartialShape{1, 3, 4, 5, 6}, PartialShape{2, 2, 2, 3, 4}),
               {"CPU implementation of Conv3D currently only supports the NHWC tensor format."});
  }
  {
    OpRunner r = ConvOp({1, 1, 1, 1});
    r.String("data_format", "NHWC");
    CheckError(PrepareConv(r, in, filter), {"Unknown data format: NHWC"});
  }
  {
    OpRunner r = ConvOp({1, 1, 1, 1, 1});
    r.IntList("dilations", {1, 2, 1, 1, 1});
    CheckError(PrepareConv(r, PartialShape{1, 4, 5, 6, 3}, PartialShape{2, 2, 2, 3, 4}),
               {"Conv3D currently only supports dilated rates of 1."});
  }
  {
    // TF's process aborts on these two; here they are errors.
    OpRunner r = ConvOp({1, 1, 1, 1, 1}, "EXPLICIT");
    r.IntList("explicit_paddings", {0, 0, 1, 1, 1, 1, 1, 1, 0, 0});
    CheckError(PrepareConv(r, PartialShape{1, 4, 5, 6, 3}, PartialShape{2, 2, 2, 3, 4}),
               {"EXPLICIT padding is not supported for 3 spatial dimensions"});
    OpRunner b = ConvOp({1, 1, 1, 1});
    b.Int("batch_dims", -1);
    CheckError(PrepareConv(b, PartialShape{5, 6, 3}, filter), {"attr 'batch_dims'", "-1"});
    CheckError(PrepareConv(ConvOp({1, 1, 1, 1}), in, PartialShape{3, 2, 1, 3, 4}),
               {"a filter of rank 5", "2 spatial dimensions"});
  }
  CheckError(PrepareConv(ConvOp({1, 1, 1}), PartialShape{1, 5, 3}, PartialShape{3, 3, 4}),
             {"The input must have 2 or 3 spatial dimensions but got 1"});
  CheckError(PrepareConv(ConvOp({1, 1, 1, 1, 1}), in, filter),
             {"Sliding window strides field must specify 4 dimensions"});
  CheckError(PrepareConv(ConvOp({1, 1, 1, 2}), in, filter),
             {"does not support strides in the batch and depth dimensions"});
  CheckError(PrepareConv(ConvOp({1, 0, 1, 1}), in, filter),
             {"Spatial strides should be larger than 0."});
  {
    OpRunner r = ConvOp({1, 1, 1, 1});
    r.IntList("dilations", {1, 1, 1});
    CheckError(PrepareConv(r, in, filter), {"Dilation rates field must specify 4 dimensions"});
    OpRunner z = ConvOp({1, 1, 1, 1});
    z.IntList("dilations", {1, 0, 1, 1});
    CheckError(PrepareConv(z, in, filter), {"Dilated rates should be larger than 0."});
  }
  {
    OpRunner r = ConvOp({1, 1, 1, 1}, "EXPLICIT");
    r.IntList("explicit_paddings", {0, 0, 1, 1, 1, 1});
    CheckError(PrepareConv(r, in, filter),
               {"explicit_paddings attribute must contain 8 values, but got: 6"});
    OpRunner n = ConvOp({1, 1, 1, 1}, "EXPLICIT");
    n.IntList("explicit_paddings", {0, 0, -1, 1, 1, 1, 0, 0});
    CheckError(PrepareConv(n, in, filter),
               {"All elements of explicit_paddings must be nonnegative"});
    OpRunner b = ConvOp({1, 1, 1, 1}, "EXPLICIT");
    b.IntList("explicit_paddings", {1, 0, 1, 1, 1, 1, 0, 0});
    CheckError(PrepareConv(b, in, filter), {"Nonzero explicit padding in the batch or depth"});
    OpRunner s = ConvOp({1, 1, 1, 1});
    s.IntList("explicit_paddings", {0, 0, 1, 1, 1, 1, 0, 0});
    CheckError(PrepareConv(s, in, filter),
               {"explicit_paddings attribute must be empty if the padding attribute is not "
                "EXPLICIT"});
  }
  CheckError(PrepareConv(ConvOp({1, 1, 1, 1}), in, PartialShape{3, 2, 2, 4}),
             {"Input depth must be equal to filter depth: 3 vs 2"});
  CheckError(PrepareConv(ConvOp({1, 1, 1, 1}), in, PartialShape{3, 2, 3, 0}),
             {"filter must not have zero elements"});
  CheckError(PrepareConv(ConvOp({1, 1, 1, 1}, "VALID"), in, PartialShape{7, 2, 3, 4}),
             {"output size would be negative"});
  // The same checks at run time when prepare saw no shapes.
  OpRunner r = ConvOp({1, 1, 1, 1});
  r.Input(Random<float>({1, 4, 4, 3}, 1), {DType::kFloat, PartialShape::UnknownRank()})
      .Input(Random<float>({3, 3, 2, 1}, 2), {DType::kFloat, PartialShape::UnknownRank()});
  CheckError(r.Run1().status(), {"node 'conv'", "Input depth must be equal to filter depth"});
  OpRunner k = ConvOp({1, 1, 1, 1});
  k.Input(Random<float>({1, 2, 4, 4, 3}, 1), {DType::kFloat, PartialShape::UnknownRank()})
      .Input(Random<float>({3, 3, 3, 1}, 2), {DType::kFloat, PartialShape::UnknownRank()});
  CheckError(k.Run1().status(), {"Sliding window strides field must specify 5 dimensions"});
}

// ---- FusedPadConv2D, FusedResizeAndPadConv2D ---------------------------------------------------

OpRunner FusedOp(bool resize, const std::string& mode = "REFLECT",
                 const std::vector<int64_t>& strides = {1, 1, 1, 1}) {
  OpRunner r(resize ? "FusedResizeAndPadConv2D" : "FusedPadConv2D", "fused");
  r.T(DType::kFloat).String("mode", mode).IntList("strides", strides).String("padding", "SAME");
  return r;
}

Tensor Pads(std::vector<int32_t> v) { return Make<int32_t>(v, {4, 2}); }

Status RunFused(OpRunner r, const Shape& in, const Tensor& pads, const Shape& filter,
                const std::vector<int32_t>& size = {}) {
  r.Input(Random<float>(in, 1));
  if (!size.empty()) r.ConstantInput(Make<int32_t>(size, {2}));
  r.ConstantInput(pads).Input(Random<float>(filter, 2));
  return r.Run1().status();
}

TEST_CASE("FusedPadConv2D and FusedResizeAndPadConv2D check their inputs as TF does") {
  const Shape in{1, 4, 5, 2}, filter{3, 3, 2, 3};
  const Tensor ok = Pads({0, 0, 1, 1, 2, 1, 0, 0});
  CHECK(RunFused(FusedOp(false), in, ok, filter).ok());
  CheckError(RunFused(FusedOp(false, "CONSTANT"), in, ok, filter),
             {"mode must be either REFLECT or SYMMETRIC."});
  CheckError(RunFused(FusedOp(false, "REFLECT", {1, 1, 1}), in, ok, filter),
             {"Sliding window strides field must specify 4 dimensions"});
  CheckError(RunFused(FusedOp(false, "REFLECT", {2, 1, 1, 1}), in, ok, filter),
             {"does not yet support strides in the batch and depth dimensions."});
  CheckError(RunFused(FusedOp(false), in, Pads({0, 0, -1, 1, 2, 1, 0, 0}), filter),
             {"paddings must be non-negative: -1 1"});
  CheckError(RunFused(FusedOp(false), in, Pads({0, 0, 4, 1, 2, 1, 0, 0}), filter),
             {"paddings must be less than the dimension size: 4, 1 not less than 4"});
  CHECK(RunFused(FusedOp(false, "SYMMETRIC"), in, Pads({0, 0, 4, 1, 2, 1, 0, 0}), filter).ok());
  CheckError(RunFused(FusedOp(false, "SYMMETRIC"), in, Pads({0, 0, 5, 1, 2, 1, 0, 0}), filter),
             {"paddings must be no greater than the dimension size: 5, 1 greater than 4"});
  CheckError(RunFused(FusedOp(false, "SYMMETRIC"), in, Pads({1, 0, 1, 1, 2, 1, 0, 0}), filter),
             {"Fused mirror padding only support spatial padding, not batches"});
  CheckError(RunFused(FusedOp(false, "SYMMETRIC"), in, Pads({0, 0, 1, 1, 2, 1, 0, 1}), filter),
             {"Fused mirror padding only support spatial padding, not channels"});
  CheckError(RunFused(FusedOp(false), in, Make<int32_t>({0, 0, 1, 1, 2, 1}, {3, 2}), filter),
             {"The first dimension of paddings must be the rank of inputs"});
  CheckError(RunFused(FusedOp(false), in, ok, Shape{3, 3, 3, 3}),
             {"input and filter must have the same depth: 2 vs 3"});
  CheckError(RunFused(FusedOp(false), Shape{0, 4, 5, 2}, ok, filter),
             {"Input tensor can't be empty"});
  CheckError(RunFused(FusedOp(false), in, ok, Shape{3, 3, 2, 0}), {"Output tensor can't be empty"});
  CheckError(RunFused(FusedOp(true), in, ok, filter, {0, 3}),
             {"output dimensions must be positive"});
  // TF's resize cache: a filter's rows of it must fit in 8M elements' bytes.
  CheckError(RunFused(FusedOp(false), Shape{1, 4, 1 << 20, 1}, Pads({0, 0, 0, 0, 0, 0, 0, 0}),
                      Shape{3, 1, 1, 1}),
             {"Input too large for resize cache"});
  // Known at prepare time: the same messages, before anything runs.
  OpRunner p = FusedOp(true);
  p.InputSpec({DType::kFloat, in})
      .ConstantInput(Make<int32_t>({6, 7}, {2}))
      .ConstantInput(Pads({0, 0, 6, 1, 2, 1, 0, 0}))
      .InputSpec({DType::kFloat, filter});
  CheckError(p.Prepare(), {"node 'fused'", "paddings must be less than the dimension size"});
  OpRunner q = FusedOp(true);
  q.InputSpec({DType::kFloat, in})
      .ConstantInput(Make<int32_t>({6, 7}, {2}))
      .ConstantInput(ok)
      .InputSpec({DType::kFloat, filter});
  REQUIRE(q.Prepare().ok());
  CHECK(q.output_specs()[0].shape == PartialShape{1, 8, 10, 3});
}

// TF's row cache holds 8M elements' worth of rows (here 2 rows of 4M), row r in slot r mod 2,
// and is not refilled for the second image: image 1 reads what image 0 left, rows 2 and 3 of
// image 0's padded input (row 3 lies below it: zeros). TF 2.21 gives, for image 1's rows, image
// 0's row 2, zeros and image 0's row 2 again (checked with the oracle for this input).
TEST_CASE("FusedPadConv2D's later images read the first image's cached rows, as in TF") {
  constexpr int64_t kW = int64_t{4} << 20;
  const auto bits = [](float v) { return Eigen::numext::bit_cast<uint16_t>(Eigen::half(v)); };
  Tensor x(DType::kHalf, Shape{2, 3, kW, 1});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t i = 0; i < kW; ++i)
        x.data<Half>()[(b * 3 + r) * kW + i].bits =
            bits(static_cast<float>(i % 7 + 10 * r + 100 * b));
  Tensor one(DType::kHalf, Shape{1, 1, 1, 1});
  one.data<Half>()[0].bits = bits(1.0f);
  OpRunner op("FusedPadConv2D", "fused");
  op.T(DType::kHalf)
      .String("mode", "REFLECT")
      .IntList("strides", {1, 1, 1, 1})
      .String("padding", "VALID")
      .Input(x)
      .ConstantInput(Pads({0, 0, 0, 0, 0, 0, 0, 0}))
      .Input(one);
  auto got = op.Run1();
  REQUIRE(got.ok());
  REQUIRE(got->shape() == Shape{2, 3, kW, 1});
  const auto at = [&](int64_t b, int64_t r, int64_t i) {
    return static_cast<float>(
        Eigen::numext::bit_cast<Eigen::half>(got->data<Half>()[(b * 3 + r) * kW + i].bits));
  };
  for (int64_t i : {int64_t{0}, int64_t{5}, kW / 2 + 3, kW - 1}) {
    CAPTURE(i);
    const auto v = static_cast<float>(i % 7);
    CHECK(at(0, 0, i) == v);
    CHECK(at(0, 1, i) == v + 10);
    CHECK(at(0, 2, i) == v + 20);
    CHECK(at(1, 0, i) == v + 20);
    CHECK(at(1, 1, i) == 0);
    CHECK(at(1, 2, i) == v + 20);
  }
}

}  // namespace
}  // namespace kiln::exec
