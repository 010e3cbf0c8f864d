#include "kiln/modules/layer.h"

#include "kiln/trace/math_ops.h"
#include "kiln/trace/op_builder.h"

namespace kiln::modules {
namespace {

int64_t CountElements(const std::vector<trace::Variable>& vars) {
  int64_t n = 0;
  for (const trace::Variable& v : vars) {
    int64_t elements = 1;
    for (int64_t d : v.shape().dims()) elements *= d;
    n += elements;
  }
  return n;
}

}  // namespace

trace::Value Layer::operator()(const trace::Value& input, bool training) {
  return CallMasked(input, trace::Value(), training);
}

trace::Value Layer::CallMasked(const trace::Value& input, const trace::Value& mask, bool training) {
  if (!input.ok()) return input;
  if (!mask.empty() && !mask.ok()) return mask;
  trace::NameScope scope(name());
  const trace::Value x = ConvertInput(input);
  if (!x.ok()) return x;
  if (!built()) {
    Status s = Build(x.shape());
    if (!s.ok()) return trace::Value::Error(s);
  }
  // Checked here, once per call or trace, so that Call only sees inputs it can take and a
  // mistake names the layer rather than the op inside it.
  Result<PartialShape> out = OutputShape(x.shape());
  if (!out.ok()) return trace::Value::Error(out.status());
  return CallWithMask(x, mask, training);
}

trace::Value Layer::ComputeMask(const trace::Value& /*input*/, const trace::Value& mask) const {
  return supports_masking() ? mask : trace::Value();
}

Result<std::vector<PartialShape>> Layer::OutputShapes(
    const std::vector<PartialShape>& inputs) const {
  if (inputs.size() != 1) {
    return InvalidArgument(type_name(), " '", name(), "': expected one input, got ", inputs.size());
  }
  KILN_ASSIGN_OR_RETURN(PartialShape out, OutputShape(inputs[0]));
  return std::vector<PartialShape>{out};
}

trace::Values Layer::CallMulti(const trace::Values& inputs, bool training) {
  for (const trace::Value& v : inputs) {
    if (!v.ok()) return {v};
  }
  trace::NameScope scope(name());
  trace::Values xs;
  for (const trace::Value& v : inputs) {
    xs.push_back(ConvertInput(v));
    if (!xs.back().ok()) return {xs.back()};
  }
  std::vector<PartialShape> shapes;
  for (const trace::Value& v : xs) shapes.push_back(v.shape());
  if (!built() && shapes.size() == 1) {
    Status s = Build(shapes[0]);
    if (!s.ok()) return {trace::Value::Error(s)};
  }
  Result<std::vector<PartialShape>> out = OutputShapes(shapes);
  if (!out.ok()) return {trace::Value::Error(out.status())};
  return CallValues(xs, training);
}

trace::Values Layer::CallValues(const trace::Values& inputs, bool training) {
  return {Call(inputs.at(0), training)};
}

trace::Value Layer::ConvertInput(const trace::Value& input) const {
  const DType dtype = input.dtype();
  const DType want = compute_dtype();
  if (dtype == want) return input;
  // Keras casts floating inputs whatever the layer (DTypePolicy.convert_input).
  if (IsFloatingPoint(dtype)) return trace::Cast(input, want);
  const NonFloatInput rule = non_float_input();
  if (rule == NonFloatInput::kKeep) return input;
  if (rule == NonFloatInput::kCast && (IsInteger(dtype) || dtype == DType::kBool)) {
    return trace::Cast(input, want);
  }
  return trace::Value::Error(
      InvalidArgument(type_name(), " '", name(), "': expected a ", DTypeShortName(want),
                      " input, got ", DTypeShortName(dtype), " (floating-point inputs are cast to ",
                      DTypeShortName(want), "; cast this one first, e.g. Cast(x, DType::kFloat))"));
}

trace::Variable Layer::WeightOrError(const trace::Variable& v, std::string_view what) const {
  if (v != trace::Variable()) return v;  // created (or failed with a reason of its own)
  if (!built()) {
    return trace::Variable::Invalid(FailedPrecondition(
        type_name(), " '", name(), "': its ", what,
        " does not exist yet: the layer has not been built. Call the layer once on an input, or "
        "build it for an input shape (Build(shape), or give the input size in its options)"));
  }
  return trace::Variable::Invalid(FailedPrecondition(type_name(), " '", name(), "' has no ", what,
                                                     ": its options leave it out"));
}

int64_t Layer::CountParams() const { return CountElements(variables()); }
int64_t Layer::CountTrainableParams() const { return CountElements(trainable_variables()); }

}  // namespace kiln::modules
