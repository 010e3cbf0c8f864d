#include "ops/op_cases.h"

namespace kiln::testing {

const std::vector<OpCaseFamily>& AllOpCaseFamilies() {
  static const std::vector<OpCaseFamily> families = {
      {"elementwise", ElementwiseCases},
      {"matmul", MatMulCases},
      {"conv", ConvFusedCases},
  };
  return families;
}

const std::vector<OpTesterExemption>& OpTesterExemptions() {
  static const std::vector<OpTesterExemption> exemptions = {
      // Structural: the executor resolves these before any kernel runs.
      {"Const", "materialised at prepare time (every graph-path case has Const inputs)"},
      {"Identity", "forwarded by the executor: its output is its input's slot"},
      {"IdentityN", "forwarded by the executor"},
      {"StopGradient", "forwarded by the executor"},
      {"Snapshot", "forwarded by the executor"},
      {"NoOp", "no outputs, no effect"},
      {"Placeholder", "a TF1 feed; the loader turns fed placeholders into arguments"},
  };
  return exemptions;
}

const std::vector<std::string_view>& OpsAwaitingCases() {
  static const std::vector<std::string_view> ops = {
      "ArgMax",
      "ArgMin",
      "AssignAddVariableOp",
      "AssignSubVariableOp",
      "AssignVariableOp",
      "BroadcastTo",
      "ConcatV2",
      "DestroyResourceOp",
      "EagerPyFunc",
      "EmptyTensorList",
      "ExpandDims",
      "Fill",
      "GatherV2",
      "If",
      "Max",
      "Mean",
      "Min",
      "Pack",
      "PrintV2",
      "Prod",
      "RandomStandardNormal",
      "RandomUniform",
      "RandomUniformInt",
      "Range",
      "Rank",
      "ReadFile",
      "ReadVariableOp",
      "Reshape",
      "RestoreV2",
      "Shape",
      "Size",
      "Squeeze",
      "StatelessIf",
      "StatelessRandomNormal",
      "StatelessRandomUniform",
      "StatelessWhile",
      "StridedSlice",
      "StringFormat",
      "StringJoin",
      "Sum",
      "TensorListElementShape",
      "TensorListFromTensor",
      "TensorListGetItem",
      "TensorListLength",
      "TensorListPopBack",
      "TensorListPushBack",
      "TensorListReserve",
      "TensorListSetItem",
      "TensorListStack",
      "Tile",
      "Transpose",
      "Unpack",
      "VarHandleOp",
      "VarIsInitializedOp",
      "While",
  };
  return ops;
}

}  // namespace kiln::testing
