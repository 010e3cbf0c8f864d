// The state the tf.SequenceExample parse ops' definitions build (kernels/sequence_example_ops.cc)
// and their CPU kernels read (kernels/cpu/sequence_example_ops.cc), and where each form's inputs
// are.
#pragma once

#include <string>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::sequence_example {

enum class Form { kV2, kV1, kSingle };

// Context (c) or feature-list (f) features of one kind: dtypes, and keys where attrs give them.
struct Group {
  std::vector<DType> types, split_types;
  std::vector<PartialShape> shapes;  // dense only
  std::vector<std::string> keys;     // ParseSequenceExample (attrs)
  int size() const { return static_cast<int>(types.size()); }
};

struct SeqState : OpState {
  Form form = Form::kV2;
  Group cs, cd, cr, fs, fd, fr;
  std::vector<std::string> missing_ok;  // ParseSequenceExample's attr
};

// Input positions.
struct Inputs {
  int debug_name = 1, keys = -1, missing = -1, defaults = 2;
};
inline Inputs InputsOf(const SeqState& st) {
  Inputs in;
  if (st.form == Form::kV2) {
    in.keys = 2;  // cs, cd, cr, fs, fd, fr: one vector each
    in.missing = 8;
    in.defaults = 9;
  } else if (st.form == Form::kSingle) {
    in.missing = 1;
    in.keys = 2;  // one scalar per key
    in.defaults = 2 + st.cs.size() + st.cd.size() + st.fs.size() + st.fd.size();
    in.debug_name = in.defaults + st.cd.size();
  }
  return in;
}

}  // namespace kiln::exec::sequence_example
