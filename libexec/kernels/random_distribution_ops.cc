// Gamma, Poisson and binomial samples, as TensorFlow's CPU kernels draw them (the samplers are
// in random_samplers.h; SampleBinomial also serves stateful_random_ops.cc):
//   StatelessRandomGammaV2 (shape, seed, alpha), StatelessRandomGammaV3 (shape, key, counter,
//     alg, alpha), StatelessRandomPoisson (shape, seed, lam), StatelessRandomBinomial (shape,
//     seed, counts, probs): the output shape ends with the (broadcast) parameters' shape.
//   RandomGamma (shape, alpha), RandomPoissonV2 (shape, rate):
//     stateful, seeded by seed/seed2; the output shape is shape + the parameter's shape, and each
//     call moves the node's generator on by 256 blocks per output, as TF's GuardedPhiloxRandom.
//   StatelessParameterizedTruncatedNormal (shape, seed, means, stddevs, minvals, maxvals) and
//     the stateful ParameterizedTruncatedNormal (shape, means, stdevs, minvals, maxvals): one
//     stream drawn batch after batch (truncated_normal_sampler.h says where this is TF's).
//   StatelessShuffle (value, key, counter, alg): the rows in the order TF's RandomShuffle draws.
//   RandomIndexShuffle (index, seed [3] or [n, 3], max_index): the position of index in a
//     permutation of [0, max_index] (tf.random.experimental.index_shuffle), TF's Simon cipher.
// The CPU kernels are in kernels/cpu/random_distribution_ops.cc.
#include "kernels/random_distribution_ops.h"

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/random_util.h"

namespace kiln::exec {
namespace {

using random_distribution::BinomialParamTypes;
using random_distribution::DistState;
using random_distribution::GammaTypes;
using random_distribution::PoissonTypes;

// ---- prepare ---------------------------------------------------------------------------------

Status ExpectSeed(PrepareContext& ctx, int i) {
  KILN_PREPARE_ASSIGN(ctx, DType tseed, ctx.attrs.GetType("Tseed", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tseed", tseed, kRandomIndexDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "seed", tseed));
  if (!ctx.inputs[i].shape.IsCompatibleWith(PartialShape{2}))
    return ctx.Error("input 'seed' must have shape (2,), got ",
                     ctx.inputs[i].shape.ToPythonString());
  return OkStatus();
}

Status ExpectKeyCounterAlg(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "key", DType::kUInt64));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "counter", DType::kUInt64));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "alg", DType::kInt32));
  return ExpectInputRank(ctx, 3, "alg", 0);
}

// The shape input (input 0, dtype attr `shape_attr`) as the output's spec.
Status PrepareShape(PrepareContext& ctx, const char* shape_attr, DType shape_default,
                    PartialShape* out) {
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType(shape_attr, shape_default));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, shape_attr, t, kRandomIndexDTypes));
  return PrepareShapeInput(ctx, 0, t, out);
}

// StatelessRandomGammaV2/V3: output dtype "dtype", alpha of the same dtype.
template <bool kKeyCounter>
Status PrepareStatelessGamma(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kKeyCounter ? 5 : 3));
  auto st = std::make_shared<DistState>();
  st->key_counter = kKeyCounter;
  KILN_PREPARE_ASSIGN(ctx, st->out, ctx.attrs.GetType("dtype"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", st->out, GammaTypes::kDTypes));
  st->param = st->out;
  PartialShape shape;
  KILN_RETURN_IF_ERROR(PrepareShape(ctx, kKeyCounter ? "shape_dtype" : "T", DType::kInt32, &shape));
  if constexpr (kKeyCounter) {
    KILN_RETURN_IF_ERROR(ExpectKeyCounterAlg(ctx));
  } else {
    KILN_RETURN_IF_ERROR(ExpectSeed(ctx, 1));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, kKeyCounter ? 4 : 2, "alpha", st->out));
  ctx.outputs = {TensorSpec{st->out, shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// StatelessRandomPoisson(shape, seed, lam): lam of "Rtype", output of "dtype".
Status PrepareStatelessPoisson(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  auto st = std::make_shared<DistState>();
  KILN_PREPARE_ASSIGN(ctx, st->out, ctx.attrs.GetType("dtype"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", st->out, PoissonTypes::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, st->param, ctx.attrs.GetType("Rtype"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Rtype", st->param, PoissonTypes::kDTypes));
  PartialShape shape;
  KILN_RETURN_IF_ERROR(PrepareShape(ctx, "T", DType::kInt32, &shape));
  KILN_RETURN_IF_ERROR(ExpectSeed(ctx, 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "lam", st->param));
  ctx.outputs = {TensorSpec{st->out, shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// StatelessRandomBinomial(shape, seed, counts, probs): counts and probs of "T" (TF's CPU kernel
// has half, float and double), output of "dtype".
Status PrepareStatelessBinomial(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  auto st = std::make_shared<DistState>();
  KILN_PREPARE_ASSIGN(ctx, st->out, ctx.attrs.GetType("dtype", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", st->out, PoissonTypes::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, st->param, ctx.attrs.GetType("T", DType::kDouble));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->param, BinomialParamTypes::kDTypes));
  PartialShape shape;
  KILN_RETURN_IF_ERROR(PrepareShape(ctx, "S", DType::kInt32, &shape));
  KILN_RETURN_IF_ERROR(ExpectSeed(ctx, 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "counts", st->param));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "probs", st->param));
  ctx.outputs = {TensorSpec{st->out, shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// RandomGamma(shape, alpha: T), RandomPoissonV2(shape, rate: R) -> shape + the parameter's
// shape. (RandomPoisson, removed at GraphDef version 25, is refused by TF itself.)
enum class Stateful { kGamma, kPoissonV2 };

template <Stateful kOp>
Status PrepareStateful(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  auto st = std::make_shared<DistState>();
  if constexpr (kOp == Stateful::kGamma) {
    KILN_PREPARE_ASSIGN(ctx, st->out, ctx.attrs.GetType("T"));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->out, GammaTypes::kDTypes));
    st->param = st->out;
  } else {
    KILN_PREPARE_ASSIGN(ctx, st->out, ctx.attrs.GetType("dtype", DType::kInt64));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", st->out, PoissonTypes::kDTypes));
    KILN_PREPARE_ASSIGN(ctx, st->param, ctx.attrs.GetType("R", DType::kDouble));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "R", st->param, PoissonTypes::kDTypes));
  }
  PartialShape shape;
  KILN_RETURN_IF_ERROR(PrepareShape(ctx, "S", DType::kInt32, &shape));
  KILN_RETURN_IF_ERROR(
      ExpectInputDType(ctx, 1, kOp == Stateful::kGamma ? "alpha" : "rate", st->param));
  const PartialShape& param = ctx.inputs[1].shape;
  PartialShape out;  // unknown rank unless both are known
  if (!shape.unknown_rank() && !param.unknown_rank()) {
    std::vector<int64_t> dims(shape.dims().begin(), shape.dims().end());
    dims.insert(dims.end(), param.dims().begin(), param.dims().end());
    if (dims.size() > static_cast<size_t>(kMaxRank))
      return ctx.Error("output rank ", dims.size(), " is above the supported ", kMaxRank);
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  }
  KILN_PREPARE_ASSIGN(ctx, st->generator, SeededGenerator(ctx));
  ctx.outputs = {TensorSpec{st->out, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- parameterized truncated normal ----------------------------------------------------------

// StatelessParameterizedTruncatedNormal(shape: S, seed, means, stddevs, minvals, maxvals) and
// ParameterizedTruncatedNormal(shape: T, means, stdevs, minvals, maxvals; seed, seed2).
template <bool kStateless>
Status PrepareTruncatedNormal(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kStateless ? 6 : 5));
  auto st = std::make_shared<DistState>();
  KILN_PREPARE_ASSIGN(ctx, st->out, ctx.attrs.GetType("dtype"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", st->out, GammaTypes::kDTypes));
  st->param = st->out;
  PartialShape shape;
  KILN_RETURN_IF_ERROR(PrepareShape(ctx, kStateless ? "S" : "T", DType::kInt32, &shape));
  const int first = kStateless ? 2 : 1;
  if constexpr (kStateless) {
    KILN_RETURN_IF_ERROR(ExpectSeed(ctx, 1));
  } else {
    KILN_PREPARE_ASSIGN(ctx, st->generator, SeededGenerator(ctx));
  }
  const char* names[] = {"means", kStateless ? "stddevs" : "stdevs", "minvals", "maxvals"};
  for (int i = 0; i < 4; ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, first + i, names[i], st->out));
  ctx.outputs = {TensorSpec{st->out, shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- StatelessShuffle(value, key, counter, alg) ----------------------------------------------

Status PrepareStatelessShuffle(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "value"));
  KILN_RETURN_IF_ERROR(ExpectKeyCounterAlg(ctx));
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}};
  return OkStatus();
}

// ---- RandomIndexShuffle(index, seed, max_index) ---------------------------------------------

constexpr std::initializer_list<DType> kIndexShuffleTypes = {DType::kInt32, DType::kInt64,
                                                             DType::kUInt32, DType::kUInt64};

// A scalar when index and max_index are scalars and seed a vector, else a vector of the
// largest of their sizes (seed rows of 3).
Status PrepareRandomIndexShuffle(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("dtype"));
  KILN_PREPARE_ASSIGN(ctx, DType tseed, ctx.attrs.GetType("Tseed"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", t, kIndexShuffleTypes));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tseed", tseed, kIndexShuffleTypes));
  KILN_PREPARE_ASSIGN(ctx, int64_t rounds, ctx.attrs.GetInt("rounds", 4));
  if (rounds < 4 || rounds % 2 != 0)
    return ctx.Error("attr 'rounds' must be even and at least 4, got ", rounds);
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "index", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "seed", tseed));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "max_index", t));
  const int ri = ctx.inputs[0].shape.rank(), rs = ctx.inputs[1].shape.rank(),
            rm = ctx.inputs[2].shape.rank();
  if (ri > 1 || rm > 1 || (rs >= 0 && (rs < 1 || rs > 2)))
    return ctx.Error(
        "index and max_index must be scalars or vectors and seed a vector or "
        "matrix, got shapes ",
        ctx.inputs[0].shape.ToPythonString(), ", ", ctx.inputs[1].shape.ToPythonString(), ", ",
        ctx.inputs[2].shape.ToPythonString());
  PartialShape out = PartialShape{-1};
  if (ri == 0 && rs == 1 && rm == 0) out = PartialShape::Scalar();
  if (ri < 0 || rs < 0 || rm < 0) out = PartialShape::UnknownRank();
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::make_shared<TypedOpState<int64_t>>(rounds);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr uint32_t kFresh = kOpFreshOutputs;
constexpr uint32_t kStateful = kOpStateful | kOpFreshOutputs;

constexpr OpDefinition kDefs[] = {
    {"StatelessRandomGammaV2", "output", kFresh, PrepareStatelessGamma<false>},
    {"StatelessRandomGammaV3", "output", kFresh, PrepareStatelessGamma<true>},
    {"StatelessRandomPoisson", "output", kFresh, PrepareStatelessPoisson},
    {"StatelessRandomBinomial", "output", kFresh, PrepareStatelessBinomial},
    {"RandomGamma", "output", kStateful, PrepareStateful<Stateful::kGamma>},
    {"RandomPoissonV2", "output", kStateful, PrepareStateful<Stateful::kPoissonV2>},
    {"StatelessParameterizedTruncatedNormal", "output", kFresh, PrepareTruncatedNormal<true>},
    {"ParameterizedTruncatedNormal", "output", kStateful, PrepareTruncatedNormal<false>},
    {"StatelessShuffle", "output", kFresh, PrepareStatelessShuffle},
    {"RandomIndexShuffle", "output", kFresh, PrepareRandomIndexShuffle},
};

}  // namespace

std::span<const OpDefinition> RandomDistributionOpDefs() { return kDefs; }

}  // namespace kiln::exec
