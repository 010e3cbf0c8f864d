#include "core/native_attrs.h"

#include <algorithm>

namespace kiln::exec {
namespace {

using Kind = NativeAttr::Kind;

// Each AttrKind's name (as TensorFlow's OpDef writes attr types) and what it reads from a
// NativeAttr. attr_kind.cc maps the same kinds to protobuf's value cases.
struct AttrKindRow {
  AttrKind kind;
  std::string_view name;
  Kind held;
};

constexpr AttrKindRow kAttrKindRows[] = {
    {AttrKind::kString, "string", Kind::kString},
    {AttrKind::kInt, "int", Kind::kInt},
    {AttrKind::kFloat, "float", Kind::kFloat},
    {AttrKind::kBool, "bool", Kind::kBool},
    {AttrKind::kType, "type", Kind::kType},
    {AttrKind::kShape, "shape", Kind::kShape},
    {AttrKind::kTensor, "tensor", Kind::kTensor},
    {AttrKind::kFunc, "func", Kind::kFunc},
    {AttrKind::kStringList, "list(string)", Kind::kList},
    {AttrKind::kIntList, "list(int)", Kind::kList},
    {AttrKind::kTypeList, "list(type)", Kind::kList},
    {AttrKind::kShapeList, "list(shape)", Kind::kList},
    {AttrKind::kFloatList, "list(float)", Kind::kList},
    {AttrKind::kFuncList, "list(func)", Kind::kList},
};

const AttrKindRow& RowOf(AttrKind kind) {
  for (const AttrKindRow& row : kAttrKindRows)
    if (row.kind == kind) return row;
  return kAttrKindRows[0];  // unreachable: every enumerator has a row
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

std::string_view AttrKindName(AttrKind kind) { return RowOf(kind).name; }

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
  const Kind want = RowOf(kind).held;
  if (value.kind == want || (want == Kind::kList && value.kind == Kind::kNone)) return OkStatus();
  return InvalidArgument("attr '", value.name, "': expected ", AttrKindName(kind), ", got ",
                         HeldName(value.kind));
}

}  // namespace kiln::exec
