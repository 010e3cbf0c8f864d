// Index tensors of the gather/scatter families: reading any integer index dtype, the flat
// positions of N-d index vectors (indices[..., K] into the first K dims of a shape), and TF's
// way of naming a bad index in an error ("indices[1,0] = [5, 0] does not index into ...").
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {

// Calls f(std::type_identity<I>{}) for the integer type of index dtype `dt`.
template <typename F>
Status DispatchIndex(DType dt, F&& f) {
  switch (dt) {
    case DType::kInt8:
      return f(std::type_identity<int8_t>{});
    case DType::kUInt8:
      return f(std::type_identity<uint8_t>{});
    case DType::kInt16:
      return f(std::type_identity<int16_t>{});
    case DType::kUInt16:
      return f(std::type_identity<uint16_t>{});
    case DType::kInt32:
      return f(std::type_identity<int32_t>{});
    case DType::kInt64:
      return f(std::type_identity<int64_t>{});
    default:
      return Internal("no index kernel for dtype ", DTypeShortName(dt));
  }
}

// Element i of an index array as int64. int8 goes through unsigned char and back: clang-tidy's
// signed-char check takes any other widening of a signed char for a character bug.
template <typename I>
int64_t IndexAt(const I* p, int64_t i) {
  if constexpr (std::is_same_v<I, int8_t>) {
    const int64_t u = static_cast<uint8_t>(p[i]);
    return u < 128 ? u : u - 256;
  } else {
    return static_cast<int64_t>(p[i]);
  }
}

// "[1,0]": the multi-index of flat position i in `dims` (row-major).
inline std::string PositionString(int64_t i, std::span<const int64_t> dims) {
  std::vector<int64_t> idx(dims.size());
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    idx[d] = dims[d] == 0 ? 0 : i % dims[d];
    i = dims[d] == 0 ? 0 : i / dims[d];
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? "," : "") + std::to_string(idx[d]);
  return s + "]";
}

// "[3,2]" (no spaces) as TF prints shapes in these messages.
inline std::string ShapeBrackets(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t d = 0; d < dims.size(); ++d) s += (d ? "," : "") + std::to_string(dims[d]);
  return s + "]";
}

// N index vectors of length K (the last dim of `indices`) into the first K dims of `shape`,
// resolved to element offsets of the slices they select (in units of `slice_size` elements,
// the product of shape's remaining dims). bad[j] is set for a vector outside `shape`;
// `first_bad` is the first one (-1: none).
struct NdIndex {
  int64_t n = 0;           // number of index vectors
  int64_t k = 0;           // their length
  int64_t slice_size = 1;  // elements per selected slice
  std::vector<int64_t> offsets;
  int64_t first_bad = -1;
};

// `indices` has rank >= 1 and K <= shape.rank() (the callers check both).
template <typename I>
NdIndex ResolveNdIndex(const Tensor& indices, const Shape& shape) {
  NdIndex r;
  r.k = indices.dim(indices.rank() - 1);
  r.n = 1;
  for (int d = 0; d + 1 < indices.rank(); ++d) r.n *= indices.dim(d);
  for (int d = static_cast<int>(r.k); d < shape.rank(); ++d) r.slice_size *= shape.dim(d);
  r.offsets.resize(r.n);
  const I* idx = indices.data<I>();
  for (int64_t j = 0; j < r.n; ++j) {
    int64_t flat = 0;
    bool ok = true;
    for (int64_t c = 0; c < r.k; ++c) {
      const int64_t v = IndexAt(idx, j * r.k + c);
      const int64_t dim = shape.dim(static_cast<int>(c));
      ok &= v >= 0 && v < dim;
      flat = flat * dim + v;
    }
    if (!ok && r.first_bad < 0) r.first_bad = j;
    r.offsets[j] = ok ? flat * r.slice_size : -1;
  }
  return r;
}

// "indices[1] = [5, 0]": index vector j of `indices` (its position among the leading dims).
template <typename I>
std::string IndexVectorString(const Tensor& indices, int64_t j, int64_t k) {
  std::span<const int64_t> lead = indices.shape().dims().subspan(0, indices.rank() - 1);
  std::string s = "indices" + PositionString(j, lead) + " = [";
  for (int64_t c = 0; c < k; ++c) {
    s += (c ? ", " : "") + std::to_string(IndexAt(indices.data<I>(), j * k + c));
  }
  return s + "]";
}

}  // namespace kiln::exec
