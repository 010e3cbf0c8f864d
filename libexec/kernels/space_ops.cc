// Moving spatial blocks between dims: SpaceToBatchND / BatchToSpaceND (blocks of the spatial
// dims to and from the batch, with padding and cropping; the v1 ops' one block_size too),
// SpaceToDepth / DepthToSpace (blocks to and from channels; NHWC, as TF's CPU kernels) and
// ExtractImagePatches / ExtractVolumePatches (sliding windows flattened into channels). The CPU
// kernels are in kernels/cpu/space_ops.cc.
#include "kernels/space_ops.h"

#include <complex>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using space::BlockOutputDims;
using space::BlockState;
using space::BlockV1State;
using space::PatchState;
using space::ReadBlockSpec;
using space::WindowedSize;

// ---- SpaceToBatchND, BatchToSpaceND ----------------------------------------------------------

bool ToBatch(std::string_view op) { return op == "SpaceToBatchND"; }

Status PrepareBlockBatch(PrepareContext& ctx) {
  const bool to_batch = ToBatch(ctx.op);
  const char* pads_name = to_batch ? "paddings" : "crops";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RealTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "block_shape", "Tblock_shape").status());
  KILN_RETURN_IF_ERROR(
      IndexInputDType(ctx, 2, pads_name, to_batch ? "Tpaddings" : "Tcrops").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "block_shape", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, pads_name, 2));
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out = UnknownDims(in.rank());
  const Tensor* block_t = ConstantInput(ctx, 1);
  const Tensor* pads_t = ConstantInput(ctx, 2);
  if (block_t != nullptr && pads_t != nullptr && !in.unknown_rank()) {
    auto spec = ReadBlockSpec(*block_t, *pads_t, in.rank(), pads_name);
    if (!spec.ok()) return ctx.Error(spec.status().message());
    auto dims = BlockOutputDims(to_batch, in.dims(), *spec);
    if (!dims.ok()) return ctx.Error(dims.status().message());
    out = *PartialShape::FromDims(*dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status PrepareBlockBatchV1(PrepareContext& ctx) {
  auto st = std::make_shared<BlockV1State>();
  st->to_batch = ctx.op == "SpaceToBatch";
  const char* pads_name = st->to_batch ? "paddings" : "crops";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_RETURN_IF_ERROR(
      IndexInputDType(ctx, 1, pads_name, st->to_batch ? "Tpaddings" : "Tidx").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 4));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, pads_name, 2));
  KILN_PREPARE_ASSIGN(ctx, st->block_size, ctx.attrs.GetInt("block_size"));
  if (st->block_size < 2) {
    return ctx.Error("attr 'block_size' must be at least 2, got ", st->block_size);
  }
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out = UnknownDims(4);
  if (const Tensor* pads_t = ConstantInput(ctx, 1); pads_t != nullptr && !in.unknown_rank()) {
    Tensor block(DType::kInt64, Shape{2});
    block.data<int64_t>()[0] = block.data<int64_t>()[1] = st->block_size;
    auto spec = ReadBlockSpec(block, *pads_t, 4, pads_name);
    if (!spec.ok()) return ctx.Error(spec.status().message());
    auto dims = BlockOutputDims(st->to_batch, in.dims(), *spec);
    if (!dims.ok()) return ctx.Error(dims.status().message());
    out = *PartialShape::FromDims(*dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareBlockBatchWithState(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(PrepareBlockBatch(ctx));
  ctx.state = std::make_shared<TypedOpState<bool>>(ToBatch(ctx.op));
  return OkStatus();
}

// ---- SpaceToDepth, DepthToSpace --------------------------------------------------------------

Status PrepareDepth(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_PREPARE_ASSIGN(ctx, int64_t bs, ctx.attrs.GetInt("block_size"));
  if (bs < 2) return ctx.Error("attr 'block_size' must be at least 2, got ", bs);
  KILN_PREPARE_ASSIGN(ctx, std::string format, ctx.attrs.GetString("data_format", "NHWC"));
  if (format != "NHWC") {
    return PrepareUnimplemented(ctx, "attr 'data_format' \"", format,
                                "\" is not supported: TensorFlow's CPU kernel takes NHWC only");
  }
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 4));
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out = UnknownDims(4);
  if (!in.unknown_rank()) {
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
    if (ctx.op == "SpaceToDepth") {
      for (int d = 1; d <= 2; ++d) {
        if (dims[d] >= 0 && dims[d] % bs != 0) {
          return ctx.Error("image width and height ", in.ToPythonString(),
                           " should be divisible by block_size: ", bs);
        }
        if (dims[d] >= 0) dims[d] /= bs;
      }
      if (dims[3] >= 0) dims[3] *= bs * bs;
    } else {
      if (dims[3] >= 0 && dims[3] % (bs * bs) != 0) {
        return ctx.Error("input depth dimension ", dims[3], " should be divisible by: ", bs * bs);
      }
      for (int d = 1; d <= 2; ++d)
        if (dims[d] >= 0) dims[d] *= bs;
      if (dims[3] >= 0) dims[3] /= bs * bs;
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::make_shared<BlockState>(bs);
  return OkStatus();
}

// ---- ExtractImagePatches, ExtractVolumePatches ----------------------------------------------

using PatchTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, std::complex<float>, std::complex<double>>;

Status PreparePatches(PrepareContext& ctx) {
  const bool volume = ctx.op == "ExtractVolumePatches";
  const int spatial = volume ? 3 : 2, rank = spatial + 2;
  const char* input_name = volume ? "input" : "images";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, PatchTypes::kDTypes));
  if (volume && IsComplex(t))
    return ctx.Error("attr 'T' is ", DTypeShortName(t), ", expected a real number type");
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, input_name, t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, input_name, rank));
  auto state = std::make_shared<PatchState>();
  state->rank = rank;
  const char* names[] = {"ksizes", "strides", "rates"};
  int64_t* targets[] = {state->k, state->s, state->r};
  for (int a = 0; a < (volume ? 2 : 3); ++a) {
    KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> v, ctx.attrs.GetIntList(names[a]));
    if (static_cast<int>(v.size()) != rank || v[0] != 1 || v[rank - 1] != 1) {
      return ctx.Error("attr '", names[a], "' must be [1, ", volume ? "planes, " : "",
                       "rows, cols, 1], got ", DimsString(v),
                       " (only windows across space are supported)");
    }
    for (int i = 0; i < spatial; ++i) {
      if (v[1 + i] < 1)
        return ctx.Error("attr '", names[a], "' ", DimsString(v), " must be positive");
      targets[a][3 - spatial + i] = v[1 + i];
    }
  }
  KILN_PREPARE_ASSIGN(ctx, std::string padding, ctx.attrs.GetString("padding"));
  if (padding != "SAME" && padding != "VALID") {
    return ctx.Error("attr 'padding' must be \"SAME\" or \"VALID\", got \"", padding, "\"");
  }
  state->same = padding == "SAME";
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out = UnknownDims(rank);
  if (!in.unknown_rank()) {
    std::vector<int64_t> dims(rank, -1);
    dims[0] = in.dim(0);
    if (in.dim(rank - 1) >= 0)
      dims[rank - 1] = in.dim(rank - 1) * state->k[0] * state->k[1] * state->k[2];
    for (int i = 0; i < spatial; ++i) {
      if (in.dim(1 + i) < 0) continue;
      const int d = 3 - spatial + i;
      int64_t pad = 0;
      WindowedSize(in.dim(1 + i), state->k[d], state->s[d], state->r[d], state->same, &dims[1 + i],
                   &pad);
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"SpaceToBatchND", "output", kOpFreshOutputs, PrepareBlockBatchWithState},
    {"SpaceToBatch", "output", kOpFreshOutputs, PrepareBlockBatchV1},
    {"BatchToSpace", "output", kOpFreshOutputs, PrepareBlockBatchV1},
    {"BatchToSpaceND", "output", kOpFreshOutputs, PrepareBlockBatchWithState},
    {"SpaceToDepth", "output", kOpFreshOutputs, PrepareDepth},
    {"DepthToSpace", "output", kOpFreshOutputs, PrepareDepth},
    {"ExtractImagePatches", "patches", kOpFreshOutputs, PreparePatches},
    {"ExtractVolumePatches", "patches", kOpFreshOutputs, PreparePatches},
};

}  // namespace

std::span<const OpDefinition> SpaceOpDefs() { return kDefs; }

}  // namespace kiln::exec
