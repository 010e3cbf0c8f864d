// AttrReader, TensorSpec printing, PrepareContext helpers and the default print sink.
#include <fstream>
#include <iostream>
#include <string>

#include "core/attr_kind.h"
#include "kiln/core/proto_convert.h"
#include "kiln/exec/op_table.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec {
namespace {

using tensorflow::AttrValue;

Status Missing(std::string_view name, AttrKind kind) {
  return InvalidArgument("missing attr '", name, "' (", AttrKindName(kind), ")");
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
  if (v == nullptr) return Missing(name, AttrKind::kType);
  KILN_RETURN_IF_ERROR(CheckAttrKind(name, *v, AttrKind::kType));
  return TypeOf(name, v->type());
}

Result<DType> AttrReader::GetType(std::string_view name, DType dflt) const {
  if (!Has(name)) return dflt;
  return GetType(name);
}

Result<std::vector<DType>> AttrReader::GetTypeList(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, AttrKind::kTypeList);
  KILN_RETURN_IF_ERROR(CheckAttrKind(name, *v, AttrKind::kTypeList));
  std::vector<DType> out;
  for (int t : v->list().type()) {
    KILN_ASSIGN_OR_RETURN(DType d, TypeOf(name, t));
    out.push_back(d);
  }
  return out;
}

Result<int64_t> AttrReader::GetInt(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, AttrKind::kInt);
  KILN_RETURN_IF_ERROR(CheckAttrKind(name, *v, AttrKind::kInt));
  return static_cast<int64_t>(v->i());
}

Result<int64_t> AttrReader::GetInt(std::string_view name, int64_t dflt) const {
  if (!Has(name)) return dflt;
  return GetInt(name);
}

Result<std::vector<int64_t>> AttrReader::GetIntList(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, AttrKind::kIntList);
  KILN_RETURN_IF_ERROR(CheckAttrKind(name, *v, AttrKind::kIntList));
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
  KILN_RETURN_IF_ERROR(CheckAttrKind(name, *v, AttrKind::kFloat));
  return v->f();
}

Result<bool> AttrReader::GetBool(std::string_view name, bool dflt) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return dflt;
  KILN_RETURN_IF_ERROR(CheckAttrKind(name, *v, AttrKind::kBool));
  return v->b();
}

Result<std::string> AttrReader::GetString(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, AttrKind::kString);
  KILN_RETURN_IF_ERROR(CheckAttrKind(name, *v, AttrKind::kString));
  return v->s();
}

Result<std::string> AttrReader::GetString(std::string_view name, std::string dflt) const {
  if (!Has(name)) return dflt;
  return GetString(name);
}

Result<std::vector<std::string>> AttrReader::GetStringList(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, AttrKind::kStringList);
  KILN_RETURN_IF_ERROR(CheckAttrKind(name, *v, AttrKind::kStringList));
  return std::vector<std::string>(v->list().s().begin(), v->list().s().end());
}

Result<PartialShape> AttrReader::GetShape(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, AttrKind::kShape);
  KILN_RETURN_IF_ERROR(CheckAttrKind(name, *v, AttrKind::kShape));
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
  if (v == nullptr) return Missing(name, AttrKind::kShapeList);
  KILN_RETURN_IF_ERROR(CheckAttrKind(name, *v, AttrKind::kShapeList));
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
  if (v == nullptr) return Missing(name, AttrKind::kTensor);
  KILN_RETURN_IF_ERROR(CheckAttrKind(name, *v, AttrKind::kTensor));
  auto t = TensorFromProto(v->tensor());
  if (!t.ok()) return t.status().WithContext(internal::StrCat("attr '", name, "'"));
  return std::move(t).value();
}

Result<std::string> AttrReader::GetFunctionName(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) return Missing(name, AttrKind::kFunc);
  KILN_RETURN_IF_ERROR(CheckAttrKind(name, *v, AttrKind::kFunc));
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
