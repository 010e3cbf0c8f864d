// The CPU kernels of the TF1 tensor array ops in kernels/tensor_array_ops.cc, and the array they
// share through its resource handle. Semantics follow TF's TensorArray: an index is written
// once, a read clears it when clear_after_read is set, unwritten elements read as zeros only when
// the element shape is fully known; a gradient array adds up repeated writes to an index.
#include "kernels/tensor_array_ops.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using tensor_array::ConcatState;
using tensor_array::DTypeState;
using tensor_array::OptionsState;
using tensor_array::ReadState;

using Handle = std::shared_ptr<ResourceBase>;

class TensorArray final : public ResourceBase {
 public:
  using Options = tensor_array::Options;

  TensorArray(Options o, int64_t size) : o_(std::move(o)), elems_(size) {}

  std::string DebugString() const override {
    return internal::StrCat("TensorArray '", o_.name, "' dtype=", DTypeShortName(o_.dtype));
  }
  const void* TypeTag() const override { return &kTypeTag; }
  static constexpr char kTypeTag = 'A';

  DType dtype() const { return o_.dtype; }

  int64_t Size() const {
    std::lock_guard lock(mu_);
    return static_cast<int64_t>(elems_.size());
  }

  Status Write(int64_t index, const Tensor& value) {
    std::lock_guard lock(mu_);
    if (index < 0) return Err("tried to write to index ", index, " but it is negative");
    if (index >= static_cast<int64_t>(elems_.size())) {
      if (!o_.dynamic_size) {
        return Err("tried to write to index ", index,
                   " but array is not resizeable and size is: ", elems_.size());
      }
      if (index >= kMaxSize) return Err("index ", index, " would grow the array too far");
      elems_.resize(index + 1);
    }
    Element& e = elems_[index];
    if (e.written && o_.aggregate) return Accumulate(index, &e, value);
    if (e.written) {
      return Err("could not write to TensorArray index ", index,
                 " because it has already been written to");
    }
    if (!o_.element_shape.IsCompatibleWith(value.shape())) {
      return Err("could not write to TensorArray index ", index, " because the value shape is ",
                 value.shape().ToString(),
                 " which is incompatible with the TensorArray's inferred element shape: ",
                 o_.element_shape.ToPythonString());
    }
    if (o_.identical_element_shapes) o_.element_shape = PartialShape(value.shape());
    e.value = value.Retainable();
    e.written = true;
    return OkStatus();
  }

  // The element at `index` (zeros of the element shape when never written, if that is fully
  // known); clears it when the array clears after reads.
  Result<Tensor> Read(int64_t index) {
    std::lock_guard lock(mu_);
    if (index < 0 || index >= static_cast<int64_t>(elems_.size())) {
      return Err("tried to read from index ", index, " but array size is: ", elems_.size());
    }
    Element& e = elems_[index];
    if (e.cleared) {
      return Err("could not read index ", index,
                 " twice because it was cleared after a previous read (perhaps try setting "
                 "clear_after_read = false?)");
    }
    if (!e.written) {
      if (!o_.element_shape.IsFullyDefined()) {
        return Err("could not read from TensorArray index ", index,
                   ": it was never written and the element shape ",
                   o_.element_shape.ToPythonString(),
                   " is not fully defined, so it cannot be read as zeros");
      }
      return Tensor(o_.dtype, *o_.element_shape.ToShape());
    }
    Tensor value = e.value;
    if (o_.clear_after_read) {
      e.value = Tensor();
      e.cleared = true;
    }
    return value;
  }

  // The gradient array for `source` (made on first use, the same one after): this array's
  // size and dtype, `prefix` + its element shape, writes that add up.
  std::shared_ptr<TensorArray> Grad(const std::string& source, const Shape& prefix) {
    std::lock_guard lock(mu_);
    auto& g = grads_[source];
    if (!g) {
      Options o = o_;
      o.dynamic_size = false;
      o.clear_after_read = true;
      o.aggregate = true;
      o.name = o_.name + "@" + source;
      if (prefix.rank() > 0 && !o_.element_shape.unknown_rank()) {
        std::vector<int64_t> dims = prefix.ToVector();
        dims.insert(dims.end(), o_.element_shape.dims().begin(), o_.element_shape.dims().end());
        auto shape = PartialShape::FromDims(dims);
        o.element_shape = shape.ok() ? *shape : PartialShape::UnknownRank();
      } else if (prefix.rank() > 0) {
        o.element_shape = PartialShape::UnknownRank();
      }
      g = std::make_shared<TensorArray>(std::move(o), static_cast<int64_t>(elems_.size()));
    }
    return g;
  }

  // The element shape known so far (the attr's, or the first write's with
  // identical_element_shapes).
  PartialShape ElementShape() const {
    std::lock_guard lock(mu_);
    return o_.element_shape;
  }

 private:
  static constexpr int64_t kMaxSize = int64_t{1} << 24;
  struct Element {
    Tensor value;
    bool written = false;
    bool cleared = false;
  };
  // e.value += value (mu_ held).
  Status Accumulate(int64_t index, Element* e, const Tensor& value) {
    if (e->value.shape() != value.shape()) {
      return Err("could not aggregate to TensorArray index ", index,
                 " because the existing shape is ", e->value.shape().ToString(),
                 " but the new input shape is ", value.shape().ToString());
    }
    Tensor sum(o_.dtype, value.shape());
    KILN_RETURN_IF_ERROR(Dispatch<NumberTypes>(o_.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const C* a = ComputeData<T>(e->value);
      const C* b = ComputeData<T>(value);
      C* out = MutableComputeData<T>(&sum);
      for (int64_t i = 0; i < sum.NumElements(); ++i) out[i] = static_cast<C>(a[i] + b[i]);
      return OkStatus();
    }));
    e->value = std::move(sum);
    return OkStatus();
  }

  template <typename... Args>
  Status Err(Args&&... args) const {
    return InvalidArgument("TensorArray ", o_.name, ": ", std::forward<Args>(args)...);
  }

  Options o_;
  mutable std::mutex mu_;
  std::vector<Element> elems_;
  std::map<std::string, std::shared_ptr<TensorArray>> grads_;
};

Result<TensorArray*> ArrayOf(const KernelContext& ctx, const Tensor& handle, DType want) {
  if (handle.dtype() != DType::kResource || handle.NumElements() != 1) {
    return ctx.Error("input 'handle': expected a resource handle scalar, got ",
                     handle.DebugString());
  }
  ResourceBase* r = handle.scalar<Handle>().get();
  if (r == nullptr || r->TypeTag() != &TensorArray::kTypeTag) {
    return ctx.Error("input 'handle' is not a TensorArray (",
                     r == nullptr ? std::string("null") : r->DebugString(), ")");
  }
  auto* ta = static_cast<TensorArray*>(r);
  if (want != DType::kInvalid && ta->dtype() != want) {
    return ctx.Error("TensorArray dtype is ", DTypeShortName(ta->dtype()), " but op uses dtype ",
                     DTypeShortName(want));
  }
  return ta;
}

Result<int64_t> ScalarIndex(const KernelContext& ctx, int i, std::string_view name) {
  const Tensor& t = ctx.input(i);
  if (t.NumElements() != 1) {
    return ctx.Error("input '", name, "' must be a scalar, got shape ", t.shape().ToString());
  }
  return t.data<int32_t>()[0];
}

// flow_out: the flow value passed on (it carries no data, only ordering).
Status PassFlow(const KernelContext& ctx, int flow_input) {
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
  out->scalar<float>() =
      ctx.input(flow_input).NumElements() == 1 ? ctx.input(flow_input).data<float>()[0] : 0.0f;
  return OkStatus();
}

// ---- TensorArrayV3 ---------------------------------------------------------------------------

Status ComputeTensorArray(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(int64_t size, ScalarIndex(ctx, 0, "size"));
  if (size < 0) return ctx.Error("size should be >= 0, got ", size);
  if (size > (int64_t{1} << 24)) return ctx.Error("size ", size, " is too large");
  KILN_ASSIGN_OR_RETURN(Tensor * handle, ctx.AllocateOutput(0, Shape()));
  handle->scalar<Handle>() = std::make_shared<TensorArray>(ctx.state<OptionsState>().value, size);
  KILN_ASSIGN_OR_RETURN(Tensor * flow, ctx.AllocateOutput(1, Shape()));
  flow->scalar<float>() = 0.0f;
  return OkStatus();
}

// ---- TensorArrayWriteV3, TensorArrayScatterV3 ------------------------------------------------

Status ComputeWrite(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(TensorArray * ta,
                        ArrayOf(ctx, ctx.input(0), ctx.state<DTypeState>().value));
  KILN_ASSIGN_OR_RETURN(int64_t index, ScalarIndex(ctx, 1, "index"));
  Status s = ta->Write(index, ctx.input(2));
  if (!s.ok()) return Wrap(ctx, s);
  return PassFlow(ctx, 3);
}

Status ComputeScatter(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(TensorArray * ta,
                        ArrayOf(ctx, ctx.input(0), ctx.state<DTypeState>().value));
  const Tensor& indices = ctx.input(1);
  const Tensor& value = ctx.input(2);
  if (indices.rank() != 1) {
    return ctx.Error("input 'indices' must be a vector, got shape ", indices.shape().ToString());
  }
  if (value.rank() == 0 || value.dim(0) != indices.NumElements()) {
    return ctx.Error("expected value of shape [", indices.NumElements(),
                     ", ...] (one row per index), got ", value.shape().ToString());
  }
  Shape row_shape;
  for (int d = 1; d < value.rank(); ++d) row_shape.AddDim(value.dim(d));
  const int64_t per = row_shape.num_elements();
  for (int64_t j = 0; j < indices.NumElements(); ++j) {
    Tensor row(value.dtype(), row_shape);
    KILN_RETURN_IF_ERROR(DispatchStorage(value.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      std::copy(Elems<U>(value) + j * per, Elems<U>(value) + (j + 1) * per, Elems<U>(row));
      return OkStatus();
    }));
    Status s = ta->Write(indices.data<int32_t>()[j], row);
    if (!s.ok()) return Wrap(ctx, s);
  }
  return PassFlow(ctx, 3);
}

// ---- TensorArrayReadV3, TensorArrayGatherV3 --------------------------------------------------

Status ComputeRead(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(TensorArray * ta, ArrayOf(ctx, ctx.input(0), ctx.state<ReadState>().dtype));
  KILN_ASSIGN_OR_RETURN(int64_t index, ScalarIndex(ctx, 1, "index"));
  auto value = ta->Read(index);
  if (!value.ok()) return Wrap(ctx, value.status());
  ctx.SetOutput(0, std::move(*value));
  return OkStatus();
}

Status ComputeGather(const KernelContext& ctx) {
  const auto& st = ctx.state<ReadState>();
  KILN_ASSIGN_OR_RETURN(TensorArray * ta, ArrayOf(ctx, ctx.input(0), st.dtype));
  const Tensor& indices = ctx.input(1);
  if (indices.rank() != 1) {
    return ctx.Error("input 'indices' must be a vector, got shape ", indices.shape().ToString());
  }
  const int64_t n = indices.NumElements();
  std::vector<Tensor> items;
  items.reserve(n);
  for (int64_t j = 0; j < n; ++j) {
    auto item = ta->Read(indices.data<int32_t>()[j]);
    if (!item.ok()) return Wrap(ctx, item.status());
    if (!items.empty() && item->shape() != items[0].shape()) {
      return ctx.Error("TensorArray has inconsistent shapes: index ", indices.data<int32_t>()[0],
                       " has shape ", items[0].shape().ToString(), " but index ",
                       indices.data<int32_t>()[j], " has shape ", item->shape().ToString());
    }
    items.push_back(std::move(*item));
  }
  Shape elem;
  if (n > 0) {
    elem = items[0].shape();
  } else {
    auto merged = ta->ElementShape().MergeWith(st.element_shape);
    if (!merged.ok() || !merged->IsFullyDefined()) {
      return ctx.Error("TensorArray has size zero, but the element shape ",
                       (merged.ok() ? *merged : st.element_shape).ToPythonString(),
                       " is not fully defined; currently only static shapes are supported when "
                       "gathering nothing");
    }
    elem = *merged->ToShape();
  }
  if (elem.rank() + 1 > kMaxRank) return ctx.Error("gathered rank exceeds ", kMaxRank);
  Shape shape;
  shape.AddDim(n);
  for (int64_t d : elem.dims()) shape.AddDim(d);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  const int64_t per = elem.num_elements();
  return DispatchStorage(st.dtype, [&](auto tag) {
    using U = typename decltype(tag)::type;
    U* dst = Elems<U>(*out);
    for (const Tensor& t : items) dst = std::copy(Elems<U>(t), Elems<U>(t) + per, dst);
    return OkStatus();
  });
}

// ---- TensorArrayConcatV3, TensorArraySplitV3 --------------------------------------------------

// Every element, concatenated along its first dim; lengths holds each one's first dim.
Status ComputeConcat(const KernelContext& ctx) {
  const auto& st = ctx.state<ConcatState>();
  KILN_ASSIGN_OR_RETURN(TensorArray * ta, ArrayOf(ctx, ctx.input(0), st.dtype));
  const int64_t n = ta->Size();
  std::vector<Tensor> items;
  items.reserve(n);
  PartialShape except0 = st.except0;
  for (int64_t i = 0; i < n; ++i) {
    auto item = ta->Read(i);
    if (!item.ok()) return Wrap(ctx, item.status());
    if (item->rank() == 0) {
      return ctx.Error("concat saw a scalar at index ", i, ": elements must be at least vectors");
    }
    auto m = except0.MergeWith(PartialShape(*Shape::FromDims(item->shape().dims().subspan(1))));
    if (!m.ok()) {
      return ctx.Error("TensorArray has inconsistent shapes: index ", i, " has shape ",
                       item->shape().ToString(), ", the others [?] + ", except0.ToPythonString());
    }
    except0 = *m;
    items.push_back(std::move(*item));
  }
  if (!except0.IsFullyDefined()) {
    return ctx.Error("TensorArray has size zero, but element_shape_except0 ",
                     except0.ToPythonString(), " is not fully defined");
  }
  KILN_ASSIGN_OR_RETURN(Tensor * lengths, ctx.AllocateOutput(1, Shape{n}));
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    lengths->data<int64_t>()[i] = items[i].dim(0);
    total += items[i].dim(0);
  }
  Shape shape{total};
  for (int64_t d : except0.dims()) shape.AddDim(d);
  if (shape.rank() > kMaxRank) return ctx.Error("concatenated rank exceeds ", kMaxRank);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  int64_t at = 0;
  for (const Tensor& t : items) {
    CopyElementRange(t, 0, out, at, t.NumElements());
    at += t.NumElements();
  }
  return OkStatus();
}

// value's first dim cut by lengths; piece i written at index i.
Status ComputeSplit(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(TensorArray * ta,
                        ArrayOf(ctx, ctx.input(0), ctx.state<DTypeState>().value));
  const Tensor& value = ctx.input(1);
  const Tensor& lengths = ctx.input(2);
  if (value.rank() == 0) return ctx.Error("input 'value' must be at least a vector");
  const int64_t* len = lengths.data<int64_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < lengths.NumElements(); ++i) {
    if (len[i] < 0) return ctx.Error("lengths[", i, "] = ", len[i], " is negative");
    total += len[i];
  }
  if (total != value.dim(0)) {
    return ctx.Error(
        "expected sum of lengths to be equal to values.shape[0], but sum of lengths "
        "is ",
        total, " and value's shape is: ", value.shape().ToString());
  }
  const int64_t per_row = value.dim(0) == 0 ? 0 : value.NumElements() / value.dim(0);
  int64_t at = 0;
  for (int64_t i = 0; i < lengths.NumElements(); ++i) {
    Shape piece = value.shape();
    piece.set_dim(0, len[i]);
    Tensor item(value.dtype(), piece);
    CopyElementRange(value, at, &item, 0, len[i] * per_row);
    at += len[i] * per_row;
    Status s = ta->Write(i, item);
    if (!s.ok()) return Wrap(ctx, s);
  }
  return PassFlow(ctx, 3);
}

// ---- TensorArrayGradV3, TensorArrayGradWithShape ------------------------------------------------

// The gradient array of `source` for this array: made on first use, the same one after.
Status ComputeGrad(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(TensorArray * ta, ArrayOf(ctx, ctx.input(0), DType::kInvalid));
  Shape prefix;
  if (ctx.num_inputs() > 2) {
    KILN_ASSIGN_OR_RETURN(prefix, Shape::FromDims(IndexValues(ctx.input(2))));
  }
  KILN_ASSIGN_OR_RETURN(Tensor * handle, ctx.AllocateOutput(0, Shape()));
  handle->scalar<Handle>() = ta->Grad(ctx.state<TypedOpState<std::string>>().value, prefix);
  KILN_ASSIGN_OR_RETURN(Tensor * flow, ctx.AllocateOutput(1, Shape()));
  flow->scalar<float>() = ctx.input(1).NumElements() == 1 ? ctx.input(1).data<float>()[0] : 0.0f;
  return OkStatus();
}

// ---- TensorArraySizeV3, TensorArrayCloseV3 ---------------------------------------------------

Status ComputeSize(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(TensorArray * ta, ArrayOf(ctx, ctx.input(0), DType::kInvalid));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
  out->scalar<int32_t>() = static_cast<int32_t>(ta->Size());
  return OkStatus();
}

// The array lives as long as a handle to it: closing frees nothing early.
Status ComputeClose(const KernelContext& ctx) {
  return ArrayOf(ctx, ctx.input(0), DType::kInvalid).status();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"TensorArrayV3", ComputeTensorArray},     {"TensorArrayWriteV3", ComputeWrite},
    {"TensorArrayScatterV3", ComputeScatter},  {"TensorArrayReadV3", ComputeRead},
    {"TensorArrayGatherV3", ComputeGather},    {"TensorArraySizeV3", ComputeSize},
    {"TensorArrayCloseV3", ComputeClose},      {"TensorArrayConcatV3", ComputeConcat},
    {"TensorArraySplitV3", ComputeSplit},      {"TensorArrayGradV3", ComputeGrad},
    {"TensorArrayGradWithShape", ComputeGrad},
};

}  // namespace

std::span<const KernelEntry> TensorArrayCpuKernels() { return kCpu; }

}  // namespace kiln::exec
