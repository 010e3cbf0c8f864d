// Random tensors from Philox4x32-10, as TensorFlow makes them.
// Stateful ops (RandomStandardNormal, RandomUniform, RandomUniformInt) keep one generator per
// node: seeded by attrs seed/seed2 (both 0: a fresh random seed), and each call reserves
// 256 blocks per output element as TF's GuardedPhiloxRandom does, so a seeded node repeats
// TF's sequence of calls. Stateless ops (StatelessRandomNormal, StatelessRandomUniform) derive
// key and counter from their seed input the way TF's GenerateKey does.
//
// Checked against TensorFlow 2.21 (kernels_random_test.cc): stateless uniform and seeded
// stateful uniform / uniform-int values are identical; normal values agree to within float /
// double rounding (they go through log, sqrt, sin and cos, whose last bit may differ).
#include <mutex>
#include <random>
#include <string>

#include "kernels/eigen_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"
#include "kernels/philox.h"

namespace kiln::exec {
namespace {

using random::Philox;

constexpr std::initializer_list<DType> kIndexDTypes = {DType::kInt32, DType::kInt64};

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
    std::lock_guard<std::mutex> lock(mu);
    Philox local = generator;
    generator.Skip(static_cast<uint64_t>(n) * kBlocksPerOutput);
    return local;
  }
};

Result<Philox> SeededGenerator(const PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(int64_t seed, ctx.attrs.GetInt("seed", 0));
  KILN_ASSIGN_OR_RETURN(int64_t seed2, ctx.attrs.GetInt("seed2", 0));
  uint64_t s1 = static_cast<uint64_t>(seed), s2 = static_cast<uint64_t>(seed2);
  if (s1 == 0 && s2 == 0) {  // unseeded: every node and every program run differ
    std::random_device rd;
    s1 = (uint64_t{rd()} << 32) | rd();
    s2 = (uint64_t{rd()} << 32) | rd();
  }
  return Philox(s1, s2);
}

// RandomStandardNormal, RandomUniform: (shape) -> dtype.
Status PrepareRandomFloat(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", dtype, kFloatDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kIndexDTypes));
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
  KILN_RETURN_IF_ERROR(DispatchDType<KILN_FLOAT_TYPES>(st.dtype, [&](auto tag) {
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
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tout", tout, kIndexDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kIndexDTypes));
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
  return DispatchDType<int32_t, int64_t>(st.dtype, [&](auto tag) -> Status {
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

// ---- stateless -------------------------------------------------------------------------------

// StatelessRandomNormal, StatelessRandomUniform: (shape, seed[2]) -> dtype.
Status PrepareStateless(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", dtype, kFloatDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kIndexDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tseed, ctx.attrs.GetType("Tseed", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tseed", tseed, kIndexDTypes));
  PartialShape shape;
  KILN_RETURN_IF_ERROR(PrepareShapeInput(ctx, 0, t, &shape));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "seed", tseed));
  if (!ctx.inputs[1].shape.IsCompatibleWith(PartialShape{2})) {
    return ctx.Error("input 'seed' must have shape (2,), got ",
                     ctx.inputs[1].shape.ToPythonString());
  }
  ctx.outputs = {TensorSpec{dtype, shape}};
  ctx.state = std::make_shared<TypedOpState<DType>>(dtype);
  return OkStatus();
}

template <template <typename> class Dist>
Status ComputeStateless(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromInput(ctx, ctx.input(0)));
  const Tensor& seed = ctx.input(1);
  if (seed.shape() != Shape{2} ||
      (seed.dtype() != DType::kInt32 && seed.dtype() != DType::kInt64)) {
    return ctx.Error("input 'seed' must be an int32 or int64 tensor of shape (2,), got ",
                     seed.DebugString());
  }
  // Sign-extended to 64 bits, as TF copies int32 seeds into uint64.
  const uint64_t s0 = seed.dtype() == DType::kInt32
                          ? static_cast<uint64_t>(int64_t{seed.data<int32_t>()[0]})
                          : static_cast<uint64_t>(seed.data<int64_t>()[0]);
  const uint64_t s1 = seed.dtype() == DType::kInt32
                          ? static_cast<uint64_t>(int64_t{seed.data<int32_t>()[1]})
                          : static_cast<uint64_t>(seed.data<int64_t>()[1]);
  const DType dtype = ctx.state<TypedOpState<DType>>().value;
  KILN_ASSIGN_OR_RETURN(Tensor * out_ptr, ctx.AllocateOutput(0, dtype, shape));
  Tensor& out = *out_ptr;
  KILN_RETURN_IF_ERROR(DispatchDType<KILN_FLOAT_TYPES>(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    random::FillPhilox(random::StatelessGenerator(s0, s1), Dist<T>(), out.data<T>(),
                       out.NumElements());
    return OkStatus();
  }));
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"RandomStandardNormal", "output", kOpStateful, PrepareRandomFloat},
    {"RandomUniform", "output", kOpStateful, PrepareRandomFloat},
    {"RandomUniformInt", "output", kOpStateful, PrepareRandomUniformInt},
    {"StatelessRandomNormal", "output", kOpNone, PrepareStateless},
    {"StatelessRandomUniform", "output", kOpNone, PrepareStateless},
};

constexpr KernelEntry kCpu[] = {
    {"RandomStandardNormal", ComputeRandomFloat<random::NormalDist>},
    {"RandomUniform", ComputeRandomFloat<random::UniformDist>},
    {"RandomUniformInt", ComputeRandomUniformInt},
    {"StatelessRandomNormal", ComputeStateless<random::NormalDist>},
    {"StatelessRandomUniform", ComputeStateless<random::UniformDist>},
};

}  // namespace

std::span<const OpDefinition> RandomOpDefs() { return kDefs; }
std::span<const KernelEntry> RandomCpuKernels() { return kCpu; }

}  // namespace kiln::exec
