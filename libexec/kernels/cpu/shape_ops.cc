// The CPU kernels of the ops in kernels/shape_ops.cc. Reshape, ExpandDims and Squeeze return
// views of their input (no copy).
#include "kernels/shape_ops.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

using shape::BitcastDims;
using shape::DataFormatState;
using shape::ExpandAxis;
using shape::ReshapeDims;
using shape::SqueezeMask;
using shape::WriteIndexValues;

// ---- Shape, Size, Rank -----------------------------------------------------------------------

Status ComputeShape(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{x.rank()}));
  Status s = WriteIndexValues(x.shape().ToVector(), out);
  return s.ok() ? s : Wrap(ctx, s);
}

Status ComputeSize(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
  Status s = WriteIndexValues({ctx.input(0).NumElements()}, out);
  return s.ok() ? s : Wrap(ctx, s);
}

Status ComputeRank(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
  out->scalar<int32_t>() = ctx.input(0).rank();
  return OkStatus();
}

Status ComputeShapeN(const KernelContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& x = ctx.input(i);
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(i, Shape{x.rank()}));
    Status s = WriteIndexValues(x.shape().ToVector(), out);
    if (!s.ok()) return Wrap(ctx, s);
  }
  return OkStatus();
}

// ---- Reshape -----------------------------------------------------------------------------------

Status ComputeReshape(const KernelContext& ctx);

Status ComputeQuantizedReshape(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(ComputeReshape(ctx));
  for (int i : {2, 3}) {
    const Tensor& bound = ctx.input(i);
    if (bound.NumElements() != 1)
      return ctx.Error(i == 2 ? "input_min" : "input_max",
                       " must be a scalar or a vector of 1 element, got shape ",
                       bound.shape().ToString());
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(i - 1, Shape{}));
    out->data<float>()[0] = bound.data<float>()[0];
  }
  return OkStatus();
}

Status ComputeReshape(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& shape = ctx.input(1);
  if (shape.rank() != 1) {
    return ctx.Error("input 'shape' must be a vector, got shape ", shape.shape().ToString());
  }
  auto dims = ReshapeDims(IndexValues(shape), &x.shape());
  if (!dims.ok()) return Wrap(ctx, dims.status());
  auto s = Shape::FromDims(*dims);
  if (!s.ok()) return Wrap(ctx, s.status());
  ctx.SetOutput(0, x.Reshaped(*s));  // shares the buffer
  return OkStatus();
}

// ---- ExpandDims ------------------------------------------------------------------------------

Status ComputeExpandDims(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() >= kMaxRank) return ctx.Error("input already has rank ", x.rank());
  auto axis = ExpandAxis(ctx.input(1), x.rank());
  if (!axis.ok()) return Wrap(ctx, axis.status());
  std::vector<int64_t> dims = x.shape().ToVector();
  dims.insert(dims.begin() + *axis, 1);
  ctx.SetOutput(0, x.Reshaped(*Shape::FromDims(dims)));
  return OkStatus();
}

// ---- Squeeze ---------------------------------------------------------------------------------

Status ComputeSqueeze(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  bool unknown = false;
  auto drop = SqueezeMask(x.shape().dims(), ctx.state<TypedOpState<std::vector<int64_t>>>().value,
                          &unknown);
  if (!drop.ok()) return Wrap(ctx, drop.status());
  Shape out;
  for (int i = 0; i < x.rank(); ++i) {
    if (!(*drop)[i]) out.AddDim(x.dim(i));
  }
  ctx.SetOutput(0, x.Reshaped(out));
  return OkStatus();
}

// ---- Bitcast ---------------------------------------------------------------------------------

Status ComputeBitcast(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const DType to = ctx.state<TypedOpState<DType>>().value;
  auto dims = BitcastDims(x.shape().dims(), DTypeSize(x.dtype()), DTypeSize(to));
  if (!dims.ok()) return Wrap(ctx, dims.status());
  KILN_ASSIGN_OR_RETURN(Shape shape, Shape::FromDims(*dims));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  if (x.NumElements() > 0) {
    std::memcpy(out->raw_data(), x.raw_data(), x.NumElements() * DTypeSize(x.dtype()));
  }
  return OkStatus();
}

// ---- DataFormatDimMap, DataFormatVecPermute ----------------------------------------------------

template <typename I>
void WriteIndex(Tensor* t, int64_t i, int64_t v) {
  t->data<I>()[i] = static_cast<I>(v);
}

// y[i] = the position in dst_format of the letter at position x[i] (mod rank) of src_format.
Status ComputeDataFormatDimMap(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto& st = ctx.state<DataFormatState>();
  const int64_t n = static_cast<int64_t>(st.src.size());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const std::vector<int64_t> v = IndexValues(x);
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < -n || v[i] >= n) {
      return ctx.Error("x[", i, "] = ", v[i], " is out of range [", -n, ", ", n, ")");
    }
    const int64_t pos = static_cast<int64_t>(st.dst.find(st.src[(v[i] + n) % n]));
    if (x.dtype() == DType::kInt64) {
      WriteIndex<int64_t>(out, static_cast<int64_t>(i), pos);
    } else {
      WriteIndex<int32_t>(out, static_cast<int64_t>(i), pos);
    }
  }
  return OkStatus();
}

// x holds one entry (or row of 2) per dim in src_format's order, or per spatial dim only (the
// letters other than N and C); y holds them in dst_format's order.
Status ComputeDataFormatVecPermute(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto& st = ctx.state<DataFormatState>();
  const int64_t n = static_cast<int64_t>(st.src.size());
  const bool rows = x.rank() == 2;
  if (!(x.rank() == 1 || (rows && x.dim(1) == 2)) || (x.dim(0) != n && x.dim(0) != n - 2)) {
    return ctx.Error("input must be a vector of size ", n, " or ", n - 2, " or a [", n, ", 2] or [",
                     n - 2, ", 2] tensor, got shape ", x.shape().ToString());
  }
  std::string src = st.src, dst = st.dst;
  if (x.dim(0) == n - 2) {  // spatial dims only
    auto spatial = [](std::string s) {
      s.erase(std::remove_if(s.begin(), s.end(), [](char c) { return c == 'N' || c == 'C'; }),
              s.end());
      return s;
    };
    src = spatial(src);
    dst = spatial(dst);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const std::vector<int64_t> v = IndexValues(x);
  const int64_t width = rows ? 2 : 1;
  for (size_t i = 0; i < dst.size(); ++i) {
    const size_t from = src.find(dst[i]);
    for (int64_t w = 0; w < width; ++w) {
      const int64_t val = v[from * width + w];
      const int64_t at = static_cast<int64_t>(i) * width + w;
      if (x.dtype() == DType::kInt64) {
        WriteIndex<int64_t>(out, at, val);
      } else {
        WriteIndex<int32_t>(out, at, val);
      }
    }
  }
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"Shape", ComputeShape},
    {"ShapeN", ComputeShapeN},
    {"Size", ComputeSize},
    {"Rank", ComputeRank},
    {"Reshape", ComputeReshape},
    {"QuantizedReshape", ComputeQuantizedReshape},
    {"ExpandDims", ComputeExpandDims},
    {"Squeeze", ComputeSqueeze},
    {"Bitcast", ComputeBitcast},
    {"DataFormatDimMap", ComputeDataFormatDimMap},
    {"DataFormatVecPermute", ComputeDataFormatVecPermute},
};

}  // namespace

std::span<const KernelEntry> ShapeCpuKernels() { return kCpu; }

}  // namespace kiln::exec
