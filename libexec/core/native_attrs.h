// A node's attrs held without protobuf: what a serving plan's nodes carry (plan_reader.cc
// decodes them from the plan's Attr tables) and AttrReader reads beside protobuf attrs. The
// protobuf-free runtime (KILN_MINIMAL_RUNTIME) has only these.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/attr_kind.h"
#include "kiln/core/shape.h"
#include "kiln/core/tensor.h"

namespace kiln::exec {

struct NativeAttr {
  // What the value holds; like TensorFlow's AttrValue, one kind for every list.
  enum class Kind : uint8_t {
    kNone,
    kInt,
    kFloat,
    kBool,
    kType,
    kString,
    kShape,
    kTensor,
    kFunc,
    kList
  };
  std::string name;
  Kind kind = Kind::kNone;
  int64_t i = 0;
  float f = 0;
  bool b = false;
  int type = 0;   // TensorFlow DataType number
  std::string s;  // a string, or a function's name
  PartialShape shape;
  const Tensor* tensor = nullptr;  // owned by the graph the attrs belong to
  // A list holds whichever of these its elements are; the others stay empty.
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<bool> bools;
  std::vector<int> types;
  std::vector<std::string> strings;  // strings, or functions' names
  std::vector<PartialShape> shapes;
  std::vector<const Tensor*> tensors;
};

class NativeAttrMap {
 public:
  NativeAttrMap() = default;
  // Sorts by name.
  explicit NativeAttrMap(std::vector<NativeAttr> attrs);
  // nullptr when missing.
  const NativeAttr* Find(std::string_view name) const;
  std::span<const NativeAttr> attrs() const { return attrs_; }

 private:
  std::vector<NativeAttr> attrs_;
};

// OK when `value` holds `kind` (a list kind also accepts no value, as for protobuf attrs);
// else the same error CheckAttrKind gives for a protobuf attr.
Status CheckNativeAttrKind(const NativeAttr& value, AttrKind kind);

}  // namespace kiln::exec
