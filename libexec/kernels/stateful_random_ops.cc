// tf.random.Generator's ops: a Philox stream whose state lives in an int64 resource variable
// (the 128-bit counter as two int64s, then the 64-bit key), as TensorFlow's
// stateful_random_ops.cc keeps it.
//   StatefulUniform, StatefulStandardNormalV2, StatefulTruncatedNormal, StatefulUniformInt,
//   StatefulUniformFullInt (resource, algorithm, shape[, minval, maxval]): draw what the
//     stateless V2 op draws from the same key and counter, then move the counter on by 256
//     blocks per output element (TF's UpdateVariableAndFill, whatever the distribution).
//   StatefulRandomBinomial (resource, algorithm, shape, counts, probs): the binomial samples of
//     StatelessRandomBinomial from the state's stream; TF moves the counter on by
//     256 * (batches * 200 * (samples per batch + 3) / 4) blocks and takes Philox only.
//   RngSkip (resource, algorithm, delta) and RngReadAndSkip (resource, alg, delta -> the
//     state before): move the counter on by 256 * delta blocks (what TF 2's Generator draws
//     with: RngReadAndSkip, then a stateless V2 op).
// Only Philox (1, and auto-select 3, which is Philox on CPUs) runs: ThreeFry is XLA-only in TF.
// The CPU kernels are in kernels/cpu/stateful_random_ops.cc.
#include "kernels/stateful_random_ops.h"

#include <cstdint>
#include <memory>
#include <utility>

#include "kernels/kernel_util.h"
#include "kernels/random_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using stateful_random::Draw;
using stateful_random::FloatTypes;
using stateful_random::FullIntTypes;
using stateful_random::IntTypes;
using stateful_random::kPhiloxStateSize;
using stateful_random::StatefulState;

// ---- the draws -------------------------------------------------------------------------------

template <Draw kDraw>
Status PrepareStateful(PrepareContext& ctx) {
  constexpr bool kInt = kDraw == Draw::kUniformInt;
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kInt ? 5 : 3));
  auto st = std::make_shared<StatefulState>();
  st->draw = kDraw;
  if constexpr (kDraw == Draw::kFullInt) {
    KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("dtype", DType::kUInt64));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", st->dtype, FullIntTypes::kDTypes));
  } else if constexpr (kInt) {
    KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("dtype", DType::kInt64));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", st->dtype, IntTypes::kDTypes));
  } else {
    KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("dtype", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", st->dtype, FloatTypes::kDTypes));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "algorithm", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "algorithm", 0));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("shape_dtype", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "shape_dtype", t, kRandomIndexDTypes));
  PartialShape shape;
  KILN_RETURN_IF_ERROR(PrepareShapeInput(ctx, 2, t, &shape));
  if constexpr (kInt) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "minval", st->dtype));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 4, "maxval", st->dtype));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "minval", 0));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 4, "maxval", 0));
  }
  ctx.outputs = {TensorSpec{st->dtype, shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- StatefulRandomBinomial(resource, algorithm, shape: S, counts: T, probs: T) ---------------

using BinomialParamTypes = TypeList<float, double, Half>;
using BinomialOutTypes = TypeList<float, double, Half, int32_t, int64_t>;

Status PrepareBinomial(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(5));
  auto st = std::make_shared<StatefulState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("dtype", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", st->dtype, BinomialOutTypes::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, st->param, ctx.attrs.GetType("T", DType::kDouble));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->param, BinomialParamTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "algorithm", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "algorithm", 0));
  KILN_PREPARE_ASSIGN(ctx, DType s, ctx.attrs.GetType("S"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "S", s, kRandomIndexDTypes));
  PartialShape shape;
  KILN_RETURN_IF_ERROR(PrepareShapeInput(ctx, 2, s, &shape));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "counts", st->param));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 4, "probs", st->param));
  ctx.outputs = {TensorSpec{st->dtype, shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- RngSkip(resource, algorithm: int64, delta: int64) ---------------------------------------

Status PrepareRngSkip(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "algorithm", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "delta", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "algorithm", 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "delta", 0));
  ctx.outputs = {};
  return OkStatus();
}

// ---- RngReadAndSkip(resource, alg: int32, delta: uint64) -> value: int64 [3] -----------------

Status PrepareRngReadAndSkip(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "alg", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "delta", DType::kUInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "alg", 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "delta", 0));
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape{kPhiloxStateSize}}};
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr uint32_t kStateful = kOpStateful | kOpFreshOutputs;

constexpr OpDefinition kDefs[] = {
    {"StatefulUniform", "output", kStateful, PrepareStateful<Draw::kUniform>},
    {"StatefulStandardNormalV2", "output", kStateful, PrepareStateful<Draw::kNormal>},
    {"StatefulTruncatedNormal", "output", kStateful, PrepareStateful<Draw::kTruncatedNormal>},
    {"StatefulUniformInt", "output", kStateful, PrepareStateful<Draw::kUniformInt>},
    {"StatefulUniformFullInt", "output", kStateful, PrepareStateful<Draw::kFullInt>},
    {"StatefulRandomBinomial", "output", kStateful, PrepareBinomial},
    {"RngSkip", "", kOpStateful, PrepareRngSkip},
    {"RngReadAndSkip", "value", kStateful, PrepareRngReadAndSkip},
};

}  // namespace

std::span<const OpDefinition> StatefulRandomOpDefs() { return kDefs; }

}  // namespace kiln::exec
