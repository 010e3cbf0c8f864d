#include "kiln/modules/sequential.h"

#include <algorithm>

#include "summary.h"

namespace kiln::modules {
Sequential::Sequential(std::string name) : Layer(std::move(name)) {}

void Sequential::AddLayer(std::shared_ptr<Layer> layer) {
  const std::string base = layer->name();
  std::string name = base;
  auto taken = [this](const std::string& n) {
    return std::any_of(children().begin(), children().end(),
                       [&](const Child& c) { return c.name == n; });
  };
  for (int k = 1; taken(name); ++k) name = base + "_" + std::to_string(k);

  // The input size known so far decides whether the new layer can be built now.
  Result<PartialShape> input = built_input_shape();
  for (Layer* l : layers_) {
    if (!input.ok() || input->unknown_rank()) break;
    input = l->OutputShape(*input);
  }
  Layer* raw = layer.get();
  AddModule(std::move(name), std::move(layer));
  layers_.push_back(raw);
  if (!raw->built() && input.ok() && !input->unknown_rank() && input->rank() > 0 &&
      input->dim(input->rank() - 1) >= 0) {
    Status s = raw->Build(*input);
    if (!s.ok()) RecordError(s);
  }
}

bool Sequential::built() const {
  return !layers_.empty() &&
         std::all_of(layers_.begin(), layers_.end(), [](const Layer* l) { return l->built(); });
}

Status Sequential::Build(const PartialShape& input) {
  build_input_ = input;
  PartialShape shape = input;
  for (Layer* l : layers_) {
    KILN_RETURN_IF_ERROR(l->Build(shape));
    KILN_ASSIGN_OR_RETURN(shape, l->OutputShape(shape));
  }
  return OkStatus();
}

PartialShape Sequential::built_input_shape() const {
  if (layers_.empty()) return PartialShape::UnknownRank();
  // A first layer without variables (Masking, Flatten) does not keep the shape; Build does.
  const PartialShape first = layers_[0]->built_input_shape();
  return first.unknown_rank() ? build_input_ : first;
}

Result<PartialShape> Sequential::OutputShape(const PartialShape& input) const {
  PartialShape shape = input;
  for (const Layer* l : layers_) {
    KILN_ASSIGN_OR_RETURN(shape, l->OutputShape(shape));
  }
  return shape;
}

trace::Value Sequential::Call(const trace::Value& input, bool training) {
  return CallWithMask(input, trace::Value(), training);
}

trace::Value Sequential::CallWithMask(const trace::Value& input, const trace::Value& mask,
                                      bool training) {
  trace::Value x = input;
  trace::Value m = mask;
  for (Layer* l : layers_) {
    trace::Value y = l->CallMasked(x, m, training);
    if (!y.ok()) return y;
    m = l->ComputeMask(x, m);
    x = y;
  }
  return x;
}

Result<std::string> Sequential::Summary(int line_length) const {
  // Keras prints "?" and "0 (unbuilt)" for layers it cannot build yet.
  Result<PartialShape> shape = built_input_shape();
  std::vector<internal::SummaryRow> rows;
  for (const Layer* l : layers_) {
    if (shape.ok() && !shape->unknown_rank()) shape = l->OutputShape(*shape);
    const bool known = shape.ok() && !shape->unknown_rank();
    rows.push_back({l->name(), l->type_name(), known ? shape->ToPythonString() : "?",
                    l->CountParams(), l->built(), ""});
    if (!known) shape = PartialShape::UnknownRank();
  }
  return internal::RenderSummary(*this, rows, /*with_connections=*/false, line_length);
}

}  // namespace kiln::modules
