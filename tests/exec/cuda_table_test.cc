// The CUDA device's kernel table, checked on any machine (no GPU needed): every row names an op
// the engine defines, rows are sorted and unique, and the `supports` rows send what the GPU
// kernels do not take (float64, complex, strings) to the next device.
#include <doctest/doctest.h>

#ifdef KILN_HAVE_CUDA
#include "kernels/cuda/cuda_kernels.h"
#include "kiln/exec/device.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec {
namespace {

const KernelEntry* Row(std::string_view op) {
  for (const KernelEntry& k : cuda::CudaKernelTable())
    if (k.op == op) return &k;
  return nullptr;
}

bool Takes(std::string_view op, std::vector<DType> in, std::vector<DType> out) {
  const KernelEntry* k = Row(op);
  REQUIRE_MESSAGE(k != nullptr, op);
  PrepareContext ctx;
  ctx.op = op;
  ctx.node_name = "n";
  for (DType t : in) ctx.inputs.push_back(TensorSpec{t, PartialShape({2, 3})});
  for (DType t : out) ctx.outputs.push_back(TensorSpec{t, PartialShape({2, 3})});
  ctx.constant_inputs.assign(ctx.inputs.size(), nullptr);
  return k->supports == nullptr || k->supports(ctx);
}

TEST_CASE("cuda table: every row is a defined op, sorted and unique") {
  const std::span<const KernelEntry> table = cuda::CudaKernelTable();
  REQUIRE(table.size() > 50);
  for (size_t i = 0; i < table.size(); ++i) {
    CHECK_MESSAGE(FindOp(table[i].op) != nullptr, table[i].op, " has no op definition");
    const bool has_compute = table[i].compute != nullptr;
    CHECK_MESSAGE(has_compute, table[i].op);
    if (i > 0) CHECK_MESSAGE(table[i - 1].op < table[i].op, table[i].op, " is out of order");
  }
  // Every family is in the table.
  constexpr std::string_view kSome[] = {"MatMul",
                                        "Conv2D",
                                        "DepthwiseConv2dNative",
                                        "MaxPool",
                                        "Pad",
                                        "Softmax",
                                        "Sum",
                                        "Transpose",
                                        "AddV2",
                                        "GatherV2",
                                        "Einsum",
                                        "ArgMax",
                                        "SplitV",
                                        "Unpack",
                                        "Tile",
                                        "ZerosLike",
                                        "Select",
                                        "FusedBatchNormV3",
                                        "StridedSlice",
                                        "ResizeBilinear",
                                        "ResizeNearestNeighbor",
                                        "Conv2DBackpropInput",
                                        "MirrorPad",
                                        "BroadcastTo",
                                        "ReverseV2",
                                        "DepthToSpace",
                                        "SpaceToDepth",
                                        "OneHot",
                                        "Cumsum",
                                        "Cumprod",
                                        "MaxPool3D",
                                        "AvgPool3D",
                                        "All",
                                        "Any",
                                        "TopKV2",
                                        "GatherNd",
                                        "MatrixBandPart",
                                        "SpaceToBatchND",
                                        "BatchToSpaceND",
                                        "ExtractImagePatches",
                                        "_KilnAttention",
                                        "FakeQuantWithMinMaxVars"};
  for (std::string_view op : kSome) CHECK_MESSAGE(Row(op) != nullptr, op, " has no GPU kernel");
  // The views reuse the CPU's kernels, which only relabel buffers.
  for (std::string_view op : {"Reshape", "ExpandDims", "Squeeze", "Identity", "Shape",
                              "EnsureShape", "PreventGradient", "PlaceholderWithDefault"})
    CHECK_MESSAGE(Row(op) != nullptr, op);
  CHECK(Row("Shape")->host_outputs == 1u);  // a shape is read on the host
  CHECK(Row("Reshape")->host_inputs == 2u);
  // A resize's size and a transposed convolution's input_sizes and filter are read on the host.
  CHECK(Row("ResizeBilinear")->host_inputs == 2u);
  CHECK(Row("ResizeNearestNeighbor")->host_inputs == 2u);
  CHECK(Row("Conv2DBackpropInput")->host_inputs == 3u);
  CHECK(Row("MirrorPad")->host_inputs == 2u);
  CHECK(Row("BroadcastTo")->host_inputs == 2u);
  CHECK(Row("ReverseV2")->host_inputs == 2u);
  CHECK(Row("OneHot")->host_inputs == 14u);  // depth, on_value, off_value
  CHECK(Row("Cumsum")->host_inputs == 2u);
  CHECK(Row("TopKV2")->host_inputs == 2u);                   // k
  CHECK(Row("MatrixBandPart")->host_inputs == 6u);           // num_lower, num_upper
  CHECK(Row("All")->host_inputs == 2u);                      // the axes
  CHECK(Row("GatherNd")->host_inputs == 0u);                 // indices are data on the device
  CHECK(Row("SpaceToBatchND")->host_inputs == 6u);           // block_shape, paddings
  CHECK(Row("FakeQuantWithMinMaxVars")->host_inputs == 6u);  // min, max
}

TEST_CASE("cuda table: with a GPU, cuBLASLt and cuDNN load (else they are reported)") {
  const Status blas = cuda::BlasLtStatus(), dnn = cuda::DnnStatus();
  if (!FindDevice("gpu").ok()) {
    MESSAGE("no GPU; cuBLASLt: ", blas.ToString(), "; cuDNN: ", dnn.ToString());
    return;
  }
  // On a GPU machine a missing library would quietly keep products and convolutions on the CPU.
  CHECK_MESSAGE(blas.ok(), blas.ToString());
  CHECK_MESSAGE(dnn.ok(), dnn.ToString());
}

TEST_CASE("cuda table: dtypes the GPU kernels lack go to the next device") {
  CHECK(Takes("AddV2", {DType::kFloat, DType::kFloat}, {DType::kFloat}));
  CHECK(Takes("AddV2", {DType::kHalf, DType::kHalf}, {DType::kHalf}));
  CHECK(Takes("AddV2", {DType::kInt64, DType::kInt64}, {DType::kInt64}));
  // int32 values (shapes, sizes) stay on the host, as TensorFlow keeps them.
  CHECK_FALSE(Takes("AddV2", {DType::kInt32, DType::kInt32}, {DType::kInt32}));
  CHECK_FALSE(Takes("Pack", {DType::kInt32, DType::kInt32}, {DType::kInt32}));
  CHECK(Takes("Cast", {DType::kInt32}, {DType::kFloat}));
  CHECK_FALSE(Takes("AddV2", {DType::kDouble, DType::kDouble}, {DType::kDouble}));
  CHECK_FALSE(Takes("AddV2", {DType::kString, DType::kString}, {DType::kString}));
  CHECK(Takes("Less", {DType::kFloat, DType::kFloat}, {DType::kBool}));
  CHECK_FALSE(Takes("Exp", {DType::kComplex64}, {DType::kComplex64}));
  CHECK_FALSE(Takes("Exp", {DType::kInt32}, {DType::kInt32}));
  CHECK(Takes("Cast", {DType::kFloat}, {DType::kHalf}));
  CHECK_FALSE(Takes("Cast", {DType::kFloat}, {DType::kDouble}));
  // ConcatV2's axis must be known at prepare time (the GPU kernel reads it from its state).
  CHECK_FALSE(Takes("ConcatV2", {DType::kFloat, DType::kFloat, DType::kInt32}, {DType::kFloat}));
  // Bilinear resizing reads the GPU's float types and writes float32, as the op does; uint8
  // images stay on the host. Nearest moves any element but int32's.
  CHECK(Takes("ResizeBilinear", {DType::kHalf, DType::kInt32}, {DType::kFloat}));
  CHECK(Takes("ResizeBilinear", {DType::kFloat, DType::kInt32}, {DType::kFloat}));
  CHECK_FALSE(Takes("ResizeBilinear", {DType::kUInt8, DType::kInt32}, {DType::kFloat}));
  CHECK(Takes("ResizeNearestNeighbor", {DType::kUInt8, DType::kInt32}, {DType::kUInt8}));
  CHECK_FALSE(Takes("ResizeNearestNeighbor", {DType::kInt32, DType::kInt32}, {DType::kInt32}));
  // A transposed convolution's filter must be a constant (the state holds its device copy).
  CHECK_FALSE(
      Takes("Conv2DBackpropInput", {DType::kInt32, DType::kFloat, DType::kFloat}, {DType::kFloat}));
}

}  // namespace
}  // namespace kiln::exec
#endif
