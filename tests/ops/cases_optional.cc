// Op-tester cases of the Optional ops (optional_ops.cc): OptionalFromValue and OptionalNone
// make the variant, OptionalHasValue and OptionalGetValue read it. References: an optional built
// by hand holding the inputs, and what it holds. An empty optional's OptionalGetValue is an
// error (tests/exec/kernels_composite_test.cc).
#include <optional>
#include <vector>

#include "kernels/optional_ops.h"
#include "ops/array_ref.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

using exec::OptionalValue;

Tensor Optional(std::optional<std::vector<Tensor>> values) {
  return OptionalValue::Wrap(std::make_shared<const OptionalValue>(std::move(values)));
}

}  // namespace

std::vector<OpCase> OptionalCases() {
  std::vector<OpCase> c;
  const Tensor x = RandomOf(DType::kFloat, Shape{2, 3}, 1);
  const Tensor s = Distinct(DType::kString, Shape{2});
  c.push_back(OpCaseBuilder("OptionalFromValue", "OptionalFromValue float string")
                  .TypeList("Toutput_types", {DType::kFloat, DType::kString})
                  .Input(x)
                  .Input(s)
                  .Reference1([](const std::vector<Tensor>& in) {
                    return Optional(std::vector<Tensor>{in[0], in[1]});
                  })
                  .Build());
  c.push_back(OpCaseBuilder("OptionalNone", "OptionalNone")
                  .Reference1([](const auto&) { return Optional(std::nullopt); })
                  .Build());
  for (bool has : {true, false}) {
    c.push_back(
        OpCaseBuilder("OptionalHasValue", has ? "OptionalHasValue some" : "OptionalHasValue none")
            .Input(has ? Optional(std::vector<Tensor>{x}) : Optional(std::nullopt))
            .Reference1([has](const auto&) { return Tensor::Scalar<bool>(has); })
            .Build());
  }
  c.push_back(OpCaseBuilder("OptionalGetValue", "OptionalGetValue float string")
                  .TypeList("output_types", {DType::kFloat, DType::kString})
                  .ShapeList("output_shapes", {PartialShape{-1, 3}, PartialShape{2}})
                  .Input(Optional(std::vector<Tensor>{x, s}))
                  .Reference([x, s](const auto&) {
                    return std::vector<Tensor>{x, s};
                  })
                  .Build());
  return c;
}

}  // namespace kiln::testing
