// StructuredValue (struct.proto) decoded into the Python objects TensorFlow's
// nested_structure_coder would build, so `show` can print them with Python's str()/repr().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensorflow/saved_model.pb.h"

namespace kiln::cli {

struct PyValue {
  enum class Kind {
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kTensorShape,
    kDType,
    kTensorSpec,  // also BoundedTensorSpec (a TensorSpec subclass in TF)
    kTypeSpec,    // any other TypeSpec; class_name says which
    kList,
    kTuple,
    kDict,        // keys sorted
    kNamedTuple,  // class_name, keys = field names
    kTensor,      // tensor_value / numpy_value, printed by dtype and shape only
    kMissing,     // StructuredValue with no kind set
  };
  Kind kind = Kind::kNone;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;           // kString
  std::string class_name;  // kTypeSpec, kNamedTuple, "BoundedTensorSpec" for bounded specs
  tensorflow::TensorShapeProto shape;  // kTensorShape, kTensorSpec, kTensor
  int dtype = 0;                       // kDType, kTensorSpec, kTensor
  bool has_name = false;               // kTensorSpec: name is None when false
  std::string name;
  std::vector<PyValue> items;     // kList, kTuple, kDict values, kNamedTuple values
  std::vector<std::string> keys;  // kDict keys, kNamedTuple field names

  bool is(Kind k) const { return kind == k; }
};

PyValue DecodeStructuredValue(const tensorflow::StructuredValue& value);

// Python's repr(x), str(x) and type(x).__name__ for a decoded value.
std::string PyRepr(const PyValue& v);
std::string PyStr(const PyValue& v);
std::string PyTypeName(const PyValue& v);
// Whether isinstance(x, collections.abc.Iterable) and not a str or dict.
bool PyIsNonDictIterable(const PyValue& v);
// The items iteration yields (list/tuple elements, named tuple values, TensorShape dims).
std::vector<PyValue> PyIterate(const PyValue& v);

}  // namespace kiln::cli
