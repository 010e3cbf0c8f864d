// The CPU kernels of the bulk TensorList ops in kernels/tensor_list_bulk_ops.cc. Lists are
// immutable (see tensor_list.h): changed lists are new lists sharing the element buffers.
#include "kernels/tensor_list_bulk_ops.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/tensor_list.h"

namespace kiln::exec {
namespace {

using tensor_list::ScalarInt;
using tensor_list::ShapeFromTensor;
using tensor_list_bulk::ConcatV1State;
using tensor_list_bulk::DTypeState;

// Lists grown by an index or a size from the graph's data stop here (16M slots): a bad value
// must fail, not exhaust memory.
constexpr int64_t kMaxGrownSize = int64_t{1} << 24;

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

// ---- TensorListGather ------------------------------------------------------------------------

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

// The elements of `list` concatenated along their first dim (TensorListConcat and V2): unset
// elements take their first dim from `leading` (V2's leading_dims) or the element shape.
Status ConcatList(const KernelContext& ctx, const TensorList* list, const PartialShape& requested,
                  const int64_t* leading, int64_t n_leading) {
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

Status ComputeConcat(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorList* list, ListInput(ctx, 0));
  KILN_ASSIGN_OR_RETURN_CTX(PartialShape requested, ShapeFromTensor(ctx.input(1), "element_shape"),
                            "node '", ctx.node_name(), "'");
  const Tensor& leading_t = ctx.input(2);
  if (leading_t.rank() != 1) return ctx.Error("input 'leading_dims' must be a vector");
  return ConcatList(ctx, list, requested, leading_t.data<int64_t>(), leading_t.NumElements());
}

Status ComputeConcatV1(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorList* list, ListInput(ctx, 0));
  return ConcatList(ctx, list, ctx.state<ConcatV1State>().element_shape, nullptr, 0);
}

// ---- TensorListScatter, TensorListScatterV2, TensorListSplit ---------------------------------

Status ComputeScatterToList(const KernelContext& ctx) {
  const Tensor& value = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> indices, IndicesInput(ctx, 1, "indices"));
  KILN_ASSIGN_OR_RETURN_CTX(PartialShape elem, ShapeFromTensor(ctx.input(2), "element_shape"),
                            "node '", ctx.node_name(), "'");
  int64_t n = ctx.num_inputs() > 3 ? ctx.input(3).data<int32_t>()[0] : -1;
  if (value.rank() == 0 || value.dim(0) != static_cast<int64_t>(indices.size())) {
    return ctx.Error("input 'tensor' of shape ", value.shape().ToString(), " must have ",
                     indices.size(), " rows, one per index");
  }
  Shape item_shape;
  for (int d = 1; d < value.rank(); ++d) item_shape.AddDim(value.dim(d));
  if (!elem.IsCompatibleWith(item_shape)) {
    return ctx.Error("rows of shape ", item_shape.ToString(), " are not compatible with ",
                     "element_shape ", elem.ToPythonString());
  }
  int64_t size = std::max<int64_t>(n, 0);
  for (size_t j = 0; j < indices.size(); ++j) {
    if (indices[j] < 0) return ctx.Error("indices[", j, "] = ", indices[j], " is negative");
    if (n >= 0 && indices[j] >= n) {
      return ctx.Error("TensorListScatter: trying to scatter at index ", indices[j],
                       " in list with size ", n);
    }
    size = std::max(size, indices[j] + 1);
  }
  if (size > kMaxGrownSize) return ctx.Error("a list of ", size, " elements is too long");
  std::vector<Tensor> tensors(size);
  const int64_t per = item_shape.num_elements();
  for (size_t j = 0; j < indices.size(); ++j) {
    Tensor item(value.dtype(), item_shape);
    CopyElementRange(value, static_cast<int64_t>(j) * per, &item, 0, per);
    tensors[indices[j]] = std::move(item);
  }
  ctx.SetOutput(0, TensorList::Wrap(std::make_shared<const TensorList>(value.dtype(), elem,
                                                                       std::move(tensors))));
  return OkStatus();
}

Status ComputeSplit(const KernelContext& ctx) {
  const Tensor& value = ctx.input(0);
  if (value.rank() == 0) return ctx.Error("input 'tensor' must have rank at least 1");
  KILN_ASSIGN_OR_RETURN_CTX(PartialShape elem, ShapeFromTensor(ctx.input(1), "element_shape"),
                            "node '", ctx.node_name(), "'");
  const Tensor& lengths = ctx.input(2);
  if (lengths.rank() != 1) return ctx.Error("input 'lengths' must be a vector");
  const int64_t* len = lengths.data<int64_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < lengths.NumElements(); ++i) {
    if (len[i] < 0) return ctx.Error("lengths[", i, "] = ", len[i], " is negative");
    total += len[i];
  }
  if (total != value.dim(0)) {
    return ctx.Error("unaligned lengths: their sum ", total, " is not the first dim ", value.dim(0),
                     " of input 'tensor' ", value.shape().ToString());
  }
  const int64_t per_row = value.dim(0) == 0 ? 0 : value.NumElements() / value.dim(0);
  std::vector<Tensor> tensors;
  int64_t at = 0;
  for (int64_t i = 0; i < lengths.NumElements(); ++i) {
    Shape piece = value.shape();
    piece.set_dim(0, len[i]);
    if (!elem.IsCompatibleWith(piece)) {
      return ctx.Error("piece ", i, " of shape ", piece.ToString(),
                       " is not compatible with element_shape ", elem.ToPythonString());
    }
    Tensor item(value.dtype(), piece);
    CopyElementRange(value, at, &item, 0, len[i] * per_row);
    at += len[i] * per_row;
    tensors.push_back(std::move(item));
  }
  ctx.SetOutput(0, TensorList::Wrap(std::make_shared<const TensorList>(value.dtype(), elem,
                                                                       std::move(tensors))));
  return OkStatus();
}

// ---- TensorListConcatLists, TensorListPushBackBatch ------------------------------------------

// Variant tensors of lists, element by element: a's list followed by b's (ConcatLists), or
// each list with one more element, a row of `tensor` (PushBackBatch).
// Element i of a variant tensor as a scalar variant tensor.
Tensor VariantAt(const Tensor& t, int64_t i) {
  using V = std::shared_ptr<const VariantBase>;
  Tensor s(DType::kVariant, Shape{});
  s.scalar<V>() = t.data<V>()[i];
  return s;
}

Status ComputeBatchOfLists(const KernelContext& ctx, bool concat) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const DType t = ctx.state<DTypeState>().value;
  if (concat ? a.shape() != b.shape() : (a.rank() != 1 || b.rank() < 1 || b.dim(0) != a.dim(0))) {
    return ctx.Error(concat ? "input_a and input_b must have the same shape, got "
                            : "input_handles must be a vector with one list per row of tensor, "
                              "got ",
                     a.shape().ToString(), " and ", b.shape().ToString());
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, a.shape()));
  Shape row_shape;
  for (int d = 1; d < b.rank(); ++d) row_shape.AddDim(b.dim(d));
  const int64_t per = row_shape.num_elements();
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    KILN_ASSIGN_OR_RETURN_CTX(const TensorList* la, TensorList::From(VariantAt(a, i), "input_a"),
                              "node '", ctx.node_name(), "'");
    if (la->element_dtype() != t) {
      return ctx.Error("list ", i, " holds ", DTypeShortName(la->element_dtype()),
                       " elements, expected ", DTypeShortName(t));
    }
    std::vector<Tensor> tensors = la->tensors();
    PartialShape elem = la->element_shape();
    if (concat) {
      KILN_ASSIGN_OR_RETURN_CTX(const TensorList* lb, TensorList::From(VariantAt(b, i), "input_b"),
                                "node '", ctx.node_name(), "'");
      if (lb->element_dtype() != t) {
        return ctx.Error("list ", i, " of input_b holds ", DTypeShortName(lb->element_dtype()),
                         " elements, expected ", DTypeShortName(t));
      }
      auto m = elem.MergeWith(lb->element_shape());
      if (!m.ok()) {
        return ctx.Error("lists ", i, " have incompatible element shapes ", elem.ToPythonString(),
                         " and ", lb->element_shape().ToPythonString());
      }
      elem = *m;
      tensors.insert(tensors.end(), lb->tensors().begin(), lb->tensors().end());
    } else {
      if (!elem.IsCompatibleWith(row_shape)) {
        return ctx.Error("row of shape ", row_shape.ToString(), " is not compatible with list ", i,
                         "'s element shape ", elem.ToPythonString());
      }
      Tensor item(b.dtype(), row_shape);
      CopyElementRange(b, i * per, &item, 0, per);
      tensors.push_back(std::move(item));
    }
    out->data<std::shared_ptr<const VariantBase>>()[i] =
        TensorList::Wrap(
            std::make_shared<const TensorList>(t, elem, std::move(tensors), la->max_num_elements()))
            .scalar<std::shared_ptr<const VariantBase>>();
  }
  return OkStatus();
}

Status ComputeConcatLists(const KernelContext& ctx) { return ComputeBatchOfLists(ctx, true); }
Status ComputePushBackBatch(const KernelContext& ctx) { return ComputeBatchOfLists(ctx, false); }

// ---- TensorListScatterIntoExistingList -------------------------------------------------------

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

constexpr KernelEntry kCpu[] = {
    {"TensorListGather", ComputeGather},
    {"TensorListConcatV2", ComputeConcat},
    {"TensorListConcat", ComputeConcatV1},
    {"TensorListScatter", ComputeScatterToList},
    {"TensorListScatterV2", ComputeScatterToList},
    {"TensorListSplit", ComputeSplit},
    {"TensorListConcatLists", ComputeConcatLists},
    {"TensorListPushBackBatch", ComputePushBackBatch},
    {"TensorListScatterIntoExistingList", ComputeScatter},
    {"TensorListResize", ComputeResize},
};

}  // namespace

std::span<const KernelEntry> TensorListBulkCpuKernels() { return kCpu; }

}  // namespace kiln::exec
