// Reductions over a set of axes (Sum, Mean, Max, Min, Prod) and ArgMax / ArgMin.
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/eigen_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"

namespace kiln::exec {
namespace {

// ---- reducers --------------------------------------------------------------------------------

// Each reducer has an identity (the value of an empty reduction), a step, and a bulk step over
// a contiguous run (vectorised where Eigen can).
template <typename T>
using ConstVec = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

template <typename T>
struct SumReducer {
  static T Identity() { return T(0); }
  T operator()(T acc, T v) const { return acc + v; }
  T Run(T acc, const T* p, int64_t n) const { return acc + ConstVec<T>(p, n).sum(); }
};

template <typename T>
struct ProdReducer {
  static T Identity() { return T(1); }
  T operator()(T acc, T v) const { return acc * v; }
  T Run(T acc, const T* p, int64_t n) const { return acc * ConstVec<T>(p, n).prod(); }
};

// NaN wins, as in tf.reduce_max / tf.reduce_min.
template <typename T>
struct MaxReducer {
  static T Identity() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::lowest();
  }
  T operator()(T acc, T v) const {
    if constexpr (std::is_floating_point_v<T>) return (v > acc || std::isnan(v)) ? v : acc;
    return v > acc ? v : acc;
  }
  T Run(T acc, const T* p, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) acc = (*this)(acc, p[i]);
    return acc;
  }
};

template <typename T>
struct MinReducer {
  static T Identity() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::max();
  }
  T operator()(T acc, T v) const {
    if constexpr (std::is_floating_point_v<T>) return (v < acc || std::isnan(v)) ? v : acc;
    return v < acc ? v : acc;
  }
  T Run(T acc, const T* p, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) acc = (*this)(acc, p[i]);
    return acc;
  }
};

// Mean is a sum divided by the count afterwards.
template <typename T>
struct MeanReducer : SumReducer<T> {};

// The input viewed as `rank` collapsed dims, alternating between kept and reduced ones.
struct ReducePlan {
  int rank = 0;
  std::array<int64_t, kMaxRank> dims{};
  std::array<bool, kMaxRank> reduced{};
  std::array<int64_t, kMaxRank> out_strides{};  // 0 for reduced dims
  int64_t in_elements = 0;
  int64_t out_elements = 0;
};

}  // namespace

namespace functor {
namespace {

template <typename Device, template <typename> class Reducer, typename T>
struct ReduceFunctor;

template <template <typename> class Reducer, typename T>
struct ReduceFunctor<Eigen::DefaultDevice, Reducer, T> {
  void operator()(const Eigen::DefaultDevice&, const ReducePlan& p, const T* in, T* out) const {
    const Reducer<T> r;
    for (int64_t i = 0; i < p.out_elements; ++i) out[i] = Reducer<T>::Identity();
    if (p.in_elements == 0) return;
    if (p.rank == 0) {
      out[0] = r(out[0], in[0]);
      return;
    }
    const int inner = p.rank - 1;
    const int64_t n = p.dims[inner];
    std::array<int64_t, kMaxRank> idx{};
    int64_t oo = 0;
    for (int64_t io = 0; io < p.in_elements; io += n) {
      if (p.reduced[inner]) {
        out[oo] = r.Run(out[oo], in + io, n);
      } else {
        for (int64_t j = 0; j < n; ++j) out[oo + j] = r(out[oo + j], in[io + j]);
      }
      for (int i = inner - 1; i >= 0; --i) {
        oo += p.out_strides[i];
        if (++idx[i] < p.dims[i]) break;
        oo -= p.out_strides[i] * p.dims[i];
        idx[i] = 0;
      }
    }
  }
};

// Input viewed as [outer, n, inner]; out[o, i] is the index along n of the extreme value (the
// first one on ties).
template <typename Device, bool kMax, typename T, typename Index>
struct ArgFunctor;

template <bool kMax, typename T, typename Index>
struct ArgFunctor<Eigen::DefaultDevice, kMax, T, Index> {
  void operator()(const Eigen::DefaultDevice&, const T* in, int64_t outer, int64_t n, int64_t inner,
                  Index* out) const {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T* base = in + o * n * inner + i;
        int64_t best = 0;
        T best_v = base[0];
        for (int64_t k = 1; k < n; ++k) {
          T v = base[k * inner];
          if (kMax ? v > best_v : v < best_v) {
            best_v = v;
            best = k;
          }
        }
        out[o * inner + i] = static_cast<Index>(best);
      }
    }
  }
};

}  // namespace
}  // namespace functor

namespace {

constexpr std::initializer_list<DType> kIndexDTypes = {DType::kInt32, DType::kInt64};

// Reads an int32/int64 tensor of rank <= 1 as int64 values.
std::vector<int64_t> ReadIndices(const Tensor& t) {
  std::vector<int64_t> v(t.NumElements());
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    v[i] = t.dtype() == DType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
  }
  return v;
}

// Which dims of a rank-`rank` input the axes name; negative axes count from the end.
Result<std::array<bool, kMaxRank>> ReducedDims(const std::vector<int64_t>& axes, int rank) {
  std::array<bool, kMaxRank> reduced{};
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return InvalidArgument("invalid reduction dimension ", a, " for input with ", rank,
                             " dimensions");
    }
    int64_t d = a < 0 ? a + rank : a;
    if (reduced[d]) return InvalidArgument("axes contain the dimension ", d, " twice");
    reduced[d] = true;
  }
  return reduced;
}

struct ReduceState : OpState {
  bool keep_dims = false;
};

Status PrepareReduce(PrepareContext& ctx, std::initializer_list<DType> allowed) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, allowed));
  KILN_PREPARE_ASSIGN(ctx, DType tidx, ctx.attrs.GetType("Tidx", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tidx", tidx, kIndexDTypes));
  auto state = std::make_shared<ReduceState>();
  KILN_PREPARE_ASSIGN(ctx, state->keep_dims, ctx.attrs.GetBool("keep_dims", false));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "reduction_indices", tidx));
  const PartialShape& axes_shape = ctx.inputs[1].shape;
  if (axes_shape.rank() > 1) {
    return ctx.Error("input 'reduction_indices' must be a scalar or a vector, got shape ",
                     axes_shape.ToPythonString());
  }
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out = PartialShape::UnknownRank();
  const Tensor* axes = ctx.constant_inputs.size() > 1 ? ctx.constant_inputs[1] : nullptr;
  if (axes != nullptr && !in.unknown_rank()) {
    Result<std::array<bool, kMaxRank>> reduced = ReducedDims(ReadIndices(*axes), in.rank());
    if (!reduced.ok())
      return ctx.Error(reduced.status().message(), " (input shape ", in.ToPythonString(), ")");
    std::vector<int64_t> dims;
    for (int i = 0; i < in.rank(); ++i) {
      if (!(*reduced)[i]) {
        dims.push_back(in.dim(i));
      } else if (state->keep_dims) {
        dims.push_back(1);
      }
    }
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  } else if (!in.unknown_rank() && state->keep_dims) {
    std::vector<int64_t> dims(in.rank(), -1);  // rank stays; which dims become 1 is unknown
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(state);
  return OkStatus();
}
Status PrepareReduceReal(PrepareContext& ctx) { return PrepareReduce(ctx, kRealDTypes); }

template <template <typename> class Reducer>
Status ComputeReduce(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& axes = ctx.input(1);
  if (axes.rank() > 1) {
    return ctx.Error("input 'reduction_indices' must be a scalar or a vector, got shape ",
                     axes.shape().ToString());
  }
  Result<std::array<bool, kMaxRank>> reduced = ReducedDims(ReadIndices(axes), in.rank());
  if (!reduced.ok()) {
    return ctx.Error(reduced.status().message(), " (input shape ", in.shape().ToString(), ")");
  }
  const bool keep_dims = ctx.state<ReduceState>().keep_dims;
  Shape out_shape;
  ReducePlan plan;
  plan.in_elements = in.NumElements();
  for (int i = 0; i < in.rank(); ++i) {
    const int64_t d = in.dim(i);
    const bool r = (*reduced)[i];
    if (!r) {
      out_shape.AddDim(d);
    } else if (keep_dims) {
      out_shape.AddDim(1);
    }
    if (d == 1) continue;  // reduced or not, a size-1 dim changes nothing
    if (plan.rank > 0 && plan.reduced[plan.rank - 1] == r) {
      plan.dims[plan.rank - 1] *= d;
    } else {
      plan.dims[plan.rank] = d;
      plan.reduced[plan.rank] = r;
      ++plan.rank;
    }
  }
  plan.out_elements = out_shape.num_elements();
  int64_t stride = 1;
  for (int i = plan.rank - 1; i >= 0; --i) {
    plan.out_strides[i] = plan.reduced[i] ? 0 : stride;
    if (!plan.reduced[i]) stride *= plan.dims[i];
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out_ptr, ctx.AllocateOutput(0, in.dtype(), out_shape));
  Tensor& out = *out_ptr;
  KILN_RETURN_IF_ERROR(DispatchDType<KILN_REAL_TYPES>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    functor::ReduceFunctor<EigenCpuDevice, Reducer, T>()(Cpu(), plan, in.data<T>(), o);
    if constexpr (std::is_same_v<Reducer<T>, MeanReducer<T>>) {
      const int64_t count = plan.out_elements == 0 ? 0 : plan.in_elements / plan.out_elements;
      if (std::is_floating_point_v<T> || count > 0) {  // an empty float mean is NaN, as in TF
        functor::Flat<T> flat(o, plan.out_elements);
        flat.device(Cpu()) = flat / flat.constant(static_cast<T>(count));
      }
    }
    return OkStatus();
  }));
  return OkStatus();
}

// ---- ArgMax, ArgMin --------------------------------------------------------------------------

Status PrepareArg(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kRealDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tidx, ctx.attrs.GetType("Tidx", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tidx", tidx, kIndexDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType out_type, ctx.attrs.GetType("output_type", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "output_type", out_type, kIndexDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "dimension", tidx));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "dimension", 0));
  const PartialShape& in = ctx.inputs[0].shape;
  if (in.rank() == 0) return ctx.Error("input 'input' must have rank >= 1, got a scalar");
  PartialShape out = PartialShape::UnknownRank();
  const Tensor* dim = ctx.constant_inputs.size() > 1 ? ctx.constant_inputs[1] : nullptr;
  if (!in.unknown_rank()) {
    std::vector<int64_t> dims(in.rank() - 1, -1);
    if (dim != nullptr) {
      const int64_t axis = ReadIndices(*dim)[0];
      if (axis < -in.rank() || axis >= in.rank()) {
        return ctx.Error("input 'dimension' is ", axis, ", expected a value in [", -in.rank(), ", ",
                         in.rank(), ") for input shape ", in.ToPythonString());
      }
      const int64_t a = axis < 0 ? axis + in.rank() : axis;
      dims.clear();
      for (int i = 0; i < in.rank(); ++i) {
        if (i != a) dims.push_back(in.dim(i));
      }
    }
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  }
  ctx.outputs = {TensorSpec{out_type, out}};
  ctx.state = std::make_shared<TypedOpState<DType>>(out_type);
  return OkStatus();
}

template <bool kMax>
Status ComputeArg(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& dim = ctx.input(1);
  if (dim.rank() != 0) {
    return ctx.Error("input 'dimension' must be a scalar, got shape ", dim.shape().ToString());
  }
  const int64_t axis = ReadIndices(dim)[0];
  if (axis < -in.rank() || axis >= in.rank()) {
    return ctx.Error("input 'dimension' is ", axis, ", expected a value in [", -in.rank(), ", ",
                     in.rank(), ") for input shape ", in.shape().ToString());
  }
  const int a = static_cast<int>(axis < 0 ? axis + in.rank() : axis);
  const int64_t n = in.dim(a);
  Shape out_shape;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < in.rank(); ++i) {
    if (i == a) continue;
    out_shape.AddDim(in.dim(i));
    (i < a ? outer : inner) *= in.dim(i);
  }
  const DType out_type = ctx.state<TypedOpState<DType>>().value;
  KILN_ASSIGN_OR_RETURN(Tensor * out_ptr, ctx.AllocateOutput(0, out_type, out_shape));
  Tensor& out = *out_ptr;
  if (out.NumElements() > 0 && n == 0) {
    return ctx.Error("reduction axis ", a, " is empty in shape ", in.shape().ToString());
  }
  KILN_RETURN_IF_ERROR(DispatchDType<KILN_REAL_TYPES>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return DispatchDType<int32_t, int64_t>(out_type, [&](auto index_tag) {
      using Index = typename decltype(index_tag)::type;
      functor::ArgFunctor<EigenCpuDevice, kMax, T, Index>()(Cpu(), in.data<T>(), outer, n, inner,
                                                            out.data<Index>());
      return OkStatus();
    });
  }));
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Sum", "output", kOpNone, PrepareReduceReal},  {"Mean", "output", kOpNone, PrepareReduceReal},
    {"Max", "output", kOpNone, PrepareReduceReal},  {"Min", "output", kOpNone, PrepareReduceReal},
    {"Prod", "output", kOpNone, PrepareReduceReal}, {"ArgMax", "output", kOpNone, PrepareArg},
    {"ArgMin", "output", kOpNone, PrepareArg},
};

constexpr KernelEntry kCpu[] = {
    {"Sum", ComputeReduce<SumReducer>},   {"Mean", ComputeReduce<MeanReducer>},
    {"Max", ComputeReduce<MaxReducer>},   {"Min", ComputeReduce<MinReducer>},
    {"Prod", ComputeReduce<ProdReducer>}, {"ArgMax", ComputeArg<true>},
    {"ArgMin", ComputeArg<false>},
};

}  // namespace

std::span<const OpDefinition> ReductionOpDefs() { return kDefs; }
std::span<const KernelEntry> ReductionCpuKernels() { return kCpu; }

}  // namespace kiln::exec
