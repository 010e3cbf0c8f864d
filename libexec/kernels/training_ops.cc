// Optimizer updates on resource variables (a train step's last ops): ResourceApplyGradientDescent,
// ResourceApplyMomentum, ResourceApplyKerasMomentum, ResourceApplyAdagrad, ResourceApplyAdagradV2,
// ResourceApplyAdam, ResourceApplyAdaMax, ResourceApplyAdamWithAmsgrad and ResourceApplyRMSProp,
// with TensorFlow's CPU formulas. The variable and its slots (accum, m, v, vhat, ms, mom) are
// updated together under their locks (VariableResource::UpdateMany), so
// concurrent steps never interleave; use_locking is accepted and always in effect.
// The CPU kernels are in kernels/cpu/training_ops.cc.
#include "kernels/training_ops.h"

#include <memory>
#include <utility>

#include "kernels/type_lists.h"
#include "kernels/variable_util.h"

namespace kiln::exec {
namespace {

using training::ApplySpec;
using training::ApplyState;
using training::ApplyTypes;
using training::ComplexApplyTypes;
using training::GradIndex;
using training::Optimizer;
using training::SpecOf;
using training::TakesComplex;

// TF registers no bfloat16 CPU kernel for ResourceApplyAdaMax.
using AdaMaxTypes = TypeList<float, double, Half>;

template <Optimizer O>
Status PrepareApply(PrepareContext& ctx) {
  const ApplySpec& spec = SpecOf(O);
  const int n = static_cast<int>(spec.names.size());
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(n));
  auto st = std::make_shared<ApplyState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  if (O == Optimizer::kAdaMax) {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, AdaMaxTypes::kDTypes));
  } else if (TakesComplex(O)) {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, ComplexApplyTypes::kDTypes));
  } else {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, ApplyTypes::kDTypes));
  }
  KILN_PREPARE_ASSIGN(ctx, bool locking, ctx.attrs.GetBool("use_locking", false));
  (void)locking;
  if (spec.has_nesterov) {
    KILN_PREPARE_ASSIGN(ctx, st->nesterov, ctx.attrs.GetBool("use_nesterov", false));
  }
  if (spec.has_update_slots) {
    KILN_PREPARE_ASSIGN(ctx, st->update_slots, ctx.attrs.GetBool("update_slots", true));
  }
  const int grad = GradIndex(O);
  for (int i = 0; i < n; ++i) {
    if (i < spec.num_vars) {
      KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, spec.names[i], DType::kResource));
      if (VariableResource* var = ConstantVariableInput(ctx, i))
        KILN_PREPARE_CHECK(ctx, ExpectVariableDType(*var, st->dtype));
      continue;
    }
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, spec.names[i], st->dtype));
    if (i != grad) KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, spec.names[i], 0));
  }
  if (VariableResource* var = ConstantVariableInput(ctx, 0)) {
    if (!var->shape().IsCompatibleWith(ctx.inputs[grad].shape))
      return ctx.Error("input '", spec.names[grad], "' has shape ",
                       ctx.inputs[grad].shape.ToPythonString(), ", variable '", var->name(),
                       "' has shape ", var->shape().ToPythonString());
  }
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"ResourceApplyGradientDescent", "", kOpStateful, PrepareApply<Optimizer::kGradientDescent>},
    {"ResourceApplyMomentum", "", kOpStateful, PrepareApply<Optimizer::kMomentum>},
    {"ResourceApplyKerasMomentum", "", kOpStateful, PrepareApply<Optimizer::kKerasMomentum>},
    {"ResourceApplyAdagradV2", "", kOpStateful, PrepareApply<Optimizer::kAdagradV2>},
    {"ResourceApplyAdam", "", kOpStateful, PrepareApply<Optimizer::kAdam>},
    {"ResourceApplyRMSProp", "", kOpStateful, PrepareApply<Optimizer::kRmsProp>},
    {"ResourceApplyAdagrad", "", kOpStateful, PrepareApply<Optimizer::kAdagrad>},
    {"ResourceApplyAdaMax", "", kOpStateful, PrepareApply<Optimizer::kAdaMax>},
    {"ResourceApplyAdamWithAmsgrad", "", kOpStateful, PrepareApply<Optimizer::kAdamWithAmsgrad>},
};

}  // namespace

std::span<const OpDefinition> TrainingOpDefs() { return kDefs; }

}  // namespace kiln::exec
