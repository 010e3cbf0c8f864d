// The state of the TF1 tensor array nodes: what their definitions (kernels/tensor_array_ops.cc)
// read and their CPU kernels (kernels/cpu/tensor_array_ops.cc) use.
#pragma once

#include <string>

#include "kernels/kernel_util.h"
#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"

namespace kiln::exec::tensor_array {

// A TensorArrayV3 node's attrs: how each array it makes behaves.
struct Options {
  DType dtype = DType::kInvalid;
  PartialShape element_shape;
  bool dynamic_size = false;
  bool clear_after_read = true;
  bool identical_element_shapes = false;
  bool aggregate = false;  // gradient arrays: repeated writes add up
  std::string name;
};

using DTypeState = TypedOpState<DType>;
using OptionsState = TypedOpState<Options>;

struct ReadState : OpState {
  DType dtype = DType::kInvalid;
  PartialShape element_shape;  // Gather's attr
};

struct ConcatState : OpState {
  DType dtype = DType::kInvalid;
  PartialShape except0;  // element_shape_except0
};

}  // namespace kiln::exec::tensor_array
