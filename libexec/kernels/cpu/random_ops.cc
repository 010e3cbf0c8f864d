// The CPU kernels of the ops in kernels/random_ops.cc: the stateful random ops, the candidate
// samplers, ComputeAccidentalHits and NonDeterministicInts.
//
// Checked against TensorFlow 2.21 (kernels_random_test.cc): stateless uniform and seeded
// stateful uniform / uniform-int values are identical; normal values agree to within float /
// double rounding (they go through log, sqrt, sin and cos, whose last bit may differ).
#include "kernels/random_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/cpu/random_util.h"
#include "kernels/kernel_util.h"
#include "kernels/philox.h"
#include "kernels/random_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {

using random::Philox;
using random_ops::SamplerKind;
using random_ops::SamplerState;
using random_ops::StatefulRandomState;

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

// Half and bfloat16 draw as TF's distributions for them do (cpu/random_util.h's FillFloatDraw);
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
Status ComputeMultinomial(const KernelContext& ctx) {
  const auto& st = ctx.state<StatefulRandomState>();
  return SampleMultinomial(ctx, st.dtype, [&](int64_t blocks) { return st.Reserve(blocks); });
}

// ---- Candidate samplers, ComputeAccidentalHits -----------------------------------------------

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

std::span<const KernelEntry> RandomCpuKernels() { return kCpu; }

}  // namespace kiln::exec
