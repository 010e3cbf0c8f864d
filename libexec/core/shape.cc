#include "kiln/core/shape.h"

namespace kiln {

Shape::Shape(std::initializer_list<int64_t> dims) {
  KILN_DCHECK(dims.size() <= kMaxRank);
  for (int64_t d : dims) dims_[rank_++] = d;
}

Result<Shape> Shape::FromDims(std::span<const int64_t> dims) {
  if (dims.size() > static_cast<size_t>(kMaxRank))
    return InvalidArgument("rank ", dims.size(), " exceeds the supported maximum of ", kMaxRank);
  Shape s;
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgument("negative dimension ", d, " in a tensor shape");
    s.dims_[s.rank_++] = d;
  }
  return s;
}

bool Shape::operator==(const Shape& o) const {
  if (rank_ != o.rank_) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] != o.dims_[i]) return false;
  return true;
}

std::string Shape::ToString() const {
  std::string s = "(";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ", ";
    s += std::to_string(dims_[i]);
  }
  if (rank_ == 1) s += ",";
  return s + ")";
}

PartialShape::PartialShape(const Shape& s) : unknown_rank_(false), rank_(s.rank()) {
  for (int i = 0; i < rank_; ++i) dims_[i] = s.dim(i);
}

PartialShape::PartialShape(std::initializer_list<int64_t> dims) {
  KILN_DCHECK(dims.size() <= kMaxRank);
  for (int64_t d : dims) dims_[rank_++] = d < 0 ? -1 : d;
}

Result<PartialShape> PartialShape::FromDims(std::span<const int64_t> dims) {
  if (dims.size() > static_cast<size_t>(kMaxRank))
    return InvalidArgument("rank ", dims.size(), " exceeds the supported maximum of ", kMaxRank);
  PartialShape s(Shape{});
  for (int64_t d : dims) {
    if (d < -1)
      return InvalidArgument("invalid dimension ", d, " (expected >= 0, or -1 for unknown)");
    s.dims_[s.rank_++] = d;
  }
  return s;
}

bool PartialShape::IsFullyDefined() const {
  if (unknown_rank_) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] < 0) return false;
  return true;
}

Result<Shape> PartialShape::ToShape() const {
  if (!IsFullyDefined())
    return InvalidArgument("shape ", ToPythonString(), " is not fully defined");
  return Shape::FromDims(dims());
}

bool PartialShape::IsCompatibleWith(const Shape& s) const {
  if (unknown_rank_) return true;
  if (rank_ != s.rank()) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] >= 0 && dims_[i] != s.dim(i)) return false;
  return true;
}

bool PartialShape::IsCompatibleWith(const PartialShape& s) const {
  if (unknown_rank_ || s.unknown_rank_) return true;
  if (rank_ != s.rank_) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] >= 0 && s.dims_[i] >= 0 && dims_[i] != s.dims_[i]) return false;
  return true;
}

Result<PartialShape> PartialShape::MergeWith(const PartialShape& o) const {
  if (unknown_rank_) return o;
  if (o.unknown_rank_) return *this;
  if (!IsCompatibleWith(o))
    return InvalidArgument("shapes ", ToPythonString(), " and ", o.ToPythonString(),
                           " are incompatible");
  PartialShape r = *this;
  for (int i = 0; i < rank_; ++i)
    if (r.dims_[i] < 0) r.dims_[i] = o.dims_[i];
  return r;
}

bool PartialShape::operator==(const PartialShape& o) const {
  if (unknown_rank_ != o.unknown_rank_) return false;
  if (unknown_rank_) return true;
  if (rank_ != o.rank_) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] != o.dims_[i]) return false;
  return true;
}

std::string PartialShape::ToCliString() const {
  if (unknown_rank_) return "unknown_rank";
  std::string s = "(";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ", ";
    s += std::to_string(dims_[i]);
  }
  return s + ")";
}

std::string PartialShape::ToPythonString() const {
  if (unknown_rank_) return "<unknown>";
  std::string s = "(";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ", ";
    s += dims_[i] < 0 ? "None" : std::to_string(dims_[i]);
  }
  if (rank_ == 1) s += ",";
  return s + ")";
}

}  // namespace kiln
