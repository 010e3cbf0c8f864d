// Random tensors from Philox4x32-10, as TensorFlow makes them.
// Stateful ops (RandomStandardNormal, RandomUniform, RandomUniformInt, TruncatedNormal,
// RandomShuffle) keep one generator per
// node: seeded by attrs seed/seed2 (both 0: a fresh random seed), and each call reserves
// 256 blocks per output element as TF's GuardedPhiloxRandom does, so a seeded node repeats
// TF's sequence of calls. The candidate samplers of sampled softmax (and ComputeAccidentalHits,
// NonDeterministicInts) are here too. The stateless ops are in stateless_random_ops.cc.
//
// Checked against TensorFlow 2.21 (kernels_random_test.cc): stateless uniform and seeded
// stateful uniform / uniform-int values are identical; normal values agree to within float /
// double rounding (they go through log, sqrt, sin and cos, whose last bit may differ).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/eigen_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/philox.h"
#include "kernels/random_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {

using random::Philox;

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

Result<Shape> ShapeFromInput(const KernelContext& ctx, const Tensor& t) {
  if (t.rank() != 1 || (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)) {
    return ctx.Error("input 'shape' must be a 1-D int32 or int64 tensor, got ", t.DebugString());
  }
  std::vector<int64_t> dims(t.NumElements());
  for (int64_t k = 0; k < t.NumElements(); ++k) {
    dims[k] = t.dtype() == DType::kInt32 ? t.data<int32_t>()[k] : t.data<int64_t>()[k];
  }
  Result<Shape> shape = Shape::FromDims(dims);
  if (!shape.ok()) return ctx.Error("input 'shape': ", shape.status().message());
  return shape;
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

Status SampleMultinomial(const KernelContext& ctx, DType out_type,
                         FunctionRef<Philox(int64_t blocks)> generator) {
  const Tensor& logits = ctx.input(0);
  const Tensor& samples_t = ctx.input(1);
  if (logits.rank() != 2) {
    return ctx.Error("input 'logits' must be a matrix, got shape ", logits.shape().ToString());
  }
  if (samples_t.rank() != 0) {
    return ctx.Error("input 'num_samples' must be a scalar, got shape ",
                     samples_t.shape().ToString());
  }
  const int64_t samples = samples_t.scalar<int32_t>();
  if (samples < 0) return ctx.Error("input 'num_samples' must be non-negative, got ", samples);
  const int64_t batch = logits.dim(0), classes = logits.dim(1);
  if (classes <= 0) {
    return ctx.Error("input 'logits' must have at least one class, got shape ",
                     logits.shape().ToString());
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_type, Shape{batch, samples}));
  if (out->NumElements() == 0) return OkStatus();
  const int64_t ceil4 = (samples + 3) / 4 * 4 * 2;  // doubles: two outputs per sample
  Philox gen = generator(batch * ceil4);
  KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(double) * classes));
  double* cdf = static_cast<double*>(mem);
  // TF's SingleSampleAdapter: the four outputs of a block, one at a time.
  Philox::Result block{};
  int used = 4;
  auto next32 = [&]() {
    if (used == 4) {
      block = gen();
      used = 0;
    }
    return block[used++];
  };
  return Dispatch<TypeList<float, double, Half, BFloat16>>(logits.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* l = ComputeData<T>(logits);
    return Dispatch<TypeList<int32_t, int64_t>>(out_type, [&](auto index_tag) {
      using Index = typename decltype(index_tag)::type;
      Index* o = out->data<Index>();
      for (int64_t b = 0; b < batch; ++b) {
        const C* row = l + b * classes;
        C max = std::numeric_limits<C>::lowest();
        for (int64_t j = 0; j < classes; ++j)
          if (Eigen::numext::isfinite(row[j]) && row[j] > max) max = row[j];
        const double max_logit = static_cast<double>(max);
        double total = 0;
        for (int64_t j = 0; j < classes; ++j) {
          if (Eigen::numext::isfinite(row[j]))
            total += std::exp(static_cast<double>(row[j]) - max_logit);
          cdf[j] = total;
        }
        for (int64_t k = 0; k < samples; ++k) {
          const uint32_t x0 = next32();
          const uint32_t x1 = next32();
          const double to_find = random::Uint64ToDouble(x0, x1) * total;
          o[b * samples + k] =
              static_cast<Index>(std::upper_bound(cdf, cdf + classes, to_find) - cdf);
        }
      }
      return OkStatus();
    });
  });
}

namespace {

// ---- stateful --------------------------------------------------------------------------------

// Multiplier of TF's ReserveRandomOutputs: blocks skipped per output element.
constexpr uint64_t kBlocksPerOutput = 256;

struct StatefulRandomState : OpState {
  StatefulRandomState(DType dtype, Philox gen) : dtype(dtype), generator(gen) {}
  DType dtype;
  mutable std::mutex mu;
  mutable Philox generator;  // guarded by mu

  // The generator for a call producing `n` values; the node's own moves past them.
  Philox Reserve(int64_t n) const {
    return ReserveBlocks(static_cast<uint64_t>(n) * kBlocksPerOutput);
  }
  // The same for a call that uses `blocks` Philox blocks (TF's ReserveSamples128).
  Philox ReserveBlocks(uint64_t blocks) const {
    std::lock_guard<std::mutex> lock(mu);
    Philox local = generator;
    generator.Skip(blocks);
    return local;
  }
};

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

// Half and bfloat16 draw as TF's distributions for them do (random_util.h's FillFloatDraw);
// the stream skips the same blocks whatever the dtype.
template <RandomDraw kDraw>
Status ComputeRandomFloat(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromInput(ctx, ctx.input(0)));
  const auto& st = ctx.state<StatefulRandomState>();
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, st.dtype, shape));
  const Philox gen = st.Reserve(out->NumElements());
  return Dispatch<FloatTypes>(st.dtype, [&](auto tag) {
    FillFloatDraw<typename decltype(tag)::type>(kDraw, gen, out);
    return OkStatus();
  });
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

Status ComputeRandomUniformInt(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromInput(ctx, ctx.input(0)));
  const Tensor& lo_t = ctx.input(1);
  const Tensor& hi_t = ctx.input(2);
  if (lo_t.rank() != 0 || hi_t.rank() != 0) {
    return ctx.Error("inputs 'minval' and 'maxval' must be scalars, got shapes ",
                     lo_t.shape().ToString(), " and ", hi_t.shape().ToString());
  }
  const auto& st = ctx.state<StatefulRandomState>();
  KILN_ASSIGN_OR_RETURN(Tensor * out_ptr, ctx.AllocateOutput(0, st.dtype, shape));
  Tensor& out = *out_ptr;
  return Dispatch<TypeList<int32_t, int64_t>>(st.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T lo = lo_t.scalar<T>(), hi = hi_t.scalar<T>();
    if (out.NumElements() > 0 && !(lo < hi)) {
      return ctx.Error("need minval < maxval, got ", lo, " >= ", hi);
    }
    if (out.NumElements() > 0) {
      const Philox gen = st.Reserve(out.NumElements());
      random::FillPhilox(gen, random::UniformIntDist<T>(lo, hi), out.data<T>(), out.NumElements());
    }
    return OkStatus();
  });
}

// ---- TruncatedNormal -------------------------------------------------------------------------

// TruncatedNormal: normals redrawn until inside two standard deviations; TF's stream (its
// PhiloxRandomOp with TruncatedNormalDistribution: groups of a variable number of samples, each
// group 256 / 4 * kCount blocks after the previous one), ComputeRandomFloat's kTruncatedNormal.

// ---- RandomShuffle ---------------------------------------------------------------------------

Status PrepareRandomShuffle(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "value"));
  KILN_PREPARE_ASSIGN(ctx, Philox gen, SeededGenerator(ctx));
  ctx.outputs = {ctx.inputs[0]};
  ctx.state = std::make_shared<StatefulRandomState>(t, gen);
  return OkStatus();
}

// The rows (dim 0) in a random order, as TF's kernel draws it: size - 1 32-bit samples, swap
// i with i + sample % (size - i) for i = 0 .. size - 2.
Status ComputeRandomShuffle(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  if (x.rank() == 0 || x.dim(0) <= 1 || x.NumElements() <= 1) {
    CopyElementRange(x, 0, out, 0, x.NumElements());
    return OkStatus();
  }
  const int64_t size = x.dim(0), row = x.NumElements() / size, samples = size - 1;
  Philox gen = ctx.state<StatefulRandomState>().ReserveBlocks((samples + 3) / 4);
  random::SingleSamples single(&gen);
  std::vector<int64_t> perm(size);
  for (int64_t i = 0; i < size; ++i) perm[i] = i;
  for (int64_t i = 0; i + 1 < size; ++i) {
    const int64_t j = i + single() % static_cast<uint32_t>(size - i);
    std::swap(perm[i], perm[j]);
  }
  for (int64_t i = 0; i < size; ++i) CopyElementRange(x, perm[i] * row, out, i * row, row);
  return OkStatus();
}

// ---- Multinomial -----------------------------------------------------------------------------

// Multinomial(logits [batch, classes], num_samples) -> [batch, num_samples] class ids, as TF's
// CPU kernel draws them: each row's unnormalised CDF of exp(logit - max) over the finite
// logits, searched with one uniform double per sample (two 32-bit outputs of the generator).
// The call reserves batch * ceil4(num_samples) * 2 outputs of the node's generator; the rows
// then draw one after another from its start, which is TF's sequence when TF runs the batch as
// one shard (its split of larger batches depends on its thread pool).
Status PrepareMultinomial(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType out_type, PrepareMultinomialSpecs(ctx));
  KILN_PREPARE_ASSIGN(ctx, Philox gen, SeededGenerator(ctx));
  ctx.state = std::make_shared<StatefulRandomState>(out_type, gen);
  return OkStatus();
}

Status ComputeMultinomial(const KernelContext& ctx) {
  const auto& st = ctx.state<StatefulRandomState>();
  return SampleMultinomial(ctx, st.dtype, [&](int64_t blocks) { return st.Reserve(blocks); });
}

// ---- Candidate samplers, ComputeAccidentalHits -----------------------------------------------

// TF's range samplers (sampled softmax's negatives): num_sampled candidates from [0, range),
// each call reserving 512 * num_sampled blocks of the node's generator as TF's CandidateSamplerOp
// (2048 * num_sampled 32-bit samples); unique draws reject repeats. The expected counts are TF's
// ExpectedCountHelper in float. Uniform and LogUniform (Zipfian) draw directly, All returns
// 0 .. num_sampled - 1, FixedUnigram draws from `unigrams` (raised to `distortion`, this shard's
// ids) by TF's alias table, LearnedUnigram and ThreadUnsafeUnigram from counts the true classes
// of every call raise (one picker per node, as TF's kernel keeps).
enum class SamplerKind { kUniform, kLogUniform, kAll, kFixedUnigram, kLearnedUnigram };

// TF's WeightedPicker for the learned unigram samplers: integer weights, all 1 at first, each
// true class's raised by one after every call; a pick is Uniform(total) located in the running
// sum (a Fenwick tree here, TF's a binary tree: the same element).
class LearnedWeights {
 public:
  explicit LearnedWeights(int64_t n) : weight_(n, 1), tree_(n + 1, 0), total_(n) {
    for (int64_t i = 0; i < n; ++i) Add(i, 1);
  }
  int64_t total() const { return total_; }
  int32_t weight(int64_t i) const { return weight_[i]; }
  void Increment(int64_t i) {
    ++weight_[i];
    ++total_;
    Add(i, 1);
  }
  // The first element whose running sum exceeds `target` (< total).
  int64_t PickAt(int64_t target) const {
    const auto n = static_cast<int64_t>(weight_.size());
    int64_t pos = 0;
    int64_t step = 1;
    while (step * 2 <= n) step *= 2;
    for (; step > 0; step /= 2) {
      if (pos + step <= n && tree_[pos + step] <= target) {
        pos += step;
        target -= tree_[pos];
      }
    }
    return pos;
  }

 private:
  void Add(int64_t i, int64_t delta) {
    for (int64_t k = i + 1; k < static_cast<int64_t>(tree_.size()); k += k & -k) tree_[k] += delta;
  }
  std::vector<int32_t> weight_;
  std::vector<int64_t> tree_;
  int64_t total_;
};

struct SamplerState : StatefulRandomState {
  using StatefulRandomState::StatefulRandomState;
  SamplerKind kind = SamplerKind::kUniform;
  int64_t num_true = 1, num_sampled = 1, range = 1;
  bool unique = true;
  double log_range = 0;        // LogUniform: log1p(range)
  std::vector<float> weights;  // FixedUnigram: per id
  float total_weight = 0;
  std::vector<float> prob;  // its alias table
  std::vector<int32_t> alt;
  // LearnedUnigram: the picker, changed by every call (after its draws, under `learned_mu`).
  mutable std::mutex learned_mu;
  mutable std::unique_ptr<LearnedWeights> learned;

  float Probability(int64_t v) const {
    switch (kind) {
      case SamplerKind::kUniform:
        return static_cast<float>(1.0 / static_cast<double>(range));
      case SamplerKind::kLogUniform:
        return static_cast<float>(
            std::log((static_cast<double>(v) + 2.0) / (static_cast<double>(v) + 1.0)) / log_range);
      case SamplerKind::kFixedUnigram:
        return v < 0 || v >= static_cast<int64_t>(weights.size()) ? 0.0f
                                                                  : weights[v] / total_weight;
      case SamplerKind::kLearnedUnigram:
        return static_cast<float>(learned->weight(v)) / static_cast<float>(learned->total());
      case SamplerKind::kAll:
        break;
    }
    return 1.0f;
  }
  int64_t Sample(random::SimplePhilox* rng) const {
    switch (kind) {
      case SamplerKind::kUniform:
        return static_cast<int64_t>(rng->Uniform64(static_cast<uint64_t>(range)));
      case SamplerKind::kLogUniform:
        return (static_cast<int64_t>(std::exp(rng->RandDouble() * log_range)) - 1) % range;
      case SamplerKind::kFixedUnigram: {
        const float r = rng->RandFloat();
        const auto idx = static_cast<int32_t>(rng->Uniform(static_cast<uint32_t>(prob.size())));
        return r < prob[idx] ? idx : alt[idx];
      }
      case SamplerKind::kLearnedUnigram:
        return learned->PickAt(rng->Uniform(static_cast<uint32_t>(learned->total())));
      case SamplerKind::kAll:
        break;
    }
    return 0;
  }
};

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

// (1 - (1 - p)^tries), or p * batch when every try was kept; in float as TF.
float ExpectedCount(float p, int64_t batch, int64_t tries) {
  if (tries == batch) return p * static_cast<float>(batch);
  return -std::expm1(static_cast<float>(tries) * std::log1p(-p));
}

Status ComputeSampler(const KernelContext& ctx) {
  const auto& st = ctx.state<SamplerState>();
  const Tensor& truth = ctx.input(0);
  if (truth.rank() != 2) return ctx.Error("true_classes must be a matrix");
  if (truth.dim(1) != st.num_true)
    return ctx.Error("true_classes must have num_true columns, expected: ", truth.dim(1),
                     " was: ", st.num_true);
  if (st.unique && st.num_sampled > st.range) return ctx.Error("Sampler's range is too small.");
  for (int64_t i = 0; i < truth.NumElements(); ++i) {
    const int64_t v = truth.data<int64_t>()[i];
    if (v < 0 || v >= st.range)
      return ctx.Error("`true_candidate` out of range [0, ", st.range, "), received ", v);
  }
  const int64_t n = st.num_sampled;
  KILN_ASSIGN_OR_RETURN(Tensor * sampled, ctx.AllocateOutput(0, Shape{n}));
  KILN_ASSIGN_OR_RETURN(Tensor * true_count, ctx.AllocateOutput(1, truth.shape()));
  KILN_ASSIGN_OR_RETURN(Tensor * sampled_count, ctx.AllocateOutput(2, Shape{n}));
  int64_t* out = sampled->data<int64_t>();
  std::unique_lock<std::mutex> learned_lock(st.learned_mu, std::defer_lock);
  if (st.kind == SamplerKind::kLearnedUnigram) learned_lock.lock();
  Philox gen = st.ReserveBlocks(static_cast<uint64_t>(512 * n));
  random::SimplePhilox rng(&gen);
  int64_t tries = n;
  if (st.kind == SamplerKind::kAll) {
    for (int64_t i = 0; i < n; ++i) out[i] = i;
  } else if (st.unique) {
    std::unordered_set<int64_t> used;
    tries = 0;
    // TF CHECK-fails after 2^31 tries (a fixed unigram with fewer nonzero counts than
    // num_sampled never finishes); an error here, after far fewer.
    const int64_t max_tries = std::max<int64_t>(int64_t{1} << 22, 1000 * n);
    for (int64_t picked = 0; picked < n;) {
      if (++tries > max_tries)
        return ctx.Error("drew ", max_tries, " candidates without finding ", n,
                         " distinct ones: fewer than num_sampled have a nonzero probability");
      const int64_t v = st.Sample(&rng);
      if (used.insert(v).second) out[picked++] = v;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = st.Sample(&rng);
  }
  const bool all = st.kind == SamplerKind::kAll;
  for (int64_t i = 0; i < n; ++i)
    sampled_count->data<float>()[i] = all ? 1.0f : ExpectedCount(st.Probability(out[i]), n, tries);
  for (int64_t i = 0; i < truth.NumElements(); ++i)
    true_count->data<float>()[i] =
        all ? 1.0f : ExpectedCount(st.Probability(truth.data<int64_t>()[i]), n, tries);
  if (st.kind == SamplerKind::kLearnedUnigram) {  // TF's Update: the true classes count up
    const int64_t room = std::numeric_limits<int32_t>::max() - st.learned->total();
    for (int64_t i = 0; i < std::min(truth.NumElements(), room); ++i)
      st.learned->Increment(truth.data<int64_t>()[i]);
  }
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

Status ComputeAccidentalHits(const KernelContext& ctx) {
  const int64_t num_true = ctx.state<TypedOpState<int64_t>>().value;
  const Tensor& truth = ctx.input(0);
  const Tensor& cand = ctx.input(1);
  if (truth.rank() != 2 || truth.dim(1) != num_true)
    return ctx.Error("true_candidates must be a batch_size * num_true matrix");
  if (cand.rank() != 1)
    return ctx.Error(
        "sampled_candidates must be a vector, which is typically an output from "
        "CandidateSampler");
  std::unordered_map<int64_t, int64_t> pos;
  for (int64_t i = 0; i < cand.NumElements(); ++i) pos[cand.data<int64_t>()[i]] = i;
  std::vector<int32_t> rows;
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < truth.dim(0); ++i)
    for (int64_t j = 0; j < num_true; ++j) {
      const auto it = pos.find(truth.data<int64_t>()[i * num_true + j]);
      if (it == pos.end()) continue;
      rows.push_back(static_cast<int32_t>(i));
      ids.push_back(it->second);
    }
  const auto hits = static_cast<int64_t>(rows.size());
  KILN_ASSIGN_OR_RETURN(Tensor * o_rows, ctx.AllocateOutput(0, Shape{hits}));
  KILN_ASSIGN_OR_RETURN(Tensor * o_ids, ctx.AllocateOutput(1, Shape{hits}));
  KILN_ASSIGN_OR_RETURN(Tensor * o_w, ctx.AllocateOutput(2, Shape{hits}));
  std::copy(rows.begin(), rows.end(), o_rows->data<int32_t>());
  std::copy(ids.begin(), ids.end(), o_ids->data<int64_t>());
  std::fill_n(o_w->data<float>(), hits, -std::numeric_limits<float>::max());
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

Status ComputeNonDeterministicInts(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromInput(ctx, ctx.input(0)));
  KILN_ASSIGN_OR_RETURN(Tensor * out,
                        ctx.AllocateOutput(0, ctx.state<TypedOpState<DType>>().value, shape));
  std::random_device rd;
  Philox gen((uint64_t{rd()} << 32) | rd(), (uint64_t{rd()} << 32) | rd());
  random::SingleSamples single(&gen);
  auto* bytes = static_cast<uint32_t*>(out->raw_data());
  for (size_t i = 0; i < out->ByteSize() / sizeof(uint32_t); ++i) bytes[i] = single();
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
};

constexpr KernelEntry kCpu[] = {
    {"RandomStandardNormal", ComputeRandomFloat<RandomDraw::kNormal>},
    {"RandomUniform", ComputeRandomFloat<RandomDraw::kUniform>},
    {"RandomUniformInt", ComputeRandomUniformInt},
    {"Multinomial", ComputeMultinomial},
    {"TruncatedNormal", ComputeRandomFloat<RandomDraw::kTruncatedNormal>},
    {"RandomShuffle", ComputeRandomShuffle},
    {"UniformCandidateSampler", ComputeSampler},
    {"LogUniformCandidateSampler", ComputeSampler},
    {"AllCandidateSampler", ComputeSampler},
    {"FixedUnigramCandidateSampler", ComputeSampler},
    {"LearnedUnigramCandidateSampler", ComputeSampler},
    {"ThreadUnsafeUnigramCandidateSampler", ComputeSampler},
    {"ComputeAccidentalHits", ComputeAccidentalHits},
    {"NonDeterministicInts", ComputeNonDeterministicInts},
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
std::span<const KernelEntry> RandomCpuKernels() { return kCpu; }

}  // namespace kiln::exec
