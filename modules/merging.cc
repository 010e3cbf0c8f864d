#include "kiln/modules/merging.h"

#include "kiln/trace/ops.h"
#include "nn_ops.h"

namespace kiln::modules {
namespace {

// Two known sizes must agree; an unknown one takes the other.
bool Merge(int64_t a, int64_t b, int64_t* out) {
  if (a >= 0 && b >= 0 && a != b) return false;
  *out = a >= 0 ? a : b;
  return true;
}

}  // namespace

Result<PartialShape> MergeLayer::OutputShape(const PartialShape& input) const {
  return InvalidArgument(Who(), ": expected a list of at least 2 inputs, got one of shape ",
                         input.ToPythonString());
}

trace::Value MergeLayer::Call(const trace::Value& input, bool /*training*/) {
  return trace::Value::Error(OutputShape(input.shape()).status());
}

Status MergeLayer::CheckList(const std::vector<PartialShape>& inputs) const {
  if (inputs.size() < 2) {
    return InvalidArgument(Who(), ": expected a list of at least 2 inputs, got ", inputs.size());
  }
  for (const PartialShape& s : inputs) {
    if (s.unknown_rank() || s.rank() != inputs[0].rank()) {
      return InvalidArgument(Who(), ": the inputs must have one known rank, got ",
                             inputs[0].ToPythonString(), " and ", s.ToPythonString());
    }
  }
  return OkStatus();
}

Result<std::vector<PartialShape>> Add::OutputShapes(const std::vector<PartialShape>& inputs) const {
  KILN_RETURN_IF_ERROR(CheckList(inputs));
  std::vector<int64_t> dims(inputs[0].dims().begin(), inputs[0].dims().end());
  for (const PartialShape& s : inputs) {
    for (int i = 0; i < s.rank(); ++i) {
      if (!Merge(dims[i], s.dim(i), &dims[i])) {
        return InvalidArgument(Who(), ": the inputs must have one shape, got ",
                               inputs[0].ToPythonString(), " and ", s.ToPythonString());
      }
    }
  }
  KILN_ASSIGN_OR_RETURN(PartialShape out, PartialShape::FromDims(dims));
  return std::vector<PartialShape>{out};
}

trace::Values Add::CallValues(const trace::Values& inputs, bool /*training*/) {
  trace::Value sum = inputs[0];
  for (size_t i = 1; i < inputs.size(); ++i) sum = sum + inputs[i];
  return {sum};
}

Result<std::vector<PartialShape>> Concatenate::OutputShapes(
    const std::vector<PartialShape>& inputs) const {
  KILN_RETURN_IF_ERROR(CheckList(inputs));
  const int64_t rank = inputs[0].rank();
  const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
  if (axis < 1 || axis >= rank) {
    return InvalidArgument(Who(), ": axis ", axis_, " is not a non-batch axis of rank ", rank);
  }
  std::vector<int64_t> dims(inputs[0].dims().begin(), inputs[0].dims().end());
  dims[axis] = 0;
  for (const PartialShape& s : inputs) {
    for (int64_t i = 0; i < rank; ++i) {
      const int64_t d = s.dim(static_cast<int>(i));
      if (i == axis) {
        dims[i] = dims[i] < 0 || d < 0 ? -1 : dims[i] + d;
      } else if (!Merge(dims[i], d, &dims[i])) {
        return InvalidArgument(Who(), ": the inputs must match except on axis ", axis_, ", got ",
                               inputs[0].ToPythonString(), " and ", s.ToPythonString());
      }
    }
  }
  KILN_ASSIGN_OR_RETURN(PartialShape out, PartialShape::FromDims(dims));
  return std::vector<PartialShape>{out};
}

trace::Values Concatenate::CallValues(const trace::Values& inputs, bool /*training*/) {
  const int64_t rank = inputs[0].shape().rank();
  return {internal::Concat(inputs, axis_ < 0 ? axis_ + rank : axis_)};
}

}  // namespace kiln::modules
