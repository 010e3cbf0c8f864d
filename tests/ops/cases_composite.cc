// Op-tester cases of the composite-tensor variants (ragged_variant_ops.cc):
// CompositeTensorVariantFromComponents wraps components and metadata, ToComponents gives them
// back. References: the variant holding exactly the inputs (compared by its metadata bytes and
// components), and the components of a variant built by hand. The metadata is a serialized
// CompositeTensorVariantMetadata written out byte by byte (field 1, the TypeSpecProto, whose
// field 1 is the TypeSpecClass: 3 RAGGED_TENSOR_SPEC, 1 SPARSE_TENSOR_SPEC); the errors are in
// tests/exec/kernels_composite_test.cc.
#include <string>

#include "kernels/composite_tensor_variant.h"
#include "ops/array_ref.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

using exec::CompositeTensorVariant;
using namespace std::string_literals;

// A ragged tensor's spec, with a class name and a flat-component count after the class.
const std::string kRagged = "\x0a\x11\x08\x03\x1a\x0bRaggedThing\x20\x02"s;
const std::string kSparse = "\x0a\x02\x08\x01"s;

Tensor Composite(const std::string& metadata, int type_spec_class, std::vector<Tensor> parts) {
  Tensor t(DType::kVariant, Shape());
  t.scalar<std::shared_ptr<const VariantBase>>() =
      std::make_shared<const CompositeTensorVariant>(metadata, type_spec_class, std::move(parts));
  return t;
}

}  // namespace

std::vector<OpCase> CompositeCases() {
  std::vector<OpCase> c;
  const Tensor values = RandomOf(DType::kFloat, Shape{5}, 1);
  const Tensor splits = Vec<int64_t>({0, 2, 2, 5});
  c.push_back(OpCaseBuilder("CompositeTensorVariantFromComponents", "FromComponents ragged")
                  .String("metadata", kRagged)
                  .TypeList("Tcomponents", {DType::kFloat, DType::kInt64})
                  .Input(values)
                  .Input(splits)
                  .Reference1([](const std::vector<Tensor>& in) {
                    return Composite(kRagged, 3, {in[0], in[1]});
                  })
                  .Build());
  c.push_back(OpCaseBuilder("CompositeTensorVariantFromComponents", "FromComponents strings")
                  .String("metadata", kSparse)
                  .TypeList("Tcomponents", {DType::kInt64, DType::kString, DType::kInt64})
                  .Input(Make<int64_t>({0, 1, 2, 0}, Shape{2, 2}))
                  .Input(Distinct(DType::kString, Shape{2}))
                  .Input(Vec<int64_t>({3, 2}))
                  .Reference1([](const std::vector<Tensor>& in) {
                    return Composite(kSparse, 1, {in[0], in[1], in[2]});
                  })
                  .Build());
  c.push_back(OpCaseBuilder("CompositeTensorVariantFromComponents", "FromComponents none")
                  .String("metadata", ""s)
                  .TypeList("Tcomponents", {})
                  .Reference1([](const auto&) { return Composite("", 0, {}); })
                  .Build());
  // ToComponents checks only the class: other metadata bytes of the same class pass.
  const Tensor ragged = Composite("\x0a\x02\x08\x03"s, 3, {values, splits});
  c.push_back(OpCaseBuilder("CompositeTensorVariantToComponents", "ToComponents ragged")
                  .String("metadata", kRagged)
                  .TypeList("Tcomponents", {DType::kFloat, DType::kInt64})
                  .Input(ragged)
                  .Reference([values, splits](const auto&) {
                    return std::vector<Tensor>{values, splits};
                  })
                  .Build());
  const Tensor empty = Composite("", 0, {});
  c.push_back(OpCaseBuilder("CompositeTensorVariantToComponents", "ToComponents none")
                  .String("metadata", ""s)
                  .TypeList("Tcomponents", {})
                  .Input(empty)
                  .Reference([](const auto&) { return std::vector<Tensor>{}; })
                  .Build());
  return c;
}

}  // namespace kiln::testing
