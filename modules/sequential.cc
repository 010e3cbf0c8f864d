#include "kiln/modules/sequential.h"

#include <algorithm>

namespace kiln::modules {
namespace {

constexpr int kLineLength = 65;
constexpr int kPositions[] = {29, 55, 65};  // Keras: [.45, .85, 1.] of the line length

// Keras's print_row: each field cut to end at its column, at least one space between fields.
std::string Row(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line.back() = ' ';
    line += fields[i];
    line.resize(std::min<size_t>(line.size(), kPositions[i]));
    line.append(kPositions[i] - line.size(), ' ');
  }
  return line + "\n";
}

// 669706 -> "669,706" (Python's "{:,}").
std::string WithCommas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace

Sequential::Sequential(std::string name) : Layer(std::move(name)) {}

void Sequential::AddLayer(std::unique_ptr<Layer> layer) {
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
  PartialShape shape = input;
  for (Layer* l : layers_) {
    KILN_RETURN_IF_ERROR(l->Build(shape));
    KILN_ASSIGN_OR_RETURN(shape, l->OutputShape(shape));
  }
  return OkStatus();
}

PartialShape Sequential::built_input_shape() const {
  return layers_.empty() ? PartialShape::UnknownRank() : layers_[0]->built_input_shape();
}

Result<PartialShape> Sequential::OutputShape(const PartialShape& input) const {
  PartialShape shape = input;
  for (const Layer* l : layers_) {
    KILN_ASSIGN_OR_RETURN(shape, l->OutputShape(shape));
  }
  return shape;
}

trace::Value Sequential::Call(const trace::Value& input, bool training) {
  trace::Value x = input;
  for (Layer* l : layers_) x = (*l)(x, training);
  return x;
}

Result<std::string> Sequential::Summary() const {
  PartialShape shape = built_input_shape();
  if (shape.unknown_rank()) {
    return FailedPrecondition("model '", name(),
                              "' is not built yet: give the first layer an input size, or "
                              "call the model once");
  }
  std::string out = "Model: \"" + name() + "\"\n";
  out += std::string(kLineLength, '_') + "\n";
  out += Row({"Layer (type)", "Output Shape", "Param #"});
  out += std::string(kLineLength, '=') + "\n";
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Layer* l = layers_[i];
    KILN_ASSIGN_OR_RETURN_CTX(shape, l->OutputShape(shape), "summary of '", name(), "'");
    out += Row({l->name() + " (" + l->type_name() + ")", shape.ToPythonString(),
                std::to_string(l->CountParams())});
    out += std::string(kLineLength, i + 1 == layers_.size() ? '=' : '_') + "\n";
  }
  const int64_t total = CountParams();
  const int64_t trainable = CountTrainableParams();
  out += "Total params: " + WithCommas(total) + "\n";
  out += "Trainable params: " + WithCommas(trainable) + "\n";
  out += "Non-trainable params: " + WithCommas(total - trainable) + "\n";
  out += std::string(kLineLength, '_') + "\n";
  return out;
}

}  // namespace kiln::modules
