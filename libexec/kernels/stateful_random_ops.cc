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
#include <cstring>
#include <string>

#include "kernels/kernel_util.h"
#include "kernels/philox.h"
#include "kernels/random_util.h"
#include "kernels/type_lists.h"
#include "kernels/variable_util.h"

namespace kiln::exec {
namespace {

using random::Philox;

using FloatTypes = TypeList<float, double, Half, BFloat16>;
using IntTypes = TypeList<int32_t, int64_t>;
using FullIntTypes = TypeList<int32_t, int64_t, uint32_t, uint64_t>;

using Draw = RandomDraw;

struct StatefulState : OpState {
  DType dtype = DType::kInvalid;
  Draw draw = Draw::kUniform;
  DType param = DType::kInvalid;  // StatefulRandomBinomial's counts and probs
};

// TF's counter and key after the algorithm tag: int64 [counter_lo, counter_hi, key].
constexpr int64_t kPhiloxStateSize = 3;
// TF's multiplier from outputs (or delta) to the blocks skipped.
constexpr uint64_t kBlocksPerOutput = 256;

Status CheckAlgorithm(int64_t alg) {
  if (alg == kRngAlgPhilox || alg == kRngAlgAuto) return OkStatus();
  if (alg == 2)
    return Unimplemented("the ThreeFry algorithm (2) runs only on XLA devices in TensorFlow");
  return InvalidArgument("unsupported algorithm id: ", alg, " (Philox is 1, auto-select 3)");
}

// Under the variable's lock: checks the state (an int64 vector holding at least a Philox
// counter and key), reads the stream it holds and moves its counter on by `outputs` * 256 blocks
// (uint64 arithmetic and Philox::Skip, wrapping as TF's do). `before`, when given, gets the
// state's first three elements as they were.
Result<Philox> ReserveBlocks(const KernelContext& ctx, int64_t alg, uint64_t outputs,
                             int64_t* before = nullptr) {
  KILN_ASSIGN_OR_RETURN(VariableResource * var, VariableFromHandle(ctx.input(0), "resource"));
  if (var->dtype() != DType::kInt64)
    return ctx.Error("dtype of RNG state variable '", var->name(), "' must be int64, not ",
                     DTypeShortName(var->dtype()));
  Philox gen;
  Status st = var->Update([&](const Tensor& state) -> Result<Tensor> {
    if (state.rank() != 1)
      return InvalidArgument("RNG state must have one and only one dimension, not ", state.rank());
    KILN_RETURN_IF_ERROR(CheckAlgorithm(alg));
    if (state.NumElements() < kPhiloxStateSize)
      return InvalidArgument("for the Philox algorithm, the size of state must be at least ",
                             kPhiloxStateSize, "; got ", state.NumElements());
    const int64_t* s = state.data<int64_t>();
    const auto c0 = static_cast<uint64_t>(s[0]), c1 = static_cast<uint64_t>(s[1]);
    const auto k = static_cast<uint64_t>(s[2]);
    if (before != nullptr) std::memcpy(before, s, sizeof(int64_t) * kPhiloxStateSize);
    gen = Philox(Philox::Result{static_cast<uint32_t>(c0), static_cast<uint32_t>(c0 >> 32),
                                static_cast<uint32_t>(c1), static_cast<uint32_t>(c1 >> 32)},
                 Philox::Key{static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32)});
    Philox next = gen;
    next.Skip(outputs * kBlocksPerOutput);
    Tensor out(DType::kInt64, state.shape());
    std::memcpy(out.data<int64_t>(), s, sizeof(int64_t) * static_cast<size_t>(state.NumElements()));
    const Philox::Result& c = next.counter();
    out.data<int64_t>()[0] = static_cast<int64_t>(c[0] | (static_cast<uint64_t>(c[1]) << 32));
    out.data<int64_t>()[1] = static_cast<int64_t>(c[2] | (static_cast<uint64_t>(c[3]) << 32));
    return out;
  });
  KILN_RETURN_IF_ERROR_CTX(st, "node '", ctx.node_name(), "'");
  return gen;
}

// A scalar input's value (TF's GetScalar: shape [] and the exact dtype).
template <typename T>
Result<T> ScalarInput(const KernelContext& ctx, int i, const char* name) {
  const Tensor& t = ctx.input(i);
  if (t.rank() != 0 || t.dtype() != kDTypeOf<T>)
    return ctx.Error("input '", name, "' must be a ", DTypeShortName(kDTypeOf<T>), " scalar, got ",
                     t.DebugString());
  return t.scalar<T>();
}

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

Status ComputeStateful(const KernelContext& ctx) {
  const auto& st = ctx.state<StatefulState>();
  KILN_ASSIGN_OR_RETURN(const int64_t alg, ScalarInput<int64_t>(ctx, 1, "algorithm"));
  KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromInput(ctx, ctx.input(2)));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, st.dtype, shape));
  const auto n = static_cast<uint64_t>(out->NumElements());
  if (st.draw == Draw::kFullInt) {
    KILN_ASSIGN_OR_RETURN(Philox gen, ReserveBlocks(ctx, alg, n));
    return Dispatch<FullIntTypes>(st.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      random::FillPhilox(gen, random::FullIntDist<T>(), out->data<T>(), out->NumElements());
      return OkStatus();
    });
  }
  if (st.draw == Draw::kUniformInt) {
    return Dispatch<IntTypes>(st.dtype, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      // TF checks the bounds before it touches the state, even for an empty output.
      KILN_ASSIGN_OR_RETURN(const T lo, ScalarInput<T>(ctx, 3, "minval"));
      KILN_ASSIGN_OR_RETURN(const T hi, ScalarInput<T>(ctx, 4, "maxval"));
      if (!(lo < hi)) return ctx.Error("need minval < maxval, got ", lo, " >= ", hi);
      KILN_ASSIGN_OR_RETURN(Philox gen, ReserveBlocks(ctx, alg, n));
      random::FillPhilox(gen, random::UniformIntDist<T>(lo, hi), out->data<T>(),
                         out->NumElements());
      return OkStatus();
    });
  }
  KILN_ASSIGN_OR_RETURN(Philox gen, ReserveBlocks(ctx, alg, n));
  return Dispatch<FloatTypes>(st.dtype, [&](auto tag) {
    FillFloatDraw<typename decltype(tag)::type>(st.draw, gen, out);
    return OkStatus();
  });
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

Status ComputeBinomial(const KernelContext& ctx) {
  const auto& st = ctx.state<StatefulState>();
  KILN_ASSIGN_OR_RETURN(const int64_t alg, ScalarInput<int64_t>(ctx, 1, "algorithm"));
  return SampleBinomial(ctx, st.param, st.dtype, /*shape_input=*/2, /*counts_input=*/3,
                        [&](int64_t batches, int64_t per_batch) -> Result<Philox> {
                          // TF's binomial kernel takes Philox only, not auto-select.
                          if (alg != kRngAlgPhilox)
                            return ctx.Error("unsupported algorithm id: ", alg,
                                             " (StatefulRandomBinomial takes Philox, 1)");
                          // TF's int64 arithmetic ("each worker has the fudge factor").
                          const int64_t outputs = batches * 2 * 100 * (per_batch + 3) / 4;
                          return ReserveBlocks(ctx, alg, static_cast<uint64_t>(outputs));
                        });
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

Status ComputeRngSkip(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const int64_t alg, ScalarInput<int64_t>(ctx, 1, "algorithm"));
  KILN_ASSIGN_OR_RETURN(const int64_t delta, ScalarInput<int64_t>(ctx, 2, "delta"));
  return ReserveBlocks(ctx, alg, static_cast<uint64_t>(delta)).status();
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

Status ComputeRngReadAndSkip(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const int32_t alg, ScalarInput<int32_t>(ctx, 1, "alg"));
  KILN_ASSIGN_OR_RETURN(const uint64_t delta, ScalarInput<uint64_t>(ctx, 2, "delta"));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{kPhiloxStateSize}));
  return ReserveBlocks(ctx, alg, delta, out->data<int64_t>()).status();
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

constexpr KernelEntry kCpu[] = {
    {"StatefulUniform", ComputeStateful},
    {"StatefulStandardNormalV2", ComputeStateful},
    {"StatefulTruncatedNormal", ComputeStateful},
    {"StatefulUniformInt", ComputeStateful},
    {"StatefulUniformFullInt", ComputeStateful},
    {"StatefulRandomBinomial", ComputeBinomial},
    {"RngSkip", ComputeRngSkip},
    {"RngReadAndSkip", ComputeRngReadAndSkip},
};

}  // namespace

std::span<const OpDefinition> StatefulRandomOpDefs() { return kDefs; }
std::span<const KernelEntry> StatefulRandomCpuKernels() { return kCpu; }

}  // namespace kiln::exec
