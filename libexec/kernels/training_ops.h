// What the definitions of the optimizer updates (kernels/training_ops.cc) and their CPU kernels
// (kernels/cpu/training_ops.cc) share: each optimizer's inputs, the dtypes they take and the
// nodes' state.
#pragma once

#include <complex>
#include <string_view>
#include <vector>

#include "kernels/type_lists.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::training {

using ApplyTypes = TypeList<float, double, Half, BFloat16>;
// TF's gradient descent, momentum, Adagrad, Adam and RMSProp kernels also take complex
// variables: the same updates in complex arithmetic (g * g squares, sqrt is complex).
using ComplexApplyTypes =
    TypeList<float, double, Half, BFloat16, std::complex<float>, std::complex<double>>;

enum class Optimizer {
  kGradientDescent,
  kMomentum,
  kKerasMomentum,
  kAdagradV2,
  kAdam,
  kRmsProp,
  kAdagrad,
  kAdaMax,
  kAdamWithAmsgrad
};

constexpr bool TakesComplex(Optimizer o) {
  return o == Optimizer::kGradientDescent || o == Optimizer::kMomentum ||
         o == Optimizer::kAdagrad || o == Optimizer::kAdam || o == Optimizer::kRmsProp;
}

struct ApplySpec {
  int num_vars;                         // resource inputs first: the variable, then its slots
  std::vector<std::string_view> names;  // every input, in order; the last one is the gradient
  bool has_nesterov = false;
  bool has_update_slots = false;
};

inline const ApplySpec& SpecOf(Optimizer o) {
  static const ApplySpec kSpecs[] = {
      {1, {"var", "alpha", "delta"}},
      {2, {"var", "accum", "lr", "grad", "momentum"}, true},
      {2, {"var", "accum", "lr", "grad", "momentum"}, true},
      {2, {"var", "accum", "lr", "epsilon", "grad"}, false, true},
      {3,
       {"var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"},
       true},
      {3, {"var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"}},
      {2, {"var", "accum", "lr", "grad"}, false, true},
      {3, {"var", "m", "v", "beta1_power", "lr", "beta1", "beta2", "epsilon", "grad"}},
      {4,
       {"var", "m", "v", "vhat", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon",
        "grad"}},
  };
  return kSpecs[static_cast<int>(o)];
}

// The gradient is the last input, except for the momentum ops where "momentum" follows it.
inline int GradIndex(Optimizer o) {
  return o == Optimizer::kMomentum || o == Optimizer::kKerasMomentum
             ? 3
             : static_cast<int>(SpecOf(o).names.size()) - 1;
}

struct ApplyState : OpState {
  DType dtype = DType::kInvalid;
  bool nesterov = false;
  bool update_slots = true;
};

}  // namespace kiln::exec::training
