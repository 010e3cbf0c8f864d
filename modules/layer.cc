#include "kiln/modules/layer.h"

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
  if (!built()) {
    Status s = Build(input.shape());
    if (!s.ok()) return trace::Value::Error(s);
  }
  // Checked here, once per call or trace, so that Call only sees inputs it can take and a
  // mistake names the layer rather than the op inside it.
  Result<PartialShape> out = OutputShape(input.shape());
  if (!out.ok()) return trace::Value::Error(out.status());
  return CallWithMask(input, mask, training);
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
  std::vector<PartialShape> shapes;
  for (const trace::Value& v : inputs) shapes.push_back(v.shape());
  if (!built() && shapes.size() == 1) {
    Status s = Build(shapes[0]);
    if (!s.ok()) return {trace::Value::Error(s)};
  }
  Result<std::vector<PartialShape>> out = OutputShapes(shapes);
  if (!out.ok()) return {trace::Value::Error(out.status())};
  return CallValues(inputs, training);
}

trace::Values Layer::CallValues(const trace::Values& inputs, bool training) {
  return {Call(inputs.at(0), training)};
}

int64_t Layer::CountParams() const { return CountElements(variables()); }
int64_t Layer::CountTrainableParams() const { return CountElements(trainable_variables()); }

}  // namespace kiln::modules
