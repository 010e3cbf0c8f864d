// The CPU kernels of tf.random.Generator's ops in kernels/stateful_random_ops.cc: each draws
// under the state variable's lock, from the Philox stream the variable holds.
#include "kernels/stateful_random_ops.h"

#include <cstdint>
#include <cstring>

#include "kernels/cpu/random_util.h"
#include "kernels/kernel_util.h"
#include "kernels/philox.h"
#include "kernels/random_util.h"
#include "kernels/type_lists.h"
#include "kernels/variable_util.h"

namespace kiln::exec {
namespace {

using random::Philox;

using stateful_random::Draw;
using stateful_random::FloatTypes;
using stateful_random::FullIntTypes;
using stateful_random::IntTypes;
using stateful_random::kPhiloxStateSize;
using stateful_random::StatefulState;

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

Status ComputeRngSkip(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const int64_t alg, ScalarInput<int64_t>(ctx, 1, "algorithm"));
  KILN_ASSIGN_OR_RETURN(const int64_t delta, ScalarInput<int64_t>(ctx, 2, "delta"));
  return ReserveBlocks(ctx, alg, static_cast<uint64_t>(delta)).status();
}

// ---- RngReadAndSkip(resource, alg: int32, delta: uint64) -> value: int64 [3] -----------------

Status ComputeRngReadAndSkip(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const int32_t alg, ScalarInput<int32_t>(ctx, 1, "alg"));
  KILN_ASSIGN_OR_RETURN(const uint64_t delta, ScalarInput<uint64_t>(ctx, 2, "delta"));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{kPhiloxStateSize}));
  return ReserveBlocks(ctx, alg, delta, out->data<int64_t>()).status();
}

// ---- tables ----------------------------------------------------------------------------------

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

std::span<const KernelEntry> StatefulRandomCpuKernels() { return kCpu; }

}  // namespace kiln::exec
