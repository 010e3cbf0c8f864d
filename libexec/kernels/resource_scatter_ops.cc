// Row access on resource variables: ResourceGather (rows of a variable, batch_dims as TF),
// ResourceScatterUpdate/Add/Sub/Mul/Div/Min/Max (rows written or combined under the variable's
// lock; a repeated index applies in order), their N-d forms ResourceGatherNd and
// ResourceScatterNdUpdate/Add/Sub/Min/Max (index vectors into the leading dims),
// ResourceStridedSliceAssign (v[1:3, ::2].assign(x); TF 1's StridedSliceAssign on a reference
// variable, whose reference is the handle here), and DisableCopyOnRead (a no-op here:
// variables swap buffers on every write, so reads never need copying).
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kernels/nd_index.h"
#include "kernels/strided_slice.h"
#include "kernels/type_lists.h"
#include "kernels/variable_util.h"

namespace kiln::exec {
namespace {

// "indices[3] = 7 is not in [0, 5)", TF's wording.
Status CheckIndex(int64_t pos, int64_t index, int64_t limit) {
  if (index >= 0 && index < limit) return OkStatus();
  return InvalidArgument("indices[", pos, "] = ", index, " is not in [0, ", limit, ")");
}

// ---- ResourceGather --------------------------------------------------------------------------

struct GatherState : OpState {
  int batch_dims = 0;
  DType dtype = DType::kInvalid;
};

Status PrepareResourceGather(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  KILN_PREPARE_ASSIGN(ctx, int64_t batch_dims, ctx.attrs.GetInt("batch_dims", 0));
  KILN_PREPARE_ASSIGN(ctx, bool validate, ctx.attrs.GetBool("validate_indices", true));
  (void)validate;  // indices are always checked
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "indices", "Tindices").status());
  if (batch_dims < 0) return ctx.Error("attr 'batch_dims' must be non-negative, got ", batch_dims);
  const PartialShape& indices = ctx.inputs[1].shape;
  if (!indices.unknown_rank() && batch_dims > indices.rank())
    return ctx.Error("attr 'batch_dims' ", batch_dims, " exceeds the rank of 'indices' ",
                     indices.ToPythonString());
  PartialShape out = PartialShape::UnknownRank();
  if (VariableResource* var = ConstantVariableInput(ctx, 0)) {
    KILN_PREPARE_CHECK(ctx, ExpectVariableDType(*var, dtype));
    const PartialShape& p = var->shape();
    if (!p.unknown_rank() && p.rank() <= batch_dims)
      return ctx.Error("variable '", var->name(), "' of shape ", p.ToPythonString(),
                       " has no axis after batch_dims ", batch_dims);
    if (!p.unknown_rank() && !indices.unknown_rank()) {
      std::vector<int64_t> dims;
      for (int d = 0; d < batch_dims; ++d) dims.push_back(p.dim(d));
      for (int d = static_cast<int>(batch_dims); d < indices.rank(); ++d)
        dims.push_back(indices.dim(d));
      for (int d = static_cast<int>(batch_dims) + 1; d < p.rank(); ++d) dims.push_back(p.dim(d));
      out = *PartialShape::FromDims(dims);
    }
  }
  auto st = std::make_shared<GatherState>();
  st->batch_dims = static_cast<int>(batch_dims);
  st->dtype = dtype;
  ctx.outputs = {TensorSpec{dtype, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status ComputeResourceGather(const KernelContext& ctx) {
  const auto& st = ctx.state<GatherState>();
  const int b = st.batch_dims;
  auto var = VariableFromHandle(ctx.input(0), "resource");
  if (!var.ok()) return Wrap(ctx, var.status());
  if (Status s = ExpectVariableDType(**var, st.dtype); !s.ok()) return Wrap(ctx, s);
  auto params_r = (*var)->Read();
  if (!params_r.ok()) return Wrap(ctx, params_r.status());
  const Tensor& params = *params_r;
  const Tensor& indices_t = ctx.input(1);
  if (params.rank() <= b || indices_t.rank() < b)
    return ctx.Error("batch_dims ", b, " needs params of rank > ", b, " and indices of rank >= ", b,
                     ", got ", params.shape().ToString(), " and ", indices_t.shape().ToString());
  Shape out_shape;
  int64_t batch = 1;
  for (int d = 0; d < b; ++d) {
    if (params.dim(d) != indices_t.dim(d))
      return ctx.Error("batch dimension ", d, " differs: params ", params.shape().ToString(),
                       ", indices ", indices_t.shape().ToString());
    out_shape.AddDim(params.dim(d));
    batch *= params.dim(d);
  }
  int64_t per_batch = 1;
  for (int d = b; d < indices_t.rank(); ++d) {
    out_shape.AddDim(indices_t.dim(d));
    per_batch *= indices_t.dim(d);
  }
  int64_t inner = 1;
  for (int d = b + 1; d < params.rank(); ++d) {
    out_shape.AddDim(params.dim(d));
    inner *= params.dim(d);
  }
  const int64_t limit = params.dim(b);
  const std::vector<int64_t> indices = IndexValues(indices_t);
  for (int64_t i = 0; i < static_cast<int64_t>(indices.size()); ++i) {
    Status bad = CheckIndex(i, indices[i], limit);
    if (!bad.ok()) return Wrap(ctx, bad);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, params.dtype(), out_shape));
  for (int64_t bi = 0; bi < batch; ++bi) {
    for (int64_t m = 0; m < per_batch; ++m) {
      const int64_t row = indices[bi * per_batch + m];
      CopyElementRange(params, (bi * limit + row) * inner, out, (bi * per_batch + m) * inner,
                       inner);
    }
  }
  return OkStatus();
}

// ---- ResourceScatterUpdate, Add, Sub, Mul, Div, Min, Max ----------------------------------------

enum class ScatterOp { kUpdate, kAdd, kSub, kMul, kDiv, kMin, kMax };

// The dtypes an update of `op` takes: any for an assignment, real types for min and max, every
// number type for the arithmetic, as TF registers them.
std::span<const DType> ScatterDTypes(ScatterOp op) {
  if (op == ScatterOp::kMin || op == ScatterOp::kMax) return RealTypes::kDTypes;
  return NumberTypes::kDTypes;
}

// The combination a ResourceScatter[Nd]<Op> op names.
ScatterOp ScatterOpOf(std::string_view op) {
  if (op.ends_with("Add")) return ScatterOp::kAdd;
  if (op.ends_with("Sub")) return ScatterOp::kSub;
  if (op.ends_with("Mul")) return ScatterOp::kMul;
  if (op.ends_with("Div")) return ScatterOp::kDiv;
  if (op.ends_with("Min")) return ScatterOp::kMin;
  if (op.ends_with("Max")) return ScatterOp::kMax;
  return ScatterOp::kUpdate;
}

Status PrepareScatter(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  const ScatterOp op = ScatterOpOf(ctx.op);
  if (op != ScatterOp::kUpdate)
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", dtype, ScatterDTypes(op)));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "indices", "Tindices").status());
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "updates", dtype));
  if (VariableResource* var = ConstantVariableInput(ctx, 0))
    KILN_PREPARE_CHECK(ctx, ExpectVariableDType(*var, dtype));
  ctx.state = std::make_shared<TypedOpState<ScatterOp>>(op);
  return OkStatus();
}

// row = row (op) v in the compute type; false for an integer division by zero.
template <typename C>
bool ApplyScatter(ScatterOp op, C& row, C v) {
  switch (op) {
    case ScatterOp::kUpdate:
      row = v;
      break;
    case ScatterOp::kAdd:
      row = static_cast<C>(row + v);
      break;
    case ScatterOp::kSub:
      row = static_cast<C>(row - v);
      break;
    case ScatterOp::kMul:
      row = static_cast<C>(row * v);
      break;
    case ScatterOp::kDiv:
      if constexpr (kIsInteger<C>) {
        if (v == C(0)) return false;
        if constexpr (std::is_signed_v<C>) {
          if (v == C(-1)) {  // the lowest value divided by -1 wraps, as TF's
            using U = std::make_unsigned_t<C>;
            row = static_cast<C>(static_cast<U>(U(0) - static_cast<U>(row)));
            break;
          }
        }
      }
      row = static_cast<C>(row / v);
      break;
    case ScatterOp::kMin:
    case ScatterOp::kMax:
      // Real types only (Prepare refuses complex for these).
      if constexpr (!kIsComplex<C>) row = (op == ScatterOp::kMin ? v < row : v > row) ? v : row;
      break;
  }
  return true;
}

Status ComputeScatter(const KernelContext& ctx) {
  const ScatterOp op = ctx.state<TypedOpState<ScatterOp>>().value;
  auto var = VariableFromHandle(ctx.input(0), "resource");
  if (!var.ok()) return Wrap(ctx, var.status());
  const Tensor& indices_t = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  const std::vector<int64_t> indices = IndexValues(indices_t);
  Status s = (*var)->Update([&](const Tensor& cur) -> Result<Tensor> {
    if (cur.dtype() != updates.dtype())
      return InvalidArgument("variable '", (*var)->name(), "' has dtype ",
                             DTypeShortName(cur.dtype()), ", 'updates' has dtype ",
                             DTypeShortName(updates.dtype()));
    if (cur.rank() < 1)
      return InvalidArgument("cannot scatter into variable '", (*var)->name(), "' of shape ",
                             cur.shape().ToString(), ": it needs at least one dimension");
    // updates: indices.shape + var.shape[1:], or a scalar applied to every row.
    Shape want = indices_t.shape();
    int64_t inner = 1;
    for (int d = 1; d < cur.rank(); ++d) {
      want.AddDim(cur.dim(d));
      inner *= cur.dim(d);
    }
    const bool scalar = updates.rank() == 0;
    if (!scalar && updates.shape() != want)
      return InvalidArgument("'updates' must have shape ", want.ToString(),
                             " (indices.shape + variable.shape[1:]) or be a scalar, got ",
                             updates.shape().ToString());
    for (int64_t i = 0; i < static_cast<int64_t>(indices.size()); ++i)
      KILN_RETURN_IF_ERROR(CheckIndex(i, indices[i], cur.dim(0)));
    Tensor next = cur.DeepCopy();
    KILN_RETURN_IF_ERROR(Dispatch<NumberBoolStringTypes>(cur.dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* u = updates.data<T>();
      T* d = next.data<T>();
      for (int64_t i = 0; i < static_cast<int64_t>(indices.size()); ++i) {
        T* row = d + indices[i] * inner;
        const T* src = scalar ? u : u + i * inner;
        for (int64_t k = 0; k < inner; ++k) {
          const T& v = src[scalar ? 0 : k];
          if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>) {
            using C = ComputeType<T>;
            if (!ApplyScatter(op, reinterpret_cast<C&>(row[k]), reinterpret_cast<const C&>(v)))
              return InvalidArgument("integer division by zero in 'updates'");
          } else {
            row[k] = v;
          }
        }
      }
      return OkStatus();
    }));
    return next;
  });
  if (!s.ok()) return Wrap(ctx, s);
  return OkStatus();
}

// ---- ResourceGatherNd, ResourceScatterNd*
// --------------------------------------------------------

Status PrepareResourceGatherNd(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "indices", "Tindices").status());
  if (VariableResource* var = ConstantVariableInput(ctx, 0))
    KILN_PREPARE_CHECK(ctx, ExpectVariableDType(*var, dtype));
  ctx.outputs = {TensorSpec{dtype, PartialShape::UnknownRank()}};
  ctx.state = std::make_shared<TypedOpState<DType>>(dtype);
  return OkStatus();
}

// The slices of `shape` that index vectors of `indices` select (offsets in elements), or the
// error naming the first bad one.
Result<NdIndex> ResolveIndices(const Tensor& indices, const Shape& shape, std::string_view what) {
  if (indices.rank() == 0) return InvalidArgument("input 'indices' must have rank at least 1");
  const int64_t k = indices.dim(indices.rank() - 1);
  if (k > shape.rank()) {
    return InvalidArgument("the last dimension of indices (", k, ") must not exceed the rank of ",
                           what, " ", ShapeBrackets(shape.dims()));
  }
  NdIndex nd;
  std::string bad;
  KILN_RETURN_IF_ERROR(DispatchIndex(indices.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    nd = ResolveNdIndex<I>(indices, shape);
    if (nd.first_bad >= 0) bad = IndexVectorString<I>(indices, nd.first_bad, k);
    return OkStatus();
  }));
  if (nd.first_bad >= 0) {
    return InvalidArgument(bad, " does not index into ", what, " ", ShapeBrackets(shape.dims()));
  }
  return nd;
}

Status ComputeResourceGatherNd(const KernelContext& ctx) {
  auto var = VariableFromHandle(ctx.input(0), "resource");
  if (!var.ok()) return Wrap(ctx, var.status());
  if (Status s = ExpectVariableDType(**var, ctx.state<TypedOpState<DType>>().value); !s.ok())
    return Wrap(ctx, s);
  auto params_r = (*var)->Read();
  if (!params_r.ok()) return Wrap(ctx, params_r.status());
  const Tensor& params = *params_r;
  const Tensor& indices = ctx.input(1);
  auto nd = ResolveIndices(indices, params.shape(), "param shape");
  if (!nd.ok()) return Wrap(ctx, nd.status());
  std::vector<int64_t> dims(indices.shape().dims().begin(), indices.shape().dims().end() - 1);
  dims.insert(dims.end(), params.shape().dims().begin() + nd->k, params.shape().dims().end());
  KILN_ASSIGN_OR_RETURN(Shape shape, Shape::FromDims(dims));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  return DispatchStorage(params.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    for (int64_t j = 0; j < nd->n; ++j)
      std::copy_n(Elems<U>(params) + nd->offsets[j], nd->slice_size,
                  Elems<U>(*out) + j * nd->slice_size);
    return OkStatus();
  });
}

Status PrepareScatterNd(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  const ScatterOp op = ScatterOpOf(ctx.op);
  if (op != ScatterOp::kUpdate)
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, ScatterDTypes(op)));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "ref", DType::kResource));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "indices", "Tindices").status());
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "updates", t));
  KILN_PREPARE_ASSIGN(ctx, std::string policy, ctx.attrs.GetString("bad_indices_policy", ""));
  if (!policy.empty() && policy != "DEFAULT" && policy != "ERROR") {
    return ctx.Error("attr 'bad_indices_policy' \"", policy,
                     "\" is not supported on variables: expected \"\", \"DEFAULT\" or \"ERROR\"");
  }
  if (VariableResource* var = ConstantVariableInput(ctx, 0))
    KILN_PREPARE_CHECK(ctx, ExpectVariableDType(*var, t));
  ctx.state = std::make_shared<TypedOpState<ScatterOp>>(op);
  return OkStatus();
}

Status ComputeScatterNd(const KernelContext& ctx) {
  const ScatterOp op = ctx.state<TypedOpState<ScatterOp>>().value;
  auto var = VariableFromHandle(ctx.input(0), "ref");
  if (!var.ok()) return Wrap(ctx, var.status());
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  Status s = (*var)->Update([&](const Tensor& cur) -> Result<Tensor> {
    if (cur.dtype() != updates.dtype())
      return InvalidArgument("variable '", (*var)->name(), "' has dtype ",
                             DTypeShortName(cur.dtype()), ", 'updates' has dtype ",
                             DTypeShortName(updates.dtype()));
    KILN_ASSIGN_OR_RETURN(NdIndex nd, ResolveIndices(indices, cur.shape(), "variable shape"));
    // updates: indices.shape[:-1] + var.shape[K:].
    std::vector<int64_t> want(indices.shape().dims().begin(), indices.shape().dims().end() - 1);
    want.insert(want.end(), cur.shape().dims().begin() + nd.k, cur.shape().dims().end());
    if (updates.shape().ToVector() != want)
      return InvalidArgument("'updates' must have shape ", ShapeBrackets(want),
                             " (indices.shape[:-1] + variable.shape[indices.shape[-1]:]), got ",
                             ShapeBrackets(updates.shape().dims()));
    Tensor next = cur.DeepCopy();
    KILN_RETURN_IF_ERROR(Dispatch<NumberBoolStringTypes>(cur.dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      T* d = next.data<T>();
      for (int64_t j = 0; j < nd.n; ++j) {
        T* row = d + nd.offsets[j];
        const T* src = updates.data<T>() + j * nd.slice_size;
        for (int64_t k = 0; k < nd.slice_size; ++k) {
          if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>) {
            using C = ComputeType<T>;
            ApplyScatter(op, reinterpret_cast<C&>(row[k]), reinterpret_cast<const C&>(src[k]));
          } else {
            row[k] = src[k];
          }
        }
      }
      return OkStatus();
    }));
    return next;
  });
  if (!s.ok()) return Wrap(ctx, s);
  return OkStatus();
}

// ---- ResourceStridedSliceAssign ----------------------------------------------------------------

struct SliceAssignState : OpState {
  SliceMasks masks;
};

Status PrepareSliceAssign(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(5));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "ref", DType::kResource));
  KILN_PREPARE_ASSIGN(ctx, DType index, ctx.attrs.GetType("Index"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Index", index, {DType::kInt32, DType::kInt64}));
  const char* names[] = {"begin", "end", "strides"};
  for (int i = 1; i < 4; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, names[i - 1], index));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, names[i - 1], 1));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 4, "value", t));
  if (VariableResource* var = ConstantVariableInput(ctx, 0))
    KILN_PREPARE_CHECK(ctx, ExpectVariableDType(*var, t));
  auto st = std::make_shared<SliceAssignState>();
  KILN_RETURN_IF_ERROR(ReadSliceMasks(ctx, &st->masks));
  // TF 1's StridedSliceAssign passes the reference on (here: the variable's handle).
  if (ctx.op == "StridedSliceAssign")
    ctx.outputs = {TensorSpec{DType::kResource, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status ComputeSliceAssign(const KernelContext& ctx) {
  auto var = VariableFromHandle(ctx.input(0), "ref");
  if (!var.ok()) return Wrap(ctx, var.status());
  const Tensor& value = ctx.input(4);
  Status s = (*var)->Update([&](const Tensor& cur) -> Result<Tensor> {
    if (cur.dtype() != value.dtype())
      return InvalidArgument("variable '", (*var)->name(), "' has dtype ",
                             DTypeShortName(cur.dtype()), ", 'value' has dtype ",
                             DTypeShortName(value.dtype()));
    DenseSlice dense;
    KILN_RETURN_IF_ERROR(AnalyzeSliceOf(cur.shape(), ctx.input(1), ctx.input(2), ctx.input(3),
                                        ctx.state<SliceAssignState>().masks, &dense));
    Tensor next = cur.DeepCopy();
    KILN_RETURN_IF_ERROR(WriteStridedSlice(value, dense, &next));
    return next;
  });
  if (!s.ok()) return Wrap(ctx, s);
  if (ctx.num_outputs() == 1) ctx.SetOutput(0, ctx.input(0));  // StridedSliceAssign's ref
  return OkStatus();
}

// ---- DisableCopyOnRead -----------------------------------------------------------------------

Status PrepareDisableCopyOnRead(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  return ExpectInputDType(ctx, 0, "resource", DType::kResource);
}

Status ComputeDisableCopyOnRead(const KernelContext& ctx) {
  auto var = VariableFromHandle(ctx.input(0), "resource");
  if (!var.ok()) return Wrap(ctx, var.status());
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"ResourceGather", "output", kOpStateful | kOpFreshOutputs, PrepareResourceGather},
    {"ResourceScatterUpdate", "", kOpStateful, PrepareScatter},
    {"ResourceScatterAdd", "", kOpStateful, PrepareScatter},
    {"ResourceScatterSub", "", kOpStateful, PrepareScatter},
    {"ResourceScatterMul", "", kOpStateful, PrepareScatter},
    {"ResourceScatterDiv", "", kOpStateful, PrepareScatter},
    {"ResourceScatterMin", "", kOpStateful, PrepareScatter},
    {"ResourceScatterMax", "", kOpStateful, PrepareScatter},
    {"ResourceGatherNd", "output", kOpStateful | kOpFreshOutputs, PrepareResourceGatherNd},
    {"ResourceScatterNdUpdate", "", kOpStateful, PrepareScatterNd},
    {"ResourceScatterNdAdd", "", kOpStateful, PrepareScatterNd},
    {"ResourceScatterNdSub", "", kOpStateful, PrepareScatterNd},
    {"ResourceScatterNdMin", "", kOpStateful, PrepareScatterNd},
    {"ResourceScatterNdMax", "", kOpStateful, PrepareScatterNd},
    {"ResourceStridedSliceAssign", "", kOpStateful, PrepareSliceAssign},
    {"StridedSliceAssign", "output_ref", kOpStateful, PrepareSliceAssign},
    {"DisableCopyOnRead", "", kOpStateful, PrepareDisableCopyOnRead},
};

constexpr KernelEntry kCpu[] = {
    {"ResourceGather", ComputeResourceGather},
    {"ResourceScatterUpdate", ComputeScatter},
    {"ResourceScatterAdd", ComputeScatter},
    {"ResourceScatterSub", ComputeScatter},
    {"ResourceScatterMul", ComputeScatter},
    {"ResourceScatterDiv", ComputeScatter},
    {"ResourceScatterMin", ComputeScatter},
    {"ResourceScatterMax", ComputeScatter},
    {"ResourceGatherNd", ComputeResourceGatherNd},
    {"ResourceScatterNdUpdate", ComputeScatterNd},
    {"ResourceScatterNdAdd", ComputeScatterNd},
    {"ResourceScatterNdSub", ComputeScatterNd},
    {"ResourceScatterNdMin", ComputeScatterNd},
    {"ResourceScatterNdMax", ComputeScatterNd},
    {"ResourceStridedSliceAssign", ComputeSliceAssign},
    {"StridedSliceAssign", ComputeSliceAssign},
    {"DisableCopyOnRead", ComputeDisableCopyOnRead},
};

}  // namespace

std::span<const OpDefinition> ResourceScatterOpDefs() { return kDefs; }
std::span<const KernelEntry> ResourceScatterCpuKernels() { return kCpu; }

}  // namespace kiln::exec
