// The CPU kernels of the gamma, Poisson, binomial, parameterized truncated normal and
// StatelessShuffle ops in kernels/random_distribution_ops.cc (the samplers are in
// random_samplers.h and truncated_normal_sampler.h; SampleBinomial also serves
// cpu/stateful_random_ops.cc).
// Gamma, Poisson and binomial output element i (counted parameter-major: i = param * samples +
// sample) draws from the stream skipped by 256 * i blocks (42 for the binomial inversion) and lands
// at sample * params + param, so values do not depend on how the work is split.
#include "kernels/random_distribution_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/cpu/random_util.h"
#include "kernels/kernel_util.h"
#include "kernels/philox.h"
#include "kernels/random_samplers.h"
#include "kernels/strided_walk.h"
#include "kernels/truncated_normal_sampler.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using random::Philox;

using random_distribution::BinomialParamTypes;
using random_distribution::DistState;
using random_distribution::GammaTypes;
using random_distribution::PoissonTypes;

// ---- where the stream starts (cpu/random_util.h) -----------------------------------------------

Result<Philox> StatelessGeneratorOf(const KernelContext& ctx, bool key_counter) {
  if (key_counter) return GeneratorFromKeyCounter(ctx, ctx.input(1), ctx.input(2), ctx.input(3));
  return GeneratorFromSeed(ctx, ctx.input(1));
}

// Whether `shape` ends with `suffix` (TF's TensorShapeUtils::EndsWith).
bool EndsWith(const Shape& shape, const Shape& suffix) {
  if (suffix.rank() > shape.rank()) return false;
  const int skip = shape.rank() - suffix.rank();
  for (int i = 0; i < suffix.rank(); ++i)
    if (shape.dim(skip + i) != suffix.dim(i)) return false;
  return true;
}

// ---- compute ---------------------------------------------------------------------------------

// For each output element i of `n` (parameter-major), draws sample(param, gen skipped by i *
// blocks) into out[sample * params + param]. `sample` gets the parameter's index and the
// generator.
template <typename U, typename Sample>
void FillPerOutput(const KernelContext& ctx, Philox gen, int64_t n, int64_t params, uint64_t blocks,
                   U* out, const Sample& sample) {
  const int64_t per_param = n / params;
  ctx.threads().ParallelFor(n, 64, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t p = i / per_param, s = i % per_param;
      Philox g = gen;
      g.Skip(static_cast<uint64_t>(i) * blocks);
      out[s * params + p] = sample(p, g);
    }
  });
}

template <typename T>
void FillGamma(const KernelContext& ctx, const Tensor& alpha, Philox gen, bool log1p, Tensor* out) {
  using C = ComputeType<T>;
  const C* a = ComputeData<T>(alpha);
  FillPerOutput(ctx, gen, out->NumElements(), alpha.NumElements(), random::kBlocksPerSample,
                MutableComputeData<T>(out), [&](int64_t p, Philox g) {
                  const random::GammaSampler sampler(static_cast<double>(a[p]), log1p);
                  return static_cast<C>(sampler(g));
                });
}

Status DispatchGamma(const KernelContext& ctx, DType t, const Tensor& alpha, Philox gen, bool log1p,
                     Tensor* out) {
  return Dispatch<GammaTypes>(t, [&](auto tag) {
    FillGamma<typename decltype(tag)::type>(ctx, alpha, gen, log1p, out);
    return OkStatus();
  });
}

// Poisson draws; a NaN rate (which never ends TF's loop) gives what a NaN converts to.
template <typename R, typename U>
void FillPoisson(const KernelContext& ctx, const Tensor& rate, Philox gen, Tensor* out) {
  using CR = ComputeType<R>;
  using CU = ComputeType<U>;
  const CR* r = ComputeData<R>(rate);
  const double highest = static_cast<double>(Eigen::NumTraits<CU>::highest());
  FillPerOutput(ctx, gen, out->NumElements(), rate.NumElements(), random::kBlocksPerSample,
                MutableComputeData<U>(out), [&](int64_t p, Philox g) {
                  const double lam = static_cast<double>(r[p]);
                  if (std::isnan(lam)) return random::CastSample<CU>(lam);
                  return random::CastSample<CU>(random::PoissonSampler(lam, highest)(g));
                });
}

Status DispatchPoisson(const KernelContext& ctx, DType rate_type, DType out_type,
                       const Tensor& rate, Philox gen, Tensor* out) {
  return Dispatch<PoissonTypes>(rate_type, [&](auto rtag) {
    return Dispatch<PoissonTypes>(out_type, [&](auto utag) {
      FillPoisson<typename decltype(rtag)::type, typename decltype(utag)::type>(ctx, rate, gen,
                                                                                out);
      return OkStatus();
    });
  });
}

// The index of `t` (broadcast to `shape`) for each flat index of `shape`.
std::vector<int64_t> BroadcastIndices(const Shape& t, const Shape& shape) {
  const auto strides = BroadcastStrides(t, shape);
  std::vector<int64_t> idx(static_cast<size_t>(shape.num_elements()));
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    int64_t rest = i, at = 0;
    for (int d = shape.rank() - 1; d >= 0; --d) {
      at += (rest % shape.dim(d)) * strides[d];
      rest /= shape.dim(d);
    }
    idx[i] = at;
  }
  return idx;
}

// One binomial draw as TF's RandomBinomialFunctor picks the method: the comparisons and
// count * prob in the parameters' type, the sampling in double.
template <typename C, typename CU>
CU BinomialSample(C count, C prob, Philox gen, int64_t i) {
  const double dcount = static_cast<double>(count);
  auto skipped = [&](uint64_t blocks) {
    Philox g = gen;
    g.Skip(static_cast<uint64_t>(i) * blocks);
    return g;
  };
  if (std::isnan(dcount)) return random::CastSample<CU>(dcount);  // TF never ends its loop
  if (dcount <= 0.0 || prob <= C(0.0)) return random::CastSample<CU>(0.0);
  if (prob >= C(1.0)) return random::CastSample<CU>(dcount);
  if (prob <= C(0.5)) {
    const double dp = static_cast<double>(prob);
    if (count * prob >= C(10))
      return random::CastSample<CU>(random::BinomialBtrs(dcount, dp, skipped(256)));
    return random::CastSample<CU>(random::BinomialInversion(dcount, dp, skipped(42)));
  }
  if (prob > C(0.5)) {
    const C q = C(1) - prob;
    const double dq = static_cast<double>(q);
    if (count * q >= C(10))
      return random::CastSample<CU>(dcount - random::BinomialBtrs(dcount, dq, skipped(256)));
    return random::CastSample<CU>(dcount - random::BinomialInversion(dcount, dq, skipped(42)));
  }
  return random::CastSample<CU>(std::numeric_limits<double>::quiet_NaN());  // prob is NaN
}

Status ComputeStatelessBinomial(const KernelContext& ctx) {
  const auto& st = ctx.state<DistState>();
  KILN_ASSIGN_OR_RETURN(Philox gen, GeneratorFromSeed(ctx, ctx.input(1)));
  return SampleBinomial(ctx, st.param, st.out, /*shape_input=*/0, /*counts_input=*/2,
                        [&](int64_t, int64_t) -> Result<Philox> { return gen; });
}

// StatelessRandomGammaV2/V3 and StatelessRandomPoisson: the output has the shape input's
// shape, which must end with the parameter's shape (the last input).
template <bool kGamma>
Status ComputeStatelessDist(const KernelContext& ctx) {
  const auto& st = ctx.state<DistState>();
  KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromInput(ctx, ctx.input(0)));
  KILN_ASSIGN_OR_RETURN(Philox gen, StatelessGeneratorOf(ctx, st.key_counter));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, st.out, shape));
  if (out->NumElements() == 0) return OkStatus();
  const Tensor& param = ctx.input(ctx.num_inputs() - 1);
  const char* name = kGamma ? "alpha" : "lam";
  if (!EndsWith(shape, param.shape()))
    return ctx.Error("input 'shape' ", shape.ToString(), " must end with the shape ",
                     param.shape().ToString(), " of '", name, "'");
  if (kGamma) return DispatchGamma(ctx, st.out, param, gen, /*log1p=*/true, out);
  return DispatchPoisson(ctx, st.param, st.out, param, gen, out);
}

template <bool kGamma>
Status ComputeStatefulDist(const KernelContext& ctx) {
  const auto& st = ctx.state<DistState>();
  KILN_ASSIGN_OR_RETURN(Shape samples, ShapeFromInput(ctx, ctx.input(0)));
  const Tensor& param = ctx.input(1);
  if (samples.rank() + param.rank() > kMaxRank)
    return ctx.Error("output rank ", samples.rank() + param.rank(), " is above the supported ",
                     kMaxRank);
  Shape shape = samples;
  for (int64_t d : param.shape().dims()) shape.AddDim(d);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, st.out, shape));
  if (samples.num_elements() == 0) return OkStatus();
  if (param.NumElements() == 0) {
    if (kGamma) return ctx.Error("input 'alpha' should have non-zero element count, got 0");
    return OkStatus();
  }
  const Philox gen = st.Reserve(out->NumElements());
  if (kGamma) return DispatchGamma(ctx, st.out, param, gen, /*log1p=*/false, out);
  return DispatchPoisson(ctx, st.param, st.out, param, gen, out);
}

// ---- parameterized truncated normal ----------------------------------------------------------

// The parameters of each batch: index[k][b] is parameter k's element for batch b.
template <typename C>
random::TruncatedNormalParams<C> BatchParams(const std::array<const C*, 4>& p,
                                             const std::array<std::vector<int64_t>, 4>& index,
                                             int64_t b) {
  return {p[0][index[0][b]], p[1][index[1][b]], p[2][index[2][b]], p[3][index[3][b]]};
}

template <typename T>
Status SampleBatches(const KernelContext& ctx, Philox gen, int first_param,
                     const std::array<std::vector<int64_t>, 4>& index, int64_t batches,
                     int64_t per_batch, bool batch_major, Tensor* out) {
  using C = ComputeType<T>;
  std::array<const C*, 4> p;
  for (int k = 0; k < 4; ++k) p[k] = ComputeData<T>(ctx.input(first_param + k));
  C* o = MutableComputeData<T>(out);
  const int64_t n = out->NumElements();
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t count = std::min(per_batch, n - b * per_batch);
    // The stateless op writes sample j of batch b at j * batches + b (its output ends with the
    // parameters' shape), the stateful one at b * per_batch + j.
    const char* error = random::SampleTruncatedNormal<C>(
        gen, BatchParams(p, index, b), count,
        [&](int64_t j, C v) { o[batch_major ? b * per_batch + j : j * batches + b] = v; });
    if (error != nullptr) return ctx.Error(error);
  }
  return OkStatus();
}

Status ComputeStatelessTruncatedNormal(const KernelContext& ctx) {
  const auto& st = ctx.state<DistState>();
  KILN_ASSIGN_OR_RETURN(Philox gen, GeneratorFromSeed(ctx, ctx.input(1)));
  Shape batch;  // the four parameters broadcast together
  for (int k = 0; k < 4; ++k) {
    Result<Shape> b = BroadcastShapes(batch, ctx.input(2 + k).shape());
    if (!b.ok())
      return ctx.Error(
          "inputs 'means', 'stddevs', 'minvals' and 'maxvals' must have compatible "
          "batch dimensions: ",
          ctx.input(2).shape().ToString(), " vs. ", ctx.input(3).shape().ToString(), " vs. ",
          ctx.input(4).shape().ToString(), " vs. ", ctx.input(5).shape().ToString());
    batch = *b;
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromInput(ctx, ctx.input(0)));
  if (!EndsWith(shape, batch))
    return ctx.Error("input 'shape' ", shape.ToString(), " must end with the broadcast shape ",
                     batch.ToString(), " of the parameters");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, st.out, shape));
  if (out->NumElements() == 0) return OkStatus();
  const int64_t batches = batch.num_elements();
  std::array<std::vector<int64_t>, 4> index;
  for (int k = 0; k < 4; ++k) index[k] = BroadcastIndices(ctx.input(2 + k).shape(), batch);
  return Dispatch<GammaTypes>(st.out, [&](auto tag) {
    return SampleBatches<typename decltype(tag)::type>(ctx, gen, 2, index, batches,
                                                       out->NumElements() / batches,
                                                       /*batch_major=*/false, out);
  });
}

// TF's int32 arithmetic for the blocks a stateful call reserves (it wraps on huge outputs).
int64_t ReservedTruncatedNormalBlocks(int64_t batches, int64_t per_batch) {
  auto wrap = [](int64_t v) { return static_cast<int64_t>(static_cast<int32_t>(v)); };
  const int64_t product = wrap(wrap(wrap(wrap(batches) * 2) * 1000) * wrap(per_batch + 3));
  return product / 4;
}

Status ComputeTruncatedNormal(const KernelContext& ctx) {
  const auto& st = ctx.state<DistState>();
  const Tensor& shape_t = ctx.input(0);
  if (shape_t.rank() != 1 || shape_t.NumElements() == 0)
    return ctx.Error("input 'shape' must be a non-empty vector, got ", shape_t.DebugString());
  KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromInput(ctx, shape_t));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, st.out, shape));
  const int64_t n = out->NumElements();
  int64_t batches = shape.dim(0);
  int64_t per_batch = batches == 0 ? 0 : n / batches;
  const char* names[] = {"means", "stdevs", "minvals", "maxvals"};
  bool all_shared = true;  // every parameter a scalar or of length 1 (min/max: scalars)
  for (int k = 0; k < 4; ++k) {
    const Tensor& p = ctx.input(1 + k);
    if (p.rank() > 1)
      return ctx.Error("input '", names[k], "' should be a scalar or vector, got shape ",
                       p.shape().ToString());
    all_shared = all_shared && (k < 2 ? p.NumElements() == 1 : p.rank() == 0);
  }
  if (all_shared) {  // TF regroups the samples in batches of 100
    batches = (n + 99) / 100;
    per_batch = 100;
  } else {
    for (int k = 0; k < 4; ++k) {
      const Tensor& p = ctx.input(1 + k);
      if (p.rank() == 1 && p.dim(0) != 1 && p.dim(0) != batches)
        return ctx.Error("input '", names[k], "' should have length 1 or shape[0] = ", batches,
                         ", got shape ", p.shape().ToString());
    }
  }
  Philox gen;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    gen = st.generator;
    st.generator.Skip(static_cast<uint64_t>(ReservedTruncatedNormalBlocks(batches, per_batch)));
  }
  if (n == 0) return OkStatus();
  std::array<std::vector<int64_t>, 4> index;
  for (int k = 0; k < 4; ++k) {
    const Tensor& p = ctx.input(1 + k);
    index[k].resize(static_cast<size_t>(batches));
    for (int64_t b = 0; b < batches; ++b) index[k][b] = p.NumElements() == 1 ? 0 : b;
  }
  return Dispatch<GammaTypes>(st.out, [&](auto tag) {
    return SampleBatches<typename decltype(tag)::type>(ctx, gen, 1, index, batches, per_batch,
                                                       /*batch_major=*/true, out);
  });
}

// ---- StatelessShuffle(value, key, counter, alg) ----------------------------------------------

// The rows (dim 0) in TF's random order: size - 1 32-bit samples of the stream, row i swapped
// with row i + sample % (size - i) for i = 0 .. size - 2 (as RandomShuffle, random_ops.cc).
Status ComputeStatelessShuffle(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Philox gen, StatelessGeneratorOf(ctx, /*key_counter=*/true));
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  if (x.rank() == 0 || x.dim(0) <= 1 || x.NumElements() <= 1) {
    CopyElementRange(x, 0, out, 0, x.NumElements());
    return OkStatus();
  }
  const int64_t size = x.dim(0), row = x.NumElements() / size;
  random::SingleSamples single(&gen);
  std::vector<int64_t> perm(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) perm[i] = i;
  for (int64_t i = 0; i + 1 < size; ++i) {
    const int64_t j = i + single() % static_cast<uint32_t>(size - i);
    std::swap(perm[i], perm[j]);
  }
  for (int64_t i = 0; i < size; ++i) CopyElementRange(x, perm[i] * row, out, i * row, row);
  return OkStatus();
}

// ---- RandomIndexShuffle(index, seed, max_index) ---------------------------------------------

// TF's random_index_shuffle.cc: a Simon-like Feistel cipher on blocks of 2W bits (the smallest
// even width >= ceil(log2(max_index)), at least 16) with key schedule from the 3 seed words,
// applied until the value falls in [0, max_index] (cycle walking), so it is a bijection.
uint64_t IndexShuffle(uint64_t index, const std::array<uint32_t, 3>& key, uint64_t max_index,
                      int64_t rounds) {
  if (max_index == 0) return 0;
  int block = static_cast<int>(std::ceil(std::log2(static_cast<double>(max_index))));
  block = std::max(block + block % 2, 16);
  if (block > 64) block = 64;
  const int w = block / 2;  // at most 32
  const uint64_t mask = (uint64_t{1} << w) - 1;
  const auto rotl = [&](uint64_t x, int r) { return ((x << r) | (x >> (w - r))) & mask; };
  const auto rotr = [&](uint64_t x, int r) { return ((x >> r) | (x << (w - r))) & mask; };
  const auto f = [&](uint64_t x) { return (rotl(x, 1) & rotl(x, 8)) ^ rotl(x, 2); };
  std::vector<uint64_t> rk = {key[0] & mask, key[1] & mask, key[2] & mask};
  uint64_t z = 0x7369f885192c0ef5ULL & mask;
  const uint64_t c = 0xfffffffcULL & mask;
  for (int64_t i = 3; i < rounds; ++i) {
    rk.push_back(c ^ (z & 1) ^ rk[i - 3] ^ rotr(rk[i - 1], 3) ^ rotr(rk[i - 1], 4));
    z >>= 1;
  }
  uint64_t v = index;
  while (true) {
    uint64_t left = (v >> w) & mask, right = v & mask;
    for (size_t i = 0; i + 1 < rk.size(); i += 2) {
      left ^= f(right) ^ rk[i];
      right ^= f(left) ^ rk[i + 1];
    }
    v = (left << w) | right;
    if (v <= max_index) return v;
  }
}

template <typename T>
uint64_t IndexValueAt(const Tensor& t, int64_t i) {
  return static_cast<uint64_t>(t.data<T>()[t.rank() == 0 ? 0 : i]);
}

uint64_t ValueAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kInt32:
      return IndexValueAt<int32_t>(t, i);
    case DType::kUInt32:
      return IndexValueAt<uint32_t>(t, i);
    case DType::kInt64:
      return IndexValueAt<int64_t>(t, i);
    default:
      return IndexValueAt<uint64_t>(t, i);
  }
}

Status ComputeRandomIndexShuffle(const KernelContext& ctx) {
  const Tensor& index = ctx.input(0);
  const Tensor& seed = ctx.input(1);
  const Tensor& max_index = ctx.input(2);
  const int64_t rounds = ctx.state<TypedOpState<int64_t>>().value;
  const bool all_scalar = index.rank() == 0 && seed.rank() == 1 && max_index.rank() == 0;
  const int64_t n =
      std::max({index.NumElements(), max_index.NumElements(), seed.NumElements() / 3});
  if (!(index.rank() == 0 || (index.rank() == 1 && index.dim(0) == n)))
    return ctx.Error("index must be a scalar or a vector of ", n, " values, got shape ",
                     index.shape().ToString());
  if (!((seed.rank() == 1 && seed.dim(0) == 3) ||
        (seed.rank() == 2 && seed.dim(0) == n && seed.dim(1) == 3)))
    return ctx.Error("seed must be a vector of size [3] or a matrix of size [", n, ", 3] but got ",
                     seed.shape().ToString());
  if (!(max_index.rank() == 0 || (max_index.rank() == 1 && max_index.dim(0) == n)))
    return ctx.Error("max_index must be a scalar or a vector of ", n, " values, got shape ",
                     max_index.shape().ToString());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, all_scalar ? Shape() : Shape{n}));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = seed.rank() == 1 ? 0 : i;
    const std::array<uint32_t, 3> key = {static_cast<uint32_t>(ValueAt(seed, 3 * row)),
                                         static_cast<uint32_t>(ValueAt(seed, 3 * row + 1)),
                                         static_cast<uint32_t>(ValueAt(seed, 3 * row + 2))};
    const uint64_t idx = ValueAt(index, i), max = ValueAt(max_index, i);
    // TF's checks: signed values below 0 read as huge unsigned ones
    const bool is_signed = index.dtype() == DType::kInt32 || index.dtype() == DType::kInt64;
    if (is_signed && static_cast<int64_t>(idx) < 0)
      return ctx.Error("index must be >= 0 but was ", static_cast<int64_t>(idx));
    if (is_signed && static_cast<int64_t>(max) < 0)
      return ctx.Error("max_index must be >= 0 but was ", static_cast<int64_t>(max));
    if (max < idx) return ctx.Error("max_index must be >= index, but ", max, " < ", idx);
    const uint64_t v = IndexShuffle(idx, key, max, rounds);
    switch (out->dtype()) {
      case DType::kInt32:
        out->data<int32_t>()[i] = static_cast<int32_t>(v);
        break;
      case DType::kUInt32:
        out->data<uint32_t>()[i] = static_cast<uint32_t>(v);
        break;
      case DType::kInt64:
        out->data<int64_t>()[i] = static_cast<int64_t>(v);
        break;
      default:
        out->data<uint64_t>()[i] = v;
    }
  }
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"StatelessRandomGammaV2", ComputeStatelessDist<true>},
    {"StatelessRandomGammaV3", ComputeStatelessDist<true>},
    {"StatelessRandomPoisson", ComputeStatelessDist<false>},
    {"StatelessRandomBinomial", ComputeStatelessBinomial},
    {"RandomGamma", ComputeStatefulDist<true>},
    {"RandomPoissonV2", ComputeStatefulDist<false>},
    {"StatelessParameterizedTruncatedNormal", ComputeStatelessTruncatedNormal},
    {"ParameterizedTruncatedNormal", ComputeTruncatedNormal},
    {"StatelessShuffle", ComputeStatelessShuffle},
    {"RandomIndexShuffle", ComputeRandomIndexShuffle},
};

}  // namespace

// ---- binomial samples (cpu/random_util.h) ------------------------------------------------------

Status SampleBinomial(
    const KernelContext& ctx, DType param_type, DType out_type, int shape_input, int counts_input,
    FunctionRef<Result<random::Philox>(int64_t batches, int64_t per_batch)> generator) {
  KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromInput(ctx, ctx.input(shape_input)));
  const Tensor& counts = ctx.input(counts_input);
  const Tensor& probs = ctx.input(counts_input + 1);
  Result<Shape> batch = BroadcastShapes(counts.shape(), probs.shape());
  if (!batch.ok())
    return ctx.Error("inputs 'counts' and 'probs' must have compatible batch dimensions: ",
                     counts.shape().ToString(), " vs. ", probs.shape().ToString());
  if (!EndsWith(shape, *batch))
    return ctx.Error("input 'shape' ", shape.ToString(), " must end with the broadcast shape ",
                     batch->ToString(), " of 'counts' and 'probs'");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_type, shape));
  const int64_t batches = batch->num_elements();
  int64_t per_batch = 1;  // the product of the sample dims (TF's, even when batches is 0)
  for (int d = 0; d < shape.rank() - batch->rank(); ++d) per_batch *= shape.dim(d);
  KILN_ASSIGN_OR_RETURN(const random::Philox gen, generator(batches, per_batch));
  const int64_t n = out->NumElements();
  if (n == 0) return OkStatus();
  const std::vector<int64_t> ci = BroadcastIndices(counts.shape(), *batch);
  const std::vector<int64_t> pi = BroadcastIndices(probs.shape(), *batch);
  return Dispatch<BinomialParamTypes>(param_type, [&](auto ttag) {
    using C = ComputeType<typename decltype(ttag)::type>;
    const C* c = ComputeData<typename decltype(ttag)::type>(counts);
    const C* p = ComputeData<typename decltype(ttag)::type>(probs);
    return Dispatch<PoissonTypes>(out_type, [&](auto utag) {
      using U = typename decltype(utag)::type;
      using CU = ComputeType<U>;
      CU* o = MutableComputeData<U>(out);
      ctx.threads().ParallelFor(n, 64, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const int64_t b = i / per_batch, s = i % per_batch;
          o[s * batches + b] = BinomialSample<C, CU>(c[ci[b]], p[pi[b]], gen, i);
        }
      });
      return OkStatus();
    });
  });
}

std::span<const KernelEntry> RandomDistributionCpuKernels() { return kCpu; }

}  // namespace kiln::exec
