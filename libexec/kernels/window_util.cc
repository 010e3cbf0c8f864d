#include "kernels/window_util.h"

#include <algorithm>
#include <limits>

#include "kernels/window_geometry.h"

namespace kiln::exec {

// The same arithmetic as the convolution and pooling kernels (window_geometry.h), on this
// file's N-d window type.
Status ComputeWindowDim(WindowPadding padding, WindowDim* w) {
  static_assert(static_cast<int>(WindowPadding::kSame) == static_cast<int>(Padding::kSame) &&
                static_cast<int>(WindowPadding::kValid) == static_cast<int>(Padding::kValid) &&
                static_cast<int>(WindowPadding::kExplicit) == static_cast<int>(Padding::kExplicit));
  Window g{w->in, w->k, w->stride, w->dilation, w->pad_before, w->pad_after, w->out};
  KILN_RETURN_IF_ERROR(ComputeOutputSize(static_cast<Padding>(padding), &g));
  w->pad_before = g.pad_before;
  w->pad_after = g.pad_after;
  w->out = g.out;
  return OkStatus();
}

namespace {

// The check without the node: the callers add it in front.
Status CheckList(std::string_view what, const std::vector<int64_t>& v, int spatial,
                 std::array<int64_t, 3>* out) {
  const size_t want = static_cast<size_t>(spatial) + 2;
  if (v.size() != want) {
    return InvalidArgument(what, " must have ", want, " entries (", spatial == 3 ? "NDHWC" : "NHWC",
                           "), got ", DimsString(v));
  }
  for (int64_t x : v) {
    // TF holds these lists as int32; larger entries would also overflow the window arithmetic.
    if (x <= 0 || x > std::numeric_limits<int32_t>::max()) {
      return InvalidArgument(what, " ", DimsString(v), ": entries must be positive int32 values");
    }
  }
  if (v.front() != 1 || v.back() != 1) {
    return Unimplemented(what, " ", DimsString(v),
                         ": only 1 is supported in the batch and channel dimensions");
  }
  *out = {1, 1, 1};
  // 2-D windows use the last two of the three slots; the first (depth) stays 1.
  for (int i = 0; i < spatial; ++i) (*out)[3 - spatial + i] = v[1 + i];
  return OkStatus();
}

}  // namespace

Status CheckWindowList(const PrepareContext& ctx, std::string_view what,
                       const std::vector<int64_t>& v, int spatial, std::array<int64_t, 3>* out) {
  Status s = CheckList(what, v, spatial, out);
  if (s.ok()) return s;
  return s.WithContext("node '" + std::string(ctx.node_name) + "' (" + std::string(ctx.op) + ")");
}
Status CheckWindowList(const KernelContext& ctx, std::string_view what,
                       const std::vector<int64_t>& v, int spatial, std::array<int64_t, 3>* out) {
  Status s = CheckList(what, v, spatial, out);
  if (s.ok()) return s;
  return s.WithContext("node '" + std::string(ctx.node_name()) + "'");
}

Status ReadWindowAttrs(const PrepareContext& ctx, const WindowAttrOptions& opts, WindowSpec* a) {
  a->spatial = opts.spatial;
  const bool three = opts.spatial == 3;
  if (opts.has_data_format) {
    const std::string last = three ? "NDHWC" : "NHWC";
    const std::string first = three ? "NCDHW" : "NCHW";
    KILN_PREPARE_ASSIGN(ctx, std::string format, ctx.attrs.GetString("data_format", last));
    if (format == first || format == "NCHW_VECT_C") {
      return PrepareUnimplemented(ctx, "data_format \"", format, "\" is not supported on CPU (",
                                  "as in TensorFlow's CPU kernel); only \"", last, "\" is");
    }
    if (format != last) {
      return ctx.Error("attr 'data_format': expected \"", last, "\" or \"", first, "\", got \"",
                       format, "\"");
    }
  }
  std::vector<int64_t> list;
  if (opts.read_ksize) {
    KILN_PREPARE_ASSIGN(ctx, list, ctx.attrs.GetIntList("ksize"));
    KILN_RETURN_IF_ERROR(CheckWindowList(ctx, "attr 'ksize'", list, opts.spatial, &a->ksize));
  }
  if (opts.read_strides) {
    KILN_PREPARE_ASSIGN(ctx, list, ctx.attrs.GetIntList("strides"));
    KILN_RETURN_IF_ERROR(CheckWindowList(ctx, "attr 'strides'", list, opts.spatial, &a->strides));
  }
  if (opts.read_dilations) {
    KILN_PREPARE_ASSIGN(
        ctx, list, ctx.attrs.GetIntList("dilations", std::vector<int64_t>(opts.spatial + 2, 1)));
    KILN_RETURN_IF_ERROR(
        CheckWindowList(ctx, "attr 'dilations'", list, opts.spatial, &a->dilations));
  }
  KILN_PREPARE_ASSIGN(ctx, std::string padding, ctx.attrs.GetString("padding"));
  if (padding == "SAME") {
    a->padding = WindowPadding::kSame;
  } else if (padding == "VALID") {
    a->padding = WindowPadding::kValid;
  } else if (padding == "EXPLICIT" && opts.allow_explicit) {
    a->padding = WindowPadding::kExplicit;
  } else {
    return ctx.Error(
        "attr 'padding': expected ",
        opts.allow_explicit ? "\"SAME\", \"VALID\" or \"EXPLICIT\"" : "\"SAME\" or \"VALID\"",
        ", got \"", padding, "\"");
  }
  if (!opts.allow_explicit) return OkStatus();
  KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> p, ctx.attrs.GetIntList("explicit_paddings", {}));
  if (a->padding != WindowPadding::kExplicit) {
    if (!p.empty()) {
      return ctx.Error("attr 'explicit_paddings' ", DimsString(p),
                       " must be empty unless padding is \"EXPLICIT\"");
    }
    return OkStatus();
  }
  const size_t want = 2 * (static_cast<size_t>(opts.spatial) + 2);
  if (p.size() != want) {
    return ctx.Error("attr 'explicit_paddings' must have ", want,
                     " entries (before and after for every dimension), got ", DimsString(p));
  }
  for (int64_t v : p) {
    if (v < 0) return ctx.Error("attr 'explicit_paddings' ", DimsString(p), ": negative entry");
  }
  if (p[0] != 0 || p[1] != 0 || p[want - 2] != 0 || p[want - 1] != 0) {
    return ctx.Error("attr 'explicit_paddings' ", DimsString(p),
                     ": the batch and channel dimensions cannot be padded");
  }
  for (int i = 0; i < opts.spatial; ++i) {
    a->pad_before[3 - opts.spatial + i] = p[2 + 2 * i];
    a->pad_after[3 - opts.spatial + i] = p[3 + 2 * i];
  }
  return OkStatus();
}

Status MakeWindowDims(const WindowSpec& a, std::span<const int64_t> in,
                      const std::array<int64_t, 3>& k, std::array<WindowDim, 3>* dims) {
  for (int i = 0; i < 3; ++i) {
    WindowDim& w = (*dims)[i];
    const int s = i - (3 - a.spatial);  // index among the input's spatial dims
    w = WindowDim{};
    w.in = s >= 0 ? in[1 + s] : 1;
    w.k = k[i];
    w.stride = a.strides[i];
    w.dilation = a.dilations[i];
    if (a.padding == WindowPadding::kExplicit) {
      w.pad_before = a.pad_before[i];
      w.pad_after = a.pad_after[i];
    }
    KILN_RETURN_IF_ERROR(ComputeWindowDim(s >= 0 ? a.padding : WindowPadding::kValid, &w));
  }
  return OkStatus();
}

Status CheckElementCount(std::span<const int64_t> dims, std::string_view what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgument(what, " has a negative dimension ", d);
    if (__builtin_mul_overflow(n, d, &n) || n >= (int64_t{1} << 56)) {
      return InvalidArgument(what, " ", DimsString(std::vector<int64_t>(dims.begin(), dims.end())),
                             " has too many elements");
    }
  }
  return OkStatus();
}

std::vector<int64_t> DimsOrUnknown(const PartialShape& s, int rank) {
  if (s.unknown_rank() || s.rank() != rank) return std::vector<int64_t>(rank, -1);
  return {s.dims().begin(), s.dims().end()};
}

}  // namespace kiln::exec
