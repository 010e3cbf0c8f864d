// Comparisons (bool results, numpy broadcasting), logical ops, and Select / SelectV2.
#include <functional>
#include <string>

#include "kernels/eigen_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"

namespace kiln::exec {
namespace {

// ---- element functors ------------------------------------------------------------------------

template <typename T>
struct LessFn {
  bool operator()(const T& a, const T& b) const { return a < b; }
};
template <typename T>
struct LessEqualFn {
  bool operator()(const T& a, const T& b) const { return a <= b; }
};
template <typename T>
struct GreaterFn {
  bool operator()(const T& a, const T& b) const { return a > b; }
};
template <typename T>
struct GreaterEqualFn {
  bool operator()(const T& a, const T& b) const { return a >= b; }
};
template <typename T>
struct EqualFn {
  bool operator()(const T& a, const T& b) const { return a == b; }
};
template <typename T>
struct NotEqualFn {
  bool operator()(const T& a, const T& b) const { return a != b; }
};
template <typename T>
struct LogicalAndFn {
  bool operator()(bool a, bool b) const { return a && b; }
};
template <typename T>
struct LogicalOrFn {
  bool operator()(bool a, bool b) const { return a || b; }
};

}  // namespace

namespace functor {
namespace {

// out = f(a, b) with the input and output element types allowed to differ (comparisons give
// bool), broadcast as `plan` says. Each innermost run is a branch-free loop the compiler can
// vectorise.
template <typename Device, typename Functor, typename T, typename Out>
struct BroadcastBinaryFunctor;

template <typename Functor, typename T, typename Out>
struct BroadcastBinaryFunctor<Eigen::DefaultDevice, Functor, T, Out> {
  void operator()(const Eigen::DefaultDevice&, const BroadcastPlan& p, const T* a, const T* b,
                  Out* out) const {
    const Functor f;
    if (p.num_elements == 0) return;
    if (p.rank == 0) {
      out[0] = f(a[0], b[0]);
      return;
    }
    const int inner = p.rank - 1;
    const int64_t n = p.dims[inner];
    const bool a_run = p.a_strides[inner] != 0, b_run = p.b_strides[inner] != 0;
    std::array<int64_t, kMaxRank> idx{};
    int64_t ao = 0, bo = 0;
    for (int64_t o = 0; o < p.num_elements; o += n) {
      Out* dst = out + o;
      const T* ar = a + ao;
      const T* br = b + bo;
      if (a_run && b_run) {
        for (int64_t j = 0; j < n; ++j) dst[j] = f(ar[j], br[j]);
      } else if (a_run) {
        for (int64_t j = 0; j < n; ++j) dst[j] = f(ar[j], br[0]);
      } else {
        for (int64_t j = 0; j < n; ++j) dst[j] = f(ar[0], br[j]);
      }
      for (int i = inner - 1; i >= 0; --i) {
        ao += p.a_strides[i];
        bo += p.b_strides[i];
        if (++idx[i] < p.dims[i]) break;
        ao -= p.a_strides[i] * p.dims[i];
        bo -= p.b_strides[i] * p.dims[i];
        idx[i] = 0;
      }
    }
  }
};

// SelectV2: out = cond ? t : e, all three broadcast against each other. `strides[k]` holds
// input k's stride for each output dim (0 where that input is repeated).
template <typename Device, typename T>
struct SelectV2Functor;

template <typename T>
struct SelectV2Functor<Eigen::DefaultDevice, T> {
  void operator()(const Eigen::DefaultDevice&, const Shape& out_shape,
                  const std::array<std::array<int64_t, kMaxRank>, 3>& strides, const bool* cond,
                  const T* t, const T* e, T* out) const {
    const int64_t total = out_shape.num_elements();
    if (total == 0) return;
    const int rank = out_shape.rank();
    if (rank == 0) {
      out[0] = cond[0] ? t[0] : e[0];
      return;
    }
    std::array<int64_t, kMaxRank> idx{};
    int64_t co = 0, to = 0, eo = 0;
    const int inner = rank - 1;
    const int64_t n = out_shape.dim(inner);
    const int64_t cs = strides[0][inner], ts = strides[1][inner], es = strides[2][inner];
    for (int64_t o = 0; o < total; o += n) {
      for (int64_t j = 0; j < n; ++j) {
        out[o + j] = cond[co + j * cs] ? t[to + j * ts] : e[eo + j * es];
      }
      for (int i = inner - 1; i >= 0; --i) {
        co += strides[0][i];
        to += strides[1][i];
        eo += strides[2][i];
        if (++idx[i] < out_shape.dim(i)) break;
        co -= strides[0][i] * out_shape.dim(i);
        to -= strides[1][i] * out_shape.dim(i);
        eo -= strides[2][i] * out_shape.dim(i);
        idx[i] = 0;
      }
    }
  }
};

}  // namespace
}  // namespace functor

namespace {

constexpr std::initializer_list<DType> kEqualityDTypes = {
    DType::kFloat, DType::kDouble, DType::kInt32, DType::kInt64, DType::kBool, DType::kString};
#define KILN_EQUALITY_TYPES float, double, int32_t, int64_t, bool, std::string

// ---- comparisons -----------------------------------------------------------------------------

struct CompareState : OpState {
  // Equal / NotEqual with incompatible_shape_error=false give a scalar instead of failing.
  bool incompatible_shape_error = true;
};

Status PrepareCompareImpl(PrepareContext& ctx, bool equality) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, equality ? kEqualityDTypes : kRealDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "y", t));
  auto state = std::make_shared<CompareState>();
  if (equality) {
    KILN_PREPARE_ASSIGN(ctx, state->incompatible_shape_error,
                        ctx.attrs.GetBool("incompatible_shape_error", true));
  }
  const PartialShape& a = ctx.inputs[0].shape;
  const PartialShape& b = ctx.inputs[1].shape;
  Result<PartialShape> shape = BroadcastPartialShapes(a, b);
  if (!shape.ok()) {
    if (state->incompatible_shape_error) return ctx.Error(shape.status().message());
    shape = PartialShape::Scalar();  // known to be incompatible: the op gives one bool
  } else if (!state->incompatible_shape_error && !(a.IsFullyDefined() && b.IsFullyDefined())) {
    shape = PartialShape::UnknownRank();  // may turn out incompatible, and then a scalar
  }
  ctx.outputs = {TensorSpec{DType::kBool, *shape}};
  ctx.state = std::move(state);
  return OkStatus();
}
Status PrepareCompare(PrepareContext& ctx) { return PrepareCompareImpl(ctx, false); }
Status PrepareEquality(PrepareContext& ctx) { return PrepareCompareImpl(ctx, true); }

template <template <typename> class Fn, bool kEquality>
Status ComputeCompare(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  if (x.dtype() != y.dtype()) {
    return ctx.Error("x and y differ in dtype: ", DTypeShortName(x.dtype()), " vs ",
                     DTypeShortName(y.dtype()));
  }
  Result<Shape> shape = BroadcastShapes(x.shape(), y.shape());
  if (!shape.ok()) {
    if (kEquality && !ctx.state<CompareState>().incompatible_shape_error) {
      // TF: incompatible shapes are simply "not equal".
      ctx.set_output(0, Tensor::Scalar<bool>(std::is_same_v<Fn<int>, NotEqualFn<int>>));
      return OkStatus();
    }
    return ctx.Error(shape.status().message());
  }
  Tensor out(DType::kBool, *shape);
  const BroadcastPlan plan = MakeBroadcastPlan(x.shape(), y.shape(), *shape);
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    functor::BroadcastBinaryFunctor<CpuDevice, Fn<T>, T, bool>()(Cpu(), plan, x.data<T>(),
                                                                 y.data<T>(), out.data<bool>());
    return OkStatus();
  };
  if constexpr (kEquality) {
    KILN_RETURN_IF_ERROR(DispatchDType<KILN_EQUALITY_TYPES>(x.dtype(), run));
  } else {
    KILN_RETURN_IF_ERROR(DispatchDType<KILN_REAL_TYPES>(x.dtype(), run));
  }
  ctx.set_output(0, std::move(out));
  return OkStatus();
}

// ---- logical ---------------------------------------------------------------------------------

Status PrepareLogicalBinary(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", DType::kBool));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "y", DType::kBool));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape,
                      BroadcastPartialShapes(ctx.inputs[0].shape, ctx.inputs[1].shape));
  ctx.outputs = {TensorSpec{DType::kBool, shape}};
  return OkStatus();
}

template <template <typename> class Fn>
Status ComputeLogicalBinary(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  if (x.dtype() != DType::kBool || y.dtype() != DType::kBool) {
    return ctx.Error("expected bool inputs, got ", DTypeShortName(x.dtype()), " and ",
                     DTypeShortName(y.dtype()));
  }
  Result<Shape> shape = BroadcastShapes(x.shape(), y.shape());
  if (!shape.ok()) return ctx.Error(shape.status().message());
  Tensor out(DType::kBool, *shape);
  functor::BroadcastBinaryFunctor<CpuDevice, Fn<bool>, bool, bool>()(
      Cpu(), MakeBroadcastPlan(x.shape(), y.shape(), *shape), x.data<bool>(), y.data<bool>(),
      out.data<bool>());
  ctx.set_output(0, std::move(out));
  return OkStatus();
}

Status PrepareLogicalNot(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", DType::kBool));
  ctx.outputs = {TensorSpec{DType::kBool, ctx.inputs[0].shape}};
  return OkStatus();
}

Status ComputeLogicalNot(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kBool) {
    return ctx.Error("expected a bool input, got ", DTypeShortName(x.dtype()));
  }
  Tensor out(DType::kBool, x.shape());
  functor::ConstFlat<bool> in(x.data<bool>(), x.NumElements());
  functor::Flat<bool>(out.data<bool>(), out.NumElements()).device(Cpu()) =
      in.unaryExpr(std::logical_not<bool>());
  ctx.set_output(0, std::move(out));
  return OkStatus();
}

// ---- Select, SelectV2 -----------------------------------------------------------------------

constexpr std::initializer_list<DType> kSelectDTypes = {
    DType::kFloat, DType::kDouble, DType::kInt32, DType::kInt64, DType::kBool, DType::kString};
#define KILN_SELECT_TYPES float, double, int32_t, int64_t, bool, std::string

Status PrepareSelectCommon(PrepareContext& ctx, DType* t) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, *t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", *t, kSelectDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "condition", DType::kBool));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "t", *t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "e", *t));
  return OkStatus();
}

// TF1 Select: t and e have one shape; condition is a scalar, has that shape, or is a vector
// whose length is t's first dim (it then picks whole rows).
Status PrepareSelect(PrepareContext& ctx) {
  DType t;
  KILN_RETURN_IF_ERROR(PrepareSelectCommon(ctx, &t));
  const PartialShape& cond = ctx.inputs[0].shape;
  Result<PartialShape> value = ctx.inputs[1].shape.MergeWith(ctx.inputs[2].shape);
  if (!value.ok()) {
    return ctx.Error("inputs 't' and 'e' must have the same shape, got ",
                     ctx.inputs[1].shape.ToPythonString(), " and ",
                     ctx.inputs[2].shape.ToPythonString());
  }
  if (!cond.unknown_rank() && cond.rank() > 0 && !value->unknown_rank()) {
    bool ok = cond.IsCompatibleWith(*value);
    if (!ok && cond.rank() == 1 && value->rank() >= 1) {
      ok = cond.dim(0) < 0 || value->dim(0) < 0 || cond.dim(0) == value->dim(0);
    }
    if (!ok) {
      return ctx.Error("input 'condition' ", cond.ToPythonString(),
                       " must be a scalar, have the shape of 't' ", value->ToPythonString(),
                       ", or be a vector of its first dimension");
    }
  }
  ctx.outputs = {TensorSpec{t, *value}};
  return OkStatus();
}

// Strides of `in` for each dim of `out` (numpy alignment; 0 where `in` repeats).
std::array<int64_t, kMaxRank> BroadcastStrides(const Shape& in, const Shape& out) {
  std::array<int64_t, kMaxRank> strides{};
  int64_t stride = 1;
  for (int i = out.rank() - 1; i >= 0; --i) {
    int j = i - (out.rank() - in.rank());
    if (j < 0) break;
    strides[i] = in.dim(j) == 1 ? 0 : stride;
    stride *= in.dim(j);
  }
  return strides;
}

Status RunSelect(const KernelContext& ctx, const Tensor& cond, const Shape& cond_as,
                 const Tensor& t, const Tensor& e, const Shape& out_shape) {
  Tensor out(t.dtype(), out_shape);
  const std::array<std::array<int64_t, kMaxRank>, 3> strides = {
      BroadcastStrides(cond_as, out_shape), BroadcastStrides(t.shape(), out_shape),
      BroadcastStrides(e.shape(), out_shape)};
  KILN_RETURN_IF_ERROR(DispatchDType<KILN_SELECT_TYPES>(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    functor::SelectV2Functor<CpuDevice, T>()(Cpu(), out_shape, strides, cond.data<bool>(),
                                             t.data<T>(), e.data<T>(), out.data<T>());
    return OkStatus();
  }));
  ctx.set_output(0, std::move(out));
  return OkStatus();
}

Status ComputeSelect(const KernelContext& ctx) {
  const Tensor& cond = ctx.input(0);
  const Tensor& t = ctx.input(1);
  const Tensor& e = ctx.input(2);
  if (t.shape() != e.shape()) {
    return ctx.Error("inputs 't' and 'e' must have the same shape, got ", t.shape().ToString(),
                     " and ", e.shape().ToString());
  }
  Shape cond_as = cond.shape();
  if (cond.rank() == 1 && t.rank() > 1 && cond.dim(0) == t.dim(0)) {
    // A vector condition picks rows: view it as (n, 1, ..., 1).
    cond_as = Shape();
    cond_as.AddDim(cond.dim(0));
    for (int i = 1; i < t.rank(); ++i) cond_as.AddDim(1);
  } else if (cond.rank() != 0 && cond.shape() != t.shape()) {
    return ctx.Error("input 'condition' ", cond.shape().ToString(),
                     " must be a scalar, have the shape of 't' ", t.shape().ToString(),
                     ", or be a vector of its first dimension");
  }
  return RunSelect(ctx, cond, cond_as, t, e, t.shape());
}

Status PrepareSelectV2(PrepareContext& ctx) {
  DType t;
  KILN_RETURN_IF_ERROR(PrepareSelectCommon(ctx, &t));
  KILN_PREPARE_ASSIGN(ctx, PartialShape te,
                      BroadcastPartialShapes(ctx.inputs[1].shape, ctx.inputs[2].shape));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape, BroadcastPartialShapes(ctx.inputs[0].shape, te));
  ctx.outputs = {TensorSpec{t, shape}};
  return OkStatus();
}

Status ComputeSelectV2(const KernelContext& ctx) {
  const Tensor& cond = ctx.input(0);
  const Tensor& t = ctx.input(1);
  const Tensor& e = ctx.input(2);
  Result<Shape> te = BroadcastShapes(t.shape(), e.shape());
  if (!te.ok()) return ctx.Error(te.status().message());
  Result<Shape> shape = BroadcastShapes(cond.shape(), *te);
  if (!shape.ok()) return ctx.Error(shape.status().message());
  return RunSelect(ctx, cond, cond.shape(), t, e, *shape);
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Less", "z", kOpNone, PrepareCompare},
    {"LessEqual", "z", kOpNone, PrepareCompare},
    {"Greater", "z", kOpNone, PrepareCompare},
    {"GreaterEqual", "z", kOpNone, PrepareCompare},
    {"Equal", "z", kOpNone, PrepareEquality},
    {"NotEqual", "z", kOpNone, PrepareEquality},
    {"LogicalAnd", "z", kOpNone, PrepareLogicalBinary},
    {"LogicalOr", "z", kOpNone, PrepareLogicalBinary},
    {"LogicalNot", "y", kOpNone, PrepareLogicalNot},
    {"Select", "output", kOpNone, PrepareSelect},
    {"SelectV2", "output", kOpNone, PrepareSelectV2},
};

constexpr KernelEntry kCpu[] = {
    {"Less", ComputeCompare<LessFn, false>},
    {"LessEqual", ComputeCompare<LessEqualFn, false>},
    {"Greater", ComputeCompare<GreaterFn, false>},
    {"GreaterEqual", ComputeCompare<GreaterEqualFn, false>},
    {"Equal", ComputeCompare<EqualFn, true>},
    {"NotEqual", ComputeCompare<NotEqualFn, true>},
    {"LogicalAnd", ComputeLogicalBinary<LogicalAndFn>},
    {"LogicalOr", ComputeLogicalBinary<LogicalOrFn>},
    {"LogicalNot", ComputeLogicalNot},
    {"Select", ComputeSelect},
    {"SelectV2", ComputeSelectV2},
};

}  // namespace

std::span<const OpDefinition> CompareOpDefs() { return kDefs; }
std::span<const KernelEntry> CompareCpuKernels() { return kCpu; }

}  // namespace kiln::exec
