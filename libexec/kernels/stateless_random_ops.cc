// Stateless random ops: the same seed gives the same values on every call, as TensorFlow
// computes them (tf.random.stateless_*, Keras's seeded layers).
//   V1 (seed [2] input): StatelessRandomUniform/Normal, StatelessTruncatedNormal,
//     StatelessRandomUniformInt, StatelessRandomUniformFullInt, StatelessMultinomial. The key
//     and counter come from the seed as TF's GenerateKey makes them.
//   V2 (key [1], counter [2] uint64 and alg inputs, what TF 2 graphs hold):
//     StatelessRandomGetKeyCounter(Alg), StatelessRandomGetAlg, StatelessRandomUniformV2,
//     StatelessRandomNormalV2, StatelessTruncatedNormalV2, StatelessRandomUniformIntV2,
//     StatelessRandomUniformFullIntV2. Only the Philox algorithm (1, and "auto" 3, which is
//     Philox on CPUs); Threefry (2) is TPU-only in TF and refused here.
//   StochasticCastToInt (key, counter and alg inputs too): floats rounded to a neighbouring
//     integer at random, with TF's draws (see its section).
// The CPU kernels are in kernels/cpu/stateless_random_ops.cc.
#include "kernels/stateless_random_ops.h"

#include <cstdint>
#include <memory>
#include <utility>

#include "kernels/kernel_util.h"
#include "kernels/random_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using stateless_random::CastInTypes;
using stateless_random::CastOutTypes;
using stateless_random::CastState;
using stateless_random::Draw;
using stateless_random::FullIntTypes;
using stateless_random::StatelessFloatTypes;
using stateless_random::StatelessState;

using StatelessIntTypes = TypeList<int32_t, int64_t>;

// ---- prepare ---------------------------------------------------------------------------------

Status ExpectV2Inputs(PrepareContext& ctx, int first) {
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, first, "key", DType::kUInt64));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, first + 1, "counter", DType::kUInt64));
  return ExpectInputDType(ctx, first + 2, "alg", DType::kInt32);
}

Status ExpectSeedInput(PrepareContext& ctx, int i) {
  KILN_PREPARE_ASSIGN(ctx, DType tseed, ctx.attrs.GetType("Tseed", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tseed", tseed, kRandomIndexDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "seed", tseed));
  if (!ctx.inputs[i].shape.IsCompatibleWith(PartialShape{2}))
    return ctx.Error("input 'seed' must have shape (2,), got ",
                     ctx.inputs[i].shape.ToPythonString());
  return OkStatus();
}

template <Draw kDraw, bool kV2>
Status PrepareStateless(PrepareContext& ctx) {
  constexpr bool kInt = kDraw == Draw::kUniformInt;
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs((kV2 ? 4 : 2) + (kInt ? 2 : 0)));
  auto st = std::make_shared<StatelessState>();
  st->draw = kDraw;
  st->v2 = kV2;
  if constexpr (kDraw == Draw::kUniformInt || kDraw == Draw::kFullInt) {
    // TF's default for the FullInt ops is uint64, and a SavedModel leaves default attrs out;
    // the ranged UniformInt ops always carry dtype.
    KILN_PREPARE_ASSIGN(
        ctx, st->dtype,
        ctx.attrs.GetType("dtype", kDraw == Draw::kFullInt ? DType::kUInt64 : DType::kInt64));
    if (kDraw == Draw::kFullInt || kV2) {
      KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", st->dtype, FullIntTypes::kDTypes));
    } else {
      KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", st->dtype, StatelessIntTypes::kDTypes));
    }
  } else {
    KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("dtype", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", st->dtype, StatelessFloatTypes::kDTypes));
  }
  const char* shape_attr = kV2 ? "Tshape" : "T";
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType(shape_attr, DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, shape_attr, t, kRandomIndexDTypes));
  PartialShape shape;
  KILN_RETURN_IF_ERROR(PrepareShapeInput(ctx, 0, t, &shape));
  if constexpr (kV2) {
    KILN_RETURN_IF_ERROR(ExpectV2Inputs(ctx, 1));
  } else {
    KILN_RETURN_IF_ERROR(ExpectSeedInput(ctx, 1));
  }
  if constexpr (kInt) {
    const int lo = kV2 ? 4 : 2;
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, lo, "minval", st->dtype));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, lo + 1, "maxval", st->dtype));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, lo, "minval", 0));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, lo + 1, "maxval", 0));
  }
  ctx.outputs = {TensorSpec{st->dtype, shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- key, counter and algorithm --------------------------------------------------------------

// StatelessRandomGetKeyCounter(seed) -> key [1], counter [2]; ...Alg also -> alg.
template <bool kWithAlg>
Status PrepareGetKeyCounter(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectSeedInput(ctx, 0));
  ctx.outputs = {TensorSpec{DType::kUInt64, PartialShape{1}},
                 TensorSpec{DType::kUInt64, PartialShape{2}}};
  if (kWithAlg) ctx.outputs.push_back(TensorSpec{DType::kInt32, PartialShape::Scalar()});
  return OkStatus();
}

Status PrepareGetAlg(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  ctx.outputs = {TensorSpec{DType::kInt32, PartialShape::Scalar()}};
  ctx.constant_outputs = {Tensor::Scalar<int32_t>(kRngAlgPhilox)};
  return OkStatus();
}

// ---- StatelessMultinomial(logits, num_samples, seed) -----------------------------------------

Status PrepareStatelessMultinomial(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_RETURN_IF_ERROR(PrepareMultinomialSpecs(ctx).status());
  KILN_RETURN_IF_ERROR(ExpectSeedInput(ctx, 2));
  ctx.state = std::make_shared<TypedOpState<DType>>(ctx.outputs[0].dtype);
  return OkStatus();
}

// ---- StochasticCastToInt(input, key, counter, alg) -------------------------------------------

Status PrepareStochasticCast(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  auto st = std::make_shared<CastState>();
  KILN_PREPARE_ASSIGN(ctx, st->in, ctx.attrs.GetType("Tin"));
  KILN_PREPARE_ASSIGN(ctx, st->out, ctx.attrs.GetType("Tout"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tin", st->in, CastInTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tout", st->out, CastOutTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->in));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "key", DType::kUInt64));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "counter", DType::kUInt64));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "alg", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "key", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "counter", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "alg", 0));
  if (!ctx.inputs[1].shape.IsCompatibleWith(PartialShape{1}))
    return ctx.Error("input 'key' must have shape (1,), got ",
                     ctx.inputs[1].shape.ToPythonString());
  ctx.outputs = {TensorSpec{st->out, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr uint32_t kFresh = kOpFreshOutputs;

constexpr OpDefinition kDefs[] = {
    {"StatelessRandomUniform", "output", kFresh, PrepareStateless<Draw::kUniform, false>},
    {"StatelessRandomNormal", "output", kFresh, PrepareStateless<Draw::kNormal, false>},
    {"StatelessTruncatedNormal", "output", kFresh, PrepareStateless<Draw::kTruncatedNormal, false>},
    {"StatelessRandomUniformInt", "output", kFresh, PrepareStateless<Draw::kUniformInt, false>},
    {"StatelessRandomUniformFullInt", "output", kFresh, PrepareStateless<Draw::kFullInt, false>},
    {"StatelessRandomUniformV2", "output", kFresh, PrepareStateless<Draw::kUniform, true>},
    {"StatelessRandomNormalV2", "output", kFresh, PrepareStateless<Draw::kNormal, true>},
    {"StatelessTruncatedNormalV2", "output", kFresh,
     PrepareStateless<Draw::kTruncatedNormal, true>},
    {"StatelessRandomUniformIntV2", "output", kFresh, PrepareStateless<Draw::kUniformInt, true>},
    {"StatelessRandomUniformFullIntV2", "output", kFresh, PrepareStateless<Draw::kFullInt, true>},
    {"StatelessRandomGetKeyCounter", "key,counter", kFresh, PrepareGetKeyCounter<false>},
    {"StatelessRandomGetKeyCounterAlg", "key,counter,alg", kFresh, PrepareGetKeyCounter<true>},
    {"StatelessRandomGetAlg", "alg", kFresh, PrepareGetAlg},
    {"StatelessMultinomial", "output", kFresh, PrepareStatelessMultinomial},
    {"StochasticCastToInt", "output", kFresh, PrepareStochasticCast},
};

}  // namespace

std::span<const OpDefinition> StatelessRandomOpDefs() { return kDefs; }

}  // namespace kiln::exec
