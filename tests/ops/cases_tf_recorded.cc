// Op-tester cases whose reference is TensorFlow 2.21's own result, recorded by
// tests/ops/record_tf_cases.py into cases_tf_recorded.inc: the fake-quant and
// quantize-dequantize gradients (TF's 0/1 masks and sums), IgammaGradA and RandomGammaGrad
// (Eigen's derivatives), CholeskyGrad (TF's blocked algorithm), BandedTriangularSolve,
// SparseMatMul, ExtractVolumePatches (Eigen's SAME padding), MaxPool3DGradGrad,
// DecodeJSONExample (protobuf's bytes), IsotonicRegression, KMC2ChainInitialization,
// KmeansPlusPlusInitialization and the candidate samplers (TF's Philox draws),
// ComputeAccidentalHits, RaggedFillEmptyRows and its gradient, FusedPadConv2D and
// FusedResizeAndPadConv2D (TF's window placement and row cache), ScaleAndTranslateGrad,
// ExtractGlimpse[V2] with zero noise, Conv, the fused recurrent cells' gradients
// (LSTMBlockCellGrad, BlockLSTMGrad(V2), GRUBlockCellGrad) and StochasticCastToInt (TF's draws).
#include <cmath>  // NAN and INFINITY in the recorded values
#include <string>
#include <string_view>
#include <vector>

#include "ops/op_cases.h"
#include "ops/recorded_case.h"

namespace kiln::testing {
namespace {

using namespace std::string_literals;

const std::vector<RecordedCase>& Recorded() {
  static const std::vector<RecordedCase> cases = {
#include "ops/cases_tf_recorded.inc"
  };
  return cases;
}

}  // namespace

std::vector<OpCase> TfRecordedCases() {
  std::vector<OpCase> cases = CasesFromRecorded(
      Recorded(),
      [](std::string_view op) {
        // Masks are exact; sums, special functions and products agree to float rounding (kiln
        // evaluates the special functions in double, TF in the operand's type).
        if (op.starts_with("FakeQuant") || op.starts_with("QuantizeAndDequantize") ||
            op == "IsotonicRegression")
          return 1e-6;
        return op == "IgammaGradA" || op == "RandomGammaGrad" ? 1e-4 : 1e-5;
      },
      [](std::string_view op) {
        return op.ends_with("CandidateSampler") || op.starts_with("Random") ||
               op == "TruncatedNormal";
      });
  // The recurrent cells' half grads round where TF's do, but TF's half products sum in the
  // order of Eigen's blocked kernel: a last-bit difference remains (input 1: cs_prev or x).
  for (OpCase& c : cases) {
    if (c.op.find("LSTM") != std::string::npos && c.inputs[1].dtype() == DType::kHalf)
      c.tolerance = 1e-3;
  }
  return cases;
}

}  // namespace kiln::testing
