// The CPU kernels of the quantized arithmetic ops in kernels/quantized_ops.cc, as TF's reference
// CPU kernels compute them (TF_ENABLE_ONEDNN_OPTS=0). Each uses the conversion TF's kernel uses
// (the scalar or the "Eigen" one, quantized_util.h), a qint32 read through float, and denormals
// flushed, so the integers are TF's (checked against TF in tests/tf/test_quantized_ops_tf.py).
#include "kernels/quantized_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/quantized_util.h"

namespace kiln::exec {
namespace {

using quantized::ConcatState;
using quantized::QType;

// ---- QuantizedRelu, QuantizedRelu6 ---------------------------------------------------------

template <bool kSix>
Status ComputeQuantizedRelu(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(ExpectScalarInput(ctx, 1, "min_input"));
  KILN_RETURN_IF_ERROR(ExpectScalarInput(ctx, 2, "max_input"));
  const float mn = ScalarFloat(ctx.input(1)), mx = ScalarFloat(ctx.input(2));
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  KILN_RETURN_IF_ERROR(Dispatch<QType>(x.dtype(), [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    const auto lo = FloatToQuantized<Q>(0.0f, mn, mx).value;
    const auto hi = kSix ? FloatToQuantized<Q>(6.0f, mn, mx).value : QuantTraits<Q>::kHighest;
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      auto v = std::max(x.data<Q>()[i].value, lo);
      if (kSix) v = std::min<decltype(v)>(v, static_cast<decltype(v)>(hi));
      out->data<Q>()[i].value = v;
    }
    return OkStatus();
  }));
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = mn;
  b->data<float>()[0] = mx;
  return OkStatus();
}

// ---- QuantizedBiasAdd, QuantizedAdd, QuantizedMul ------------------------------------------

template <typename Q>
void BiasAddTyped(const Tensor& x, const Tensor& b, float min_x, float max_x, float min_b,
                  float max_b, float out_min, float out_max, Tensor* out) {
  const EigenDequantizer<Q> dx(min_x, max_x), db(min_b, max_b);
  const EigenQuantizer<QInt32> q(out_min, out_max);
  const int32_t zero = FloatToQuantized<QInt32>(0.0f, out_min, out_max).value;
  const int64_t depth = b.NumElements();
  std::vector<int32_t> bias(static_cast<size_t>(depth));
  for (int64_t c = 0; c < depth; ++c)
    bias[c] = static_cast<int32_t>(static_cast<uint32_t>(q(db(b.data<Q>()[c])).value) +
                                   static_cast<uint32_t>(zero));
  for (int64_t i = 0; i < x.NumElements(); ++i)
    out->data<QInt32>()[i].value =
        static_cast<int32_t>(static_cast<uint32_t>(q(dx(x.data<Q>()[i])).value) +
                             static_cast<uint32_t>(bias[i % depth]));
}

Status ComputeQuantizedBiasAdd(const KernelContext& ctx) {
  static constexpr std::string_view kNames[] = {"min_input", "max_input", "min_bias", "max_bias"};
  for (int i = 2; i < 6; ++i) KILN_RETURN_IF_ERROR(ExpectScalarInput(ctx, i, kNames[i - 2]));
  const Tensor& x = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (x.rank() < 2) return ctx.Error("Input tensor must be at least 2D: ", x.shape().ToString());
  if (b.rank() != 1) return ctx.Error("Biases must be 1D: ", b.shape().ToString());
  if (b.dim(0) != x.dim(x.rank() - 1))
    return ctx.Error("Must provide as many biases as the last dimension of the input tensor: ",
                     b.shape().ToString(), " vs. ", x.shape().ToString());
  if (b.dim(0) == 0) return ctx.Error("Must provide at least 1 bias");
  const float min_x = ScalarFloat(ctx.input(2)), max_x = ScalarFloat(ctx.input(3));
  const float min_b = ScalarFloat(ctx.input(4)), max_b = ScalarFloat(ctx.input(5));
  const float range = std::max(max_x, std::max(-min_x, std::max(max_b, -min_b))) * 131072.0f;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  if (x.dtype() == DType::kQUInt8) {
    BiasAddTyped<QUInt8>(x, b, min_x, max_x, min_b, max_b, -range, range, out);
  } else {
    BiasAddTyped<QInt8>(x, b, min_x, max_x, min_b, max_b, -range, range, out);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * m, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = -range;
  m->data<float>()[0] = range;
  return OkStatus();
}

// The shapes QuantizedAdd and QuantizedMul take: TF's BCast reshaped to at most two dims, and
// its vector-by-tensor loop (which repeats the smaller operand along the flat index).
Status BroadcastForm(const KernelContext& ctx, const Shape& xs, const Shape& ys, Shape* out,
                     int* ndims) {
  auto b = BroadcastShapes(xs, ys);
  if (!b.ok()) return ctx.Error("Incompatible shapes: ", xs.ToString(), " vs. ", ys.ToString());
  *out = *b;
  // BCast's reshape: drop dims of size 1 in both, merge runs with the same broadcast pattern.
  const int rank = out->rank();
  int groups = 0, last = -1;
  for (int d = 0; d < rank; ++d) {
    const int64_t xd = d - (rank - xs.rank()) >= 0 ? xs.dim(d - (rank - xs.rank())) : 1;
    const int64_t yd = d - (rank - ys.rank()) >= 0 ? ys.dim(d - (rank - ys.rank())) : 1;
    if (xd == 1 && yd == 1) continue;
    const int pattern = (xd == 1 ? 1 : 0) | (yd == 1 ? 2 : 0);
    if (pattern != last) ++groups;
    last = pattern;
  }
  *ndims = groups;
  return OkStatus();
}

// One operand of QuantizedAdd as qint32 in [-range, range]: TF's 8-to-32 linear shortcut.
struct Linear8To32 {
  int64_t c0, mult;
  Linear8To32(float mn, float mx, float range) {
    c0 = FloatToQuantizedUnclamped<QInt32>(QuantizedToFloat(QUInt8{0}, mn, mx), -range, range);
    const int64_t c1 =
        FloatToQuantizedUnclamped<QInt32>(QuantizedToFloat(QUInt8{1}, mn, mx), -range, range);
    mult = static_cast<int32_t>(c1 - c0);
  }
  int32_t operator()(uint8_t v) const {
    return static_cast<int32_t>(std::clamp<int64_t>(c0 + int64_t{v} * mult,
                                                    std::numeric_limits<int32_t>::min(),
                                                    std::numeric_limits<int32_t>::max()));
  }
};

template <bool kMul>
Status ComputeQuantizedAddMul(const KernelContext& ctx) {
  static constexpr std::string_view kNames[] = {"min_x", "max_x", "min_y", "max_y"};
  for (int i = 2; i < 6; ++i) KILN_RETURN_IF_ERROR(ExpectScalarInput(ctx, i, kNames[i - 2]));
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  Shape out_shape;
  int ndims = 0;
  KILN_RETURN_IF_ERROR(BroadcastForm(ctx, x.shape(), y.shape(), &out_shape, &ndims));
  const float min_x = ScalarFloat(ctx.input(2)), max_x = ScalarFloat(ctx.input(3));
  const float min_y = ScalarFloat(ctx.input(4)), max_y = ScalarFloat(ctx.input(5));
  if (!(max_x > min_x)) return ctx.Error("max_x must be larger than min_x.");
  if (!(max_y > min_y)) return ctx.Error("max_y must be larger than min_y.");
  if (ndims > 2)
    return Unimplemented("node '", ctx.node_name(), "': Broadcast between ", x.shape().ToString(),
                         " and ", y.shape().ToString(), " is not supported yet.");
  float min_z, max_z;
  const auto* xv = reinterpret_cast<const uint8_t*>(x.raw_data());
  const auto* yv = reinterpret_cast<const uint8_t*>(y.raw_data());
  const int64_t n = out_shape.num_elements();
  std::vector<int32_t> z(static_cast<size_t>(n));
  if constexpr (kMul) {
    QuantizationRangeForMultiplication<QUInt8, QUInt8, QInt32>(min_x, max_x, min_y, max_y, &min_z,
                                                               &max_z);
    const auto ox = static_cast<int32_t>(FloatToQuantizedUnclamped<QUInt8>(0, min_x, max_x));
    const auto oy = static_cast<int32_t>(FloatToQuantizedUnclamped<QUInt8>(0, min_y, max_y));
    auto fx = [&](int64_t i) { return int32_t{xv[i]} - ox; };
    auto fy = [&](int64_t i) { return int32_t{yv[i]} - oy; };
    auto combine = [](int32_t a, int32_t b) {
      return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
    };
    if (ndims <= 1 && x.NumElements() == 1) {
      for (int64_t i = 0; i < n; ++i) z[i] = combine(fx(0), fy(i));
    } else if (ndims <= 1 && y.NumElements() == 1) {
      for (int64_t i = 0; i < n; ++i) z[i] = combine(fx(i), fy(0));
    } else if (ndims <= 1) {
      for (int64_t i = 0; i < n; ++i) z[i] = combine(fx(i), fy(i));
    } else {
      const bool x_vec = x.NumElements() < y.NumElements();
      const int64_t len = x_vec ? x.NumElements() : y.NumElements();
      if (len == 0) return ctx.Error("vector must have at least 1 element");
      for (int64_t i = 0; i < n; ++i)
        z[i] = x_vec ? combine(fx(i % len), fy(i)) : combine(fx(i), fy(i % len));
    }
  } else {
    const float range =
        std::max(std::abs(std::min(min_x, min_y)), std::abs(std::max(max_x, max_y))) * 16384.0f;
    min_z = -range;
    max_z = range;
    const Linear8To32 lx(min_x, max_x, range), ly(min_y, max_y, range);
    auto add = [](int32_t a, int32_t b) {
      return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
    };
    if (ndims <= 1 && x.NumElements() == 1) {
      const int32_t s =
          RequantizeInNewRange<QUInt8, QInt32>(QUInt8{xv[0]}, min_x, max_x, -range, range).value;
      for (int64_t i = 0; i < n; ++i) z[i] = add(ly(yv[i]), s);
    } else if (ndims <= 1 && y.NumElements() == 1) {
      const int32_t s =
          RequantizeInNewRange<QUInt8, QInt32>(QUInt8{yv[0]}, min_y, max_y, -range, range).value;
      for (int64_t i = 0; i < n; ++i) z[i] = add(lx(xv[i]), s);
    } else if (ndims <= 1) {
      for (int64_t i = 0; i < n; ++i) z[i] = add(lx(xv[i]), ly(yv[i]));
    } else {
      const bool x_vec = x.NumElements() < y.NumElements();
      const int64_t len = x_vec ? x.NumElements() : y.NumElements();
      if (len == 0) return ctx.Error("Must have some elements to add");
      for (int64_t i = 0; i < n; ++i)
        z[i] = x_vec ? add(lx(xv[i % len]), ly(yv[i])) : add(lx(xv[i]), ly(yv[i % len]));
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  for (int64_t i = 0; i < n; ++i) out->data<QInt32>()[i].value = z[i];
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = min_z;
  b->data<float>()[0] = max_z;
  return OkStatus();
}

// ---- QuantizedConcat, QuantizedConcatV2 ----------------------------------------------------

template <typename Q>
void CopyRequantized(const Q* in, int64_t n, float mn, float mx, float out_min, float out_max,
                     Q* out) {
  if (mn == out_min && mx == out_max) {
    std::copy_n(in, n, out);
    return;
  }
  const EigenDequantizer<Q> dq(mn, mx);
  const EigenQuantizer<Q> q(out_min, out_max);
  for (int64_t i = 0; i < n; ++i) out[i] = q(dq(in[i]));
}

Status ComputeQuantizedConcat(const KernelContext& ctx) {
  const auto& st = ctx.state<ConcatState>();
  const int first = st.v2 ? 0 : 1;
  const Tensor& axis_t = ctx.input(st.v2 ? st.n : 0);
  if (axis_t.NumElements() != 1)
    return ctx.Error("Concat dim tensor should be a scalar integer, but got shape ",
                     axis_t.shape().ToString());
  int64_t axis = IndexValues(axis_t)[0];
  const Tensor& x0 = ctx.input(first);
  const int rank = x0.rank();
  if (st.v2 && axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    return ctx.Error("ConcatOp : Expected concatenating dimensions in the range [0, ", rank,
                     "), but got ", axis);
  float overall_min = std::numeric_limits<float>::max();
  float overall_max = std::numeric_limits<float>::lowest();
  for (int i = 0; i < st.n; ++i) {
    for (int r : {st.n + 1 + i, 2 * st.n + 1 + i})
      if (ctx.input(r).NumElements() != 1)
        return ctx.Error(r <= 2 * st.n ? "input_mins" : "input_maxes",
                         " each tensor's num elements must be 1, given num elements ",
                         ctx.input(r).NumElements(), " in index ", i);
    overall_min = std::min(overall_min, ScalarFloat(ctx.input(st.n + 1 + i)));
    overall_max = std::max(overall_max, ScalarFloat(ctx.input(2 * st.n + 1 + i)));
  }
  overall_min = std::min(0.0f, overall_min);
  float out_min = overall_min, out_max = overall_max;
  if (IsSigned(st.type)) {
    const float largest = std::max(std::abs(overall_min), std::abs(overall_max));
    out_min = -largest;
    out_max = largest;
  }
  std::vector<int64_t> dims(x0.shape().dims().begin(), x0.shape().dims().end());
  int64_t total = 0;
  for (int i = 0; i < st.n; ++i) {
    const Tensor& xi = ctx.input(first + i);
    if (xi.rank() != rank)
      return ctx.Error("ConcatOp : Ranks of all input tensors should match: shape[0] = ",
                       x0.shape().ToString(), " vs. shape[", i, "] = ", xi.shape().ToString());
    for (int d = 0; d < rank; ++d)
      if (d != axis && xi.dim(d) != x0.dim(d))
        return ctx.Error("ConcatOp : Dimensions of inputs should match: shape[0] = ",
                         x0.shape().ToString(), " vs. shape[", i, "] = ", xi.shape().ToString());
    total += xi.dim(static_cast<int>(axis));
  }
  dims[axis] = total;
  KILN_ASSIGN_OR_RETURN(Shape out_shape, Shape::FromDims(dims));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= out_shape.dim(d);
  for (int d = static_cast<int>(axis) + 1; d < rank; ++d) inner *= out_shape.dim(d);
  KILN_RETURN_IF_ERROR(Dispatch<QType>(st.type, [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    int64_t offset = 0;
    for (int i = 0; i < st.n; ++i) {
      const Tensor& xi = ctx.input(first + i);
      std::vector<Q> requantized(static_cast<size_t>(xi.NumElements()));
      CopyRequantized(xi.data<Q>(), xi.NumElements(), ScalarFloat(ctx.input(st.n + 1 + i)),
                      ScalarFloat(ctx.input(2 * st.n + 1 + i)), out_min, out_max,
                      requantized.data());
      const int64_t chunk = xi.dim(static_cast<int>(axis)) * inner;
      for (int64_t o = 0; o < outer; ++o)
        std::copy_n(requantized.data() + o * chunk, chunk,
                    out->data<Q>() + o * total * inner + offset);
      offset += chunk;
    }
    return OkStatus();
  }));
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = out_min;
  b->data<float>()[0] = out_max;
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"QuantizedRelu", ComputeQuantizedRelu<false>}, {"QuantizedRelu6", ComputeQuantizedRelu<true>},
    {"QuantizedBiasAdd", ComputeQuantizedBiasAdd},  {"QuantizedAdd", ComputeQuantizedAddMul<false>},
    {"QuantizedMul", ComputeQuantizedAddMul<true>}, {"QuantizedConcat", ComputeQuantizedConcat},
    {"QuantizedConcatV2", ComputeQuantizedConcat},
};

}  // namespace

std::span<const KernelEntry> QuantizedCpuKernels() { return kCpu; }

}  // namespace kiln::exec
