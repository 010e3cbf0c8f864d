#include "core/attr_kind.h"

#include "tensorflow/framework.pb.h"

namespace kiln::exec {
namespace {

using tensorflow::AttrValue;

// Which protobuf value case holds each kind. The kinds' names, and what each reads from a
// native attr, are native_attrs.cc's table (the protobuf-free runtime has that one too).
struct AttrKindRow {
  AttrKind kind;
  AttrValue::ValueCase value_case;  // kList for every list kind
};

constexpr AttrKindRow kAttrKinds[] = {
    {AttrKind::kString, AttrValue::kS},        {AttrKind::kInt, AttrValue::kI},
    {AttrKind::kFloat, AttrValue::kF},         {AttrKind::kBool, AttrValue::kB},
    {AttrKind::kType, AttrValue::kType},       {AttrKind::kShape, AttrValue::kShape},
    {AttrKind::kTensor, AttrValue::kTensor},   {AttrKind::kFunc, AttrValue::kFunc},
    {AttrKind::kStringList, AttrValue::kList}, {AttrKind::kIntList, AttrValue::kList},
    {AttrKind::kTypeList, AttrValue::kList},   {AttrKind::kShapeList, AttrValue::kList},
    {AttrKind::kFloatList, AttrValue::kList},  {AttrKind::kFuncList, AttrValue::kList},
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
        if (row.value_case == v.value_case()) return AttrKindName(row.kind);
      return "unknown";
  }
}

}  // namespace

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
