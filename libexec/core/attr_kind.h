// The kinds an AttrValue can hold, named as TensorFlow's OpDef names attr types ("type",
// "list(type)", "func", ...). One table serves both places that check protobuf attr kinds:
// AttrReader (what an op's Prepare reads) and the SavedModel reader's structural checks (the
// attrs every bundle uses, checked before anything is prepared), so both accept and refuse the
// same values with the same words; a serving plan's native attrs are checked with the same words
// (native_attrs.h).
#pragma once

#include <string_view>

#include "kiln/core/status.h"

namespace tensorflow {
class AttrValue;
}

namespace kiln::exec {

enum class AttrKind {
  kString,
  kInt,
  kFloat,
  kBool,
  kType,
  kShape,
  kTensor,
  kFunc,
  kStringList,
  kIntList,
  kTypeList,
  kShapeList,
  kFloatList,
  kFuncList,
};

// "type", "list(type)", ...
std::string_view AttrKindName(AttrKind kind);

// Whether `value` holds `kind`. A list kind also accepts a value with nothing set: TensorFlow
// writes an empty list either as `list {}` or as no value at all.
bool HoldsAttrKind(const tensorflow::AttrValue& value, AttrKind kind);

// OK when `value` holds `kind`; else InvalidArgument "attr '<name>': expected <kind>, got
// <what it holds>" (an unresolved placeholder is named as such).
Status CheckAttrKind(std::string_view name, const tensorflow::AttrValue& value, AttrKind kind);

}  // namespace kiln::exec
