#include "core/attr_kind.h"

#include "tensorflow/framework.pb.h"

namespace kiln::exec {
namespace {

using tensorflow::AttrValue;

struct AttrKindRow {
  AttrKind kind;
  std::string_view name;
  AttrValue::ValueCase value_case;  // kList for every list kind
};

constexpr AttrKindRow kAttrKinds[] = {
    {AttrKind::kString, "string", AttrValue::kS},
    {AttrKind::kInt, "int", AttrValue::kI},
    {AttrKind::kFloat, "float", AttrValue::kF},
    {AttrKind::kBool, "bool", AttrValue::kB},
    {AttrKind::kType, "type", AttrValue::kType},
    {AttrKind::kShape, "shape", AttrValue::kShape},
    {AttrKind::kTensor, "tensor", AttrValue::kTensor},
    {AttrKind::kFunc, "func", AttrValue::kFunc},
    {AttrKind::kStringList, "list(string)", AttrValue::kList},
    {AttrKind::kIntList, "list(int)", AttrValue::kList},
    {AttrKind::kTypeList, "list(type)", AttrValue::kList},
    {AttrKind::kShapeList, "list(shape)", AttrValue::kList},
};

const AttrKindRow& Row(AttrKind kind) {
  for (const AttrKindRow& row : kAttrKinds)
    if (row.kind == kind) return row;
  return kAttrKinds[0];  // unreachable: every enumerator has a row
}

// What a value holds, in the same words ("list" for any list).
std::string_view HeldName(const AttrValue& v) {
  switch (v.value_case()) {
    case AttrValue::kList:
      return "list";
    case AttrValue::kPlaceholder:
      return "placeholder";
    case AttrValue::VALUE_NOT_SET:
      return "no value";
    default:
      for (const AttrKindRow& row : kAttrKinds)
        if (row.value_case == v.value_case()) return row.name;
      return "unknown";
  }
}

}  // namespace

std::string_view AttrKindName(AttrKind kind) { return Row(kind).name; }

bool HoldsAttrKind(const AttrValue& value, AttrKind kind) {
  const AttrKindRow& row = Row(kind);
  if (value.value_case() == row.value_case) return true;
  return row.value_case == AttrValue::kList && value.value_case() == AttrValue::VALUE_NOT_SET;
}

Status CheckAttrKind(std::string_view name, const AttrValue& value, AttrKind kind) {
  if (HoldsAttrKind(value, kind)) return OkStatus();
  if (value.value_case() == AttrValue::kPlaceholder) {
    return InvalidArgument("attr '", name, "': expected ", AttrKindName(kind),
                           ", got an unresolved placeholder '", value.placeholder(), "'");
  }
  return InvalidArgument("attr '", name, "': expected ", AttrKindName(kind), ", got ",
                         HeldName(value));
}

}  // namespace kiln::exec
