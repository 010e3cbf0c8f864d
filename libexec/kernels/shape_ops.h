// What the shape ops' definitions (kernels/shape_ops.cc) and CPU kernels
// (kernels/cpu/shape_ops.cc) share: index writes, the reshape, expand, squeeze and bitcast
// rules, and the data-format state.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec::shape {

// ---- Shape, Size, Rank -----------------------------------------------------------------------

// Writes `values` as int32 or int64 into `out`; int32 fails for values that do not fit.
inline Status WriteIndexValues(const std::vector<int64_t>& values, Tensor* out) {
  if (out->dtype() == DType::kInt64) {
    std::copy(values.begin(), values.end(), out->data<int64_t>());
    return OkStatus();
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] > INT32_MAX) {
      return InvalidArgument("value ", values[i], " does not fit out_type int32; use int64");
    }
    out->data<int32_t>()[i] = static_cast<int32_t>(values[i]);
  }
  return OkStatus();
}

// ---- Reshape -----------------------------------------------------------------------------------

// The output shape of reshaping `input` to `sizes` (at most one -1), as TF's Reshape kernel
// computes it: zero sizes are left out of the product so the -1 can still be inferred from the
// non-zero input dims. input null means unknown: a -1 then stays unknown.
inline Result<std::vector<int64_t>> ReshapeDims(const std::vector<int64_t>& sizes,
                                                const Shape* input) {
  std::vector<int64_t> dims = sizes;
  int unknown = -1;
  int64_t product = 1;
  bool sizes_have_zero = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == -1) {
      if (unknown != -1) {
        return InvalidArgument("only one dimension of the requested shape ", DimsString(sizes),
                               " may be -1, not both ", unknown, " and ", d);
      }
      unknown = static_cast<int>(d);
    } else if (sizes[d] < 0) {
      return InvalidArgument("requested shape ", DimsString(sizes), ": size ", d,
                             " must be non-negative, not ", sizes[d]);
    } else if (sizes[d] == 0) {
      sizes_have_zero = true;
    } else {
      product *= sizes[d];
    }
  }
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    return InvalidArgument("requested shape ", DimsString(sizes), " has more than ", kMaxRank,
                           " dimensions");
  }
  if (input == nullptr) return dims;
  const int64_t num_elements = input->num_elements();
  if (unknown >= 0) {
    int64_t counted = 1;
    bool input_has_zero = false;
    for (int64_t d : input->dims()) {
      if (d > 0 || !sizes_have_zero) {
        counted *= d;
      } else {
        input_has_zero = true;
      }
    }
    const int64_t missing = counted / product;
    if (!input_has_zero && missing * product != counted) {
      return InvalidArgument("input to reshape is a tensor with ", num_elements,
                             " values, but the requested shape ", DimsString(sizes),
                             " requires a multiple of ", product);
    }
    dims[unknown] = missing;
  }
  int64_t want = 1;
  for (int64_t d : dims) want *= d;
  if (want != num_elements) {
    return InvalidArgument("input to reshape is a tensor with ", num_elements,
                           " values, but the requested shape ", DimsString(dims), " has ", want);
  }
  return dims;
}

// ---- ExpandDims ------------------------------------------------------------------------------

inline Result<int> ExpandAxis(const Tensor& dim, int rank) {
  if (dim.NumElements() != 1) {
    return InvalidArgument("input 'dim' must hold exactly one value, got shape ",
                           dim.shape().ToString());
  }
  const int64_t d = IndexValues(dim)[0];
  if (d < -rank - 1 || d > rank) {
    return InvalidArgument("cannot expand dim index ", d, " for a tensor with ", rank,
                           " dimensions (expected [", -rank - 1, ", ", rank, "])");
  }
  return static_cast<int>(d < 0 ? d + rank + 1 : d);
}

// ---- Squeeze ---------------------------------------------------------------------------------

// Which dims of a shape (-1 = unknown) to drop. With no squeeze_dims every known 1 goes; an
// unknown dim then makes the result unknown (`unknown` set).
inline Result<std::vector<bool>> SqueezeMask(std::span<const int64_t> dims,
                                             const std::vector<int64_t>& squeeze, bool* unknown) {
  const int rank = static_cast<int>(dims.size());
  std::vector<bool> drop(rank, false);
  *unknown = false;
  if (squeeze.empty()) {
    for (int i = 0; i < rank; ++i) {
      if (dims[i] == -1) *unknown = true;
      drop[i] = dims[i] == 1;
    }
    return drop;
  }
  for (int64_t d : squeeze) {
    KILN_ASSIGN_OR_RETURN(int axis, CanonicalAxis(d, rank, "squeeze_dims entry"));
    if (dims[axis] != 1 && dims[axis] != -1) {
      return InvalidArgument("cannot squeeze dim[", axis, "]: expected a dimension of 1, got ",
                             dims[axis]);
    }
    drop[axis] = true;
  }
  return drop;
}

// ---- Bitcast ---------------------------------------------------------------------------------

// The bytes of T read as `type`: a wider T gains an innermost dim of sizeof(T) / sizeof(type);
// a narrower T loses its innermost dim, which must be sizeof(type) / sizeof(T).
inline Result<std::vector<int64_t>> BitcastDims(std::span<const int64_t> in, size_t from,
                                                size_t to) {
  std::vector<int64_t> dims(in.begin(), in.end());
  if (from > to) {
    dims.push_back(static_cast<int64_t>(from / to));
  } else if (from < to) {
    const int64_t k = static_cast<int64_t>(to / from);
    if (dims.empty() || (dims.back() >= 0 && dims.back() != k)) {
      return InvalidArgument("cannot bitcast: the innermost dim of shape ",
                             DimsString(std::vector<int64_t>(in.begin(), in.end())), " must be ", k,
                             " (", to, " / ", from, " bytes)");
    }
    dims.pop_back();
  }
  return dims;
}

// ---- DataFormatDimMap, DataFormatVecPermute ----------------------------------------------------

// The two layouts of TF's layout optimiser: permutations of the same letters ("NHWC", "NCHW",
// 5-D forms, or any other order).
struct DataFormatState : OpState {
  std::string src, dst;
};

}  // namespace kiln::exec::shape
