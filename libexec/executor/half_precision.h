// Half precision for kernels that have no float16/bfloat16 form: such a node computes in
// float32 between casts, as TensorFlow's CPU kernels do internally for most half-precision
// ops (Eigen's half arithmetic converts each element to float). The executor prepares the node
// with its half types read as float32 (AttrReader::WithHalfAs), casts its half inputs up, and
// casts back the outputs that carried the half type; outputs that are float32 by their own
// attr (FusedBatchNormV3's statistics under U) stay float32.
#pragma once

#include <memory>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec {

// kHalf or kBFloat16 when the node's inputs or type attrs hold one of them (the first found);
// kInvalid otherwise, or when it holds both.
DType HalfTypeOf(const AttrReader& attrs, const std::vector<TensorSpec>& inputs);

// Whether a node of `op` may run widened: not for ops whose output depends on the bit pattern
// of the half type (Bitcast, DecodeRaw, ...) or that must keep the type as it is (Cast, Const).
bool MayWiden(std::string_view op);

// A Cast step prepared outside any graph.
struct CastStep {
  ComputeFn compute = nullptr;
  std::shared_ptr<const OpState> state;
};
Result<CastStep> PrepareCastStep(DType from, DType to, const PartialShape& shape);

// `t` converted to `to` now (prepare time), by the Cast kernel.
Result<Tensor> CastNow(const Tensor& t, DType to);

// Which outputs of a node prepared in float32 (`widened`) carry the half type and are cast
// back: those that become float64 when the half type is read as float64 instead (`probe`, a
// second, analysis-only prepare), or, when that prepare fails, every float32 output.
std::vector<bool> OutputsToNarrow(const std::vector<TensorSpec>& widened,
                                  const std::vector<TensorSpec>* probe);

}  // namespace kiln::exec
