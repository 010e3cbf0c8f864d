// The CPU kernel of EditDistance (kernels/edit_distance_ops.cc): each pair of sequences by the
// Levenshtein recurrence, the groups of both sparse tensors walked in row-major order as TF
// walks them.
#include "kernels/edit_distance_ops.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using edit_distance::EditDistanceState;
using edit_distance::EditTypes;

// TF's checks of the six inputs (indices need not lie inside their shapes: only the group
// indices are used, and their position in the output is checked).
Status CheckEditInputs(const KernelContext& ctx) {
  const char* names[] = {"hypothesis", "truth"};
  for (int s = 0; s < 2; ++s) {
    const Tensor& ind = ctx.input(3 * s);
    const Tensor& val = ctx.input(3 * s + 1);
    const Tensor& shp = ctx.input(3 * s + 2);
    if (ind.rank() != 2 || val.rank() != 1 || shp.rank() != 1) {
      return ctx.Error(names[s], "_indices, _values and _shape must have ranks 2, 1 and 1, got ",
                       ind.shape().ToString(), ", ", val.shape().ToString(), " and ",
                       shp.shape().ToString());
    }
    if (ind.dim(0) != val.dim(0) || ind.dim(1) != shp.dim(0)) {
      return ctx.Error(names[s], "_indices must be [N, R] for ", names[s], "_values [N] and ",
                       names[s], "_shape [R], got ", ind.shape().ToString(), ", ",
                       val.shape().ToString(), " and ", shp.shape().ToString());
    }
    for (int64_t d = 0; d < shp.NumElements(); ++d) {
      if (shp.data<int64_t>()[d] < 0) {
        return ctx.Error(names[s], "_shape must be non-negative, got dimension ",
                         shp.data<int64_t>()[d]);
      }
    }
  }
  if (ctx.input(5).NumElements() < 2) {
    return ctx.Error("input SparseTensors must have rank at least 2, but truth_shape rank is ",
                     ctx.input(5).NumElements());
  }
  if (ctx.input(5).NumElements() != ctx.input(2).NumElements()) {
    return ctx.Error("truth and hypothesis must have matching ranks, got truth_shape ",
                     ctx.input(5).shape().ToString(), " and hypothesis_shape ",
                     ctx.input(2).shape().ToString());
  }
  return OkStatus();
}

// The runs of consecutive entries of one sparse tensor sharing their leading R-1 indices (TF's
// grouping: the indices are taken to be in row-major order, as TF takes them).
struct Groups {
  const int64_t* idx;
  int64_t n, rank;
  int64_t begin = 0, end = 0;  // the current run
  explicit Groups(const Tensor& ind) : idx(ind.data<int64_t>()), n(ind.dim(0)), rank(ind.dim(1)) {
    Advance();
  }
  bool done() const { return begin >= n; }
  const int64_t* key() const { return idx + begin * rank; }
  bool SameKey(int64_t a, int64_t b) const {
    return std::equal(idx + a * rank, idx + a * rank + rank - 1, idx + b * rank);
  }
  void Advance() {
    begin = end;
    while (end < n && SameKey(begin, end)) ++end;
  }
};

template <typename T>
float Levenshtein(const T* a, int64_t na, const T* b, int64_t nb) {
  std::vector<int64_t> row(nb + 1);
  for (int64_t j = 0; j <= nb; ++j) row[j] = j;
  for (int64_t i = 1; i <= na; ++i) {
    int64_t diag = row[0];
    row[0] = i;
    for (int64_t j = 1; j <= nb; ++j) {
      const int64_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return static_cast<float>(row[nb]);
}

Status ComputeEditDistance(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckEditInputs(ctx));
  const bool normalize = ctx.state<EditDistanceState>().normalize;
  const std::vector<int64_t> hshape = IndexValues(ctx.input(2));
  const std::vector<int64_t> tshape = IndexValues(ctx.input(5));
  const int64_t groups = static_cast<int64_t>(tshape.size()) - 1;
  std::vector<int64_t> dims(groups);
  for (int64_t d = 0; d < groups; ++d) dims[d] = std::max(hshape[d], tshape[d]);
  Result<Shape> shape = Shape::FromDims(dims);
  if (!shape.ok()) return Wrap(ctx, shape.status());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, *shape));
  float* o = out->data<float>();
  const int64_t size = out->NumElements();
  std::fill_n(o, size, 0.0f);
  std::vector<int64_t> strides(groups, 1);
  for (int64_t d = groups - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
  auto at = [&](const int64_t* key) -> Result<float*> {
    int64_t loc = 0;
    for (int64_t d = 0; d < groups; ++d) loc += key[d] * strides[d];
    if (loc < 0 || loc >= size) {
      return ctx.Error("a group index of the sparse inputs lands at element ", loc,
                       ", outside the output's ", size, " elements");
    }
    return o + loc;
  };
  return Dispatch<EditTypes>(ctx.input(1).dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* hv = ComputeData<T>(ctx.input(1));
    const C* tv = ComputeData<T>(ctx.input(4));
    Groups h(ctx.input(0)), t(ctx.input(3));
    while (!h.done() || !t.done()) {
      const int64_t hn = h.end - h.begin, tn = t.end - t.begin;
      const bool both = !h.done() && !t.done();
      const int cmp = !both ? (h.done() ? 1 : -1)
                            : (std::equal(h.key(), h.key() + groups, t.key())
                                   ? 0
                                   : (std::lexicographical_compare(h.key(), h.key() + groups,
                                                                   t.key(), t.key() + groups)
                                          ? -1
                                          : 1));
      if (cmp == 0) {  // both sequences present
        KILN_ASSIGN_OR_RETURN(float* dst, at(t.key()));
        *dst = Levenshtein(tv + t.begin, tn, hv + h.begin, hn);
        if (normalize) *dst /= static_cast<float>(tn);
        h.Advance();
        t.Advance();
      } else if (cmp < 0) {  // a hypothesis without truth: infinite when normalized, as TF
        KILN_ASSIGN_OR_RETURN(float* dst, at(h.key()));
        *dst = normalize ? std::numeric_limits<float>::infinity() : static_cast<float>(hn);
        h.Advance();
      } else {  // a truth without hypothesis
        KILN_ASSIGN_OR_RETURN(float* dst, at(t.key()));
        *dst = normalize ? 1.0f : static_cast<float>(tn);
        t.Advance();
      }
    }
    return OkStatus();
  });
}

constexpr KernelEntry kCpu[] = {
    {"EditDistance", ComputeEditDistance},
};

}  // namespace

std::span<const KernelEntry> EditDistanceCpuKernels() { return kCpu; }

}  // namespace kiln::exec
