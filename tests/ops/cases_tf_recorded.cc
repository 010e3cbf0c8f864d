// Op-tester cases whose reference is TensorFlow 2.21's own result, recorded by
// tests/ops/record_tf_cases.py into cases_tf_recorded.inc: the fake-quant and
// quantize-dequantize gradients (TF's 0/1 masks and sums), IgammaGradA and RandomGammaGrad
// (Eigen's derivatives), CholeskyGrad (TF's blocked algorithm), BandedTriangularSolve,
// SparseMatMul, ExtractVolumePatches (Eigen's SAME padding), MaxPool3DGradGrad,
// DecodeJSONExample (protobuf's bytes), IsotonicRegression, KMC2ChainInitialization,
// KmeansPlusPlusInitialization and the candidate samplers (TF's Philox draws),
// ComputeAccidentalHits, RaggedFillEmptyRows and its gradient, StochasticCastToInt (TF's draws).
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
  return CasesFromRecorded(
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
}

}  // namespace kiln::testing
