// What the ragged/composite variant ops' definitions and CPU kernels (ragged_variant_ops.cc) share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel_util.h"

namespace kiln::exec::ragged_variant {

// RaggedTensorToVariant.
struct ToVariantState : OpState {
  int ragged_rank = 0;
  bool batched = false;
  DType splits = DType::kInt64;
};

// RaggedTensorFromVariant.
struct FromVariantState : OpState {
  int64_t input_ragged_rank = -1;
  int output_ragged_rank = 0;
  DType values = DType::kInvalid;
  DType splits = DType::kInt64;
};

// CompositeTensorVariantFromComponents, CompositeTensorVariantToComponents.
struct CompositeState : OpState {
  std::string metadata;
  int type_spec_class = 0;
  std::vector<DType> components;
};

}  // namespace kiln::exec::ragged_variant
