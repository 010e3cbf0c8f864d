// The CPU kernels of the ops in kernels/math_arith_ops.cc.
#include "kernels/math_arith_ops.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/elementwise_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/tensor_list.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using math_arith::BucketizeState;
using math_arith::BucketizeTypes;
using math_arith::OnesLikeTypes;
using math_arith::ZerosLikeTypes;

// ---- variants: tensor lists ------------------------------------------------------------------
// ZerosLike and AddN of variants compute on the tensor lists they hold, element by element, as
// TF's TensorListZerosLike and TensorListBinaryAdd do (gradients of loops over lists add and
// zero them). An unset element stays unset; added to a set one, it gives that one.

Result<VariantPtr> ZerosLikeVariant(const VariantPtr& v);
Result<VariantPtr> AddVariants(const VariantPtr& a, const VariantPtr& b);

Result<Tensor> ZerosLikeTensor(const Tensor& t) {
  if (!t.IsInitialized()) return t;
  Tensor out(t.dtype(), t.shape());
  if (t.dtype() == DType::kVariant) {
    for (int64_t k = 0; k < t.NumElements(); ++k) {
      KILN_ASSIGN_OR_RETURN(out.data<VariantPtr>()[k], ZerosLikeVariant(t.data<VariantPtr>()[k]));
    }
    return out;
  }
  if (!DTypeIsPod(t.dtype()))
    return InvalidArgument("zeros_like of a list element of dtype ", DTypeShortName(t.dtype()),
                           ": expected a number, bool or variant element");
  std::memset(out.raw_data(), 0, out.ByteSize());
  return out;
}

Result<VariantPtr> ZerosLikeVariant(const VariantPtr& v) {
  if (v == nullptr) return v;
  const auto* list = dynamic_cast<const TensorList*>(v.get());
  if (list == nullptr)
    return InvalidArgument("zeros_like of a variant holding ", v->TypeName(),
                           ": expected a tensor list");
  std::vector<Tensor> items;
  items.reserve(list->tensors().size());
  for (const Tensor& t : list->tensors()) {
    KILN_ASSIGN_OR_RETURN(items.emplace_back(), ZerosLikeTensor(t));
  }
  return VariantPtr(std::make_shared<const TensorList>(list->element_dtype(), list->element_shape(),
                                                       std::move(items), list->max_num_elements()));
}

Result<Tensor> AddTensors(const Tensor& a, const Tensor& b) {
  if (!a.IsInitialized()) return b;
  if (!b.IsInitialized()) return a;
  if (a.dtype() != b.dtype())
    return InvalidArgument("cannot add list elements of dtypes ", DTypeShortName(a.dtype()),
                           " and ", DTypeShortName(b.dtype()));
  if (a.shape() != b.shape())
    return InvalidArgument("cannot add list elements of shapes ", a.shape().ToString(), " and ",
                           b.shape().ToString());
  Tensor out(a.dtype(), a.shape());
  if (a.dtype() == DType::kVariant) {
    for (int64_t k = 0; k < a.NumElements(); ++k) {
      KILN_ASSIGN_OR_RETURN(out.data<VariantPtr>()[k],
                            AddVariants(a.data<VariantPtr>()[k], b.data<VariantPtr>()[k]));
    }
    return out;
  }
  if (!NumberTypes::Contains(a.dtype()))
    return InvalidArgument("cannot add list elements of dtype ", DTypeShortName(a.dtype()),
                           ": expected numbers or variants");
  KILN_RETURN_IF_ERROR(Dispatch<NumberTypes>(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* x = ComputeData<T>(a);
    const C* y = ComputeData<T>(b);
    C* o = MutableComputeData<T>(&out);
    for (int64_t k = 0; k < out.NumElements(); ++k) o[k] = fn::Add<C>()(x[k], y[k]);
    return OkStatus();
  }));
  return out;
}

Result<VariantPtr> AddVariants(const VariantPtr& a, const VariantPtr& b) {
  if (a == nullptr) return b;
  if (b == nullptr) return a;
  const auto* x = dynamic_cast<const TensorList*>(a.get());
  const auto* y = dynamic_cast<const TensorList*>(b.get());
  if (x == nullptr || y == nullptr)
    return InvalidArgument("cannot add variants holding ", a->TypeName(), " and ", b->TypeName(),
                           ": expected tensor lists");
  if (x->element_dtype() != y->element_dtype())
    return InvalidArgument("cannot add tensor lists of element dtypes ",
                           DTypeShortName(x->element_dtype()), " and ",
                           DTypeShortName(y->element_dtype()));
  Result<PartialShape> shape = x->element_shape().MergeWith(y->element_shape());
  if (!shape.ok())
    return InvalidArgument("cannot add tensor lists of element shapes ",
                           x->element_shape().ToPythonString(), " and ",
                           y->element_shape().ToPythonString());
  if (x->size() != y->size())
    return InvalidArgument("cannot add tensor lists of lengths ", x->size(), " and ", y->size());
  std::vector<Tensor> items;
  items.reserve(x->tensors().size());
  for (size_t i = 0; i < x->tensors().size(); ++i) {
    KILN_ASSIGN_OR_RETURN(items.emplace_back(), AddTensors(x->tensors()[i], y->tensors()[i]));
  }
  return VariantPtr(std::make_shared<const TensorList>(x->element_dtype(), *shape, std::move(items),
                                                       x->max_num_elements()));
}

// ---- ZerosLike, OnesLike ---------------------------------------------------------------------

template <int kValue, typename List>
Status ComputeFillLike(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
  return Dispatch<List>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, std::string>) {
      std::fill_n(out->data<T>(), out->NumElements(), std::string());
    } else if constexpr (std::is_same_v<T, VariantPtr>) {
      for (int64_t k = 0; k < out->NumElements(); ++k) {
        auto zeros = ZerosLikeVariant(x.data<T>()[k]);  // read before the write: out may be x
        if (!zeros.ok()) return ctx.Error(zeros.status().message());
        out->data<T>()[k] = *std::move(zeros);
      }
    } else {
      using C = ComputeType<T>;
      std::fill_n(MutableComputeData<T>(out), out->NumElements(), static_cast<C>(kValue));
    }
    return OkStatus();
  });
}

// ---- AddN ------------------------------------------------------------------------------------

Status ComputeAddN(const KernelContext& ctx) {
  const Tensor& first = ctx.input(0);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.input(i).shape() != first.shape()) {
      return ctx.Error("all inputs must have the same shape: input 0 has ",
                       first.shape().ToString(), ", input ", i, " has ",
                       ctx.input(i).shape().ToString());
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, first.shape()));
  if (first.dtype() == DType::kVariant) {
    // Element by element; each element's inputs are read before it is written (out may be
    // an input).
    for (int64_t k = 0; k < out->NumElements(); ++k) {
      VariantPtr sum = first.data<VariantPtr>()[k];
      for (int i = 1; i < ctx.num_inputs(); ++i) {
        auto next = AddVariants(sum, ctx.input(i).data<VariantPtr>()[k]);
        if (!next.ok()) return ctx.Error(next.status().message());
        sum = *std::move(next);
      }
      out->data<VariantPtr>()[k] = std::move(sum);
    }
    return OkStatus();
  }
  return Dispatch<NumberTypes>(first.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    // half and bfloat16 sum in float and round once; integers wrap.
    using Acc = std::conditional_t<kIsFloating<C> && !std::is_same_v<C, double>, float, C>;
    C* o = MutableComputeData<T>(out);
    const int64_t n = out->NumElements();
    // Block by block, every input's block is read before the output's is written, so the
    // output may share memory with any input. Summed in input order.
    constexpr int64_t kBlock = 256;
    Acc acc[kBlock];
    for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
      const int64_t len = std::min(kBlock, n - j0);
      const C* in0 = ComputeData<T>(first) + j0;
      for (int64_t j = 0; j < len; ++j) acc[j] = static_cast<Acc>(in0[j]);
      for (int i = 1; i < ctx.num_inputs(); ++i) {
        const C* in = ComputeData<T>(ctx.input(i)) + j0;
        for (int64_t j = 0; j < len; ++j) acc[j] = fn::Add<Acc>()(acc[j], static_cast<Acc>(in[j]));
      }
      for (int64_t j = 0; j < len; ++j) o[j0 + j] = static_cast<C>(acc[j]);
    }
    return OkStatus();
  });
}

// ---- Bucketize -------------------------------------------------------------------------------

// The index of the first boundary above each value (values equal to a boundary go right), as
// TF's std::upper_bound over the float boundaries.
Status ComputeBucketize(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<float>& bounds = ctx.state<BucketizeState>().boundaries;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  return Dispatch<BucketizeTypes>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    int32_t* o = out->data<int32_t>();
    ctx.threads().ParallelFor(x.NumElements(), 4096, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T value = in[i];
        o[i] = static_cast<int32_t>(std::upper_bound(bounds.begin(), bounds.end(), value,
                                                     [](const T& a, float b) { return a < b; }) -
                                    bounds.begin());
      }
    });
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"FloorMod", ComputeBinary<fn::FloorMod, RealTypes>},
    {"FloorDiv", ComputeBinary<fn::FloorDiv, RealTypes>},
    {"Pow", ComputeBinary<fn::Pow, SignedNumberTypes>},
    {"Rsqrt", ComputeUnary<fn::Rsqrt, FloatAndComplexTypes>},
    {"Reciprocal", ComputeUnary<fn::Reciprocal, SignedNumberTypes>},
    {"Inv", ComputeUnary<fn::Reciprocal, SignedNumberTypes>},
    {"ZerosLike", ComputeFillLike<0, ZerosLikeTypes>},
    {"OnesLike", ComputeFillLike<1, OnesLikeTypes>},
    {"AddN", ComputeAddN},
    {"Bucketize", ComputeBucketize},
};

}  // namespace

std::span<const KernelEntry> MathArithCpuKernels() { return kCpu; }

}  // namespace kiln::exec
