// Every way savedmodel-cli writes a shape, in one place. Each style copies one of TensorFlow's
// or Python's printers, so the same shape prints differently on purpose.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tensorflow {
class TensorShapeProto;
}

namespace kiln::cli {

enum class ShapeStyle {
  kCli,              // saved_model_cli's TensorInfo: (-1, 784), (), (-1), unknown_rank
  kTensorShape,      // str(TensorShape) / a numpy shape: (None, 784), (), (None,), <unknown>
  kTensorShapeRepr,  // repr(TensorShape): TensorShape([None, 784]), TensorShape(None)
};

// A shape of known rank; a dim below 0 is unknown.
std::string ShapeText(std::span<const int64_t> dims, ShapeStyle style);
// The same from a TensorShapeProto, unknown rank included.
std::string ShapeText(const tensorflow::TensorShapeProto& shape, ShapeStyle style);

}  // namespace kiln::cli
