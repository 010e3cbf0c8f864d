// AttrReader, TensorSpec printing, PrepareContext helpers and the default print sink.
#include <fstream>
#include <iostream>
#include <string>

#include "kiln/core/proto_convert.h"
#include "kiln/exec/op_table.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec {
namespace {

using tensorflow::AttrValue;

// What an AttrValue holds, in the words TF's OpDef uses for attr types.
std::string_view KindName(const AttrValue& v) {
  switch (v.value_case()) {
    case AttrValue::kS:
      return "string";
    case AttrValue::kI:
      return "int";
    case AttrValue::kF:
      return "float";
    case AttrValue::kB:
      return "bool";
    case AttrValue::kType:
      return "type";
    case AttrValue::kShape:
      return "shape";
    case AttrValue::kTensor:
      return "tensor";
    case AttrValue::kList:
      return "list";
    case AttrValue::kFunc:
      return "func";
    case AttrValue::kPlaceholder:
      return "placeholder";
    case AttrValue::VALUE_NOT_SET:
      return "no value";
  }
  return "unknown";
}

Status WrongKind(std::string_view name, std::string_view want, const AttrValue& v) {
  if (v.value_case() == AttrValue::kPlaceholder) {
    return InvalidArgument("attr '", name, "': expected ", want,
                           ", got an unresolved placeholder '", v.placeholder(), "'");
  }
  return InvalidArgument("attr '", name, "': expected ", want, ", got ", KindName(v));
}

Status Missing(std::string_view name, std::string_view want) {
  return InvalidArgument("missing attr '", name, "' (", want, ")");
}

// A list attr may be written as `list {}` or, for an empty list, with no value at all.
bool IsListOrEmpty(const AttrValue& v) {
  return v.value_case() == AttrValue::kList || v.value_case() == AttrValue::VALUE_NOT_SET;
}

Result<DType> TypeOf(std::string_view name, int number) {
  auto t = DTypeFromProto(number);
  if (!t.ok()) return t.status().WithContext(internal::StrCat("attr '", name, "'"));
  return *t;
}

}  // namespace

// ---- AttrReader ----------------------------------------------------------------------------

const AttrValue* AttrReader::Find(std::string_view name) const {
  if (attrs_ == nullptr) return nullptr;
  auto it = attrs_->find(std::string(name));
  return it == attrs_->end() ? nullptr : &it->second;
}

Result<DType> AttrReader::GetType(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, "type");
  if (v->value_case() != AttrValue::kType) return WrongKind(name, "type", *v);
  return TypeOf(name, v->type());
}

Result<DType> AttrReader::GetType(std::string_view name, DType dflt) const {
  if (!Has(name)) return dflt;
  return GetType(name);
}

Result<std::vector<DType>> AttrReader::GetTypeList(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, "list(type)");
  if (!IsListOrEmpty(*v)) return WrongKind(name, "list(type)", *v);
  std::vector<DType> out;
  for (int t : v->list().type()) {
    KILN_ASSIGN_OR_RETURN(DType d, TypeOf(name, t));
    out.push_back(d);
  }
  return out;
}

Result<int64_t> AttrReader::GetInt(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, "int");
  if (v->value_case() != AttrValue::kI) return WrongKind(name, "int", *v);
  return static_cast<int64_t>(v->i());
}

Result<int64_t> AttrReader::GetInt(std::string_view name, int64_t dflt) const {
  if (!Has(name)) return dflt;
  return GetInt(name);
}

Result<std::vector<int64_t>> AttrReader::GetIntList(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, "list(int)");
  if (!IsListOrEmpty(*v)) return WrongKind(name, "list(int)", *v);
  return std::vector<int64_t>(v->list().i().begin(), v->list().i().end());
}

Result<std::vector<int64_t>> AttrReader::GetIntList(std::string_view name,
                                                    std::vector<int64_t> dflt) const {
  if (!Has(name)) return dflt;
  return GetIntList(name);
}

Result<float> AttrReader::GetFloat(std::string_view name, float dflt) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return dflt;
  if (v->value_case() != AttrValue::kF) return WrongKind(name, "float", *v);
  return v->f();
}

Result<bool> AttrReader::GetBool(std::string_view name, bool dflt) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return dflt;
  if (v->value_case() != AttrValue::kB) return WrongKind(name, "bool", *v);
  return v->b();
}

Result<std::string> AttrReader::GetString(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, "string");
  if (v->value_case() != AttrValue::kS) return WrongKind(name, "string", *v);
  return v->s();
}

Result<std::string> AttrReader::GetString(std::string_view name, std::string dflt) const {
  if (!Has(name)) return dflt;
  return GetString(name);
}

Result<std::vector<std::string>> AttrReader::GetStringList(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, "list(string)");
  if (!IsListOrEmpty(*v)) return WrongKind(name, "list(string)", *v);
  return std::vector<std::string>(v->list().s().begin(), v->list().s().end());
}

Result<PartialShape> AttrReader::GetShape(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, "shape");
  if (v->value_case() != AttrValue::kShape) return WrongKind(name, "shape", *v);
  auto s = PartialShapeFromProto(v->shape());
  if (!s.ok()) return s.status().WithContext(internal::StrCat("attr '", name, "'"));
  return *s;
}

Result<PartialShape> AttrReader::GetShape(std::string_view name, PartialShape dflt) const {
  if (!Has(name)) return dflt;
  return GetShape(name);
}

Result<std::vector<PartialShape>> AttrReader::GetShapeList(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, "list(shape)");
  if (!IsListOrEmpty(*v)) return WrongKind(name, "list(shape)", *v);
  std::vector<PartialShape> out;
  for (const auto& p : v->list().shape()) {
    auto s = PartialShapeFromProto(p);
    if (!s.ok()) return s.status().WithContext(internal::StrCat("attr '", name, "'"));
    out.push_back(*s);
  }
  return out;
}

Result<Tensor> AttrReader::GetTensor(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, "tensor");
  if (v->value_case() != AttrValue::kTensor) return WrongKind(name, "tensor", *v);
  auto t = TensorFromProto(v->tensor());
  if (!t.ok()) return t.status().WithContext(internal::StrCat("attr '", name, "'"));
  return std::move(t).value();
}

Result<std::string> AttrReader::GetFunctionName(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, "func");
  if (v->value_case() != AttrValue::kFunc) return WrongKind(name, "func", *v);
  return v->func().name();
}

// ---- TensorSpec, PrepareContext -------------------------------------------------------------

std::string TensorSpec::ToString() const {
  return "TensorSpec(shape=" + shape.ToPythonString() + ", dtype=" + DTypeShortName(dtype) + ")";
}

Status PrepareContext::ExpectInputs(int n) const {
  if (static_cast<int>(inputs.size()) != n) {
    return Error("expected ", n, n == 1 ? " input" : " inputs", ", got ", inputs.size());
  }
  return OkStatus();
}

Status PrepareContext::ExpectInputsAtLeast(int n) const {
  if (static_cast<int>(inputs.size()) < n) {
    return Error("expected at least ", n, n == 1 ? " input" : " inputs", ", got ", inputs.size());
  }
  return OkStatus();
}

// ---- Print sinks -----------------------------------------------------------------------------

namespace {

// stdout, stderr, "log(<level>)" (to stderr, as TF's logging does) and "file://<path>"
// (appended).
void WriteToProcessStreams(std::string_view stream, std::string_view text) {
  if (stream == "stdout") {
    std::cout << text;
    std::cout.flush();
    return;
  }
  constexpr std::string_view kFilePrefix = "file://";
  if (stream.substr(0, kFilePrefix.size()) == kFilePrefix) {
    std::ofstream f(std::string(stream.substr(kFilePrefix.size())), std::ios::app);
    if (f) {
      f << text;
      return;
    }
    // Unwritable file: fall through to stderr rather than lose the text.
  }
  std::cerr << text;
  std::cerr.flush();
}

PrintSink& SinkSlot() {
  static PrintSink sink = WriteToProcessStreams;
  return sink;
}

}  // namespace

const PrintSink& DefaultPrintSink() { return SinkSlot(); }

void SetDefaultPrintSink(PrintSink sink) {
  SinkSlot() = sink ? std::move(sink) : PrintSink(WriteToProcessStreams);
}

}  // namespace kiln::exec
