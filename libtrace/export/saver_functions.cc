#include "export/saver_functions.h"

#include <algorithm>
#include <vector>

#include "export/proto_util.h"
#include "graph.h"

namespace kiln::trace::internal {
namespace {

constexpr char kObjectGraphKey[] = "_CHECKPOINTABLE_OBJECT_GRAPH";
constexpr char kCpu[] = "/device:CPU:0";

using Nodes = google::protobuf::RepeatedPtrField<tensorflow::NodeDef>;

void AddInputArg(tensorflow::FunctionDef* f, const std::string& name, DType dtype) {
  auto* a = f->mutable_signature()->add_input_arg();
  a->set_name(name);
  a->set_type(ProtoDType(dtype));
}

Status AddConst(Nodes* nodes, const std::string& name, const Tensor& value, bool on_cpu) {
  tensorflow::NodeDef* n = AddNode(nodes, name, "Const");
  if (on_cpu) n->set_device(kCpu);
  return SetTensorAttr(n, value);
}

void Finish(tensorflow::FunctionDef* f, const std::string& ret_name, const std::string& ret_node,
            const std::vector<std::string>& control, const std::vector<PartialShape>& shapes) {
  auto* sig = f->mutable_signature();
  auto* out = sig->add_output_arg();
  out->set_name(ret_name);
  out->set_type(ProtoDType(DType::kString));
  sig->set_is_stateful(true);
  for (const std::string& c : control) {  // `control` is sorted
    sig->add_control_output(c);
    (*f->mutable_control_ret())[c] = c;
  }
  (*f->mutable_ret())[ret_name] = ret_node + ":output:0";
  (*f->mutable_attr())["_input_shapes"] = ShapeListAttr(shapes);
  (*(*f->mutable_arg_attr())[0].mutable_attr())["_user_specified_name"] = StringAttr("file_prefix");
}

}  // namespace

Result<tensorflow::FunctionDef> SaveFunction(const std::string& name,
                                             std::span<const SavedVariableInfo> vars) {
  tensorflow::FunctionDef f;
  f.mutable_signature()->set_name(name);
  NameUniquifier args;
  std::vector<PartialShape> shapes = {PartialShape::Scalar()};
  AddInputArg(&f, args.Unique("file_prefix"), DType::kString);
  std::vector<std::string> value_args;
  std::vector<std::string> keys;
  std::vector<DType> dtypes;
  for (const SavedVariableInfo& v : vars) {
    value_args.push_back(args.Unique("savev2_" + ArgNameFrom(v.read_node_name)));
    AddInputArg(&f, value_args.back(), v.dtype);
    shapes.push_back(v.shape);
    keys.push_back(v.checkpoint_key);
    dtypes.push_back(v.dtype);
  }
  const std::string graph_arg = args.Unique("savev2_const");
  AddInputArg(&f, graph_arg, DType::kString);
  shapes.push_back(PartialShape::Scalar());
  keys.push_back(kObjectGraphKey);
  dtypes.push_back(DType::kString);

  Nodes* nodes = f.mutable_node_def();
  // Shards go to "<prefix>_temp/part-*" and are merged into <prefix> (TensorFlow's layout; the
  // fixed temp name keeps saving deterministic).
  KILN_RETURN_IF_ERROR(
      AddConst(nodes, "StringJoin/inputs_1", Tensor::StringScalar("_temp/part"), true));
  tensorflow::NodeDef* join =
      AddNode(nodes, "StringJoin", "StringJoin", {"file_prefix", "StringJoin/inputs_1:output:0"});
  join->set_device(kCpu);
  SetAttr(join, "N", IntAttr(2));
  KILN_RETURN_IF_ERROR(AddConst(nodes, "num_shards", Tensor::Scalar<int32_t>(1), false));
  KILN_RETURN_IF_ERROR(AddConst(nodes, "ShardedFilename/shard", Tensor::Scalar<int32_t>(0), true));
  AddNode(nodes, "ShardedFilename", "ShardedFilename",
          {"StringJoin:output:0", "ShardedFilename/shard:output:0", "num_shards:output:0"})
      ->set_device(kCpu);
  KILN_RETURN_IF_ERROR(AddConst(nodes, "SaveV2/tensor_names", StringVector(keys), true));
  KILN_RETURN_IF_ERROR(AddConst(nodes, "SaveV2/shape_and_slices",
                                StringVector(std::vector<std::string>(keys.size())), true));
  std::vector<std::string> save_inputs = {"ShardedFilename:filename:0",
                                          "SaveV2/tensor_names:output:0",
                                          "SaveV2/shape_and_slices:output:0"};
  for (const std::string& a : value_args) save_inputs.push_back(a);
  save_inputs.push_back(graph_arg);
  tensorflow::NodeDef* save = AddNode(nodes, "SaveV2", "SaveV2", std::move(save_inputs));
  save->set_device(kCpu);
  SetAttr(save, "dtypes", TypeListAttr(dtypes));
  tensorflow::NodeDef* pack = AddNode(nodes, "MergeV2Checkpoints/checkpoint_prefixes", "Pack",
                                      {"ShardedFilename:filename:0", "^SaveV2"});
  pack->set_device(kCpu);
  SetAttr(pack, "N", IntAttr(1));
  SetAttr(pack, "T", TypeAttr(DType::kString));
  AddNode(nodes, "MergeV2Checkpoints", "MergeV2Checkpoints",
          {"MergeV2Checkpoints/checkpoint_prefixes:output:0", "file_prefix", "^SaveV2"})
      ->set_device(kCpu);
  tensorflow::NodeDef* id =
      AddNode(nodes, "Identity", "Identity", {"file_prefix", "^MergeV2Checkpoints"});
  id->set_device(kCpu);
  SetAttr(id, "T", TypeAttr(DType::kString));
  tensorflow::NodeDef* id1 = AddNode(nodes, "Identity_1", "Identity",
                                     {"Identity:output:0", "^MergeV2Checkpoints", "^SaveV2"});
  SetAttr(id1, "T", TypeAttr(DType::kString));
  Finish(&f, "identity_1", "Identity_1", {"MergeV2Checkpoints", "SaveV2"}, shapes);
  return f;
}

Result<tensorflow::FunctionDef> RestoreFunction(const std::string& name,
                                                std::span<const SavedVariableInfo> vars) {
  tensorflow::FunctionDef f;
  f.mutable_signature()->set_name(name);
  NameUniquifier args;
  std::vector<PartialShape> shapes = {PartialShape::Scalar()};
  AddInputArg(&f, args.Unique("file_prefix"), DType::kString);
  std::vector<std::string> resource_args;
  std::vector<std::string> keys;
  std::vector<DType> dtypes;
  for (size_t i = 0; i < vars.size(); ++i) {
    const std::string op = i == 0 ? "assignvariableop" : "assignvariableop_" + std::to_string(i);
    resource_args.push_back(args.Unique(op + "_" + ArgNameFrom(vars[i].node_name)));
    AddInputArg(&f, resource_args.back(), DType::kResource);
    shapes.push_back(PartialShape::UnknownRank());
    keys.push_back(vars[i].checkpoint_key);
    dtypes.push_back(vars[i].dtype);
  }

  Nodes* nodes = f.mutable_node_def();
  std::vector<std::string> control;
  std::vector<std::string> assigns;
  if (!vars.empty()) {
    KILN_RETURN_IF_ERROR(AddConst(nodes, "RestoreV2/tensor_names", StringVector(keys), true));
    KILN_RETURN_IF_ERROR(AddConst(nodes, "RestoreV2/shape_and_slices",
                                  StringVector(std::vector<std::string>(keys.size())), true));
    tensorflow::NodeDef* restore = AddNode(
        nodes, "RestoreV2", "RestoreV2",
        {"file_prefix", "RestoreV2/tensor_names:output:0", "RestoreV2/shape_and_slices:output:0"});
    restore->set_device(kCpu);
    SetAttr(restore, "dtypes", TypeListAttr(dtypes));
    for (size_t i = 0; i < vars.size(); ++i) {
      const std::string suffix = i == 0 ? "" : "_" + std::to_string(i);
      tensorflow::NodeDef* id = AddNode(nodes, "Identity" + suffix, "Identity",
                                        {"RestoreV2:tensors:" + std::to_string(i)});
      SetAttr(id, "T", TypeAttr(vars[i].dtype));
      tensorflow::NodeDef* assign = AddNode(nodes, "AssignVariableOp" + suffix, "AssignVariableOp",
                                            {resource_args[i], "Identity" + suffix + ":output:0"});
      SetAttr(assign, "dtype", TypeAttr(vars[i].dtype));
      assigns.push_back(assign->name());
    }
    control = assigns;
    control.push_back("RestoreV2");
  }
  AddNode(nodes, "NoOp", "NoOp")->set_device(kCpu);
  const size_t n = vars.size();
  const std::string id_name = n == 0 ? "Identity" : "Identity_" + std::to_string(n);
  const std::string out_name = "Identity_" + std::to_string(n + 1);
  std::vector<std::string> in = {"file_prefix"};
  for (const std::string& a : assigns) in.push_back("^" + a);
  in.push_back("^NoOp");
  tensorflow::NodeDef* id = AddNode(nodes, id_name, "Identity", std::move(in));
  id->set_device(kCpu);
  SetAttr(id, "T", TypeAttr(DType::kString));
  std::vector<std::string> in2 = {id_name + ":output:0"};
  for (const std::string& a : assigns) in2.push_back("^" + a);
  if (!vars.empty()) in2.push_back("^RestoreV2");
  tensorflow::NodeDef* out = AddNode(nodes, out_name, "Identity", std::move(in2));
  SetAttr(out, "T", TypeAttr(DType::kString));
  std::sort(control.begin(), control.end());
  Finish(&f, ArgNameFrom(out_name), out_name, control, shapes);
  return f;
}

}  // namespace kiln::trace::internal
