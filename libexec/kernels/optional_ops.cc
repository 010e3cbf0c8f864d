// Optionals: OptionalFromValue, OptionalNone, OptionalHasValue and OptionalGetValue (TF's
// optional_ops), over the OptionalValue variant (optional_ops.h). The CPU kernels are in
// kernels/cpu/optional_ops.cc.
#include "kernels/optional_ops.h"

#include <utility>

#include "kernels/kernel_util.h"

namespace kiln::exec {

OptionalValue::OptionalValue(std::optional<std::vector<Tensor>> values)
    : values_(std::move(values)) {
  // An optional outlives the call that made it: it must not hold arena memory.
  if (values_)
    for (Tensor& t : *values_) t = t.Retainable();
}

std::string OptionalValue::DebugString() const {
  return values_ ? "Optional<" + std::to_string(values_->size()) + " tensors>" : "Optional<none>";
}

Tensor OptionalValue::Wrap(std::shared_ptr<const OptionalValue> value) {
  Tensor t(DType::kVariant, Shape());
  t.scalar<std::shared_ptr<const VariantBase>>() = std::move(value);
  return t;
}

Result<const OptionalValue*> OptionalValue::From(const Tensor& t, std::string_view input) {
  if (t.dtype() != DType::kVariant || t.rank() != 0)
    return InvalidArgument("input '", input,
                           "': expected a scalar variant holding an Optional, got ",
                           t.DebugString());
  const auto& v = t.scalar<std::shared_ptr<const VariantBase>>();
  if (v == nullptr) return InvalidArgument("input '", input, "': the variant is empty");
  const auto* opt = dynamic_cast<const OptionalValue*>(v.get());
  if (opt == nullptr)
    return InvalidArgument("input '", input, "': expected an Optional, got ", v->TypeName());
  return opt;
}

namespace {

Status PrepareFromValue(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, std::vector<DType> types, ctx.attrs.GetTypeList("Toutput_types"));
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(types.size())));
  for (size_t i = 0; i < types.size(); ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, static_cast<int>(i), "components", types[i]));
  ctx.outputs = {TensorSpec{DType::kVariant, PartialShape::Scalar()}};
  return OkStatus();
}

Status PrepareNone(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  ctx.outputs = {TensorSpec{DType::kVariant, PartialShape::Scalar()}};
  return OkStatus();
}

Status PrepareHasValue(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "optional", DType::kVariant));
  ctx.outputs = {TensorSpec{DType::kBool, PartialShape::Scalar()}};
  return OkStatus();
}

Status PrepareGetValue(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "optional", DType::kVariant));
  KILN_PREPARE_ASSIGN(ctx, std::vector<DType> types, ctx.attrs.GetTypeList("output_types"));
  KILN_PREPARE_ASSIGN(ctx, std::vector<PartialShape> shapes,
                      ctx.attrs.GetShapeList("output_shapes"));
  if (shapes.size() != types.size())
    return ctx.Error("attrs 'output_types' and 'output_shapes' have ", types.size(), " and ",
                     shapes.size(), " entries");
  ctx.outputs.clear();
  for (size_t i = 0; i < types.size(); ++i) ctx.outputs.push_back(TensorSpec{types[i], shapes[i]});
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"OptionalFromValue", "optional", kOpNone, PrepareFromValue},
    {"OptionalNone", "optional", kOpNone, PrepareNone},
    {"OptionalHasValue", "has_value", kOpFreshOutputs, PrepareHasValue},
    {"OptionalGetValue", "components", kOpNone, PrepareGetValue},
};

}  // namespace

std::span<const OpDefinition> OptionalOpDefs() { return kDefs; }

}  // namespace kiln::exec
