#include "shape_text.h"

#include <vector>

#include "tensorflow/framework.pb.h"

namespace kiln::cli {

std::string ShapeText(std::span<const int64_t> dims, ShapeStyle style) {
  const bool python = style != ShapeStyle::kCli;
  std::string s = style == ShapeStyle::kTensorShapeRepr ? "TensorShape([" : "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += dims[i] < 0 && python ? "None" : std::to_string(dims[i]);
  }
  if (style == ShapeStyle::kTensorShapeRepr) return s + "])";
  // A Python 1-tuple has a trailing comma; saved_model_cli prints (-1) without one.
  if (dims.size() == 1 && python) s += ",";
  return s + ")";
}

std::string ShapeText(const tensorflow::TensorShapeProto& shape, ShapeStyle style) {
  if (shape.unknown_rank()) {
    switch (style) {
      case ShapeStyle::kCli:
        return "unknown_rank";
      case ShapeStyle::kTensorShape:
        return "<unknown>";
      case ShapeStyle::kTensorShapeRepr:
        return "TensorShape(None)";
    }
  }
  std::vector<int64_t> dims;
  dims.reserve(shape.dim_size());
  for (const auto& d : shape.dim()) dims.push_back(d.size());
  return ShapeText(dims, style);
}

}  // namespace kiln::cli
