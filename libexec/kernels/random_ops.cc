// Random tensors from Philox4x32-10, as TensorFlow makes them.
// Stateful ops (RandomStandardNormal, RandomUniform, RandomUniformInt, TruncatedNormal,
// RandomShuffle) keep one generator per
// node: seeded by attrs seed/seed2 (both 0: a fresh random seed), and each call reserves
// 256 blocks per output element as TF's GuardedPhiloxRandom does, so a seeded node repeats
// TF's sequence of calls. The stateless ops are in stateless_random_ops.cc.
//
// Checked against TensorFlow 2.21 (kernels_random_test.cc): stateless uniform and seeded
// stateful uniform / uniform-int values are identical; normal values agree to within float /
// double rounding (they go through log, sqrt, sin and cos, whose last bit may differ).
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/eigen_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"
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
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", dtype, BasicFloatTypes::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kRandomIndexDTypes));
  PartialShape shape;
  KILN_RETURN_IF_ERROR(PrepareShapeInput(ctx, 0, t, &shape));
  KILN_PREPARE_ASSIGN(ctx, Philox gen, SeededGenerator(ctx));
  ctx.outputs = {TensorSpec{dtype, shape}};
  ctx.state = std::make_shared<StatefulRandomState>(dtype, gen);
  return OkStatus();
}

template <template <typename> class Dist>
Status ComputeRandomFloat(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromInput(ctx, ctx.input(0)));
  const auto& st = ctx.state<StatefulRandomState>();
  KILN_ASSIGN_OR_RETURN(Tensor * out_ptr, ctx.AllocateOutput(0, st.dtype, shape));
  Tensor& out = *out_ptr;
  const Philox gen = st.Reserve(out.NumElements());
  KILN_RETURN_IF_ERROR(Dispatch<BasicFloatTypes>(st.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    random::FillPhilox(gen, Dist<T>(), out.data<T>(), out.NumElements());
    return OkStatus();
  }));
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

// Normals redrawn until inside two standard deviations; TF's stream (its PhiloxRandomOp with
// TruncatedNormalDistribution: groups of a variable number of samples, each group 256 / 4 *
// kCount blocks after the previous one).
Status ComputeTruncatedNormal(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromInput(ctx, ctx.input(0)));
  const auto& st = ctx.state<StatefulRandomState>();
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, st.dtype, shape));
  const Philox gen = st.Reserve(out->NumElements());
  return Dispatch<BasicFloatTypes>(st.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    random::FillPhiloxVariable(gen, random::TruncatedNormalDist<T>(), out->data<T>(),
                               out->NumElements());
    return OkStatus();
  });
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

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"RandomStandardNormal", "output", kOpStateful | kOpFreshOutputs, PrepareRandomFloat},
    {"RandomUniform", "output", kOpStateful | kOpFreshOutputs, PrepareRandomFloat},
    {"RandomUniformInt", "output", kOpStateful | kOpFreshOutputs, PrepareRandomUniformInt},
    {"Multinomial", "output", kOpStateful | kOpFreshOutputs, PrepareMultinomial},
    {"TruncatedNormal", "output", kOpStateful | kOpFreshOutputs, PrepareRandomFloat},
    {"RandomShuffle", "output", kOpStateful | kOpFreshOutputs, PrepareRandomShuffle},
};

constexpr KernelEntry kCpu[] = {
    {"RandomStandardNormal", ComputeRandomFloat<random::NormalDist>},
    {"RandomUniform", ComputeRandomFloat<random::UniformDist>},
    {"RandomUniformInt", ComputeRandomUniformInt},
    {"Multinomial", ComputeMultinomial},
    {"TruncatedNormal", ComputeTruncatedNormal},
    {"RandomShuffle", ComputeRandomShuffle},
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
