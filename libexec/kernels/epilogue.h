// The epilogue a fused product or convolution carries (TF's `fused_ops` of _FusedMatMul and
// _FusedConv2D): what the op's definition reads from its attrs, and what each device's kernel
// applies after its product (oneDNN post-ops on the CPU, cuBLASLt/cuDNN epilogues on the GPU).
#pragma once

#include "kernels/kernel_util.h"

namespace kiln::exec {

// What a fused op adds after its product: TF's `fused_ops` of _FusedMatMul / _FusedConv2D.
struct Epilogue {
  enum class Act {
    kNone,
    kRelu,
    kRelu6,
    kElu,
    kLeakyRelu,
    kTanh,
    kSigmoid,
    kGeluExact,
    kGeluApproximate,
    kSwish,
    kHardSwish,  // x * relu6(x + 3) / 6 (kiln's _KilnHardSwish: Keras's hard_swish)
  };
  bool bias = false;        // "BiasAdd": one more input, [channels]
  bool batch_norm = false;  // "FusedBatchNorm": four more inputs (scale, offset, mean, var)
  bool add = false;         // "Add": one more input of the output's shape, added before act
  Act act = Act::kNone;
  // After the activation (kiln's): "_KilnScaleShift", y * scale + shift per output channel (a
  // batch norm after a Conv or Dense(activation=...), as Keras models often have), or
  // "_KilnShift", y + shift (the scale folded into the weights where it commutes with the
  // activation). One input, [channels], for each, after the bias or batch norm's and before the
  // addend: the scale's first.
  bool post_scale = false;
  bool post_shift = false;
  float epsilon = 0.0001f;  // batch-norm
  float leakyrelu_alpha = 0.2f;
  int num_args() const {
    return (bias ? 1 : 0) + (batch_norm ? 4 : 0) + (post_scale ? 1 : 0) + (post_shift ? 1 : 0) +
           (add ? 1 : 0);
  }
  bool has_post() const { return post_scale || post_shift; }
  // The input index of the addend ("Add"): the last one.
  int addend_input() const { return 2 + num_args() - 1; }
  // The input index of the post-activation scale, or of the shift where there is none (the
  // shift follows the scale), with the product's two first.
  int post_input() const { return 2 + (bias ? 1 : 0) + (batch_norm ? 4 : 0); }
};

// Reads fused_ops (with num_args, epsilon, leakyrelu_alpha) as TF's kernels accept them for
// `op` ("_FusedMatMul" takes BiasAdd [+ Add] [+ act]; "_FusedConv2D" also FusedBatchNorm; after
// an activation either takes kiln's _KilnScaleShift or _KilnShift).
// Plain (unfused) ops give an empty epilogue.
Result<Epilogue> ReadEpilogue(const PrepareContext& ctx);

}  // namespace kiln::exec
