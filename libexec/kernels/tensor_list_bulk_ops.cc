// TensorList ops that touch many elements at once: TensorListGather, TensorListConcatV2,
// TensorListScatterIntoExistingList and TensorListResize. Lists are immutable (see
// tensor_list.h): changed lists are new lists sharing the element buffers.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/op_families.h"
#include "kernels/tensor_list.h"

namespace kiln::exec {
namespace {

using tensor_list::ConstantShape;
using tensor_list::ExpectShapeInput;
using tensor_list::ScalarInt;
using tensor_list::ShapeFromTensor;

using DTypeState = TypedOpState<DType>;

// Lists grown by an index or a size from the graph's data stop here (16M slots): a bad value
// must fail, not exhaust memory.
constexpr int64_t kMaxGrownSize = int64_t{1} << 24;

TensorSpec ListSpec() { return TensorSpec{DType::kVariant, PartialShape::Scalar()}; }

Result<const TensorList*> ListInput(const KernelContext& ctx, int i) {
  KILN_ASSIGN_OR_RETURN_CTX(const TensorList* list, TensorList::From(ctx.input(i), "input_handle"),
                            "node '", ctx.node_name(), "'");
  const DType want = ctx.state<DTypeState>().value;
  if (want != DType::kInvalid && list->element_dtype() != want) {
    return ctx.Error("the list holds ", DTypeShortName(list->element_dtype()),
                     " elements, the op's element_dtype is ", DTypeShortName(want));
  }
  return list;
}

// The int32 vector input `name` as int64 values.
Result<std::vector<int64_t>> IndicesInput(const KernelContext& ctx, int i, std::string_view name) {
  const Tensor& t = ctx.input(i);
  if (t.rank() != 1) {
    return ctx.Error("input '", name, "' must be a vector, got shape ", t.shape().ToString());
  }
  return std::vector<int64_t>(t.data<int32_t>(), t.data<int32_t>() + t.NumElements());
}

Status PrepareListOp(PrepareContext& ctx, int inputs, DType* element_dtype) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(inputs));
  KILN_PREPARE_ASSIGN(ctx, *element_dtype, ctx.attrs.GetType("element_dtype"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input_handle", DType::kVariant));
  ctx.state = std::make_shared<DTypeState>(*element_dtype);
  return OkStatus();
}

// ---- TensorListGather ------------------------------------------------------------------------

Status PrepareGather(PrepareContext& ctx) {
  DType t;
  KILN_RETURN_IF_ERROR(PrepareListOp(ctx, 3, &t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "indices", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "indices", 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "element_shape", DType::kInt32));
  const PartialShape elem = ConstantShape(ctx, 2);
  PartialShape out;
  if (!elem.unknown_rank() && elem.rank() < kMaxRank) {
    std::vector<int64_t> dims = {KnownLength(ctx.inputs[1].shape)};
    dims.insert(dims.end(), elem.dims().begin(), elem.dims().end());
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status ComputeGather(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorList* list, ListInput(ctx, 0));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> indices, IndicesInput(ctx, 1, "indices"));
  KILN_ASSIGN_OR_RETURN_CTX(PartialShape requested, ShapeFromTensor(ctx.input(2), "element_shape"),
                            "node '", ctx.node_name(), "'");
  auto merged = list->element_shape().MergeWith(requested);
  if (!merged.ok()) {
    return ctx.Error("element_shape ", requested.ToPythonString(),
                     " is not compatible with the list's element shape ",
                     list->element_shape().ToPythonString());
  }
  // The gathered elements must agree in shape; unset ones read as zeros of that shape.
  PartialShape elem = *merged;
  for (int64_t i : indices) {
    if (i < 0 || i >= list->size()) {
      return ctx.Error("trying to gather element ", i, " in a list with ", list->size(),
                       " elements");
    }
    const Tensor& t = list->tensors()[i];
    if (!t.IsInitialized()) continue;
    auto m = elem.MergeWith(PartialShape(t.shape()));
    if (!m.ok()) {
      return ctx.Error("element ", i, " has shape ", t.shape().ToString(),
                       ", not compatible with the shape ", elem.ToPythonString(),
                       " of the other gathered elements");
    }
    elem = *m;
  }
  if (!elem.IsFullyDefined()) {
    return ctx.Error("tried to gather ", indices.empty() ? "0 elements" : "unset elements",
                     " from a list with non-fully-defined element shape ", elem.ToPythonString());
  }
  if (elem.rank() + 1 > kMaxRank) return ctx.Error("gathered rank exceeds ", kMaxRank);
  Shape shape;
  shape.AddDim(static_cast<int64_t>(indices.size()));
  for (int64_t d : elem.dims()) shape.AddDim(d);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, list->element_dtype(), shape));
  const int64_t per = elem.ToShape()->num_elements();
  for (size_t j = 0; j < indices.size(); ++j) {
    const Tensor& t = list->tensors()[indices[j]];
    const int64_t at = static_cast<int64_t>(j) * per;
    if (t.IsInitialized()) {
      CopyElementRange(t, 0, out, at, per);
    } else if (DTypeIsPod(out->dtype())) {
      std::fill_n(static_cast<char*>(out->raw_data()) + at * DTypeSize(out->dtype()),
                  per * DTypeSize(out->dtype()), 0);
    }
  }
  return OkStatus();
}

// ---- TensorListConcatV2 ----------------------------------------------------------------------

Status PrepareConcat(PrepareContext& ctx) {
  DType t;
  KILN_RETURN_IF_ERROR(PrepareListOp(ctx, 3, &t));
  KILN_PREPARE_ASSIGN(ctx, DType shape_type, ctx.attrs.GetType("shape_type"));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, "shape_type", shape_type, {DType::kInt32, DType::kInt64}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "element_shape", shape_type));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "leading_dims", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "leading_dims", 1));
  const PartialShape elem = ConstantShape(ctx, 1);
  PartialShape out;
  if (!elem.unknown_rank()) {
    if (elem.rank() == 0) return ctx.Error("concat requires elements of rank at least 1");
    std::vector<int64_t> dims(elem.dims().begin(), elem.dims().end());
    dims[0] = -1;
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}, TensorSpec{DType::kInt64, PartialShape{-1}}};
  return OkStatus();
}

Status ComputeConcat(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorList* list, ListInput(ctx, 0));
  KILN_ASSIGN_OR_RETURN_CTX(PartialShape requested, ShapeFromTensor(ctx.input(1), "element_shape"),
                            "node '", ctx.node_name(), "'");
  const Tensor& leading_t = ctx.input(2);
  if (leading_t.rank() != 1) return ctx.Error("input 'leading_dims' must be a vector");
  const int64_t* leading = leading_t.data<int64_t>();
  const int64_t n_leading = leading_t.NumElements();
  auto merged = list->element_shape().MergeWith(requested);
  if (!merged.ok()) {
    return ctx.Error("element_shape ", requested.ToPythonString(),
                     " is not compatible with the list's element shape ",
                     list->element_shape().ToPythonString());
  }
  // All but the first dim must agree between the set elements; the whole shape, when every set
  // element has the same one, gives unset elements their zeros.
  PartialShape full = *merged;
  bool full_ok = true;
  PartialShape inner = PartialShape::UnknownRank();
  if (!merged->unknown_rank()) {
    if (merged->rank() == 0) return ctx.Error("concat requires elements of rank at least 1");
    inner = *PartialShape::FromDims(merged->dims().subspan(1));
  }
  bool any_unset = false;
  for (int64_t i = 0; i < list->size(); ++i) {
    const Tensor& t = list->tensors()[i];
    if (!t.IsInitialized()) {
      any_unset = true;
      continue;
    }
    if (t.rank() == 0) return ctx.Error("concat requires elements of rank at least 1");
    auto m = inner.MergeWith(PartialShape(*Shape::FromDims(t.shape().dims().subspan(1))));
    if (!m.ok()) {
      return ctx.Error("element ", i, " has shape ", t.shape().ToString(),
                       ", which differs from the other elements beyond the first dim ",
                       inner.ToPythonString());
    }
    inner = *m;
    if (full_ok) {
      auto f = full.MergeWith(PartialShape(t.shape()));
      full_ok = f.ok();
      if (full_ok) full = *f;
    }
  }
  if ((any_unset || list->size() == 0) && !inner.IsFullyDefined()) {
    return ctx.Error("all but the first dimension of the element shape ", inner.ToPythonString(),
                     " must be fully defined to concat a list that is empty or has unset elements");
  }
  if (inner.rank() + 1 > kMaxRank) return ctx.Error("element rank exceeds ", kMaxRank);
  const int64_t per_row = inner.IsFullyDefined() ? inner.ToShape()->num_elements() : 0;
  KILN_ASSIGN_OR_RETURN(Tensor * lengths, ctx.AllocateOutput(1, Shape{list->size()}));
  int64_t* len = lengths->data<int64_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < list->size(); ++i) {
    const Tensor& t = list->tensors()[i];
    if (t.IsInitialized()) {
      len[i] = t.dim(0);
    } else if (i < n_leading) {
      len[i] = leading[i];
      if (len[i] < 0) return ctx.Error("leading_dims[", i, "] = ", len[i], " is negative");
    } else if (full_ok && full.IsFullyDefined()) {
      len[i] = full.dim(0);
    } else {
      return ctx.Error("list contains an unset tensor at index ", i, " but leading_dims has only ",
                       n_leading, " elements");
    }
    total += len[i];
  }
  Shape shape;
  shape.AddDim(total);
  for (int64_t d : inner.dims()) shape.AddDim(d);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, list->element_dtype(), shape));
  int64_t at = 0;
  for (int64_t i = 0; i < list->size(); ++i) {
    const Tensor& t = list->tensors()[i];
    const int64_t count = len[i] * per_row;
    if (t.IsInitialized()) {
      CopyElementRange(t, 0, out, at, count);
    } else if (DTypeIsPod(out->dtype())) {
      std::fill_n(static_cast<char*>(out->raw_data()) + at * DTypeSize(out->dtype()),
                  count * DTypeSize(out->dtype()), 0);
    }
    at += count;
  }
  return OkStatus();
}

// ---- TensorListScatterIntoExistingList -------------------------------------------------------

Status PrepareScatter(PrepareContext& ctx) {
  DType t;
  KILN_RETURN_IF_ERROR(PrepareListOp(ctx, 3, &t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "tensor", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "indices", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "indices", 1));
  ctx.outputs = {ListSpec()};
  return OkStatus();
}

Status ComputeScatter(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorList* list, ListInput(ctx, 0));
  const Tensor& value = ctx.input(1);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> indices, IndicesInput(ctx, 2, "indices"));
  if (value.rank() == 0 || value.dim(0) != static_cast<int64_t>(indices.size())) {
    return ctx.Error("input 'tensor' of shape ", value.shape().ToString(), " must have ",
                     indices.size(), " rows, one per index");
  }
  Shape item_shape;
  for (int d = 1; d < value.rank(); ++d) item_shape.AddDim(value.dim(d));
  if (!list->element_shape().IsCompatibleWith(item_shape)) {
    return ctx.Error("rows of shape ", item_shape.ToString(),
                     " are not compatible with the list's element shape ",
                     list->element_shape().ToPythonString());
  }
  std::vector<Tensor> tensors = list->tensors();  // shares the element buffers
  const int64_t per = item_shape.num_elements();
  for (size_t j = 0; j < indices.size(); ++j) {
    const int64_t i = indices[j];
    if (i < 0) return ctx.Error("indices[", j, "] = ", i, " is negative");
    if (i >= static_cast<int64_t>(tensors.size())) {
      if (list->max_num_elements() >= 0 && i >= list->max_num_elements()) {
        return ctx.Error("indices[", j, "] = ", i, " exceeds the list's maximum of ",
                         list->max_num_elements(), " elements");
      }
      if (i >= kMaxGrownSize) {
        return ctx.Error("indices[", j, "] = ", i, " would grow the list past ", kMaxGrownSize,
                         " elements");
      }
      tensors.resize(i + 1);  // scattering past the end grows the list, as in TF
    }
    Tensor item(value.dtype(), item_shape);
    CopyElementRange(value, static_cast<int64_t>(j) * per, &item, 0, per);
    tensors[i] = std::move(item);
  }
  ctx.SetOutput(0, TensorList::Wrap(std::make_shared<const TensorList>(
                       list->element_dtype(), list->element_shape(), std::move(tensors),
                       list->max_num_elements())));
  return OkStatus();
}

// ---- TensorListResize ------------------------------------------------------------------------

Status PrepareResize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input_handle", DType::kVariant));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "size", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "size", 0));
  ctx.outputs = {ListSpec()};
  ctx.state = std::make_shared<DTypeState>(DType::kInvalid);
  return OkStatus();
}

Status ComputeResize(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorList* list, ListInput(ctx, 0));
  KILN_ASSIGN_OR_RETURN_CTX(int64_t size, ScalarInt(ctx.input(1), "size"), "node '",
                            ctx.node_name(), "'");
  if (size < 0) return ctx.Error("TensorListResize expects size to be non-negative, got ", size);
  if (size > std::max(list->size(), kMaxGrownSize)) {
    return ctx.Error("size ", size, " would grow the list past ", kMaxGrownSize, " elements");
  }
  std::vector<Tensor> tensors(list->tensors().begin(),
                              list->tensors().begin() + std::min(size, list->size()));
  tensors.resize(size);  // new slots are unset
  ctx.SetOutput(0, TensorList::Wrap(std::make_shared<const TensorList>(
                       list->element_dtype(), list->element_shape(), std::move(tensors),
                       list->max_num_elements())));
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"TensorListGather", "values", kOpFreshOutputs, PrepareGather},
    {"TensorListConcatV2", "tensor,lengths", kOpFreshOutputs, PrepareConcat},
    {"TensorListScatterIntoExistingList", "output_handle", kOpNone, PrepareScatter},
    {"TensorListResize", "output_handle", kOpNone, PrepareResize},
};

constexpr KernelEntry kCpu[] = {
    {"TensorListGather", ComputeGather},
    {"TensorListConcatV2", ComputeConcat},
    {"TensorListScatterIntoExistingList", ComputeScatter},
    {"TensorListResize", ComputeResize},
};

}  // namespace

std::span<const OpDefinition> TensorListBulkOpDefs() { return kDefs; }
std::span<const KernelEntry> TensorListBulkCpuKernels() { return kCpu; }

}  // namespace kiln::exec
