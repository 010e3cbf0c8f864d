// The value of CompositeTensorVariantFromComponents (TF's CompositeTensorVariant): a composite
// tensor (ragged, sparse, an extension type...) as a scalar variant, its component tensors with
// its metadata attr (a serialized CompositeTensorVariantMetadata holding the TypeSpecProto),
// kept as bytes. Immutable, as every variant value.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::exec {

class CompositeTensorVariant final : public VariantBase {
 public:
  static constexpr const char* kTypeName = "CompositeTensorVariant";

  // `type_spec_class`: TypeSpecClassOf(metadata).
  CompositeTensorVariant(std::string metadata, int type_spec_class, std::vector<Tensor> components)
      : metadata_(std::move(metadata)),
        type_spec_class_(type_spec_class),
        components_(std::move(components)) {
    // A variant outlives the call that made it: it must not hold arena memory.
    for (Tensor& t : components_) t = t.Retainable();
  }

  const std::string& metadata() const { return metadata_; }
  int type_spec_class() const { return type_spec_class_; }
  const std::vector<Tensor>& components() const { return components_; }

  std::string TypeName() const override { return kTypeName; }
  std::string DebugString() const override;

 private:
  std::string metadata_;
  int type_spec_class_ = 0;
  std::vector<Tensor> components_;
};

// The TypeSpecProto.type_spec_class of serialized CompositeTensorVariantMetadata (0, UNKNOWN,
// when absent); an error when the bytes do not parse as that message. Read from the wire format
// (no protobuf): nested TypeSpecProto fields are checked as protobuf would, its type_state
// (a StructuredValue) only for its framing.
Result<int> TypeSpecClassOf(std::string_view metadata);
// TF's name of a TypeSpecProto::TypeSpecClass value ("RAGGED_TENSOR_SPEC"; "" for a value the
// enum does not name, as protobuf's TypeSpecClass_Name).
std::string_view TypeSpecClassName(int type_spec_class);

}  // namespace kiln::exec
