// Shapes: Shape is fully known (a tensor's), PartialShape allows unknown dimensions (-1)
// and unknown rank (a signature's or a trace's). Both hold up to kMaxRank dims inline so
// running a graph never allocates for shapes.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "kiln/core/status.h"

namespace kiln {

inline constexpr int kMaxRank = 8;

class Shape {
 public:
  Shape() = default;  // scalar
  Shape(std::initializer_list<int64_t> dims);
  // Fails for a negative dimension or a rank above kMaxRank.
  static Result<Shape> FromDims(std::span<const int64_t> dims);

  int rank() const { return rank_; }
  int64_t dim(int i) const { return dims_[i]; }
  int64_t operator[](int i) const { return dims_[i]; }
  std::span<const int64_t> dims() const { return {dims_.data(), static_cast<size_t>(rank_)}; }
  std::vector<int64_t> ToVector() const { return {dims_.begin(), dims_.begin() + rank_}; }
  // Saturates instead of overflowing: a shape read from outside data (a plan, a signature) may
  // be absurd, and the allocation it leads to must fail cleanly, not wrap around. Inline: kernels
  // test it in loop conditions.
  int64_t num_elements() const {
    int64_t n = 1;
    for (int i = 0; i < rank_; ++i)
      if (__builtin_mul_overflow(n, dims_[i], &n)) return std::numeric_limits<int64_t>::max();
    return n;
  }
  // Unchecked setters for kernels that computed a valid shape.
  void set_rank(int r) { rank_ = r; }
  void set_dim(int i, int64_t d) { dims_[i] = d; }
  void AddDim(int64_t d) { dims_[rank_++] = d; }

  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
  // "(2, 3)", "()", "(5,)" as Python prints a tuple.
  std::string ToString() const;

 private:
  int rank_ = 0;
  std::array<int64_t, kMaxRank> dims_{};
};

class PartialShape {
 public:
  PartialShape() : unknown_rank_(true) {}             // unknown rank
  PartialShape(const Shape& s);                       // NOLINT(google-explicit-constructor)
  PartialShape(std::initializer_list<int64_t> dims);  // -1 = unknown dimension
  static PartialShape UnknownRank() { return PartialShape(); }
  static PartialShape Scalar() { return PartialShape(Shape()); }
  // Accepts -1 for unknown dims; fails for other negatives or rank > kMaxRank.
  static Result<PartialShape> FromDims(std::span<const int64_t> dims);

  bool unknown_rank() const { return unknown_rank_; }
  int rank() const { return unknown_rank_ ? -1 : rank_; }
  int64_t dim(int i) const { return dims_[i]; }
  std::span<const int64_t> dims() const { return {dims_.data(), static_cast<size_t>(rank())}; }
  bool IsFullyDefined() const;
  Result<Shape> ToShape() const;  // fails unless fully defined

  bool IsCompatibleWith(const Shape& s) const;
  bool IsCompatibleWith(const PartialShape& s) const;
  // The most specific shape compatible with both; fails when they conflict.
  Result<PartialShape> MergeWith(const PartialShape& o) const;
  bool operator==(const PartialShape& o) const;
  bool operator!=(const PartialShape& o) const { return !(*this == o); }

  // saved_model_cli style: "(-1, 784)", "()", "(-1)" for rank 1, "unknown_rank".
  std::string ToCliString() const;
  // Python TensorShape style: "(None, 784)", "()", "(None,)", "<unknown>".
  std::string ToPythonString() const;

 private:
  bool unknown_rank_ = false;
  int rank_ = 0;
  std::array<int64_t, kMaxRank> dims_{};
};

}  // namespace kiln
