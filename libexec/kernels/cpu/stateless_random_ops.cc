// The CPU kernels of the stateless random ops in kernels/stateless_random_ops.cc: the same seed
// gives the same values on every call, as TensorFlow computes them.
#include "kernels/stateless_random_ops.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cpu/random_util.h"
#include "kernels/kernel_util.h"
#include "kernels/philox.h"
#include "kernels/random_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using random::Philox;

using stateless_random::CastInTypes;
using stateless_random::CastOutTypes;
using stateless_random::CastState;
using stateless_random::Draw;
using stateless_random::FullIntTypes;
using stateless_random::StatelessFloatTypes;
using stateless_random::StatelessState;

// ---- compute ---------------------------------------------------------------------------------

template <typename T>
Status FillInt(const KernelContext& ctx, Draw draw, Philox gen, int lo_input, Tensor* out) {
  T* o = out->data<T>();
  const int64_t n = out->NumElements();
  if (draw == Draw::kFullInt) {
    random::FillPhilox(gen, random::FullIntDist<T>(), o, n);
    return OkStatus();
  }
  const Tensor& lo_t = ctx.input(lo_input);
  const Tensor& hi_t = ctx.input(lo_input + 1);
  if (lo_t.rank() != 0 || hi_t.rank() != 0)
    return ctx.Error("inputs 'minval' and 'maxval' must be scalars, got shapes ",
                     lo_t.shape().ToString(), " and ", hi_t.shape().ToString());
  const T lo = lo_t.scalar<T>(), hi = hi_t.scalar<T>();
  if (n == 0) return OkStatus();
  if (!(lo < hi)) return ctx.Error("need minval < maxval, got ", lo, " >= ", hi);
  random::FillPhilox(gen, random::UniformIntDist<T>(lo, hi), o, n);
  return OkStatus();
}

Status ComputeStateless(const KernelContext& ctx) {
  const auto& st = ctx.state<StatelessState>();
  KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromInput(ctx, ctx.input(0)));
  Philox gen;
  if (st.v2) {
    KILN_ASSIGN_OR_RETURN(gen,
                          GeneratorFromKeyCounter(ctx, ctx.input(1), ctx.input(2), ctx.input(3)));
  } else {
    KILN_ASSIGN_OR_RETURN(gen, GeneratorFromSeed(ctx, ctx.input(1)));
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, st.dtype, shape));
  if (st.draw == Draw::kUniformInt || st.draw == Draw::kFullInt)
    return Dispatch<FullIntTypes>(st.dtype, [&](auto tag) {
      return FillInt<typename decltype(tag)::type>(ctx, st.draw, gen, st.v2 ? 4 : 2, out);
    });
  return Dispatch<StatelessFloatTypes>(st.dtype, [&](auto tag) {
    FillFloatDraw<typename decltype(tag)::type>(st.draw, gen, out);
    return OkStatus();
  });
}

// ---- key, counter and algorithm --------------------------------------------------------------

template <bool kWithAlg>
Status ComputeGetKeyCounter(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Philox gen, GeneratorFromSeed(ctx, ctx.input(0)));
  KILN_ASSIGN_OR_RETURN(Tensor * key, ctx.AllocateOutput(0, Shape{1}));
  KILN_ASSIGN_OR_RETURN(Tensor * counter, ctx.AllocateOutput(1, Shape{2}));
  auto join = [](uint32_t lo, uint32_t hi) { return lo | (static_cast<uint64_t>(hi) << 32); };
  key->data<uint64_t>()[0] = join(gen.key()[0], gen.key()[1]);
  counter->data<uint64_t>()[0] = join(gen.counter()[0], gen.counter()[1]);
  counter->data<uint64_t>()[1] = join(gen.counter()[2], gen.counter()[3]);
  if (kWithAlg) {
    KILN_ASSIGN_OR_RETURN(Tensor * alg, ctx.AllocateOutput(2, Shape{}));
    alg->data<int32_t>()[0] = kRngAlgPhilox;
  }
  return OkStatus();
}

Status ComputeGetAlg(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor * alg, ctx.AllocateOutput(0, Shape{}));
  alg->data<int32_t>()[0] = kRngAlgPhilox;
  return OkStatus();
}

// ---- StatelessMultinomial(logits, num_samples, seed) -----------------------------------------

Status ComputeStatelessMultinomial(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Philox gen, GeneratorFromSeed(ctx, ctx.input(2)));
  return SampleMultinomial(ctx, ctx.state<TypedOpState<DType>>().value,
                           [&](int64_t) { return gen; });
}

// ---- StochasticCastToInt(input, key, counter, alg) -------------------------------------------

// StochasticCastToInt (TF's stochastic_cast_op.cc): each float becomes one of the two integers
// around it, the upper one with probability equal to its fraction; NaN becomes 0 and values at
// or beyond Tout's range its bounds. The random numbers are TF's to the bit:
//   - TF seeds the stream as PhiloxRandom(counter[0], key[0]): the counter's first word is the
//     Philox key and the key input the counter's high half (counter[1] is never read). Its input
//     check asks for a counter at least as long as the algorithm's id (1 for Philox).
//   - TF's compiled kernel (Eigen, built for AVX) draws in one of two ways, replayed here:
//     float32 and float64 to int32 are vectorised: each block of 8 outputs takes one Philox block
//     per packet (8 floats use the block's 4 uniforms twice; 4 doubles its 2 twice, two packets
//     a block) whatever the elements hold, and the n % 8 left at the end go the scalar way.
//     Every other pair is scalar: an element that needs rounding (not NaN, inside the range, not
//     an integer) takes a whole Philox block and uses its first uniform.
//   - The scalar way rounds a positive x up as floor((x + 1) - u), the vector way as
//     floor(x + (1 - u)); half precision computes in float and rounds each step, as Eigen does.
//   - The conversion to Tout is x86's: beyond int32's range it gives INT_MIN, narrower types
//     take the low bits (float16 and bfloat16 bounds round to 32768 or infinity first).
// TF evaluates the kernel on one thread (its expression has no device); the draws depend on
// the elements before, so this does too.

// TF's arithmetic in the element type: float16 and bfloat16 in float, rounded after each step.
template <typename C>
C Plus(C a, C b) {
  if constexpr (random::kIsHalfType<C>) {
    return C(static_cast<float>(a) + static_cast<float>(b));
  } else {
    return a + b;
  }
}
template <typename C>
C Minus(C a, C b) {
  if constexpr (random::kIsHalfType<C>) {
    return C(static_cast<float>(a) - static_cast<float>(b));
  } else {
    return a - b;
  }
}
template <typename C>
C Floor(C x) {
  if constexpr (random::kIsHalfType<C>) {
    return C(std::floor(static_cast<float>(x)));
  } else {
    return std::floor(x);
  }
}

// x86's truncating conversion (cvttss2si / cvttsd2si) to int32, narrowed by taking low bits.
template <typename Out, typename C>
Out ToInt(C v) {
  const auto d = static_cast<double>(v);
  int32_t i = std::numeric_limits<int32_t>::min();
  if (d >= -2147483648.0 && d < 2147483648.0) i = static_cast<int32_t>(d);
  return static_cast<Out>(i);
}

template <typename C, typename Out>
struct Rounder {
  // Tout's bounds in the element type, as TF converts them (rounded: 32768, 2^31, infinity).
  const C max = static_cast<C>(std::numeric_limits<Out>::max());
  const C min = static_cast<C>(std::numeric_limits<Out>::min());

  // Eigen's scalar path: a draw only when the element needs one.
  Out Scalar(C s, Philox& gen) const {
    const auto d = static_cast<double>(s);
    if (std::isnan(d)) return 0;
    if (d >= static_cast<double>(max)) return ToInt<Out>(max);
    if (d <= static_cast<double>(min)) return ToInt<Out>(min);
    if (static_cast<double>(Floor(s)) == d) return ToInt<Out>(s);
    const C u = random::UniformDist<C>()(gen)[0];
    return ToInt<Out>(d < 0 ? Floor(Plus(s, u)) : Floor(Minus(Plus(s, C(1)), u)));
  }

  // Eigen's packet path, one lane with its uniform u.
  Out Lane(C p, C u) const {
    C r = p;
    if (Floor(p) != p) r = p < C(0) ? Floor(Plus(p, u)) : Floor(Plus(p, Minus(C(1), u)));
    if (max <= p) r = max;
    if (p <= min) r = min;
    if (std::isnan(static_cast<double>(p))) return 0;
    return ToInt<Out>(r);
  }
};

template <typename T, typename Out>
void StochasticRound(const Tensor& input, Philox gen, Tensor* output) {
  using C = ComputeType<T>;
  const C* in = ComputeData<T>(input);
  Out* out = output->data<Out>();
  const int64_t n = input.NumElements();
  const Rounder<C, Out> r;
  int64_t i = 0;
  if constexpr (std::is_same_v<Out, int32_t> &&
                (std::is_same_v<C, float> || std::is_same_v<C, double>)) {
    constexpr int kLanes = std::is_same_v<C, float> ? 8 : 4;  // an AVX packet
    for (const int64_t vectorized = n / 8 * 8; i < vectorized; i += kLanes) {
      const auto u = random::UniformDist<C>()(gen);
      for (int l = 0; l < kLanes; ++l) out[i + l] = r.Lane(in[i + l], u[l % u.size()]);
    }
  }
  for (; i < n; ++i) out[i] = r.Scalar(in[i], gen);
}

Status ComputeStochasticCast(const KernelContext& ctx) {
  const auto& st = ctx.state<CastState>();
  const Tensor& key = ctx.input(1);
  const Tensor& counter = ctx.input(2);
  const Tensor& alg_t = ctx.input(3);
  // TF's GetKeyCounterAlgFromInputs, in its order and words.
  if (alg_t.rank() != 0)
    return ctx.Error("input 3 (0-based) must have shape [], not ", alg_t.shape().ToString());
  int64_t alg = alg_t.scalar<int32_t>();
  if (alg == kRngAlgAuto) alg = kRngAlgPhilox;
  if (key.rank() != 1 || key.dim(0) != 1)
    return ctx.Error("key must have shape [1], not ", key.shape().ToString(),
                     ". (Note that batched keys are not supported yet.)");
  if (counter.rank() != 1 || counter.dim(0) < alg)
    return ctx.Error("counter must be a vector with length at least ", alg,
                     "; got shape: ", counter.shape().ToString(),
                     ". (Note that batched counters are not supported yet.)");
  if (alg != kRngAlgPhilox) return ctx.Error("Unsupported algorithm id: ", alg);
  const Philox gen(counter.data<uint64_t>()[0], key.data<uint64_t>()[0]);
  const Tensor& input = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, input.shape()));
  return Dispatch<CastInTypes>(st.in, [&](auto in_tag) {
    return Dispatch<CastOutTypes>(st.out, [&](auto out_tag) {
      StochasticRound<typename decltype(in_tag)::type, typename decltype(out_tag)::type>(input, gen,
                                                                                         out);
      return OkStatus();
    });
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"StatelessRandomUniform", ComputeStateless},
    {"StatelessRandomNormal", ComputeStateless},
    {"StatelessTruncatedNormal", ComputeStateless},
    {"StatelessRandomUniformInt", ComputeStateless},
    {"StatelessRandomUniformFullInt", ComputeStateless},
    {"StatelessRandomUniformV2", ComputeStateless},
    {"StatelessRandomNormalV2", ComputeStateless},
    {"StatelessTruncatedNormalV2", ComputeStateless},
    {"StatelessRandomUniformIntV2", ComputeStateless},
    {"StatelessRandomUniformFullIntV2", ComputeStateless},
    {"StatelessRandomGetKeyCounter", ComputeGetKeyCounter<false>},
    {"StatelessRandomGetKeyCounterAlg", ComputeGetKeyCounter<true>},
    {"StatelessRandomGetAlg", ComputeGetAlg},
    {"StatelessMultinomial", ComputeStatelessMultinomial},
    {"StochasticCastToInt", ComputeStochasticCast},
};

}  // namespace

// ---- where the stream starts (cpu/random_util.h) -----------------------------------------------

Result<random::Philox> GeneratorFromSeed(const KernelContext& ctx, const Tensor& seed) {
  if (seed.shape() != Shape{2} ||
      (seed.dtype() != DType::kInt32 && seed.dtype() != DType::kInt64)) {
    return ctx.Error("input 'seed' must be an int32 or int64 tensor of shape (2,), got ",
                     seed.DebugString());
  }
  // Sign-extended to 64 bits, as TF copies int32 seeds into uint64.
  auto at = [&](int i) {
    return seed.dtype() == DType::kInt32 ? static_cast<uint64_t>(int64_t{seed.data<int32_t>()[i]})
                                         : static_cast<uint64_t>(seed.data<int64_t>()[i]);
  };
  return random::StatelessGenerator(at(0), at(1));
}

Result<random::Philox> GeneratorFromKeyCounter(const KernelContext& ctx, const Tensor& key,
                                               const Tensor& counter, const Tensor& alg) {
  using random::Philox;
  if (alg.dtype() != DType::kInt32 || alg.NumElements() != 1)
    return ctx.Error("input 'alg' must be an int32 scalar, got ", alg.DebugString());
  const int a = alg.data<int32_t>()[0];
  if (a != kRngAlgPhilox && a != kRngAlgAuto)
    return ctx.Error("input 'alg' is ", a, "; only Philox (1) and auto (3) run on CPUs");
  // TF's GetKeyCounterAlgFromInputs: a key of shape (1,), a counter vector long enough.
  if (key.dtype() != DType::kUInt64 || key.shape() != Shape{1})
    return ctx.Error("input 'key' must be a uint64 tensor of shape (1,), got ", key.DebugString());
  if (counter.dtype() != DType::kUInt64 || counter.rank() != 1 || counter.NumElements() < 2)
    return ctx.Error("input 'counter' must be a uint64 vector of at least 2 elements, got ",
                     counter.DebugString());
  const uint64_t k = key.data<uint64_t>()[0];
  const uint64_t c0 = counter.data<uint64_t>()[0], c1 = counter.data<uint64_t>()[1];
  return Philox(Philox::Result{static_cast<uint32_t>(c0), static_cast<uint32_t>(c0 >> 32),
                               static_cast<uint32_t>(c1), static_cast<uint32_t>(c1 >> 32)},
                Philox::Key{static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32)});
}

std::span<const KernelEntry> StatelessRandomCpuKernels() { return kCpu; }

}  // namespace kiln::exec
