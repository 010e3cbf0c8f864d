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
  if (!input.ok()) return input;
  trace::NameScope scope(name());
  if (!built()) {
    Status s = Build(input.shape());
    if (!s.ok()) return trace::Value::Error(s);
  }
  // Checked here, once per call or trace, so that Call only sees inputs it can take and a
  // mistake names the layer rather than the op inside it.
  Result<PartialShape> out = OutputShape(input.shape());
  if (!out.ok()) return trace::Value::Error(out.status());
  return Call(input, training);
}

int64_t Layer::CountParams() const { return CountElements(variables()); }
int64_t Layer::CountTrainableParams() const { return CountElements(trainable_variables()); }

}  // namespace kiln::modules
