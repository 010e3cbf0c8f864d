// Random tensors from Philox4x32-10, as TensorFlow makes them.
// Stateful ops (RandomStandardNormal, RandomUniform, RandomUniformInt, TruncatedNormal,
// RandomShuffle) keep one generator per
// node: seeded by attrs seed/seed2 (both 0: a fresh random seed), and each call reserves
// 256 blocks per output element as TF's GuardedPhiloxRandom does, so a seeded node repeats
// TF's sequence of calls. The candidate samplers of sampled softmax (and ComputeAccidentalHits,
// NonDeterministicInts) are here too, and the SampleDistortedBoundingBox ops (random crops for
// augmentation; the stateless one draws from its seed input). The stateless ops are in
// stateless_random_ops.cc. The CPU kernels are in kernels/cpu/random_ops.cc.
#include "kernels/random_ops.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/philox.h"
#include "kernels/random_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {

using random::Philox;
using random_ops::LearnedWeights;
using random_ops::SamplerKind;
using random_ops::SamplerState;
using random_ops::StatefulRandomState;

// ---- the shape input -------------------------------------------------------------------------

// The output spec from a 1-D int32/int64 "shape" input: exact when the input is a constant,
// else its length gives the rank when known.
Status PrepareShapeInput(PrepareContext& ctx, int i, DType index_type, PartialShape* out) {
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "shape", index_type));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, "shape", 1));
  const PartialShape& s = ctx.inputs[i].shape;
  const Tensor* value =
      ctx.constant_inputs.size() > static_cast<size_t>(i) ? ctx.constant_inputs[i] : nullptr;
  *out = PartialShape::UnknownRank();
  if (value != nullptr) {
    std::vector<int64_t> dims(value->NumElements());
    for (int64_t k = 0; k < value->NumElements(); ++k) {
      dims[k] =
          value->dtype() == DType::kInt32 ? value->data<int32_t>()[k] : value->data<int64_t>()[k];
      if (dims[k] < 0) {
        return ctx.Error("input 'shape': dimension ", k, " is ", dims[k],
                         ", expected a non-negative size");
      }
    }
    if (dims.size() > static_cast<size_t>(kMaxRank)) {
      return ctx.Error("input 'shape' has ", dims.size(), " dimensions, at most ", kMaxRank,
                       " are supported");
    }
    KILN_PREPARE_ASSIGN(ctx, *out, PartialShape::FromDims(dims));
  } else if (!s.unknown_rank() && s.dim(0) >= 0) {
    if (s.dim(0) > kMaxRank) {
      return ctx.Error("input 'shape' has ", s.dim(0), " dimensions, at most ", kMaxRank,
                       " are supported");
    }
    std::vector<int64_t> dims(s.dim(0), -1);
    KILN_PREPARE_ASSIGN(ctx, *out, PartialShape::FromDims(dims));
  }
  return OkStatus();
}

// ---- Multinomial (shared with StatelessMultinomial) ---------------------------------------

Result<DType> PrepareMultinomialSpecs(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(
      ctx, "T", t, {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16}));
  KILN_PREPARE_ASSIGN(ctx, DType out_type, ctx.attrs.GetType("output_dtype", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "output_dtype", out_type, kRandomIndexDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "logits", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "num_samples", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "logits", 2));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "num_samples", 0));
  const PartialShape& logits = ctx.inputs[0].shape;
  int64_t samples = -1;
  if (ctx.constant_inputs.size() > 1 && ctx.constant_inputs[1] != nullptr) {
    samples = ctx.constant_inputs[1]->scalar<int32_t>();
    if (samples < 0) {
      return ctx.Error("input 'num_samples' must be non-negative, got ", samples);
    }
  }
  ctx.outputs = {
      TensorSpec{out_type, PartialShape{logits.unknown_rank() ? -1 : logits.dim(0), samples}}};
  return out_type;
}

namespace {

// ---- stateful --------------------------------------------------------------------------------

// RandomStandardNormal, RandomUniform: (shape) -> dtype.
Status PrepareRandomFloat(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", dtype, FloatTypes::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kRandomIndexDTypes));
  PartialShape shape;
  KILN_RETURN_IF_ERROR(PrepareShapeInput(ctx, 0, t, &shape));
  KILN_PREPARE_ASSIGN(ctx, Philox gen, SeededGenerator(ctx));
  ctx.outputs = {TensorSpec{dtype, shape}};
  ctx.state = std::make_shared<StatefulRandomState>(dtype, gen);
  return OkStatus();
}

// RandomUniformInt: (shape, minval, maxval) -> Tout, in [minval, maxval).
Status PrepareRandomUniformInt(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType tout, ctx.attrs.GetType("Tout"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tout", tout, kRandomIndexDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kRandomIndexDTypes));
  PartialShape shape;
  KILN_RETURN_IF_ERROR(PrepareShapeInput(ctx, 0, t, &shape));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "minval", tout));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "maxval", tout));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "minval", 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "maxval", 0));
  KILN_PREPARE_ASSIGN(ctx, Philox gen, SeededGenerator(ctx));
  ctx.outputs = {TensorSpec{tout, shape}};
  ctx.state = std::make_shared<StatefulRandomState>(tout, gen);
  return OkStatus();
}

// ---- RandomShuffle ---------------------------------------------------------------------------

Status PrepareRandomShuffle(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "value"));
  KILN_PREPARE_ASSIGN(ctx, Philox gen, SeededGenerator(ctx));
  ctx.outputs = {ctx.inputs[0]};
  ctx.state = std::make_shared<StatefulRandomState>(t, gen);
  return OkStatus();
}

// ---- Multinomial -----------------------------------------------------------------------------

Status PrepareMultinomial(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType out_type, PrepareMultinomialSpecs(ctx));
  KILN_PREPARE_ASSIGN(ctx, Philox gen, SeededGenerator(ctx));
  ctx.state = std::make_shared<StatefulRandomState>(out_type, gen);
  return OkStatus();
}

// ---- Candidate samplers, ComputeAccidentalHits -----------------------------------------------

// TF's DistributionSampler: Walker's alias table over the weights.
void BuildAliasTable(SamplerState* st) {
  const auto n = static_cast<int32_t>(st->weights.size());
  st->prob.assign(n, 0.0f);
  st->alt.assign(n, -1);
  double sum = 0;
  for (float w : st->weights) sum += w;
  std::vector<double> pr(n);
  std::vector<int32_t> high, low;
  for (int32_t i = 0; i < n; ++i) {
    pr[i] = (static_cast<double>(st->weights[i]) * n) / sum;
    (pr[i] < 1.0 ? low : high).push_back(i);
  }
  while (!high.empty() && !low.empty()) {
    const int32_t l = low.back(), h = high.back();
    low.pop_back();
    high.pop_back();
    st->alt[l] = h;
    pr[h] -= 1.0 - pr[l];
    (pr[h] < 1.0 ? low : high).push_back(h);
  }
  for (int32_t i = 0; i < n; ++i) st->prob[i] = static_cast<float>(pr[i]);
  for (const auto* rest : {&high, &low})
    for (int32_t i : *rest) {
      st->prob[i] = 1.0f;
      st->alt[i] = i;
    }
}

template <SamplerKind kKind>
Status PrepareSampler(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "true_classes", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "true_classes", 2));
  KILN_PREPARE_ASSIGN(ctx, Philox gen, SeededGenerator(ctx));
  auto st = std::make_shared<SamplerState>(DType::kInt64, gen);
  st->kind = kKind;
  KILN_PREPARE_ASSIGN(ctx, st->num_true, ctx.attrs.GetInt("num_true"));
  KILN_PREPARE_ASSIGN(ctx, st->num_sampled, ctx.attrs.GetInt("num_sampled"));
  KILN_PREPARE_ASSIGN(ctx, st->unique, ctx.attrs.GetBool("unique", true));
  if (st->num_true < 1 || st->num_sampled < 1)
    return ctx.Error("attrs 'num_true' and 'num_sampled' must be >= 1, got ", st->num_true, " and ",
                     st->num_sampled);
  if (kKind == SamplerKind::kAll) {
    st->range = st->num_sampled;
  } else {
    KILN_PREPARE_ASSIGN(ctx, st->range, ctx.attrs.GetInt("range_max"));
    if (st->range < 1) return ctx.Error("attr 'range_max' must be >= 1, got ", st->range);
  }
  st->log_range = std::log1p(static_cast<double>(st->range));
  if constexpr (kKind == SamplerKind::kLearnedUnigram) {
    if (st->range >= std::numeric_limits<int32_t>::max())
      return ctx.Error("attr 'range_max' ", st->range, " must be below 2^31 - 1");
    st->learned = std::make_unique<LearnedWeights>(st->range);
  }
  if constexpr (kKind == SamplerKind::kFixedUnigram) {
    KILN_PREPARE_ASSIGN(ctx, std::string vocab, ctx.attrs.GetString("vocab_file", ""));
    std::vector<float> unigrams;
    if (ctx.attrs.Has("unigrams")) {
      KILN_PREPARE_ASSIGN(ctx, unigrams, ctx.attrs.GetFloatList("unigrams"));
    }
    if (!vocab.empty())
      return Unimplemented("node '", ctx.node_name, "' (", ctx.op,
                           "): reading unigram counts from 'vocab_file' is not supported; give "
                           "them in attr 'unigrams'");
    if (unigrams.empty()) return ctx.Error("Must provide either vocab_file or unigrams.");
    KILN_PREPARE_ASSIGN(ctx, float distortion, ctx.attrs.GetFloat("distortion", 1.0f));
    KILN_PREPARE_ASSIGN(ctx, int64_t reserved, ctx.attrs.GetInt("num_reserved_ids", 0));
    KILN_PREPARE_ASSIGN(ctx, int64_t shards, ctx.attrs.GetInt("num_shards", 1));
    KILN_PREPARE_ASSIGN(ctx, int64_t shard, ctx.attrs.GetInt("shard", 0));
    if (shards < 1 || shard < 0 || shard >= shards)
      return ctx.Error("attr 'shard' ", shard, " must be in [0, num_shards = ", shards, ")");
    int64_t id = 0;
    for (; id < reserved; ++id)
      if (id % shards == shard) st->weights.push_back(0.0f);
    for (float w : unigrams) {
      if (id % shards == shard) {
        const float d = std::pow(w, distortion);
        st->total_weight += d;
        st->weights.push_back(d);
      }
      ++id;
    }
    if (st->range != static_cast<int64_t>(st->weights.size()))
      return ctx.Error("range is ", st->range, " must be equal to weights size  ",
                       st->weights.size());
    BuildAliasTable(st.get());
  }
  const PartialShape& t = ctx.inputs[0].shape;
  if (!t.unknown_rank() && t.dim(1) >= 0 && t.dim(1) != st->num_true)
    return ctx.Error("true_classes must have num_true columns, expected: ", t.dim(1),
                     " was: ", st->num_true);
  ctx.outputs = {
      TensorSpec{DType::kInt64, PartialShape{st->num_sampled}},
      TensorSpec{DType::kFloat, PartialShape{t.unknown_rank() ? -1 : t.dim(0), st->num_true}},
      TensorSpec{DType::kFloat, PartialShape{st->num_sampled}}};
  ctx.state = std::move(st);
  return OkStatus();
}

// Where a true class is among the sampled candidates: (row, position among the candidates, a
// weight of -FLT_MAX) per hit, the last position for a repeated candidate, as TF's kernel.
Status PrepareAccidentalHits(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "true_classes", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "sampled_candidates", DType::kInt64));
  KILN_PREPARE_ASSIGN(ctx, int64_t num_true, ctx.attrs.GetInt("num_true"));
  ctx.outputs = {TensorSpec{DType::kInt32, PartialShape{-1}},
                 TensorSpec{DType::kInt64, PartialShape{-1}},
                 TensorSpec{DType::kFloat, PartialShape{-1}}};
  ctx.state = std::make_shared<TypedOpState<int64_t>>(num_true);
  return OkStatus();
}

// ---- NonDeterministicInts --------------------------------------------------------------------

// Integers from the machine's entropy (TF's op draws from a fresh random seed each call):
// every bit of the dtype random.
Status PrepareNonDeterministicInts(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(
      ctx, "dtype", dtype, {DType::kInt32, DType::kInt64, DType::kUInt32, DType::kUInt64}));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("shape_dtype", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "shape_dtype", t, kRandomIndexDTypes));
  PartialShape shape;
  KILN_RETURN_IF_ERROR(PrepareShapeInput(ctx, 0, t, &shape));
  ctx.outputs = {TensorSpec{dtype, shape}};
  ctx.state = std::make_shared<TypedOpState<DType>>(dtype);
  return OkStatus();
}

// ---- SampleDistortedBoundingBox, V2, Stateless --------------------------------------------------

// (image_size, bounding_boxes[, min_object_covered][, seed]) -> begin, size, bboxes; V1 has 2
// inputs (min_object_covered an attr), V2 3, the stateless op 4. The attrs are checked as TF's
// kernel constructor checks them.
template <int inputs>
Status PrepareDistortedBox(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(inputs));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(
      ctx, "T", t, {DType::kUInt8, DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "image_size", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "image_size", 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "bounding_boxes", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "bounding_boxes", 3));
  if (inputs >= 3) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "min_object_covered", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "min_object_covered", 0));
  }
  if (inputs == 4) {
    KILN_PREPARE_ASSIGN(ctx, DType tseed, ctx.attrs.GetType("Tseed", DType::kInt64));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tseed", tseed, kRandomIndexDTypes));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "seed", tseed));
  }
  // The stateless op draws from its seed input: no generator of its own.
  Philox gen(0, 0);
  if constexpr (inputs < 4) {
    KILN_PREPARE_ASSIGN(ctx, gen, SeededGenerator(ctx));
  }
  auto st = std::make_shared<random_ops::DistortedBoxState>(t, gen);
  if (inputs == 2) {
    KILN_PREPARE_ASSIGN(ctx, st->min_object_covered,
                        ctx.attrs.GetFloat("min_object_covered", 0.1f));
    if (!(st->min_object_covered >= 0))
      return ctx.Error("attr 'min_object_covered' must be non-negative, got ",
                       st->min_object_covered);
  }
  KILN_PREPARE_ASSIGN(ctx, st->use_image_if_no_bounding_boxes,
                      ctx.attrs.GetBool("use_image_if_no_bounding_boxes", false));
  auto pair = [&](const char* name, float* out) -> Status {
    if (!ctx.attrs.Has(name)) return OkStatus();  // TF's default, stripped from the graph
    KILN_ASSIGN_OR_RETURN(std::vector<float> v, ctx.attrs.GetFloatList(name));
    if (v.size() != 2) return ctx.Error("attr '", name, "' must hold 2 values, got ", v.size());
    out[0] = v[0];
    out[1] = v[1];
    return OkStatus();
  };
  KILN_RETURN_IF_ERROR(pair("aspect_ratio_range", st->aspect_ratio_range));
  KILN_RETURN_IF_ERROR(pair("area_range", st->area_range));
  if (!(st->aspect_ratio_range[0] > 0 && st->aspect_ratio_range[1] > 0))
    return ctx.Error("attr 'aspect_ratio_range' must be positive, got [", st->aspect_ratio_range[0],
                     ", ", st->aspect_ratio_range[1], "]");
  if (!(st->area_range[0] > 0 && st->area_range[1] > 0 && st->area_range[0] <= 1 &&
        st->area_range[1] <= 1))
    return ctx.Error("attr 'area_range' must lie in (0, 1], got [", st->area_range[0], ", ",
                     st->area_range[1], "]");
  KILN_PREPARE_ASSIGN(ctx, int64_t attempts, ctx.attrs.GetInt("max_attempts", 100));
  if (attempts <= 0 || attempts > std::numeric_limits<int32_t>::max())
    return ctx.Error("attr 'max_attempts' must be positive, got ", attempts);
  st->max_attempts = static_cast<int32_t>(attempts);
  ctx.outputs = {TensorSpec{t, PartialShape{3}}, TensorSpec{t, PartialShape{3}},
                 TensorSpec{DType::kFloat, PartialShape{1, 1, 4}}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"RandomStandardNormal", "output", kOpStateful | kOpFreshOutputs, PrepareRandomFloat},
    {"RandomUniform", "output", kOpStateful | kOpFreshOutputs, PrepareRandomFloat},
    {"RandomUniformInt", "output", kOpStateful | kOpFreshOutputs, PrepareRandomUniformInt},
    {"Multinomial", "output", kOpStateful | kOpFreshOutputs, PrepareMultinomial},
    {"TruncatedNormal", "output", kOpStateful | kOpFreshOutputs, PrepareRandomFloat},
    {"RandomShuffle", "output", kOpStateful | kOpFreshOutputs, PrepareRandomShuffle},
    {"UniformCandidateSampler", "sampled_candidates,true_expected_count,sampled_expected_count",
     kOpStateful | kOpFreshOutputs, PrepareSampler<SamplerKind::kUniform>},
    {"LogUniformCandidateSampler", "sampled_candidates,true_expected_count,sampled_expected_count",
     kOpStateful | kOpFreshOutputs, PrepareSampler<SamplerKind::kLogUniform>},
    {"AllCandidateSampler", "sampled_candidates,true_expected_count,sampled_expected_count",
     kOpStateful | kOpFreshOutputs, PrepareSampler<SamplerKind::kAll>},
    {"FixedUnigramCandidateSampler",
     "sampled_candidates,true_expected_count,sampled_expected_count", kOpStateful | kOpFreshOutputs,
     PrepareSampler<SamplerKind::kFixedUnigram>},
    {"LearnedUnigramCandidateSampler",
     "sampled_candidates,true_expected_count,sampled_expected_count", kOpStateful | kOpFreshOutputs,
     PrepareSampler<SamplerKind::kLearnedUnigram>},
    {"ThreadUnsafeUnigramCandidateSampler",
     "sampled_candidates,true_expected_count,sampled_expected_count", kOpStateful | kOpFreshOutputs,
     PrepareSampler<SamplerKind::kLearnedUnigram>},
    {"ComputeAccidentalHits", "indices,ids,weights", kOpFreshOutputs, PrepareAccidentalHits},
    {"NonDeterministicInts", "output", kOpStateful | kOpFreshOutputs, PrepareNonDeterministicInts},
    {"SampleDistortedBoundingBox", "begin,size,bboxes", kOpStateful | kOpFreshOutputs,
     PrepareDistortedBox<2>},
    {"SampleDistortedBoundingBoxV2", "begin,size,bboxes", kOpStateful | kOpFreshOutputs,
     PrepareDistortedBox<3>},
    {"StatelessSampleDistortedBoundingBox", "begin,size,bboxes", kOpFreshOutputs,
     PrepareDistortedBox<4>},
};

}  // namespace

Result<random::Philox> SeededGenerator(const PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(int64_t seed, ctx.attrs.GetInt("seed", 0));
  KILN_ASSIGN_OR_RETURN(int64_t seed2, ctx.attrs.GetInt("seed2", 0));
  uint64_t s1 = static_cast<uint64_t>(seed), s2 = static_cast<uint64_t>(seed2);
  if (s1 == 0 && s2 == 0) {  // unseeded: every node and every program run differ
    std::random_device rd;
    s1 = (uint64_t{rd()} << 32) | rd();
    s2 = (uint64_t{rd()} << 32) | rd();
  }
  return random::Philox(s1, s2);
}

std::span<const OpDefinition> RandomOpDefs() { return kDefs; }

}  // namespace kiln::exec
