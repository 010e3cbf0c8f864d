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
#include <string>

#include "kernels/kernel_util.h"
#include "kernels/philox.h"
#include "kernels/random_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using random::Philox;

using StatelessFloatTypes = TypeList<float, double, Half, BFloat16>;
using StatelessIntTypes = TypeList<int32_t, int64_t>;
using FullIntTypes = TypeList<int32_t, int64_t, uint32_t, uint64_t>;

using Draw = RandomDraw;

struct StatelessState : OpState {
  DType dtype = DType::kInvalid;
  Draw draw = Draw::kUniform;
  bool v2 = false;  // key/counter/alg inputs instead of a seed
};

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
    KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("dtype", DType::kInt64));
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

Status PrepareGetAlg(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  ctx.outputs = {TensorSpec{DType::kInt32, PartialShape::Scalar()}};
  ctx.constant_outputs = {Tensor::Scalar<int32_t>(kRngAlgPhilox)};
  return OkStatus();
}

Status ComputeGetAlg(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor * alg, ctx.AllocateOutput(0, Shape{}));
  alg->data<int32_t>()[0] = kRngAlgPhilox;
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

Status ComputeStatelessMultinomial(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Philox gen, GeneratorFromSeed(ctx, ctx.input(2)));
  return SampleMultinomial(ctx, ctx.state<TypedOpState<DType>>().value,
                           [&](int64_t) { return gen; });
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
};

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
};

}  // namespace

// ---- where the stream starts (random_util.h) ---------------------------------------------------

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

std::span<const OpDefinition> StatelessRandomOpDefs() { return kDefs; }
std::span<const KernelEntry> StatelessRandomCpuKernels() { return kCpu; }

}  // namespace kiln::exec
