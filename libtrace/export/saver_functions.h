// The save and restore functions a TF2 SavedModel carries for TensorFlow's C++ loader and the
// TF1 Python path (SaverDef). kiln's own loader restores from the object graph instead; these
// follow what TensorFlow writes (one shard).
#pragma once

#include <span>
#include <string>

#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "tensorflow/framework.pb.h"

namespace kiln::trace::internal {

struct SavedVariableInfo {
  int node_id = 0;             // in the object graph
  std::string checkpoint_key;  // "dense_1/kernel/.ATTRIBUTES/VARIABLE_VALUE"
  std::string node_name;       // main-graph VarHandleOp name (= shared_name)
  std::string read_node_name;  // main-graph ReadVariableOp feeding the save function
  DType dtype = DType::kInvalid;
  PartialShape shape;
};

// (file_prefix, one value per variable, the object-graph string) -> file_prefix; writes one
// shard with SaveV2 and merges it into file_prefix.
Result<tensorflow::FunctionDef> SaveFunction(const std::string& name,
                                             std::span<const SavedVariableInfo> vars);
// (file_prefix, one resource per variable) -> file_prefix; RestoreV2 + AssignVariableOp.
Result<tensorflow::FunctionDef> RestoreFunction(const std::string& name,
                                                std::span<const SavedVariableInfo> vars);

}  // namespace kiln::trace::internal
