// Checkpoint I/O: RestoreV2 reads whole tensors from a tensor bundle (what a SavedModel's
// restore function runs to load variable values).
#include <string>
#include <vector>

#include "kernels/kernel_util.h"
#include "kiln/core/file_util.h"
#include "kiln/exec/tensor_bundle.h"

namespace kiln::exec {
namespace {

// ---- RestoreV2 -------------------------------------------------------------------------------
// inputs: prefix (string scalar), tensor_names (string[N]), shape_and_slices (string[N]);
// attr dtypes: list(type) of length N; outputs: tensors (N).

using RestoreState = TypedOpState<std::vector<DType>>;

Status CheckSlicesAreWhole(const Tensor& names, const Tensor& slices, const auto& error) {
  for (int64_t i = 0; i < slices.NumElements(); ++i) {
    const std::string& s = slices.data<std::string>()[i];
    if (!s.empty()) {
      std::string key = i < names.NumElements() ? names.data<std::string>()[i] : "?";
      Status e = error("shape_and_slices[", i, "] is '", s, "' for '", key,
                       "': only \"\" (whole tensors) is supported");
      return Status(StatusCode::kUnimplemented, e.message());
    }
  }
  return OkStatus();
}

Status PrepareRestoreV2(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, std::vector<DType> dtypes, ctx.attrs.GetTypeList("dtypes"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "prefix", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "tensor_names", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "shape_and_slices", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "prefix", 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "tensor_names", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "shape_and_slices", 1));
  const int64_t n = static_cast<int64_t>(dtypes.size());
  for (int i = 1; i <= 2; ++i) {
    const PartialShape& s = ctx.inputs[i].shape;
    if (s.rank() == 1 && s.dim(0) >= 0 && s.dim(0) != n) {
      return ctx.Error("input '", i == 1 ? "tensor_names" : "shape_and_slices", "' has ", s.dim(0),
                       " elements but attr 'dtypes' lists ", n, " types");
    }
  }
  for (DType t : dtypes) {
    if (!DTypeIsPod(t) && t != DType::kString) {
      return ctx.Error("attr 'dtypes': cannot restore a ", DTypeShortName(t), " tensor");
    }
  }
  if (ctx.constant_inputs.size() == 3 && ctx.constant_inputs[2] != nullptr) {
    static const Tensor kNoNames(DType::kString, Shape{0});
    const Tensor& names = ctx.constant_inputs[1] ? *ctx.constant_inputs[1] : kNoNames;
    KILN_RETURN_IF_ERROR(CheckSlicesAreWhole(names, *ctx.constant_inputs[2], [&](auto&&... args) {
      return ctx.Error(std::forward<decltype(args)>(args)...);
    }));
  }
  ctx.outputs.clear();
  for (DType t : dtypes) ctx.outputs.push_back(TensorSpec{t, PartialShape::UnknownRank()});
  ctx.state = std::make_shared<RestoreState>(std::move(dtypes));
  return OkStatus();
}

Status ComputeRestoreV2(const KernelContext& ctx) {
  const std::vector<DType>& dtypes = ctx.state<RestoreState>().value;
  const Tensor& prefix_t = ctx.input(0);
  const Tensor& names = ctx.input(1);
  const Tensor& slices = ctx.input(2);
  const int64_t n = static_cast<int64_t>(dtypes.size());
  if (prefix_t.NumElements() != 1) {
    return ctx.Error("input 'prefix': expected a scalar, got shape ", prefix_t.shape().ToString());
  }
  if (names.rank() != 1 || names.NumElements() != n) {
    return ctx.Error("input 'tensor_names': expected ", n, " names (one per dtype), got shape ",
                     names.shape().ToString());
  }
  if (slices.rank() != 1 || slices.NumElements() != n) {
    return ctx.Error("input 'shape_and_slices': expected ", n, " entries, got shape ",
                     slices.shape().ToString());
  }
  KILN_RETURN_IF_ERROR(CheckSlicesAreWhole(names, slices, [&](auto&&... args) {
    return ctx.Error(std::forward<decltype(args)>(args)...);
  }));

  const std::string& prefix = prefix_t.data<std::string>()[0];
  KILN_ASSIGN_OR_RETURN_CTX(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix),
                            "node '", ctx.node_name(), "' (RestoreV2)");
  for (int64_t i = 0; i < n; ++i) {
    const std::string& key = names.data<std::string>()[i];
    KILN_ASSIGN_OR_RETURN_CTX(Tensor t, reader->Read(key), "node '", ctx.node_name(),
                              "' (RestoreV2): restoring '", key, "'");
    if (t.dtype() != dtypes[i]) {
      return ctx.Error("restoring '", key, "' from '", prefix, "': attr dtypes[", i, "] expects ",
                       DTypeShortName(dtypes[i]), " but the checkpoint holds ",
                       DTypeShortName(t.dtype()));
    }
    ctx.SetOutput(static_cast<int>(i), std::move(t));
  }
  return OkStatus();
}

// ---- ReadFile ------------------------------------------------------------------------------
// input: filename (string scalar); output: contents (string scalar). Assets read their files
// with it (TF's AssetModule fixture).

Status PrepareReadFile(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "filename", DType::kString));
  ctx.outputs = {TensorSpec{DType::kString, PartialShape::Scalar()}};
  return OkStatus();
}

Status ComputeReadFile(const KernelContext& ctx) {
  const Tensor& name = ctx.input(0);
  if (name.NumElements() != 1)
    return ctx.Error("filename must be a scalar, got ", name.shape().ToString());
  auto contents = ReadFileToString(name.scalar<std::string>());
  if (!contents.ok())
    return contents.status().WithContext("node '" + std::string(ctx.node_name()) + "'");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DType::kString, Shape()));
  out->scalar<std::string>() = std::move(*contents);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"RestoreV2", "tensors", kOpStateful, PrepareRestoreV2},
    {"ReadFile", "contents", kOpNone, PrepareReadFile},
};

constexpr KernelEntry kCpu[] = {
    {"RestoreV2", ComputeRestoreV2},
    {"ReadFile", ComputeReadFile},
};

}  // namespace

std::span<const OpDefinition> IoOpDefs() { return kDefs; }
std::span<const KernelEntry> IoCpuKernels() { return kCpu; }

}  // namespace kiln::exec
