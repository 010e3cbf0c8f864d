// AttrReader, TensorSpec printing, PrepareContext helpers and the default print sink.
// AttrReader reads protobuf attrs (a FunctionDef's nodes) or native ones (a serving plan's);
// the protobuf-free runtime (KILN_NO_PROTOBUF) has only the native half.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <string>

#include "core/attr_kind.h"
#include "core/native_attrs.h"
#include "kiln/exec/op_table.h"
#ifndef KILN_NO_PROTOBUF
#include "kiln/core/proto_convert.h"
#include "tensorflow/framework.pb.h"
#endif

namespace kiln::exec {
namespace {

Status Missing(std::string_view name, AttrKind kind) {
  return InvalidArgument("missing attr '", name, "' (", AttrKindName(kind), ")");
}

Result<DType> TypeOf(std::string_view name, int number) {
  auto t = DTypeFromProto(number);
  if (!t.ok()) return t.status().WithContext(internal::StrCat("attr '", name, "'"));
  return *t;
}

template <typename Range>
Result<std::vector<DType>> TypeList(std::string_view name, const Range& numbers) {
  std::vector<DType> out;
  for (int t : numbers) {
    KILN_ASSIGN_OR_RETURN(DType d, TypeOf(name, t));
    out.push_back(d);
  }
  return out;
}

#ifndef KILN_NO_PROTOBUF
using tensorflow::AttrValue;

Result<PartialShape> ShapeValue(std::string_view name, const tensorflow::TensorShapeProto& p) {
  auto s = PartialShapeFromProto(p);
  if (!s.ok()) return s.status().WithContext(internal::StrCat("attr '", name, "'"));
  return *s;
}

template <typename Range>
Result<std::vector<PartialShape>> ShapeList(std::string_view name, const Range& protos) {
  std::vector<PartialShape> out;
  for (const auto& p : protos) {
    KILN_ASSIGN_OR_RETURN(PartialShape s, ShapeValue(name, p));
    out.push_back(s);
  }
  return out;
}

Result<Tensor> TensorValue(std::string_view name, const tensorflow::TensorProto& proto) {
  auto t = TensorFromProto(proto);
  if (!t.ok()) return t.status().WithContext(internal::StrCat("attr '", name, "'"));
  return std::move(t).value();
}

template <typename Range>
std::vector<std::string> FuncNames(const Range& funcs) {
  std::vector<std::string> out;
  for (const auto& f : funcs) out.push_back(f.name());
  return out;
}

template <typename T, typename Range>
std::vector<T> VectorOf(const Range& r) {
  return std::vector<T>(r.begin(), r.end());
}

// The value of `name` checked to hold `kind`.
Result<const AttrValue*> ProtoValue(const ProtoAttrMap* attrs, std::string_view name,
                                    AttrKind kind) {
  if (attrs == nullptr) return Missing(name, kind);
  auto it = attrs->find(std::string(name));
  if (it == attrs->end()) return Missing(name, kind);
  KILN_RETURN_IF_ERROR(CheckAttrKind(name, it->second, kind));
  return &it->second;
}
#endif

}  // namespace

// Returns the value of attr `name` (in scope) holding `kind`: the expression `native` reads a
// `const NativeAttr* v`, `proto` a `const AttrValue* v`. The protobuf-free runtime has no
// protobuf attrs, so only `native` is compiled there.
#ifdef KILN_NO_PROTOBUF
#define KILN_ATTR_VALUE(kind, native, proto)                                          \
  do {                                                                                \
    KILN_ASSIGN_OR_RETURN(const NativeAttr* v, Native(name, static_cast<int>(kind))); \
    return native;                                                                    \
  } while (false)
#else
#define KILN_ATTR_VALUE(kind, native, proto)                                            \
  do {                                                                                  \
    if (native_ != nullptr) {                                                           \
      KILN_ASSIGN_OR_RETURN(const NativeAttr* v, Native(name, static_cast<int>(kind))); \
      return native;                                                                    \
    }                                                                                   \
    KILN_ASSIGN_OR_RETURN(const AttrValue* v, ProtoValue(attrs_, name, kind));          \
    return proto;                                                                       \
  } while (false)
#endif

Result<const NativeAttr*> AttrReader::Native(std::string_view name, int kind) const {
  const NativeAttr* v = native_ == nullptr ? nullptr : native_->Find(name);
  if (v == nullptr) return Missing(name, static_cast<AttrKind>(kind));
  KILN_RETURN_IF_ERROR(CheckNativeAttrKind(*v, static_cast<AttrKind>(kind)));
  return v;
}

const tensorflow::AttrValue* AttrReader::Find(std::string_view name) const {
#ifdef KILN_NO_PROTOBUF
  (void)name;
  (void)attrs_;  // nothing here makes protobuf attrs: only a plan's native ones exist
  return nullptr;
#else
  if (attrs_ == nullptr) return nullptr;
  auto it = attrs_->find(std::string(name));
  return it == attrs_->end() ? nullptr : &it->second;
#endif
}

bool AttrReader::Has(std::string_view name) const {
  if (native_ != nullptr) return native_->Find(name) != nullptr;
  return Find(name) != nullptr;
}

Result<DType> AttrReader::GetType(std::string_view name) const {
  auto t = [&]() -> Result<DType> {
    KILN_ATTR_VALUE(AttrKind::kType, TypeOf(name, v->type), TypeOf(name, v->type()));
  }();
  if (!t.ok()) return t;
  return Substituted(*t);
}

bool AttrReader::MentionsType(DType t) const {
  const int number = DTypeToProto(t);
  if (native_ != nullptr) {
    for (const NativeAttr& a : native_->attrs())
      if ((a.kind == NativeAttr::Kind::kType && a.type == number) ||
          std::find(a.types.begin(), a.types.end(), number) != a.types.end())
        return true;
    return false;
  }
#ifndef KILN_NO_PROTOBUF
  if (attrs_ == nullptr) return false;
  for (const auto& [name, v] : *attrs_) {
    if (v.value_case() == AttrValue::kType && v.type() == number) return true;
    if (v.value_case() == AttrValue::kList)
      for (int x : v.list().type())
        if (x == number) return true;
  }
#endif
  return false;
}

Result<DType> AttrReader::GetType(std::string_view name, DType dflt) const {
  if (!Has(name)) return dflt;
  return GetType(name);
}

Result<std::vector<DType>> AttrReader::GetTypeList(std::string_view name) const {
  auto list = [&]() -> Result<std::vector<DType>> {
    KILN_ATTR_VALUE(AttrKind::kTypeList, TypeList(name, v->types),
                    TypeList(name, v->list().type()));
  }();
  if (!list.ok()) return list;
  for (DType& t : *list) t = Substituted(t);
  return list;
}

Result<int64_t> AttrReader::GetInt(std::string_view name) const {
  KILN_ATTR_VALUE(AttrKind::kInt, v->i, static_cast<int64_t>(v->i()));
}

Result<int64_t> AttrReader::GetInt(std::string_view name, int64_t dflt) const {
  if (!Has(name)) return dflt;
  return GetInt(name);
}

Result<std::vector<int64_t>> AttrReader::GetIntList(std::string_view name) const {
  KILN_ATTR_VALUE(AttrKind::kIntList, v->ints, VectorOf<int64_t>(v->list().i()));
}

Result<std::vector<int64_t>> AttrReader::GetIntList(std::string_view name,
                                                    std::vector<int64_t> dflt) const {
  if (!Has(name)) return dflt;
  return GetIntList(name);
}

Result<float> AttrReader::GetFloat(std::string_view name, float dflt) const {
  if (!Has(name)) return dflt;
  KILN_ATTR_VALUE(AttrKind::kFloat, v->f, v->f());
}

Result<std::vector<float>> AttrReader::GetFloatList(std::string_view name) const {
  KILN_ATTR_VALUE(AttrKind::kFloatList, v->floats, VectorOf<float>(v->list().f()));
}

Result<bool> AttrReader::GetBool(std::string_view name, bool dflt) const {
  if (!Has(name)) return dflt;
  KILN_ATTR_VALUE(AttrKind::kBool, v->b, v->b());
}

Result<std::string> AttrReader::GetString(std::string_view name) const {
  KILN_ATTR_VALUE(AttrKind::kString, v->s, v->s());
}

Result<std::string> AttrReader::GetString(std::string_view name, std::string dflt) const {
  if (!Has(name)) return dflt;
  return GetString(name);
}

Result<std::vector<std::string>> AttrReader::GetStringList(std::string_view name) const {
  KILN_ATTR_VALUE(AttrKind::kStringList, v->strings, VectorOf<std::string>(v->list().s()));
}

Result<PartialShape> AttrReader::GetShape(std::string_view name) const {
  KILN_ATTR_VALUE(AttrKind::kShape, v->shape, ShapeValue(name, v->shape()));
}

Result<PartialShape> AttrReader::GetShape(std::string_view name, PartialShape dflt) const {
  if (!Has(name)) return dflt;
  return GetShape(name);
}

Result<std::vector<PartialShape>> AttrReader::GetShapeList(std::string_view name) const {
  KILN_ATTR_VALUE(AttrKind::kShapeList, v->shapes, ShapeList(name, v->list().shape()));
}

Result<Tensor> AttrReader::GetTensor(std::string_view name) const {
  KILN_ATTR_VALUE(AttrKind::kTensor, *v->tensor, TensorValue(name, v->tensor()));
}

Result<std::string> AttrReader::GetFunctionName(std::string_view name) const {
  KILN_ATTR_VALUE(AttrKind::kFunc, v->s, v->func().name());
}

Result<std::vector<std::string>> AttrReader::GetFunctionNameList(std::string_view name) const {
  KILN_ATTR_VALUE(AttrKind::kFuncList, v->strings, FuncNames(v->list().func()));
}

#undef KILN_ATTR_VALUE

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
