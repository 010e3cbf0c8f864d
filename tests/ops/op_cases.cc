#include "ops/op_cases.h"

namespace kiln::testing {

const std::vector<OpCaseFamily>& AllOpCaseFamilies() {
  static const std::vector<OpCaseFamily> families = {
      {"elementwise", ElementwiseCases},
      {"matmul", MatMulCases},
      {"conv", ConvFusedCases},
      {"einsum", EinsumCases},
      {"math", MathCases},
      {"reduction", ReductionCases},
      {"scan", ScanCases},
      {"count", CountCases},
      {"count_sparse", CountSparseCases},
      {"edit_distance", EditDistanceCases},
      {"clustering", ClusteringCases},
      {"matrix", MatrixCases},
      {"linalg", LinalgCases},
      {"parse", ParseCases},
      {"segment", SegmentCases},
      {"loss", LossCases},
      {"random", RandomCases},
      {"random_dist", RandomDistCases},
      {"stateful_random", RngStateCases},
      {"quantize", QuantizeCases},
      {"quantized", QuantizedCases},
      {"tf_recorded", TfRecordedCases},
      {"shape", ShapeCases},
      {"concat", ConcatCases},
      {"slice", SliceCases},
      {"fill", FillCases},
      {"scatter", ScatterCases},
      {"index", IndexCases},
      {"space", SpaceCases},
      {"sparse", SparseCases},
      {"ragged", RaggedCases},
      {"tensor_list", TensorListCases},
      {"tensor_array", TensorArrayCases},
      {"control_flow", ControlFlowCases},
      {"conv_nd", ConvNdCases},
      {"pool", PoolCases},
      {"norm", NormCases},
      {"rnn_fused", RnnFusedCases},
      {"rnn_grad", RnnGradCases},
      {"ctc_loss", CtcLossCases},
      {"image", ImageCases},
      {"strings", StringCases},
      {"lookup", LookupCases},
      {"lookup_tensors", LookupTensorCases},
      {"resources", ResourceCases},
      {"io", IoCases},
      {"serialize", SerializeCases},
      {"grad", GradCases},
      {"special", SpecialCases},
      {"tensor_map", TensorMapCases},
      {"proto_codec", ProtoCodecCases},
      {"conv_generic", ConvGenericCases},
      {"glimpse", GlimpseCases},
      {"mutex", MutexCases},
      {"sparse_tensors_map", SparseMapCases},
      {"composite_tensor", CompositeCases},
      {"optional", OptionalCases},
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
      {"PlaceholderV2", "a TF1 feed like Placeholder; unfed, its kernel only reports that"},
  };
  return exemptions;
}

const std::vector<std::string_view>& OpsAwaitingCases() {
  static const std::vector<std::string_view> ops = {};
  return ops;
}

}  // namespace kiln::testing
