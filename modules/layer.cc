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

trace::Value Layer::operator()(const trace::Value& input) {
  trace::NameScope scope(name());
  if (!built() && input.ok()) {
    Status s = Build(input.shape());
    if (!s.ok()) return trace::Value::Error(s);
  }
  return Call(input);
}

int64_t Layer::CountParams() const { return CountElements(variables()); }
int64_t Layer::CountTrainableParams() const { return CountElements(trainable_variables()); }

}  // namespace kiln::modules
