#include "structured_value.h"

#include <algorithm>
#include <map>

#include "python_format.h"
#include "shape_text.h"

namespace kiln::cli {
namespace {

std::string TypeSpecClassName(const tensorflow::TypeSpecProto& ts) {
  using T = tensorflow::TypeSpecProto;
  switch (ts.type_spec_class()) {
    case T::SPARSE_TENSOR_SPEC:
      return "SparseTensorSpec";
    case T::INDEXED_SLICES_SPEC:
      return "IndexedSlicesSpec";
    case T::RAGGED_TENSOR_SPEC:
      return "RaggedTensorSpec";
    case T::TENSOR_ARRAY_SPEC:
      return "TensorArraySpec";
    case T::DATA_DATASET_SPEC:
      return "DatasetSpec";
    case T::DATA_ITERATOR_SPEC:
      return "IteratorSpec";
    case T::OPTIONAL_SPEC:
      return "OptionalSpec";
    case T::PER_REPLICA_SPEC:
      return "PerReplicaSpec";
    case T::VARIABLE_SPEC:
      return "VariableSpec";
    case T::ROW_PARTITION_SPEC:
      return "RowPartitionSpec";
    default:
      break;
  }
  if (!ts.type_spec_class_name().empty()) return ts.type_spec_class_name();
  return "TypeSpec";
}

std::string DTypeRepr(int dtype) {
  const std::string name = TfDTypePythonName(dtype);
  return "tf." + (name.empty() ? std::to_string(dtype) : name);
}

std::string JoinRepr(const std::vector<PyValue>& items) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += ", ";
    s += PyRepr(items[i]);
  }
  return s;
}

std::string TupleRepr(const std::vector<PyValue>& items) {
  return "(" + JoinRepr(items) + (items.size() == 1 ? ",)" : ")");
}

}  // namespace

PyValue DecodeStructuredValue(const tensorflow::StructuredValue& value) {
  using SV = tensorflow::StructuredValue;
  PyValue v;
  switch (value.kind_case()) {
    case SV::kNoneValue:
      v.kind = PyValue::Kind::kNone;
      break;
    case SV::kFloat64Value:
      v.kind = PyValue::Kind::kFloat;
      v.f = value.float64_value();
      break;
    case SV::kInt64Value:
      v.kind = PyValue::Kind::kInt;
      v.i = value.int64_value();
      break;
    case SV::kStringValue:
      v.kind = PyValue::Kind::kString;
      v.s = value.string_value();
      break;
    case SV::kBoolValue:
      v.kind = PyValue::Kind::kBool;
      v.b = value.bool_value();
      break;
    case SV::kTensorShapeValue:
      v.kind = PyValue::Kind::kTensorShape;
      v.shape = value.tensor_shape_value();
      break;
    case SV::kTensorDtypeValue:
      v.kind = PyValue::Kind::kDType;
      v.dtype = value.tensor_dtype_value();
      break;
    case SV::kTensorSpecValue:
      v.kind = PyValue::Kind::kTensorSpec;
      v.class_name = "TensorSpec";
      v.shape = value.tensor_spec_value().shape();
      v.dtype = value.tensor_spec_value().dtype();
      v.name = value.tensor_spec_value().name();
      v.has_name = !v.name.empty();
      break;
    case SV::kBoundedTensorSpecValue:
      v.kind = PyValue::Kind::kTensorSpec;
      v.class_name = "BoundedTensorSpec";
      v.shape = value.bounded_tensor_spec_value().shape();
      v.dtype = value.bounded_tensor_spec_value().dtype();
      v.name = value.bounded_tensor_spec_value().name();
      v.has_name = !v.name.empty();
      break;
    case SV::kTypeSpecValue: {
      v.kind = PyValue::Kind::kTypeSpec;
      v.class_name = TypeSpecClassName(value.type_spec_value());
      PyValue state = DecodeStructuredValue(value.type_spec_value().type_state());
      if (state.is(PyValue::Kind::kTuple) || state.is(PyValue::Kind::kList))
        v.items = std::move(state.items);
      else if (!state.is(PyValue::Kind::kMissing))
        v.items.push_back(std::move(state));
      break;
    }
    case SV::kListValue:
    case SV::kTupleValue: {
      v.kind = value.has_list_value() ? PyValue::Kind::kList : PyValue::Kind::kTuple;
      const auto& items =
          value.has_list_value() ? value.list_value().values() : value.tuple_value().values();
      for (const auto& item : items) v.items.push_back(DecodeStructuredValue(item));
      break;
    }
    case SV::kDictValue: {
      v.kind = PyValue::Kind::kDict;
      // Protobuf maps have no order; TF writes them sorted, and sorted is what we show.
      std::map<std::string, const SV*> sorted;
      for (const auto& [key, item] : value.dict_value().fields()) sorted[key] = &item;
      for (const auto& [key, item] : sorted) {
        v.keys.push_back(key);
        v.items.push_back(DecodeStructuredValue(*item));
      }
      break;
    }
    case SV::kNamedTupleValue:
      v.kind = PyValue::Kind::kNamedTuple;
      v.class_name = value.named_tuple_value().name();
      for (const auto& pair : value.named_tuple_value().values()) {
        v.keys.push_back(pair.key());
        v.items.push_back(DecodeStructuredValue(pair.value()));
      }
      break;
    case SV::kTensorValue:
    case SV::kNumpyValue: {
      v.kind = PyValue::Kind::kTensor;
      const auto& t = value.has_tensor_value() ? value.tensor_value() : value.numpy_value();
      v.shape = t.tensor_shape();
      v.dtype = t.dtype();
      v.class_name = value.has_tensor_value() ? "EagerTensor" : "ndarray";
      break;
    }
    case SV::KIND_NOT_SET:
      v.kind = PyValue::Kind::kMissing;
      break;
  }
  return v;
}

std::string PyRepr(const PyValue& v) {
  using K = PyValue::Kind;
  switch (v.kind) {
    case K::kNone:
    case K::kMissing:
      return "None";
    case K::kBool:
      return v.b ? "True" : "False";
    case K::kInt:
      return std::to_string(v.i);
    case K::kFloat:
      return PyReprDouble(v.f);
    case K::kString:
      return PyReprString(v.s);
    case K::kTensorShape:
      return ShapeText(v.shape, ShapeStyle::kTensorShapeRepr);
    case K::kDType:
      return DTypeRepr(v.dtype);
    case K::kTensorSpec:
      return v.class_name + "(shape=" + ShapeText(v.shape, ShapeStyle::kTensorShape) +
             ", dtype=" + DTypeRepr(v.dtype) +
             ", name=" + (v.has_name ? PyReprString(v.name) : std::string("None")) + ")";
    case K::kTypeSpec:
      return v.class_name + TupleRepr(v.items);
    case K::kList:
      return "[" + JoinRepr(v.items) + "]";
    case K::kTuple:
      return TupleRepr(v.items);
    case K::kDict: {
      std::string s = "{";
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) s += ", ";
        s += PyReprString(v.keys[i]) + ": " + PyRepr(v.items[i]);
      }
      return s + "}";
    }
    case K::kNamedTuple: {
      std::string s = v.class_name + "(";
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) s += ", ";
        s += v.keys[i] + "=" + PyRepr(v.items[i]);
      }
      return s + ")";
    }
    case K::kTensor:
      return "<tf.Tensor: shape=" + ShapeText(v.shape, ShapeStyle::kTensorShape) +
             ", dtype=" + TfDTypePythonName(v.dtype) + ">";
  }
  return "None";
}

std::string PyStr(const PyValue& v) {
  switch (v.kind) {
    case PyValue::Kind::kString:
      return v.s;
    case PyValue::Kind::kTensorShape:
      return ShapeText(v.shape, ShapeStyle::kTensorShape);
    case PyValue::Kind::kDType:
      return "<dtype: " + PyReprString(TfDTypePythonName(v.dtype)) + ">";
    default:
      return PyRepr(v);
  }
}

std::string PyTypeName(const PyValue& v) {
  using K = PyValue::Kind;
  switch (v.kind) {
    case K::kNone:
    case K::kMissing:
      return "NoneType";
    case K::kBool:
      return "bool";
    case K::kInt:
      return "int";
    case K::kFloat:
      return "float";
    case K::kString:
      return "str";
    case K::kTensorShape:
      return "TensorShape";
    case K::kDType:
      return "DType";
    case K::kTensorSpec:
    case K::kTypeSpec:
    case K::kNamedTuple:
    case K::kTensor:
      return v.class_name;
    case K::kList:
      return "list";
    case K::kTuple:
      return "tuple";
    case K::kDict:
      return "dict";
  }
  return "object";
}

bool PyIsNonDictIterable(const PyValue& v) {
  using K = PyValue::Kind;
  return v.is(K::kList) || v.is(K::kTuple) || v.is(K::kNamedTuple) ||
         (v.is(K::kTensorShape) && !v.shape.unknown_rank());
}

std::vector<PyValue> PyIterate(const PyValue& v) {
  if (!v.is(PyValue::Kind::kTensorShape)) return v.items;
  std::vector<PyValue> dims;
  for (const auto& d : v.shape.dim()) {
    PyValue item;
    if (d.size() >= 0) {
      item.kind = PyValue::Kind::kInt;
      item.i = d.size();
    }
    dims.push_back(item);
  }
  return dims;
}

}  // namespace kiln::cli
