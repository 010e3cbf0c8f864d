// The CPU kernels of UniformQuantizedConvolution and its Hybrid form in
// kernels/uniform_quantized_conv_ops.cc: qint8 x qint8 -> qint32 requantized to the output's
// scales, or float lhs quantized per batch (asymmetric int8) x qint8 -> float, as TF's kernels
// compute them.
#include "kernels/uniform_quantized_conv_ops.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/uniform_quantized_util.h"

namespace kiln::exec {
namespace {

using uniform_quantized_conv::ConvDims;
using uniform_quantized_conv::ConvState;
using uniform_quantized_conv::ParseConvDims;

// ---- UniformQuantizedConvolution, UniformQuantizedConvolutionHybrid -----------------------

Status CheckDim(const KernelContext& ctx, int64_t rank, int64_t d) {
  if (d < 0 || d >= rank)
    return ctx.Error("Each dimension number must be in region [0, rank). Given rank ", rank,
                     " and dimension number value ", d);
  return OkStatus();
}

// The attrs checked against the operands and filled in (TF's
// ValidateOrFillParamsAndValidateShape): dimension numbers, strides, dilations, padding.
Status ConvGeometry(const KernelContext& ctx, const ConvState& st, const Shape& lhs,
                    const Shape& rhs, ConvDims* d, std::vector<int64_t>* strides,
                    std::vector<int64_t>* lhs_dil, std::vector<int64_t>* rhs_dil,
                    std::vector<int64_t>* pads, Shape* out) {
  if (lhs.rank() != rhs.rank())
    return ctx.Error("lhs and rhs must have same dims. Given lhs and rhs of shapes: ",
                     lhs.ToString(), rhs.ToString());
  const int rank = lhs.rank();
  if (rank <= 2) return ctx.Error("lhs and rhs shape dims must be at least 3. Given: ", rank);
  const auto spatial = static_cast<size_t>(rank - 2);
  for (auto [list, name] :
       {std::pair{strides, "window_strides"}, std::pair{lhs_dil, "lhs_dilation"},
        std::pair{rhs_dil, "rhs_dilation"}}) {
    if (list->empty()) list->assign(spatial, 1);
    if (list->size() != spatial) return ctx.Error("Size of ", name, " Attr must be dims - 2.");
    for (int64_t v : *list)
      if (v < 1) return ctx.Error("All elements of ", name, " must be >= 1.");
  }
  if (st.dimension_numbers.empty()) {
    *d = ConvDims{};
    for (size_t i = 0; i < spatial; ++i) {
      d->in_spatial.push_back(static_cast<int64_t>(2 + i));
      d->k_spatial.push_back(static_cast<int64_t>(2 + i));
      d->out_spatial.push_back(static_cast<int64_t>(2 + i));
    }
  } else {
    ParseConvDims(st.dimension_numbers, d);
    for (int64_t v : {d->in_batch, d->in_feature, d->k_in, d->k_out, d->out_batch, d->out_feature})
      KILN_RETURN_IF_ERROR(CheckDim(ctx, rank, v));
    for (const auto* list : {&d->in_spatial, &d->k_spatial, &d->out_spatial}) {
      if (list->size() != spatial)
        return ctx.Error("Spatial dimensions size must be rank - 2. Given rank ", rank,
                         " and spatial dimensions size ", list->size());
      for (int64_t v : *list) KILN_RETURN_IF_ERROR(CheckDim(ctx, rank, v));
    }
  }
  const int64_t lhs_features = lhs.dim(static_cast<int>(d->in_feature));
  const int64_t rhs_in = rhs.dim(static_cast<int>(d->k_in));
  const int64_t rhs_out = rhs.dim(static_cast<int>(d->k_out));
  const int64_t lhs_batch = lhs.dim(static_cast<int>(d->in_batch));
  if (st.feature_groups <= 0 || lhs_features % st.feature_groups != 0 ||
      lhs_features / st.feature_groups != rhs_in || rhs_out % st.feature_groups != 0)
    return ctx.Error("feature_group_count ", st.feature_groups, " does not fit lhs features ",
                     lhs_features, ", rhs input features ", rhs_in, " and output features ",
                     rhs_out);
  if (st.batch_groups <= 0 || lhs_batch % st.batch_groups != 0 || rhs_out % st.batch_groups != 0)
    return ctx.Error("batch_group_count ", st.batch_groups, " does not divide lhs batch ",
                     lhs_batch, " and rhs output features ", rhs_out);
  auto dilated = [](int64_t size, int64_t dil) {
    return size == 0 ? 0 : size + (dil - 1) * (size - 1);
  };
  pads->assign(2 * spatial, 0);
  if (st.padding == "EXPLICIT") {
    if (st.explicit_padding.size() != 2 * spatial)
      return ctx.Error("Size of explicit_padding Attr must be 2 * (rank - 2). Given rank ", rank,
                       " and explicit_padding of size ", st.explicit_padding.size());
    for (int64_t v : st.explicit_padding)
      if (v < 0) return ctx.Error("All explicit_padding elems must be >= 0");
    *pads = st.explicit_padding;
  }
  std::vector<int64_t> out_dims(static_cast<size_t>(rank));
  out_dims[d->out_batch] = lhs_batch / st.batch_groups;
  out_dims[d->out_feature] = rhs_out;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t l = dilated(lhs.dim(static_cast<int>(d->in_spatial[i])), (*lhs_dil)[i]);
    const int64_t r = dilated(rhs.dim(static_cast<int>(d->k_spatial[i])), (*rhs_dil)[i]);
    const int64_t stride = (*strides)[i];
    if (st.padding == "SAME") {
      const int64_t size = (l + stride - 1) / stride;
      const int64_t total = std::max<int64_t>((size - 1) * stride + r - l, 0);
      (*pads)[2 * i] = total / 2;
      (*pads)[2 * i + 1] = total - total / 2;
    }
    const int64_t numerator = l + (*pads)[2 * i] + (*pads)[2 * i + 1] - r + 1;
    out_dims[d->out_spatial[i]] = std::max<int64_t>((numerator + stride - 1) / stride, 0);
  }
  KILN_ASSIGN_OR_RETURN(*out, Shape::FromDims(out_dims));
  return OkStatus();
}

std::vector<int64_t> RowMajorStrides(const Shape& s) {
  std::vector<int64_t> st(static_cast<size_t>(s.rank()), 1);
  for (int d = s.rank() - 2; d >= 0; --d) st[d] = st[d + 1] * s.dim(d + 1);
  return st;
}

Status ComputeUniformConv(const KernelContext& ctx) {
  const auto& st = ctx.state<ConvState>();
  const Tensor& lhs = ctx.input(0);
  const Tensor& rhs = ctx.input(1);
  ConvDims d;
  std::vector<int64_t> strides = st.strides, lhs_dil = st.lhs_dilation, rhs_dil = st.rhs_dilation,
                       pads;
  Shape out_shape;
  KILN_RETURN_IF_ERROR(ConvGeometry(ctx, st, lhs.shape(), rhs.shape(), &d, &strides, &lhs_dil,
                                    &rhs_dil, &pads, &out_shape));
  const int rhs_first = st.hybrid ? 2 : 4;
  const int rhs_axis = ctx.input(rhs_first).rank() == 1 ? static_cast<int>(d.k_out) : -1;
  if (st.rhs.axis != -1 && st.rhs.axis != d.k_out)
    return ctx.Error("rhs_quantization_axis Attr must be -1 (per-tensor) or ",
                     "dimension_numbers.kernel_output_feature_dimension (per-channel).");
  KILN_RETURN_IF_ERROR(
      CheckScales(ctx, rhs.shape(), ctx.input(rhs_first), ctx.input(rhs_first + 1), rhs_axis));
  KILN_RETURN_IF_ERROR(CheckPositive(ctx, ctx.input(rhs_first), "rhs"));
  const int64_t out_features = out_shape.dim(static_cast<int>(d.out_feature));
  const int64_t out_batch = out_shape.dim(static_cast<int>(d.out_batch));
  const int64_t rhs_in = rhs.dim(static_cast<int>(d.k_in));
  const int64_t per_feature_group = out_features / st.feature_groups;
  const int64_t per_batch_group = out_features / st.batch_groups;
  const size_t spatial = d.in_spatial.size();
  const std::vector<int64_t> ls = RowMajorStrides(lhs.shape()), rs = RowMajorStrides(rhs.shape()),
                             os = RowMajorStrides(out_shape);
  // Per lhs batch: the quantized lhs (hybrid: each batch quantized on its own) and its zero
  // point and scale.
  const int64_t lhs_batches = lhs.dim(static_cast<int>(d.in_batch));
  std::vector<int32_t> lq(static_cast<size_t>(lhs.NumElements()));
  std::vector<int32_t> lzp(static_cast<size_t>(lhs_batches));
  std::vector<float> lscale(static_cast<size_t>(lhs_batches), 1.0f);
  if (st.hybrid) {
    std::vector<float> row;
    std::vector<int32_t> q;
    for (int64_t b = 0; b < lhs_batches; ++b) {
      row.clear();
      std::vector<int64_t> where;
      for (int64_t i = 0; i < lhs.NumElements(); ++i)
        if ((i / ls[d.in_batch]) % lhs_batches == b) {
          row.push_back(lhs.data<float>()[i]);
          where.push_back(i);
        }
      QuantizeRow(row.data(), static_cast<int64_t>(row.size()), &q, &lscale[b], &lzp[b]);
      for (size_t k = 0; k < where.size(); ++k) lq[where[k]] = q[k];
    }
  } else {
    if (ctx.input(2).rank() != 0 || ctx.input(3).rank() != 0)
      return ctx.Error("lhs scales/zero_points must be all scalar tensors.");
    KILN_RETURN_IF_ERROR(CheckPositive(ctx, ctx.input(2), "lhs"));
    for (int64_t i = 0; i < lhs.NumElements(); ++i) lq[i] = int32_t{lhs.data<QInt8>()[i].value};
    std::fill(lzp.begin(), lzp.end(), ctx.input(3).data<int32_t>()[0]);
  }
  // The output's requantization (integer form only).
  std::vector<int32_t> fixed(static_cast<size_t>(out_features));
  std::vector<int> shift(static_cast<size_t>(out_features));
  std::vector<int32_t> out_zp(static_cast<size_t>(out_features));
  const float* rscale = ctx.input(rhs_first).data<float>();
  const int32_t* rzp = ctx.input(rhs_first + 1).data<int32_t>();
  if (!st.hybrid) {
    const int out_axis = ctx.input(6).rank() == 1 ? static_cast<int>(d.out_feature) : -1;
    if (rhs_axis == -1 && out_axis != -1)
      return ctx.Error("If rhs is per-tensor quantized, output must be also per-tensor quantized.");
    KILN_RETURN_IF_ERROR(CheckScales(ctx, out_shape, ctx.input(6), ctx.input(7), out_axis));
    KILN_RETURN_IF_ERROR(CheckPositive(ctx, ctx.input(6), "output"));
    for (int64_t o = 0; o < out_features; ++o) {
      const double m = static_cast<double>(ctx.input(2).data<float>()[0]) *
                       rscale[rhs_axis >= 0 ? o : 0] /
                       ctx.input(6).data<float>()[out_axis >= 0 ? o : 0];
      QuantizeMultiplier(m, &fixed[o], &shift[o]);
      out_zp[o] = ctx.input(7).data<int32_t>()[out_axis >= 0 ? o : 0];
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  std::vector<int64_t> coord(static_cast<size_t>(out_shape.rank()), 0);
  std::vector<int64_t> kpos(spatial, 0);
  for (int64_t flat = 0; flat < out_shape.num_elements(); ++flat) {
    int64_t rem = flat;
    for (int dd = 0; dd < out_shape.rank(); ++dd) {
      coord[dd] = rem / os[dd];
      rem %= os[dd];
    }
    const int64_t b = coord[d.out_batch], o = coord[d.out_feature];
    const int64_t lhs_b = (o / per_batch_group) * out_batch + b;
    const int64_t group = o / per_feature_group;
    const int64_t rz = rzp[rhs_axis >= 0 ? o : 0];
    int32_t acc = 0;
    std::fill(kpos.begin(), kpos.end(), 0);
    bool more = true;
    while (more) {
      // The lhs position under this kernel tap, in the dilated, padded lhs.
      int64_t lhs_off = lhs_b * ls[d.in_batch];
      int64_t rhs_off = o * rs[d.k_out];
      bool inside = true;
      for (size_t i = 0; i < spatial; ++i) {
        const int64_t p = coord[d.out_spatial[i]] * strides[i] + kpos[i] * rhs_dil[i] - pads[2 * i];
        const int64_t size = lhs.dim(static_cast<int>(d.in_spatial[i]));
        if (p < 0 || p % lhs_dil[i] != 0 || p / lhs_dil[i] >= size) {
          inside = false;
          break;
        }
        lhs_off += (p / lhs_dil[i]) * ls[d.in_spatial[i]];
        rhs_off += kpos[i] * rs[d.k_spatial[i]];
      }
      if (inside) {
        for (int64_t f = 0; f < rhs_in; ++f) {
          const int64_t lv = lq[lhs_off + (group * rhs_in + f) * ls[d.in_feature]] - lzp[lhs_b];
          const int64_t rv = int64_t{rhs.data<QInt8>()[rhs_off + f * rs[d.k_in]].value} - rz;
          acc = static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(lv * rv));
        }
      }
      more = false;
      for (size_t i = spatial; i-- > 0;) {
        if (++kpos[i] < rhs.dim(static_cast<int>(d.k_spatial[i]))) {
          more = true;
          break;
        }
        kpos[i] = 0;
      }
    }
    if (st.hybrid) {
      out->data<float>()[flat] =
          static_cast<float>(acc) * lscale[lhs_b] * rscale[rhs_axis >= 0 ? o : 0];
    } else {
      out->data<QInt32>()[flat] =
          Clamped<QInt32>(MultiplyByQuantizedMultiplier(acc, fixed[o], shift[o]) + out_zp[o],
                          st.out.qmin, st.out.qmax);
    }
  }
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"UniformQuantizedConvolution", ComputeUniformConv},
    {"UniformQuantizedConvolutionHybrid", ComputeUniformConv},
};

}  // namespace

std::span<const KernelEntry> UniformQuantizedConvCpuKernels() { return kCpu; }

}  // namespace kiln::exec
