// Helpers shared by the data-movement op families (shape_ops, concat_ops, slice_ops,
// fill_ops): element storage by size, strided copies into outputs, and the prepare-time
// readers of index inputs. Moving elements needs no arithmetic, so these kernels are
// instantiated per element size (plus the non-POD element types), not per dtype.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/strided_walk.h"

namespace kiln::exec {

// ---- element storage -------------------------------------------------------------------------

// N opaque bytes: copying one copies an element of any POD dtype of that size (char access
// keeps this clear of aliasing rules).
template <size_t N>
struct Bytes {
  unsigned char b[N];
};

// Calls f(std::type_identity<U>{}) with the storage type U of dtype `dt`.
template <typename F>
Status DispatchStorage(DType dt, F&& f) {
  switch (dt) {
    case DType::kString:
      return f(std::type_identity<std::string>{});
    case DType::kResource:
      return f(std::type_identity<std::shared_ptr<ResourceBase>>{});
    case DType::kVariant:
      return f(std::type_identity<std::shared_ptr<const VariantBase>>{});
    default:
      break;
  }
  switch (DTypeSize(dt)) {
    case 1:
      return f(std::type_identity<Bytes<1>>{});
    case 2:
      return f(std::type_identity<Bytes<2>>{});
    case 4:
      return f(std::type_identity<Bytes<4>>{});
    case 8:
      return f(std::type_identity<Bytes<8>>{});
    case 16:
      return f(std::type_identity<Bytes<16>>{});
    default:
      return Internal("no element storage for dtype ", DTypeShortName(dt));
  }
}

template <typename U>
const U* Elems(const Tensor& t) {
  return static_cast<const U*>(t.raw_data());
}
template <typename U>
U* Elems(Tensor& t) {
  return static_cast<U*>(t.raw_data());
}

// Copies n elements of src (from src_off) into dst (from dst_off): same dtype, any storage
// type (strings and handles included).
inline void CopyElementRange(const Tensor& src, int64_t src_off, Tensor* dst, int64_t dst_off,
                             int64_t n) {
  if (n <= 0) return;
  (void)DispatchStorage(src.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    std::copy_n(Elems<U>(src) + src_off, n, Elems<U>(*dst) + dst_off);
    return OkStatus();
  });
}

// ---- strided copy ----------------------------------------------------------------------------

// Operand 0 is the contiguous output, operand 1 the input (strides may be 0 for repeats or
// negative for reversed slices). Tile splits dims, hence twice kMaxRank.
using CopyPlan = StridedPlan<2, 2 * kMaxRank>;

// Appends a dim of the output walking the input with `in_stride` (outermost first).
inline void AddCopyDim(CopyPlan* plan, int64_t size, int64_t in_stride) {
  plan->AddDim(size, {0, in_stride});
}
// Call once all dims are added: gives the output operand its row-major strides.
void FinishCopyPlan(CopyPlan* plan);

// Output `out_index` of `shape` (the input's dtype), filled from `in` by the plan.
Status CopyIntoOutput(const KernelContext& ctx, int out_index, const Tensor& in, const Shape& shape,
                      CopyPlan plan);

// ---- prepare helpers ---------------------------------------------------------------------------

const Tensor* ConstantInput(const PrepareContext& ctx, int i);

template <typename... Args>
Status PrepareUnimplemented(const PrepareContext& ctx, Args&&... args) {
  return Unimplemented("node '", ctx.node_name, "' (", ctx.op, "): ", std::forward<Args>(args)...);
}

// Reads type attr `attr` (default `dflt`), which must be int32 or int64, and checks input i.
Result<DType> IndexInputDType(const PrepareContext& ctx, int i, std::string_view name,
                              std::string_view attr, DType dflt = DType::kInt32);
// The "T" attr (any dtype) and input i having it.
Result<DType> ValueDType(const PrepareContext& ctx, int i, std::string_view name,
                         std::string_view attr = "T");
// Known element count of a vector's shape, else -1.
int64_t KnownLength(const PartialShape& s);
// An index tensor's values (int32 or int64; int8, int16, uint8 where an op allows) as int64.
std::vector<int64_t> IndexValues(const Tensor& t);
// A shape of `rank` unknown dims (unknown rank for rank < 0).
PartialShape UnknownDims(int rank);
// "[1, 2, 3]".
std::string DimsString(const std::vector<int64_t>& v);
// Axis `axis` of something with `rank` dims, accepted in [-rank, rank); canonical in [0, rank).
Result<int> CanonicalAxis(int64_t axis, int rank, std::string_view what);
// A runtime check failure in compute: "node 'n': <message of s>".
inline Status Wrap(const KernelContext& ctx, const Status& s) { return ctx.Error(s.message()); }
// The shape a vector of non-negative dims (`name` for messages) describes.
Result<Shape> ShapeFromDimsTensor(const Tensor& t, std::string_view name);

}  // namespace kiln::exec
