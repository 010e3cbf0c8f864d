#include "core/native_attrs.h"

#include <algorithm>

namespace kiln::exec {
namespace {

using Kind = NativeAttr::Kind;

// What each AttrKind reads from a NativeAttr.
Kind HeldKindOf(AttrKind kind) {
  switch (kind) {
    case AttrKind::kString:
      return Kind::kString;
    case AttrKind::kInt:
      return Kind::kInt;
    case AttrKind::kFloat:
      return Kind::kFloat;
    case AttrKind::kBool:
      return Kind::kBool;
    case AttrKind::kType:
      return Kind::kType;
    case AttrKind::kShape:
      return Kind::kShape;
    case AttrKind::kTensor:
      return Kind::kTensor;
    case AttrKind::kFunc:
      return Kind::kFunc;
    case AttrKind::kStringList:
    case AttrKind::kIntList:
    case AttrKind::kTypeList:
    case AttrKind::kShapeList:
    case AttrKind::kFloatList:
    case AttrKind::kFuncList:
      return Kind::kList;
  }
  return Kind::kNone;
}

// The words CheckAttrKind uses for what a value holds.
std::string_view HeldName(Kind kind) {
  switch (kind) {
    case Kind::kNone:
      return "no value";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kBool:
      return "bool";
    case Kind::kType:
      return "type";
    case Kind::kString:
      return "string";
    case Kind::kShape:
      return "shape";
    case Kind::kTensor:
      return "tensor";
    case Kind::kFunc:
      return "func";
    case Kind::kList:
      return "list";
  }
  return "unknown";
}

}  // namespace

std::string_view AttrKindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::kString:
      return "string";
    case AttrKind::kInt:
      return "int";
    case AttrKind::kFloat:
      return "float";
    case AttrKind::kBool:
      return "bool";
    case AttrKind::kType:
      return "type";
    case AttrKind::kShape:
      return "shape";
    case AttrKind::kTensor:
      return "tensor";
    case AttrKind::kFunc:
      return "func";
    case AttrKind::kStringList:
      return "list(string)";
    case AttrKind::kIntList:
      return "list(int)";
    case AttrKind::kTypeList:
      return "list(type)";
    case AttrKind::kShapeList:
      return "list(shape)";
    case AttrKind::kFloatList:
      return "list(float)";
    case AttrKind::kFuncList:
      return "list(func)";
  }
  return "unknown";
}

NativeAttrMap::NativeAttrMap(std::vector<NativeAttr> attrs) : attrs_(std::move(attrs)) {
  std::sort(attrs_.begin(), attrs_.end(),
            [](const NativeAttr& a, const NativeAttr& b) { return a.name < b.name; });
}

const NativeAttr* NativeAttrMap::Find(std::string_view name) const {
  auto it = std::lower_bound(attrs_.begin(), attrs_.end(), name,
                             [](const NativeAttr& a, std::string_view n) { return a.name < n; });
  return it != attrs_.end() && it->name == name ? &*it : nullptr;
}

Status CheckNativeAttrKind(const NativeAttr& value, AttrKind kind) {
  const Kind want = HeldKindOf(kind);
  if (value.kind == want || (want == Kind::kList && value.kind == Kind::kNone)) return OkStatus();
  return InvalidArgument("attr '", value.name, "': expected ", AttrKindName(kind), ", got ",
                         HeldName(value.kind));
}

}  // namespace kiln::exec
