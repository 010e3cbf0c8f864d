#include "kernels/kernel_util.h"

#include <algorithm>

namespace kiln::exec {

std::string DTypeListString(std::span<const DType> types) {
  std::string s;
  for (DType t : types) {
    if (!s.empty()) s += ", ";
    s += DTypeShortName(t);
  }
  return s;
}

Status ExpectAttrDTypeIn(const PrepareContext& ctx, std::string_view attr, DType t,
                         std::span<const DType> allowed) {
  if (std::find(allowed.begin(), allowed.end(), t) != allowed.end()) return OkStatus();
  return ctx.Error("attr '", attr, "': dtype ", DTypeShortName(t),
                   " is not supported, expected one of ", DTypeListString(allowed));
}

Status ExpectInputDType(const PrepareContext& ctx, int i, std::string_view name, DType want) {
  DType got = ctx.inputs[i].dtype;
  if (got == want) return OkStatus();
  return ctx.Error("input '", name, "': expected dtype ", DTypeShortName(want), ", got ",
                   DTypeShortName(got));
}

Status ExpectInputRank(const PrepareContext& ctx, int i, std::string_view name, int rank) {
  const PartialShape& s = ctx.inputs[i].shape;
  if (s.unknown_rank() || s.rank() == rank) return OkStatus();
  return ctx.Error("input '", name, "': expected rank ", rank, ", got shape ", s.ToPythonString());
}

Result<PartialShape> BroadcastPartialShapes(const PartialShape& a, const PartialShape& b) {
  if (a.unknown_rank() || b.unknown_rank()) return PartialShape::UnknownRank();
  int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    int ia = i - (rank - a.rank()), ib = i - (rank - b.rank());
    int64_t da = ia >= 0 ? a.dim(ia) : 1;
    int64_t db = ib >= 0 ? b.dim(ib) : 1;
    // A size-1 side takes the other's dim; an unknown (-1) side takes a known dim > 1 (the
    // unknown one must match it) and stays unknown otherwise.
    if (da == 1 || (da == -1 && db != 1)) {
      dims[i] = db;
    } else if (db == 1 || db == -1 || da == db) {
      dims[i] = da;
    } else {
      return InvalidArgument("incompatible shapes for broadcasting: ", a.ToPythonString(), " and ",
                             b.ToPythonString());
    }
  }
  return PartialShape::FromDims(dims);
}

Result<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  if (a == b) return a;
  int rank = std::max(a.rank(), b.rank());
  Shape out;
  out.set_rank(rank);
  for (int i = 0; i < rank; ++i) {
    int ia = i - (rank - a.rank()), ib = i - (rank - b.rank());
    int64_t da = ia >= 0 ? a.dim(ia) : 1;
    int64_t db = ib >= 0 ? b.dim(ib) : 1;
    if (da != db && da != 1 && db != 1) {
      return InvalidArgument("incompatible shapes for broadcasting: ", a.ToString(), " and ",
                             b.ToString());
    }
    out.set_dim(i, da == 1 ? db : da);
  }
  return out;
}

BroadcastPlan MakeBroadcastPlan(const Shape& a, const Shape& b, const Shape& out) {
  BroadcastPlan p;
  p.num_elements = out.num_elements();
  // Collapsed dims with a "present in a / in b" pattern, outermost first.
  std::array<bool, kMaxRank> in_a{}, in_b{};
  const int rank = out.rank();
  for (int i = 0; i < rank; ++i) {
    int64_t d = out.dim(i);
    if (d == 1) continue;
    int ia = i - (rank - a.rank()), ib = i - (rank - b.rank());
    bool ha = ia >= 0 && a.dim(ia) == d;
    bool hb = ib >= 0 && b.dim(ib) == d;
    if (p.rank > 0 && in_a[p.rank - 1] == ha && in_b[p.rank - 1] == hb) {
      p.dims[p.rank - 1] *= d;
    } else {
      p.dims[p.rank] = d;
      in_a[p.rank] = ha;
      in_b[p.rank] = hb;
      ++p.rank;
    }
  }
  int64_t sa = 1, sb = 1;
  for (int i = p.rank - 1; i >= 0; --i) {
    p.a_strides[i] = in_a[i] ? sa : 0;
    p.b_strides[i] = in_b[i] ? sb : 0;
    if (in_a[i]) sa *= p.dims[i];
    if (in_b[i]) sb *= p.dims[i];
  }
  return p;
}

}  // namespace kiln::exec
