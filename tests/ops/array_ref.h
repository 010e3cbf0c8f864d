// Plain-loop references for the data-movement op cases (cases_shape, cases_slice, ...): an
// output element at multi-index o is copied from the input element at flat position src(o),
// one element at a time, for any dtype. Written independently of the kernels' strided walks.
#pragma once

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/tensor_list.h"
#include "kiln/exec/resources.h"
#include "ops/op_tester.h"

namespace kiln::testing {

using Index = std::vector<int64_t>;

inline int64_t FlatOf(const Index& idx, const Shape& s) {
  int64_t f = 0;
  for (int d = 0; d < s.rank(); ++d) f = f * s.dim(d) + idx[d];
  return f;
}

// Copies element `from` of `src` to element `to` of `dst` (same dtype).
inline void CopyElement(const Tensor& src, int64_t from, Tensor* dst, int64_t to) {
  switch (src.dtype()) {
    case DType::kString:
      dst->data<std::string>()[to] = src.data<std::string>()[from];
      return;
    case DType::kVariant:
      dst->data<std::shared_ptr<const VariantBase>>()[to] =
          src.data<std::shared_ptr<const VariantBase>>()[from];
      return;
    case DType::kResource:
      dst->data<std::shared_ptr<ResourceBase>>()[to] =
          src.data<std::shared_ptr<ResourceBase>>()[from];
      return;
    default: {
      const size_t n = DTypeSize(src.dtype());
      std::memcpy(static_cast<char*>(dst->raw_data()) + to * n,
                  static_cast<const char*>(src.raw_data()) + from * n, n);
    }
  }
}

// out[o] = in[src(o)], or fill[0] where src(o) is -1 (fill must then be given).
inline Tensor RefMove(const Tensor& in, const Shape& out_shape,
                      const std::function<int64_t(const Index&)>& src,
                      const Tensor* fill = nullptr) {
  Tensor out(in.dtype(), out_shape);
  for (int64_t i = 0; i < out_shape.num_elements(); ++i) {
    const int64_t from = src(Unravel(i, out_shape));
    if (from < 0) {
      REQUIRE(fill != nullptr);
      CopyElement(*fill, 0, &out, i);
    } else {
      CopyElement(in, from, &out, i);
    }
  }
  return out;
}

// Each element of `t` (numbers or strings) as a handle to its own value, in a tensor of `to`
// (resource or variant): a variant holds a tensor list of the one scalar (the variant TF's AddN
// and ZerosLike compute on), a resource is a variable holding it.
inline Tensor WrapInHandles(const Tensor& t, DType to) {
  Tensor out(to, t.shape());
  for (int64_t k = 0; k < t.NumElements(); ++k) {
    Tensor item(t.dtype(), Shape());
    CopyElement(t, k, &item, 0);
    if (to == DType::kVariant) {
      out.data<VariantPtr>()[k] = std::make_shared<const exec::TensorList>(
          t.dtype(), PartialShape(Shape()), std::vector<Tensor>{std::move(item)});
    } else {
      auto var =
          std::make_shared<exec::VariableResource>("wrapped", t.dtype(), PartialShape(Shape()));
      REQUIRE(var->Assign(item).ok());
      out.data<ResourcePtr>()[k] = std::move(var);
    }
  }
  return out;
}

// A tensor of `dtype` whose elements differ (and, for numbers, count up from 1 where the type
// allows): every output element of a data-movement op says where it came from.
inline Tensor Distinct(DType dtype, const Shape& shape, uint32_t seed = 1) {
  if (dtype == DType::kString) {
    Tensor t(dtype, shape);
    for (int64_t i = 0; i < t.NumElements(); ++i)
      t.data<std::string>()[i] = "s" + std::to_string(i + seed);
    return t;
  }
  if (dtype == DType::kBool) return RandomOf(dtype, shape, seed);
  if (IsHandle(dtype)) return WrapInHandles(Distinct(DType::kInt64, shape, seed), dtype);
  Tensor t(DType::kDouble, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<double>()[i] = double((i + seed) % 100);
  // Converted through the tester's double helpers, so any numeric dtype works.
  return RefUnaryDouble(
      t, [](double x) { return x; }, dtype);
}

template <typename T>
Tensor Vec(const std::vector<T>& v) {
  return Make<T>(v, Shape{static_cast<int64_t>(v.size())});
}

}  // namespace kiln::testing
