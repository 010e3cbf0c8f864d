#include "export/proto_util.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "kiln/core/proto_convert.h"

namespace kiln::trace::internal {

std::string SerializeDeterministic(const google::protobuf::MessageLite& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return out;
}

std::string NameUniquifier::Unique(std::string_view base) {
  std::string name(base);
  auto it = counts_.find(name);
  if (it == counts_.end()) {
    counts_.emplace(name, 1);
    return name;
  }
  for (int k = it->second;; ++k) {
    std::string candidate = name + "_" + std::to_string(k);
    if (counts_.count(candidate) == 0) {
      it->second = k + 1;
      counts_.emplace(candidate, 1);
      return candidate;
    }
  }
}

std::string SafeNodeName(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '/' || c == '-';
    out += ok ? c : '_';
  }
  const bool first_ok =
      !out.empty() && ((out[0] >= 'a' && out[0] <= 'z') || (out[0] >= 'A' && out[0] <= 'Z') ||
                       (out[0] >= '0' && out[0] <= '9') || out[0] == '.');
  return first_ok ? out : "n" + out;
}

tensorflow::DataType ProtoDType(DType t) {
  return static_cast<tensorflow::DataType>(DTypeToProto(t));
}

tensorflow::NodeDef* AddNode(google::protobuf::RepeatedPtrField<tensorflow::NodeDef>* nodes,
                             std::string name, std::string op, std::vector<std::string> inputs) {
  tensorflow::NodeDef* node = nodes->Add();
  node->set_name(std::move(name));
  node->set_op(std::move(op));
  for (std::string& in : inputs) node->add_input(std::move(in));
  return node;
}

void SetAttr(tensorflow::NodeDef* node, const std::string& key, tensorflow::AttrValue value) {
  (*node->mutable_attr())[key] = std::move(value);
}

Status SetTensorAttr(tensorflow::NodeDef* node, const Tensor& value) {
  (*node->mutable_attr())["dtype"].set_type(ProtoDType(value.dtype()));
  return TensorToProto(value, (*node->mutable_attr())["value"].mutable_tensor());
}

Tensor StringVector(const std::vector<std::string>& values) {
  Tensor t(DType::kString, Shape{static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.data<std::string>()[i] = values[i];
  return t;
}

tensorflow::StructuredValue NoneValue() {
  tensorflow::StructuredValue v;
  v.mutable_none_value();
  return v;
}

tensorflow::StructuredValue StringValue(std::string_view s) {
  tensorflow::StructuredValue v;
  v.set_string_value(std::string(s));
  return v;
}

tensorflow::StructuredValue TensorSpecValue(std::string_view name, const PartialShape& shape,
                                            DType dtype) {
  tensorflow::StructuredValue v;
  auto* spec = v.mutable_tensor_spec_value();
  spec->set_name(std::string(name));
  PartialShapeToProto(shape, spec->mutable_shape());
  spec->set_dtype(ProtoDType(dtype));
  return v;
}

tensorflow::StructuredValue TupleValue(std::vector<tensorflow::StructuredValue> values) {
  tensorflow::StructuredValue v;
  auto* t = v.mutable_tuple_value();
  for (auto& x : values) *t->add_values() = std::move(x);
  return v;
}

tensorflow::StructuredValue ListValue(std::vector<tensorflow::StructuredValue> values) {
  tensorflow::StructuredValue v;
  auto* l = v.mutable_list_value();
  for (auto& x : values) *l->add_values() = std::move(x);
  return v;
}

tensorflow::StructuredValue DictValue(
    std::vector<std::pair<std::string, tensorflow::StructuredValue>> fields) {
  tensorflow::StructuredValue v;
  auto* d = v.mutable_dict_value();
  for (auto& field : fields) (*d->mutable_fields())[field.first] = std::move(field.second);
  return v;
}

tensorflow::StructuredValue FullArgSpec(const std::vector<std::string>& args) {
  std::vector<tensorflow::StructuredValue> names;
  for (const std::string& a : args) names.push_back(StringValue(a));
  tensorflow::StructuredValue v;
  auto* nt = v.mutable_named_tuple_value();
  nt->set_name("FullArgSpec");
  auto add = [nt](const char* key, tensorflow::StructuredValue value) {
    auto* pair = nt->add_values();
    pair->set_key(key);
    *pair->mutable_value() = std::move(value);
  };
  add("args", ListValue(std::move(names)));
  add("varargs", NoneValue());
  add("varkw", NoneValue());
  add("defaults", NoneValue());
  add("kwonlyargs", ListValue({}));
  add("kwonlydefaults", NoneValue());
  add("annotations", DictValue({}));
  return v;
}

}  // namespace kiln::trace::internal
