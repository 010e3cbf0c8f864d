// The value an Optional variant tensor holds (tf.experimental.Optional; TF 2's graph mode puts
// OptionalFromValue / OptionalNone in conds whose outputs a caller may not need, as
// batch_normalization and dropout with a tensor `training` flag do): some tensors, or none.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::exec {

class OptionalValue final : public VariantBase {
 public:
  static constexpr const char* kTypeName = "tensorflow::data::OptionalVariant";

  explicit OptionalValue(std::optional<std::vector<Tensor>> values);

  bool has_value() const { return values_.has_value(); }
  const std::vector<Tensor>& values() const { return *values_; }

  std::string TypeName() const override { return kTypeName; }
  std::string DebugString() const override;

  // A scalar DT_VARIANT tensor holding `value`.
  static Tensor Wrap(std::shared_ptr<const OptionalValue> value);
  // The optional held by `t`; errors name `input`.
  static Result<const OptionalValue*> From(const Tensor& t, std::string_view input);

 private:
  std::optional<std::vector<Tensor>> values_;
};

}  // namespace kiln::exec
