// The op-tester case lists, one function per op family (cases_<family>.cc), and the list of
// them all. Adding an op means adding its cases to its family's list.
#pragma once

#include <string_view>
#include <vector>

#include "ops/op_tester.h"

namespace kiln::testing {

std::vector<OpCase> ElementwiseCases();   // cases_elementwise.cc
std::vector<OpCase> MatMulCases();        // cases_matmul.cc
std::vector<OpCase> ConvFusedCases();     // cases_conv_fused.cc
std::vector<OpCase> EinsumCases();        // cases_einsum.cc
std::vector<OpCase> MathCases();          // cases_math.cc
std::vector<OpCase> ReductionCases();     // cases_reduction.cc
std::vector<OpCase> ScanCases();          // cases_scan.cc
std::vector<OpCase> CountCases();         // cases_count.cc
std::vector<OpCase> CountSparseCases();   // cases_count_sparse.cc
std::vector<OpCase> EditDistanceCases();  // cases_edit_distance.cc
std::vector<OpCase> ClusteringCases();    // cases_clustering.cc
std::vector<OpCase> MatrixCases();        // cases_matrix.cc
std::vector<OpCase> LinalgCases();        // cases_linalg.cc
std::vector<OpCase> ParseCases();         // cases_parse.cc
std::vector<OpCase> SegmentCases();       // cases_segment.cc
std::vector<OpCase> LossCases();          // cases_loss.cc
std::vector<OpCase> RandomCases();        // cases_random.cc
std::vector<OpCase> RandomDistCases();    // cases_random_dist.cc
std::vector<OpCase> RngStateCases();      // cases_stateful_random.cc
std::vector<OpCase> QuantizeCases();      // cases_quantize.cc
std::vector<OpCase> QuantizedCases();     // cases_quantized.cc
std::vector<OpCase> TfRecordedCases();    // cases_tf_recorded.cc
std::vector<OpCase> ShapeCases();         // cases_shape.cc
std::vector<OpCase> ConcatCases();        // cases_concat.cc
std::vector<OpCase> SliceCases();         // cases_slice.cc
std::vector<OpCase> FillCases();          // cases_fill.cc
std::vector<OpCase> ScatterCases();       // cases_scatter.cc
std::vector<OpCase> IndexCases();         // cases_index.cc
std::vector<OpCase> SpaceCases();         // cases_space.cc
std::vector<OpCase> SparseCases();        // cases_sparse.cc
std::vector<OpCase> RaggedCases();        // cases_ragged.cc
std::vector<OpCase> TensorListCases();    // cases_tensor_list.cc
std::vector<OpCase> TensorArrayCases();   // cases_tensor_array.cc
std::vector<OpCase> ControlFlowCases();   // cases_control_flow.cc
std::vector<OpCase> ConvNdCases();        // cases_conv_nd.cc
std::vector<OpCase> PoolCases();          // cases_pool.cc
std::vector<OpCase> NormCases();          // cases_norm.cc
std::vector<OpCase> RnnFusedCases();      // cases_rnn_fused.cc
std::vector<OpCase> RnnGradCases();       // cases_rnn_grad.cc
std::vector<OpCase> CtcLossCases();       // cases_ctc_loss.cc
std::vector<OpCase> ImageCases();         // cases_image.cc
std::vector<OpCase> StringCases();        // cases_strings.cc
std::vector<OpCase> LookupCases();        // cases_lookup.cc
std::vector<OpCase> LookupTensorCases();  // cases_lookup_tensors.cc
std::vector<OpCase> ResourceCases();      // cases_resources.cc
std::vector<OpCase> IoCases();            // cases_io.cc
std::vector<OpCase> SerializeCases();     // cases_serialize.cc
std::vector<OpCase> GradCases();          // cases_grad.cc
std::vector<OpCase> SpecialCases();       // cases_special.cc
std::vector<OpCase> TensorMapCases();     // cases_tensor_map.cc
std::vector<OpCase> ProtoCodecCases();    // cases_proto_codec.cc
std::vector<OpCase> ConvGenericCases();   // cases_conv_generic.cc
std::vector<OpCase> GlimpseCases();       // cases_glimpse.cc
std::vector<OpCase> MutexCases();         // cases_mutex.cc
std::vector<OpCase> SparseMapCases();     // cases_sparse_map.cc
std::vector<OpCase> CompositeCases();     // cases_composite.cc
std::vector<OpCase> OptionalCases();      // cases_optional.cc

struct OpCaseFamily {
  std::string_view name;
  std::vector<OpCase> (*cases)();
};
// Every family, in one explicit list.
const std::vector<OpCaseFamily>& AllOpCaseFamilies();

// Ops the tester does not run on their own, each with the reason (tests elsewhere cover them).
struct OpTesterExemption {
  std::string_view op;
  std::string_view reason;
};
const std::vector<OpTesterExemption>& OpTesterExemptions();

// Ops that predate the op tester and still await their cases (their kernel tests in tests/exec
// cover them meanwhile). A work list that only shrinks: a test fails when an op here has cases
// or no longer exists.
const std::vector<std::string_view>& OpsAwaitingCases();

}  // namespace kiln::testing
