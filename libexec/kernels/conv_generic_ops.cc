// Conv, TensorFlow's generic convolution op (tf.raw_ops.Conv; conv_ops_impl.h's ConvOp), and
// the image-transform convolutions FusedPadConv2D and FusedResizeAndPadConv2D
// (conv_ops_fused_image_transform.cc).
//
// Conv: `batch_dims` leading dims are flattened into one batch, the rest is a 2-D or 3-D
// channels-last convolution run by conv_nd_math.h's forward pass. TF's CPU kernel hands 2-D to
// its Conv2D launcher and 3-D to its Conv3D one, so the same refusals apply: groups other than 1
// (Unimplemented), CHANNELS_FIRST, and for 3-D dilations other than 1; 3-D EXPLICIT padding and a
// negative batch_dims abort TF's process, so they are refused here. When the flattened input or
// output is empty TF returns before restoring the batch dims: the output then keeps the
// flattened shape, and so it does here.
//
// FusedPadConv2D / FusedResizeAndPadConv2D: MirrorPad (REFLECT or SYMMETRIC) of the input, for
// the second after a bilinear resize (TF's legacy coordinates, resize_align_corners), then a
// Conv2D. TF's kernel is not quite that composition, and this follows its kernel:
//   - windows sit where its im2col puts them: ((out - 1) * stride + filter - padded) / 2 rows
//     and columns before the padded image for SAME (the same + 1 for VALID), truncated toward
//     zero, so a stride that does not fit evenly shifts the windows (Conv2D would start at 0);
//   - resized values are computed and kept in T (half rounds every step, as TF's does);
//   - its cache of resized rows (a ring of 8M elements' worth of rows, row r in slot
//     r mod rows) is not refilled for the second and later images of a batch, so those read
//     the first image's rows: with images of up to 8M elements TF returns the first image's
//     result for every image. The ring is kept here, with TF's row count and refill rule, so
//     every batch gives TF's values. Its limits (the im2col patch and the filter's rows of the
//     cache) are TF's errors too.
// The products run through conv_nd_math.h's Gemm (half and bfloat16 sum in float).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/conv_nd_math.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// ---- Conv ---------------------------------------------------------------------------------------

using ConvTypes = TypeList<float, double, Half, BFloat16, int32_t>;

struct ConvState : OpState {
  DType dtype = DType::kFloat;
  int spatial = 2;
  int64_t batch_dims = 1;
  WindowSpec window;
};

// The spatial entries of a strides or dilations list (channels last) into the window's slots.
Status ReadConvList(const PrepareContext& ctx, const std::vector<int64_t>& v, int spatial,
                    bool dilations, std::array<int64_t, 3>* out) {
  const char* what = dilations ? "dilation rates" : "strides";
  if (v.front() != 1 || v.back() != 1) {
    return ctx.Error("Current implementation does not support ", what,
                     " in the batch and depth dimensions.");
  }
  for (int i = 0; i < spatial; ++i) {
    const int64_t s = v[1 + i];
    if (s <= 0) {
      return ctx.Error(dilations ? "Dilated rates should be larger than 0."
                                 : "Spatial strides should be larger than 0.");
    }
    // TF's launchers take int: larger values would wrap there.
    if (s > kInt32Max)
      return ctx.Error("attr '", dilations ? "dilations" : "strides", "' ", DimsString(v),
                       ": entries must fit in int32");
    (*out)[3 - spatial + i] = s;
  }
  return OkStatus();
}

// padding and explicit_paddings, with TF's CheckValidPadding messages.
Status ReadConvPadding(const PrepareContext& ctx, int spatial, WindowSpec* w) {
  KILN_PREPARE_ASSIGN(ctx, std::string padding, ctx.attrs.GetString("padding"));
  KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> p, ctx.attrs.GetIntList("explicit_paddings", {}));
  if (padding == "SAME") {
    w->padding = WindowPadding::kSame;
  } else if (padding == "VALID") {
    w->padding = WindowPadding::kValid;
  } else if (padding == "EXPLICIT") {
    w->padding = WindowPadding::kExplicit;
  } else {
    return ctx.Error("attr 'padding': expected \"SAME\", \"VALID\" or \"EXPLICIT\", got \"",
                     padding, "\"");
  }
  const size_t rank = static_cast<size_t>(spatial) + 2;
  if (w->padding != WindowPadding::kExplicit) {
    if (!p.empty()) {
      return ctx.Error(
          "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT");
    }
    return OkStatus();
  }
  if (p.size() != 2 * rank) {
    return ctx.Error("explicit_paddings attribute must contain ", 2 * rank,
                     " values, but got: ", p.size());
  }
  for (int64_t v : p) {
    if (v < 0) return ctx.Error("All elements of explicit_paddings must be nonnegative");
    if (v > kInt32Max) return ctx.Error("filter too large");
  }
  if (p[0] != 0 || p[1] != 0 || p[2 * rank - 2] != 0 || p[2 * rank - 1] != 0) {
    return ctx.Error("Nonzero explicit padding in the batch or depth dimensions is not supported");
  }
  for (int i = 0; i < spatial; ++i) {
    w->pad_before[3 - spatial + i] = p[2 + 2 * i];
    w->pad_after[3 - spatial + i] = p[3 + 2 * i];
  }
  return OkStatus();
}

// The flattened input dims [batch, spatial..., channels] of input dims `in` (-1 unknown).
std::vector<int64_t> FlatInput(std::span<const int64_t> in, int64_t batch_dims) {
  int64_t batch = 1;
  for (int64_t i = 0; i < batch_dims; ++i) batch = in[i] < 0 || batch < 0 ? -1 : batch * in[i];
  std::vector<int64_t> flat = {batch};
  flat.insert(flat.end(), in.begin() + batch_dims, in.end());
  return flat;
}

// The output's shape: the flattened one, or with the batch dims restored (see the file comment).
std::vector<int64_t> ConvOutputDims(std::span<const int64_t> in, int64_t batch_dims,
                                    const std::vector<int64_t>& flat_out, bool flat) {
  if (flat) return flat_out;
  std::vector<int64_t> out(in.begin(), in.begin() + batch_dims);
  out.insert(out.end(), flat_out.begin() + 1, flat_out.end());
  return out;
}

Status PrepareConv(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  auto st = std::make_shared<ConvState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, ConvTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->dtype));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "filter", st->dtype));
  KILN_PREPARE_ASSIGN(ctx, int64_t groups, ctx.attrs.GetInt("groups", 1));
  if (groups != 1)
    return PrepareUnimplemented(ctx, "Grouped/Depthwise Convolutions are not supported yet.");
  KILN_PREPARE_ASSIGN(ctx, std::string format, ctx.attrs.GetString("data_format", "CHANNELS_LAST"));
  if (format != "CHANNELS_LAST" && format != "CHANNELS_FIRST")
    return ctx.Error("Unknown data format: ", format);
  KILN_PREPARE_ASSIGN(ctx, st->batch_dims, ctx.attrs.GetInt("batch_dims", 1));
  if (st->batch_dims < 0 || st->batch_dims > kMaxRank) {
    return ctx.Error("attr 'batch_dims' must be between 0 and ", kMaxRank, ", got ",
                     st->batch_dims);
  }
  KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> strides, ctx.attrs.GetIntList("strides"));
  const PartialShape& in_shape = ctx.inputs[0].shape;
  const PartialShape& f_shape = ctx.inputs[1].shape;
  // The spatial rank: the input's, else the strides' (TF requires them to agree).
  const int64_t spatial = !in_shape.unknown_rank() ? in_shape.rank() - 1 - st->batch_dims
                                                   : static_cast<int64_t>(strides.size()) - 2;
  if (spatial != 2 && spatial != 3)
    return ctx.Error("The input must have 2 or 3 spatial dimensions but got ", spatial);
  st->spatial = static_cast<int>(spatial);
  const int rank = st->spatial + 2;
  if (!f_shape.unknown_rank()) {
    if (f_shape.rank() != 4 && f_shape.rank() != 5)
      return ctx.Error("The filter must be rank 4 or 5 but got ", f_shape.rank());
    // TF's kernel aborts the process on a mismatch.
    if (f_shape.rank() != rank) {
      return ctx.Error("a filter of rank ", f_shape.rank(), " does not fit an input with ", spatial,
                       " spatial dimensions (it needs rank ", rank, ")");
    }
  }
  if (strides.size() != static_cast<size_t>(rank))
    return ctx.Error("Sliding window strides field must specify ", rank, " dimensions");
  WindowSpec& w = st->window;
  w.spatial = st->spatial;
  KILN_RETURN_IF_ERROR(ReadConvList(ctx, strides, st->spatial, false, &w.strides));
  KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> dilations, ctx.attrs.GetIntList("dilations", {}));
  if (!dilations.empty()) {
    if (dilations.size() != static_cast<size_t>(rank))
      return ctx.Error("Dilation rates field must specify ", rank, " dimensions");
    KILN_RETURN_IF_ERROR(ReadConvList(ctx, dilations, st->spatial, true, &w.dilations));
  }
  KILN_RETURN_IF_ERROR(ReadConvPadding(ctx, st->spatial, &w));
  // What TF's 2-D and 3-D CPU launchers refuse.
  if (format == "CHANNELS_FIRST") {
    if (spatial == 2) {
      return PrepareUnimplemented(ctx,
                                  "The Conv2D op currently only supports the NHWC tensor format "
                                  "on the CPU. The op was given the format: NCHW");
    }
    return ctx.Error(
        "CPU implementation of Conv3D currently only supports the NHWC tensor format.");
  }
  if (spatial == 3 && (w.dilations[0] != 1 || w.dilations[1] != 1 || w.dilations[2] != 1))
    return ctx.Error("CPU implementation of Conv3D currently only supports dilated rates of 1.");
  if (spatial == 3 && w.padding == WindowPadding::kExplicit) {
    return ctx.Error(
        "EXPLICIT padding is not supported for 3 spatial dimensions (TensorFlow's "
        "CPU kernel aborts on it)");
  }
  // Shapes: what is known now.
  std::vector<int64_t> in = DimsOrUnknown(in_shape, static_cast<int>(st->batch_dims) + rank - 1);
  std::vector<int64_t> f = DimsOrUnknown(f_shape, rank);
  for (int64_t d : f)
    if (d == 0)
      return ctx.Error("filter must not have zero elements (i.e. all dimensions must be non-zero)");
  const int64_t in_c = in.back(), f_in = f[rank - 2];
  if (in_c >= 0 && f_in >= 0 && in_c != f_in)
    return ctx.Error("Input depth must be equal to filter depth: ", in_c, " vs ", f_in);
  std::vector<int64_t> flat = FlatInput(in, st->batch_dims);
  std::array<int64_t, 3> k{1, 1, 1};
  for (int i = 0; i < st->spatial; ++i) {
    k[3 - st->spatial + i] = std::max<int64_t>(f[i], 1);
    if (f[i] < 0) flat[1 + i] = -1;  // an unknown filter size leaves the output size unknown
  }
  std::array<WindowDim, 3> d;
  Status s = MakeWindowDims(w, flat, k, &d);
  if (!s.ok()) return ctx.Error(s.message());
  std::vector<int64_t> flat_out = {flat[0]};
  for (int i = 3 - st->spatial; i < 3; ++i) flat_out.push_back(d[i].out);
  flat_out.push_back(f[rank - 1]);
  // Flattened when the input or output is empty; restored when both are known not to be.
  bool empty = false, nonempty = true;
  for (int64_t v : in) {
    empty |= v == 0;
    nonempty &= v > 0;
  }
  for (int64_t v : flat_out) {
    empty |= v == 0;
    nonempty &= v > 0;
  }
  PartialShape out;
  if (empty || nonempty || st->batch_dims == 1) {
    KILN_PREPARE_ASSIGN(ctx, out,
                        PartialShape::FromDims(ConvOutputDims(in, st->batch_dims, flat_out,
                                                              empty && st->batch_dims != 1)));
  }
  ctx.outputs = {TensorSpec{st->dtype, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status ComputeConv(const KernelContext& ctx) {
  const auto& st = ctx.state<ConvState>();
  const Tensor& input = ctx.input(0);
  const Tensor& filter = ctx.input(1);
  const int64_t spatial = input.rank() - 1 - st.batch_dims;
  if (spatial != 2 && spatial != 3)
    return ctx.Error("The input must have 2 or 3 spatial dimensions but got ", spatial);
  if (filter.NumElements() == 0)
    return ctx.Error("filter must not have zero elements (i.e. all dimensions must be non-zero)");
  if (filter.rank() != 4 && filter.rank() != 5)
    return ctx.Error("The filter must be rank 4 or 5 but got ", filter.rank());
  const int rank = st.spatial + 2;
  if (spatial != st.spatial)
    return ctx.Error("Sliding window strides field must specify ", spatial + 2, " dimensions");
  if (filter.rank() != rank) {
    return ctx.Error("a filter of rank ", filter.rank(), " does not fit an input with ", spatial,
                     " spatial dimensions (it needs rank ", rank, ")");
  }
  const std::vector<int64_t> in(input.shape().dims().begin(), input.shape().dims().end());
  const std::vector<int64_t> flat = FlatInput(in, st.batch_dims);
  std::array<int64_t, 3> k{1, 1, 1};
  for (int i = 0; i < st.spatial; ++i) {
    if (filter.dim(i) > kInt32Max) return ctx.Error("filter too large");
    if (flat[1 + i] > kInt32Max) return ctx.Error("Input spatial dimension ", i, " too large");
    k[3 - st.spatial + i] = filter.dim(i);
  }
  const int64_t in_c = flat.back(), f_in = filter.dim(rank - 2);
  if (in_c > kInt32Max) return ctx.Error("Input depth too large");
  if (f_in > kInt32Max) return ctx.Error("Patch depth too large");
  if (in_c != f_in)
    return ctx.Error("Input depth must be equal to filter depth: ", in_c, " vs ", f_in);
  if (flat[0] > kInt32Max) return ctx.Error("Batch is too large");
  conv_nd::ConvGeom g;
  Status s = MakeWindowDims(st.window, flat, k, &g.d);
  if (!s.ok()) return Wrap(ctx, s);
  g.batch = flat[0];
  g.in_c = in_c;
  g.out_c = filter.dim(rank - 1);
  std::vector<int64_t> flat_out = {g.batch};
  for (int i = 3 - st.spatial; i < 3; ++i) flat_out.push_back(g.d[i].out);
  flat_out.push_back(g.out_c);
  KILN_RETURN_IF_ERROR_CTX(CheckElementCount(flat_out, "output shape"), "node '", ctx.node_name(),
                           "'");
  const bool empty = g.OutPixels() == 0 || input.NumElements() == 0;
  KILN_ASSIGN_OR_RETURN(Shape out_shape,
                        Shape::FromDims(ConvOutputDims(in, st.batch_dims, flat_out, empty)));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  if (out->NumElements() == 0) return OkStatus();
  return Dispatch<ConvTypes>(st.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using A = Acc<C>;
    if (input.NumElements() == 0) {  // only padding: zeros
      std::fill_n(MutableComputeData<T>(out), out->NumElements(), C(0));
      return OkStatus();
    }
    KILN_ASSIGN_OR_RETURN(const A* x, AccCopy<C>(ctx, ComputeData<T>(input), input.NumElements()));
    KILN_ASSIGN_OR_RETURN(const A* f,
                          AccCopy<C>(ctx, ComputeData<T>(filter), filter.NumElements()));
    AccOutput<C> result;
    KILN_RETURN_IF_ERROR(result.Init(ctx, MutableComputeData<T>(out), out->NumElements()));
    KILN_RETURN_IF_ERROR(conv_nd::ConvForward<A>(ctx, g, x, f, result.data()));
    result.Finish();
    return OkStatus();
  });
}

// ---- FusedPadConv2D, FusedResizeAndPadConv2D --------------------------------------------------

using FusedPadTypes = TypeList<float, double, Half, BFloat16>;
using FusedResizeTypes = TypeList<float, double, Half>;

// TF's buffers, in elements of T: the resize cache and the im2col chunk.
constexpr int64_t kResizeCacheSize = int64_t{8} << 20;
constexpr int64_t kMaxChunkSize = int64_t{16} << 20;

struct FusedState : OpState {
  bool resize = false;
  bool align_corners = false;
  int64_t pad_offset = 0;  // 0 SYMMETRIC, 1 REFLECT
  int64_t stride_h = 1, stride_w = 1;
  WindowPadding padding = WindowPadding::kSame;
  DType dtype = DType::kFloat;
  int paddings_input = 1, filter_input = 2;
};

// Everything about one call's sizes, checked as TF's kernel checks them.
struct FusedGeom {
  int64_t batch = 0, in_h = 0, in_w = 0, depth = 0;
  int64_t resized_h = 0, resized_w = 0;
  float scale_h = 1.0f, scale_w = 1.0f;
  int64_t pad_top = 0, pad_left = 0, padded_h = 0, padded_w = 0;
  int64_t fh = 0, fw = 0, out_c = 0, out_h = 0, out_w = 0;
};

// TF's CalculateResizeScale (image_resize_coords.h's ResizeScale differs only for a 1-pixel
// input, where both read the one pixel).
float ResizeScaleOf(int64_t in, int64_t out, bool align_corners) {
  return align_corners && in > 1 && out > 1
             ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
             : static_cast<float>(in) / static_cast<float>(out);
}

// `size` is the resize target (empty without a resize), `pads` the [4, 2] paddings.
Status MakeFusedGeom(const FusedState& st, std::span<const int64_t> in,
                     const std::vector<int64_t>& size, std::span<const int64_t> pads_shape,
                     const std::vector<int64_t>& pads, std::span<const int64_t> filter,
                     FusedGeom* g) {
  if (in.size() != 4) {
    return InvalidArgument("input must be 4-dimensional (batch, height, width, depth), got ",
                           DimsString({in.begin(), in.end()}));
  }
  int64_t n = 1;
  for (int64_t v : in) n *= v;
  if (n <= 0) return InvalidArgument("Input tensor can't be empty");
  g->batch = in[0];
  g->in_h = in[1];
  g->in_w = in[2];
  g->depth = in[3];
  g->resized_h = in[1];
  g->resized_w = in[2];
  if (st.resize) {  // TF's ImageResizerState::ValidateAndCalculateOutputSize
    if (in[1] > kInt32Max || in[2] > kInt32Max)
      return InvalidArgument("input sizes must be between 0 and max int32");
    if (size.size() != 2)
      return InvalidArgument("shape_t must have two elements, got ", DimsString(size));
    if (size[0] <= 0 || size[1] <= 0)
      return InvalidArgument("output dimensions must be positive, got ", DimsString(size));
    g->resized_h = size[0];
    g->resized_w = size[1];
    g->scale_h = ResizeScaleOf(g->in_h, g->resized_h, st.align_corners);
    g->scale_w = ResizeScaleOf(g->in_w, g->resized_w, st.align_corners);
  }
  if (pads_shape.size() != 2 || pads_shape[1] != 2) {
    return InvalidArgument("paddings must be a matrix with 2 columns: ",
                           DimsString({pads_shape.begin(), pads_shape.end()}));
  }
  if (pads_shape[0] != 4) {
    return InvalidArgument("The first dimension of paddings must be the rank of inputs: 4 ",
                           DimsString({pads_shape.begin(), pads_shape.end()}));
  }
  const std::array<int64_t, 4> resized = {g->batch, g->resized_h, g->resized_w, g->depth};
  std::array<int64_t, 4> padded{};
  for (size_t d = 0; d < 4; ++d) {
    const int64_t before = pads[2 * d], after = pads[2 * d + 1];
    if (before < 0 || after < 0)
      return InvalidArgument("paddings must be non-negative: ", before, " ", after);
    if (st.pad_offset == 0 && (before > resized[d] || after > resized[d])) {
      return InvalidArgument("paddings must be no greater than the dimension size: ", before, ", ",
                             after, " greater than ", resized[d]);
    }
    if (st.pad_offset == 1 && (before >= resized[d] || after >= resized[d])) {
      return InvalidArgument("paddings must be less than the dimension size: ", before, ", ", after,
                             " not less than ", resized[d]);
    }
    padded[d] = before + resized[d] + after;
  }
  if (pads[0] != 0 || pads[1] != 0) {
    return InvalidArgument("Fused mirror padding only support spatial padding, not batches: ",
                           DimsString(pads));
  }
  if (pads[6] != 0 || pads[7] != 0) {
    return InvalidArgument("Fused mirror padding only support spatial padding, not channels: ",
                           DimsString(pads));
  }
  g->pad_top = pads[2];
  g->pad_left = pads[4];
  g->padded_h = padded[1];
  g->padded_w = padded[2];
  if (filter.size() != 4)
    return InvalidArgument("filter must be 4-dimensional: ",
                           DimsString({filter.begin(), filter.end()}));
  for (int i = 0; i < 3; ++i)
    if (filter[i] > kInt32Max) return InvalidArgument("filter too large");
  if (g->depth != filter[2]) {
    return InvalidArgument("input and filter must have the same depth: ", g->depth, " vs ",
                           filter[2]);
  }
  if (g->padded_h > kInt32Max) return InvalidArgument("Input rows too large");
  if (g->padded_w > kInt32Max) return InvalidArgument("Input cols too large");
  if (g->batch > kInt32Max) return InvalidArgument("batch is too large");
  g->fh = filter[0];
  g->fw = filter[1];
  g->out_c = filter[3];
  WindowDim h{.in = g->padded_h, .k = g->fh, .stride = st.stride_h};
  WindowDim w{.in = g->padded_w, .k = g->fw, .stride = st.stride_w};
  KILN_RETURN_IF_ERROR(ComputeWindowDim(st.padding, &h));
  KILN_RETURN_IF_ERROR(ComputeWindowDim(st.padding, &w));
  g->out_h = h.out;
  g->out_w = w.out;
  const int64_t out_dims[] = {g->batch, g->out_h, g->out_w, g->out_c};
  KILN_RETURN_IF_ERROR(CheckElementCount(out_dims, "output shape"));
  if (g->batch * g->out_h * g->out_w * g->out_c == 0)
    return InvalidArgument("Output tensor can't be empty");
  return OkStatus();
}

template <bool kResize>
Status PrepareFused(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kResize ? 4 : 3));
  auto st = std::make_shared<FusedState>();
  st->resize = kResize;
  st->paddings_input = kResize ? 2 : 1;
  st->filter_input = kResize ? 3 : 2;
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype,
                                         kResize ? std::span<const DType>(FusedResizeTypes::kDTypes)
                                                 : std::span<const DType>(FusedPadTypes::kDTypes)));
  if (kResize) {
    KILN_PREPARE_ASSIGN(ctx, st->align_corners, ctx.attrs.GetBool("resize_align_corners", false));
  }
  KILN_PREPARE_ASSIGN(ctx, std::string mode, ctx.attrs.GetString("mode"));
  if (mode != "REFLECT" && mode != "SYMMETRIC")
    return ctx.Error("mode must be either REFLECT or SYMMETRIC.");
  st->pad_offset = mode == "REFLECT" ? 1 : 0;
  KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> strides, ctx.attrs.GetIntList("strides"));
  if (strides.size() != 4)
    return ctx.Error("Sliding window strides field must specify 4 dimensions");
  if (strides[0] != 1 || strides[3] != 1) {
    return ctx.Error(
        "Current implementation does not yet support strides in the batch and depth dimensions.");
  }
  for (int i = 1; i <= 2; ++i) {
    if (strides[i] <= 0) return ctx.Error("Stride must be > 0, but got ", strides[i]);
    if (strides[i] > kInt32Max) return ctx.Error("attr 'strides' entries must fit in int32");
  }
  st->stride_h = strides[1];
  st->stride_w = strides[2];
  KILN_PREPARE_ASSIGN(ctx, std::string padding, ctx.attrs.GetString("padding"));
  if (padding != "SAME" && padding != "VALID")
    return ctx.Error("attr 'padding': expected \"SAME\" or \"VALID\", got \"", padding, "\"");
  st->padding = padding == "SAME" ? WindowPadding::kSame : WindowPadding::kValid;
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->dtype));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 4));
  if (kResize) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "size", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "size", 1));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, st->paddings_input, "paddings", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, st->paddings_input, "paddings", 2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, st->filter_input, "filter", st->dtype));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, st->filter_input, "filter", 4));
  const std::vector<int64_t> in = DimsOrUnknown(ctx.inputs[0].shape, 4);
  const std::vector<int64_t> f = DimsOrUnknown(ctx.inputs[st->filter_input].shape, 4);
  PartialShape out{in[0], -1, -1, f[3]};
  // Everything known (constant size and paddings): the exact shape, and TF's checks now.
  const Tensor* size = kResize ? ConstantInput(ctx, 1) : nullptr;
  const Tensor* pads = ConstantInput(ctx, st->paddings_input);
  const auto known = [](const std::vector<int64_t>& v) {
    return std::all_of(v.begin(), v.end(), [](int64_t d) { return d >= 0; });
  };
  if (known(in) && known(f) && pads != nullptr && (!kResize || size != nullptr)) {
    FusedGeom g;
    Status s = MakeFusedGeom(*st, in, kResize ? IndexValues(*size) : std::vector<int64_t>{},
                             pads->shape().dims(), IndexValues(*pads), f, &g);
    if (!s.ok()) return ctx.Error(s.message());
    out = PartialShape{g.batch, g.out_h, g.out_w, g.out_c};
  }
  ctx.outputs = {TensorSpec{st->dtype, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

// One row of TF's resize cache: the padded (and resized) image's row `y` over `line_w` columns
// from `x0`, zeros outside the padded image. Coordinates in float, sampling in C, as TF's.
template <typename C>
void FillCacheRow(const FusedState& st, const FusedGeom& g, const C* img, int64_t y, int64_t x0,
                  int64_t line_w, C* line) {
  const int64_t d = g.depth;
  if (y < 0 || y >= g.padded_h) {
    std::fill_n(line, line_w * d, C(0));
    return;
  }
  // Mirrors a padded coordinate into the resized image, then maps it into the input.
  const auto source = [&](int64_t v, int64_t pad, int64_t resized, float scale) {
    auto f = static_cast<float>(v - pad);
    const auto off = static_cast<float>(st.pad_offset);
    if (f < 0) {
      f = -(f + 1.0f - off);
    } else if (f >= static_cast<float>(resized)) {
      f = static_cast<float>(resized) * 2.0f - (f + 1.0f + off);
    }
    return f * scale;
  };
  const float in_y = source(y, g.pad_top, g.resized_h, g.scale_h);
  const auto top = static_cast<int64_t>(std::floor(in_y));
  const int64_t bottom = std::min(static_cast<int64_t>(std::ceil(in_y)), g.in_h - 1);
  const C y_lerp = static_cast<C>(in_y - static_cast<float>(top));
  const C* top_row = img + top * g.in_w * d;
  const C* bottom_row = img + bottom * g.in_w * d;
  for (int64_t i = 0; i < line_w; ++i) {
    const int64_t x = x0 + i;
    C* px = line + i * d;
    if (x < 0 || x >= g.padded_w) {
      std::fill_n(px, d, C(0));
      continue;
    }
    const float in_x = source(x, g.pad_left, g.resized_w, g.scale_w);
    const auto left = static_cast<int64_t>(std::floor(in_x));
    if (!st.resize) {  // nearest: the pixel itself
      std::copy_n(top_row + left * d, d, px);
      continue;
    }
    const int64_t right = std::min(static_cast<int64_t>(std::ceil(in_x)), g.in_w - 1);
    const C x_lerp = static_cast<C>(in_x - static_cast<float>(left));
    const C* tl = top_row + left * d;
    const C* tr = top_row + right * d;
    const C* bl = bottom_row + left * d;
    const C* br = bottom_row + right * d;
    for (int64_t c = 0; c < d; ++c) {
      const C t = tl[c] + (tr[c] - tl[c]) * x_lerp;
      const C b = bl[c] + (br[c] - bl[c]) * x_lerp;
      px[c] = t + (b - t) * y_lerp;
    }
  }
}

template <typename T>
Status RunFused(const KernelContext& ctx, const FusedState& st, const FusedGeom& g,
                const Tensor& input, const Tensor& filter, Tensor* out) {
  using C = ComputeType<T>;
  using A = Acc<C>;
  const int64_t d = g.depth, fh = g.fh, fw = g.fw, sh = st.stride_h, sw = st.stride_w;
  // TF's im2col window placement (C++ division truncates toward zero).
  const int64_t extra = st.padding == WindowPadding::kValid ? 1 : 0;
  const int64_t top_off = ((g.out_h - 1) * sh + fh - g.padded_h + extra) / 2;
  const int64_t left_off = ((g.out_w - 1) * sw + fw - g.padded_w + extra) / 2;
  const int64_t x0 = -left_off, line_w = (g.out_w - 1) * sw + fw;
  const int64_t line = line_w * d, patch = fh * fw * d;
  if (patch * static_cast<int64_t>(sizeof(T)) > kMaxChunkSize)
    return ctx.Error("Im2Col patch too large for buffer");
  if (fh * line * static_cast<int64_t>(sizeof(T)) > kResizeCacheSize)
    return ctx.Error("Input too large for resize cache");
  const int64_t cache_rows = kResizeCacheSize / line;  // TF's ring: row r in slot r mod this
  const int64_t first_row = -top_off, end_row = g.out_h * sh - top_off + fh;
  const int64_t ring_rows = std::min(cache_rows, end_row - first_row);
  const int64_t ring_dims[] = {ring_rows, line};
  KILN_RETURN_IF_ERROR_CTX(CheckElementCount(ring_dims, "resize cache"), "node '", ctx.node_name(),
                           "'");
  KILN_ASSIGN_OR_RETURN(void* ring_mem, ctx.AllocateTemp(sizeof(C) * ring_rows * line));
  C* ring = static_cast<C*>(ring_mem);
  // Rows keep their slot's residue (counted from the first row, so slots start at 0).
  const auto slot = [&](int64_t row) { return ring + ((row - first_row) % cache_rows) * line; };
  KILN_ASSIGN_OR_RETURN(const A* f, AccCopy<C>(ctx, ComputeData<T>(filter), filter.NumElements()));
  AccOutput<C> result;
  KILN_RETURN_IF_ERROR(result.Init(ctx, MutableComputeData<T>(out), out->NumElements()));
  const conv_nd::ChunkPlan plan = conv_nd::PlanChunks(g.out_w, patch, ctx.threads().num_threads());
  const int64_t chunk_elems = plan.per_chunk * patch;
  KILN_ASSIGN_OR_RETURN(void* patch_mem, ctx.AllocateTemp(sizeof(A) * chunk_elems * plan.workers));
  const C* in = ComputeData<T>(input);
  const int64_t image = g.in_h * g.in_w * d;
  // TF sets this once per call, not per image: later images find the rows cached.
  int64_t cached_end = std::numeric_limits<int64_t>::min();
  for (int64_t b = 0; b < g.batch; ++b) {
    const C* img = in + b * image;
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
      const int64_t origin = oy * sh - top_off;
      if (cached_end < origin + fh) {
        const int64_t begin = std::max(origin, cached_end);
        const int64_t end = std::min(end_row, std::max(origin + cache_rows, cached_end));
        ctx.threads().ParallelFor(end - begin, std::max<int64_t>(1, 4096 / line),
                                  [&](int64_t lo, int64_t hi) {
                                    for (int64_t r = begin + lo; r < begin + hi; ++r)
                                      FillCacheRow(st, g, img, r, x0, line_w, slot(r));
                                  });
        cached_end = end;
      }
      A* out_row = result.data() + (b * g.out_h + oy) * g.out_w * g.out_c;
      conv_nd::ForChunks(ctx, plan, static_cast<A*>(patch_mem), chunk_elems,
                         [&](int64_t c, A* patches) {
                           const int64_t ox0 = c * plan.per_chunk;
                           const int64_t rows = std::min(plan.per_chunk, g.out_w - ox0);
                           for (int64_t r = 0; r < rows; ++r) {
                             A* dst = patches + r * patch;
                             for (int64_t ky = 0; ky < fh; ++ky, dst += fw * d) {
                               const C* src = slot(origin + ky) + (ox0 + r) * sw * d;
                               for (int64_t i = 0; i < fw * d; ++i) dst[i] = static_cast<A>(src[i]);
                             }
                           }
                           conv_nd::Gemm<A>(false, rows, g.out_c, patch, patches, patch, f, g.out_c,
                                            false, out_row + ox0 * g.out_c, g.out_c);
                         });
    }
  }
  result.Finish();
  return OkStatus();
}

Status ComputeFused(const KernelContext& ctx) {
  const auto& st = ctx.state<FusedState>();
  const Tensor& input = ctx.input(0);
  const Tensor& pads = ctx.input(st.paddings_input);
  const Tensor& filter = ctx.input(st.filter_input);
  std::vector<int64_t> size;
  if (st.resize) {
    const Tensor& s = ctx.input(1);
    if (s.rank() != 1)
      return ctx.Error("shape_t must be 1-dimensional, got shape ", s.shape().ToString());
    size = IndexValues(s);
  }
  FusedGeom g;
  Status s = MakeFusedGeom(st, input.shape().dims(), size, pads.shape().dims(),
                           pads.NumElements() == 8 ? IndexValues(pads) : std::vector<int64_t>(8, 0),
                           filter.shape().dims(), &g);
  if (!s.ok()) return Wrap(ctx, s);
  KILN_ASSIGN_OR_RETURN(Tensor * out,
                        ctx.AllocateOutput(0, Shape{g.batch, g.out_h, g.out_w, g.out_c}));
  if (g.fh == 0 || g.fw == 0) {  // TF leaves such an output unwritten; a sum of nothing is 0
    return Dispatch<FusedPadTypes>(st.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::fill_n(MutableComputeData<T>(out), out->NumElements(), ComputeType<T>(0));
      return OkStatus();
    });
  }
  return Dispatch<FusedPadTypes>(st.dtype, [&](auto tag) {
    return RunFused<typename decltype(tag)::type>(ctx, st, g, input, filter, out);
  });
}

// ---- tables ------------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Conv", "output", kOpFreshOutputs, PrepareConv},
    {"FusedPadConv2D", "output", kOpFreshOutputs, PrepareFused<false>},
    {"FusedResizeAndPadConv2D", "output", kOpFreshOutputs, PrepareFused<true>},
};

constexpr KernelEntry kCpu[] = {
    {"Conv", ComputeConv},
    {"FusedPadConv2D", ComputeFused, 0b10},
    {"FusedResizeAndPadConv2D", ComputeFused, 0b110},
};

}  // namespace

std::span<const OpDefinition> ConvGenericOpDefs() { return kDefs; }
std::span<const KernelEntry> ConvGenericCpuKernels() { return kCpu; }

}  // namespace kiln::exec
