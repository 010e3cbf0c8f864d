// OpBuilder: adds a node to the current trace, or runs the op eagerly.
#include "kiln/trace/op_builder.h"

#include <optional>
#include <utility>

#include "graph.h"
#include "kiln/core/proto_convert.h"
#include "tape.h"
#include "trace_extras.h"

namespace kiln::trace {

struct OpBuilder::Impl {
  std::string op;
  std::string name;
  Values inputs;
  internal::AttrMap attrs;
  Status error;  // from an attr that could not be encoded
  bool spent = false;
};

OpBuilder::OpBuilder(std::string_view op, std::string_view name) : impl_(std::make_unique<Impl>()) {
  impl_->op = std::string(op);
  impl_->name = std::string(name);
}

OpBuilder::~OpBuilder() = default;

OpBuilder& OpBuilder::Input(const Value& value) {
  impl_->inputs.push_back(value);
  return *this;
}

OpBuilder& OpBuilder::Inputs(std::span<const Value> values) {
  impl_->inputs.insert(impl_->inputs.end(), values.begin(), values.end());
  return *this;
}

OpBuilder& OpBuilder::Attr(std::string_view name, DType value) {
  impl_->attrs[std::string(name)] = internal::TypeAttr(value);
  return *this;
}

OpBuilder& OpBuilder::Attr(std::string_view name, std::span<const DType> value) {
  impl_->attrs[std::string(name)] = internal::TypeListAttr(value);
  return *this;
}

OpBuilder& OpBuilder::Attr(std::string_view name, int64_t value) {
  impl_->attrs[std::string(name)] = internal::IntAttr(value);
  return *this;
}

OpBuilder& OpBuilder::Attr(std::string_view name, std::span<const int64_t> value) {
  tensorflow::AttrValue& attr = impl_->attrs[std::string(name)];
  attr.Clear();
  auto* list = attr.mutable_list();  // present even when empty: `list {}`
  for (int64_t i : value) list->add_i(i);
  return *this;
}

OpBuilder& OpBuilder::Attr(std::string_view name, float value) {
  impl_->attrs[std::string(name)].set_f(value);
  return *this;
}

OpBuilder& OpBuilder::Attr(std::string_view name, bool value) {
  impl_->attrs[std::string(name)].set_b(value);
  return *this;
}

OpBuilder& OpBuilder::Attr(std::string_view name, std::string_view value) {
  impl_->attrs[std::string(name)] = internal::StringAttr(value);
  return *this;
}

OpBuilder& OpBuilder::Attr(std::string_view name, const PartialShape& value) {
  impl_->attrs[std::string(name)] = internal::ShapeAttr(value);
  return *this;
}

OpBuilder& OpBuilder::Attr(std::string_view name, const Tensor& value) {
  Status s = TensorToProto(value, impl_->attrs[std::string(name)].mutable_tensor());
  if (!s.ok() && impl_->error.ok()) {
    impl_->error = s.WithContext("op '" + impl_->op + "' attr '" + std::string(name) + "'");
  }
  return *this;
}

OpBuilder& OpBuilder::FuncAttr(std::string_view name, std::string_view function_name) {
  impl_->attrs[std::string(name)] = internal::FuncAttr(function_name);
  return *this;
}

Values OpBuilder::Build() {
  Impl& b = *impl_;
  internal::Graph* graph = internal::Graph::Current();
  auto fail = [graph](Status s) {
    if (graph != nullptr) graph->RecordError(s);
    if (graph == nullptr) internal::RecordEagerError(s);  // fails an eager Function call
    return Values{Value::Error(std::move(s))};
  };
  if (b.spent) return fail(FailedPrecondition("OpBuilder for op '", b.op, "' was built twice"));
  b.spent = true;
  if (!b.error.ok()) return fail(b.error);
  for (const Value& v : b.inputs) {
    if (!v.ok()) return fail(v.status());
  }
  // A tape watching one of the inputs records the op (attrs copied only then).
  const bool record = internal::AnyTapeRecording();
  if (graph != nullptr) {
    std::optional<internal::AttrMap> attrs;
    if (record) attrs = b.attrs;
    Values out = graph->AddNode(b.op, b.name, b.inputs, std::move(b.attrs));
    if (record && FirstError(out).ok()) internal::RecordOperation(b.op, *attrs, b.inputs, out);
    return out;
  }

  std::vector<Tensor> tensors;
  tensors.reserve(b.inputs.size());
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    Result<Tensor> t = b.inputs[i].tensor();
    if (!t.ok()) {
      return fail(t.status().WithContext("op '" + b.op + "' input " + std::to_string(i) +
                                         " (not tracing: the value's trace has ended)"));
    }
    tensors.push_back(*std::move(t));
  }
  Result<std::vector<Tensor>> out =
      internal::RunEagerOp(b.op, b.name.empty() ? b.op : b.name, b.attrs, tensors);
  if (!out.ok()) return fail(out.status());
  Values values;
  values.reserve(out->size());
  for (Tensor& t : *out) values.emplace_back(std::move(t));
  if (record) internal::RecordOperation(b.op, b.attrs, b.inputs, values);
  return values;
}

Value OpBuilder::BuildOne() {
  const std::string op = impl_->op;
  Values v = Build();
  Status s = FirstError(v);
  if (!s.ok()) return Value::Error(s);
  if (v.size() != 1) {
    return Value::Error(Internal("op '", op, "' has ", v.size(), " outputs, expected one"));
  }
  return v[0];
}

Status OpBuilder::BuildNoOutput() { return FirstError(Build()); }

NameScope::NameScope(std::string_view name) {
  if (internal::Graph* g = internal::Graph::Current()) {
    g->PushScope(name);
    active_ = true;
  }
}

NameScope::~NameScope() {
  if (!active_) return;
  if (internal::Graph* g = internal::Graph::Current()) g->PopScope();
}

bool IsTracing() { return internal::Graph::Current() != nullptr; }

}  // namespace kiln::trace
