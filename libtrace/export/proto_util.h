// Small builders for the protos a SavedModel is made of: NodeDefs, StructuredValues, names.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "tensorflow/framework.pb.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::trace::internal {

// protobuf's deterministic serialization: map entries sorted by key.
std::string SerializeDeterministic(const google::protobuf::MessageLite& message);

// Hands out unique names: "NoOp", then "NoOp_1", ... (TensorFlow's graph uniquifier).
class NameUniquifier {
 public:
  std::string Unique(std::string_view base);
  void Reserve(const std::string& name) { counts_.emplace(name, 1); }

 private:
  std::map<std::string, int> counts_;
};

// A main-graph node name: characters outside [A-Za-z0-9_./-] become '_', and the first
// character must be [A-Za-z0-9.] (TensorFlow's node-name rule).
std::string SafeNodeName(std::string_view name);

tensorflow::DataType ProtoDType(DType t);

// Adds a node to a GraphDef or FunctionDef body.
tensorflow::NodeDef* AddNode(google::protobuf::RepeatedPtrField<tensorflow::NodeDef>* nodes,
                             std::string name, std::string op,
                             std::vector<std::string> inputs = {});
void SetAttr(tensorflow::NodeDef* node, const std::string& key, tensorflow::AttrValue value);
Status SetTensorAttr(tensorflow::NodeDef* node, const Tensor& value);  // dtype + value (Const)
Tensor StringVector(const std::vector<std::string>& values);

// StructuredValue builders.
tensorflow::StructuredValue NoneValue();
tensorflow::StructuredValue StringValue(std::string_view s);
tensorflow::StructuredValue TensorSpecValue(std::string_view name, const PartialShape& shape,
                                            DType dtype);
tensorflow::StructuredValue TupleValue(std::vector<tensorflow::StructuredValue> values);
tensorflow::StructuredValue ListValue(std::vector<tensorflow::StructuredValue> values);
tensorflow::StructuredValue DictValue(
    std::vector<std::pair<std::string, tensorflow::StructuredValue>> fields);
// inspect.FullArgSpec(args, None, None, None, [], None, {}) as TensorFlow records it.
tensorflow::StructuredValue FullArgSpec(const std::vector<std::string>& args);

}  // namespace kiln::trace::internal
