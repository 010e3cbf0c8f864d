// The state the tf.Example parse ops' definitions build (kernels/parse_example_ops.cc) and their
// CPU kernels read (kernels/cpu/parse_example_ops.cc), and where each form's inputs are.
#pragma once

#include <string>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::parse_example {

enum class Form { kV2, kV1, kSingle };

struct ParseState : OpState {
  Form form = Form::kV2;
  // Keys from attrs (ParseSingleExample); the other forms read them from inputs.
  std::vector<std::string> sparse_keys, dense_keys;
  std::vector<DType> sparse_types, dense_types, ragged_types, split_types;
  std::vector<PartialShape> dense_shapes;
  int num_sparse = 0, num_dense = 0, num_ragged = 0;
};

// Input positions of each form's arguments.
struct Inputs {
  int serialized = 0, sparse_keys = -1, dense_keys = -1, ragged_keys = -1, defaults = 0;
};
inline Inputs InputsOf(const ParseState& st) {
  Inputs in;
  if (st.form == Form::kV2) {
    in.sparse_keys = 2;
    in.dense_keys = 3;
    in.ragged_keys = 4;
    in.defaults = 5;
  } else if (st.form == Form::kV1) {
    in.sparse_keys = 2;
    in.dense_keys = 2 + st.num_sparse;
    in.defaults = 2 + st.num_sparse + st.num_dense;
  } else {
    in.defaults = 1;
  }
  return in;
}

}  // namespace kiln::exec::parse_example
