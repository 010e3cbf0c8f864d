#include "kernels/array_util.h"

#include <algorithm>

namespace kiln::exec {

void FinishCopyPlan(CopyPlan* plan) {
  int64_t stride = 1;
  for (int i = plan->rank - 1; i >= 0; --i) {
    plan->strides[i][0] = stride;
    stride *= plan->dims[i];
  }
}

Status CopyIntoOutput(const KernelContext& ctx, int out_index, const Tensor& in, const Shape& shape,
                      CopyPlan plan) {
  FinishCopyPlan(&plan);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(out_index, in.dtype(), shape));
  return DispatchStorage(in.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = Elems<U>(in);
    U* dst = Elems<U>(*out);
    ParallelWalk(plan, ctx.threads(), 65536, [&](const auto& off, int64_t n, const auto& s) {
      const U* from = src + off[1];
      U* to = dst + off[0];
      if (s[1] == 1) {
        std::copy(from, from + n, to);
      } else if (s[1] == 0) {
        std::fill(to, to + n, from[0]);
      } else {
        for (int64_t j = 0; j < n; ++j) to[j] = from[j * s[1]];
      }
    });
    return OkStatus();
  });
}

const Tensor* ConstantInput(const PrepareContext& ctx, int i) {
  return i < static_cast<int>(ctx.constant_inputs.size()) ? ctx.constant_inputs[i] : nullptr;
}

// Reads type attr `attr` (default `dflt`), which must be int32 or int64, and checks input i.
Result<DType> IndexInputDType(const PrepareContext& ctx, int i, std::string_view name,
                              std::string_view attr, DType dflt) {
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType(attr, dflt));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, attr, t, {DType::kInt32, DType::kInt64}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, name, t));
  return t;
}

// The "T" attr (any dtype) and input i having it.
Result<DType> ValueDType(const PrepareContext& ctx, int i, std::string_view name,
                         std::string_view attr) {
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType(attr));
  if (t == DType::kInvalid) return ctx.Error("attr '", attr, "': invalid dtype");
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, name, t));
  return t;
}

// Known element count of input i when its shape says so (a vector of known length), else -1.
int64_t KnownLength(const PartialShape& s) {
  if (s.unknown_rank() || s.rank() != 1) return -1;
  return s.dim(0);
}

// An index tensor's values (int32 or int64; int8, int16, uint8 where an op allows) as int64.
std::vector<int64_t> IndexValues(const Tensor& t) {
  std::vector<int64_t> v(t.NumElements());
  auto copy = [&](auto* p) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(p[i]);
  };
  switch (t.dtype()) {
    case DType::kInt32:
      copy(t.data<int32_t>());
      break;
    case DType::kInt8: {  // SplitV's Tlen may be int8: its bytes, sign-extended
      const auto* p = static_cast<const uint8_t*>(t.raw_data());
      for (size_t i = 0; i < v.size(); ++i) v[i] = p[i] >= 128 ? int64_t{p[i]} - 256 : p[i];
      break;
    }
    case DType::kInt16:
      copy(t.data<int16_t>());
      break;
    case DType::kUInt8:
      copy(t.data<uint8_t>());
      break;
    default:
      copy(t.data<int64_t>());
  }
  return v;
}

PartialShape UnknownDims(int rank) {
  if (rank < 0) return PartialShape::UnknownRank();
  std::vector<int64_t> dims(rank, -1);
  return *PartialShape::FromDims(dims);
}

std::string DimsString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Axis `axis` of something with `rank` dims, accepted in [-rank, rank); canonical in [0, rank).
Result<int> CanonicalAxis(int64_t axis, int rank, std::string_view what) {
  if (axis < -rank || axis >= rank) {
    return InvalidArgument(what, " ", axis, " is out of range for rank ", rank, " (expected [",
                           -rank, ", ", rank, "))");
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

Result<Shape> ShapeFromDimsTensor(const Tensor& t, std::string_view name) {
  if (t.rank() != 1) {
    return InvalidArgument("input '", name, "' must be a vector, got shape ", t.shape().ToString());
  }
  std::vector<int64_t> dims = IndexValues(t);
  for (int64_t d : dims) {
    if (d < 0) {
      return InvalidArgument("input '", name, "' ", DimsString(dims), " has a negative dimension");
    }
  }
  return Shape::FromDims(dims);
}

}  // namespace kiln::exec
