#include "kernels/window_util.h"

#include <algorithm>
#include <limits>

namespace kiln::exec {

Status ComputeWindowDim(WindowPadding padding, WindowDim* w) {
  if (w->in < 0) {
    w->out = -1;
    return OkStatus();
  }
  WindowDim r = *w;  // stored only on success: a failure leaves *w as it was
  const int64_t effective = r.effective_k();
  switch (padding) {
    case WindowPadding::kValid:
      r.out = (r.in - effective + r.stride) / r.stride;
      r.pad_before = r.pad_after = 0;
      break;
    case WindowPadding::kExplicit:
      r.out = (r.in + r.pad_before + r.pad_after - effective + r.stride) / r.stride;
      break;
    case WindowPadding::kSame: {
      r.out = (r.in + r.stride - 1) / r.stride;
      const int64_t needed = std::max<int64_t>(0, (r.out - 1) * r.stride + effective - r.in);
      r.pad_before = needed / 2;
      r.pad_after = needed - r.pad_before;
      break;
    }
  }
  if (r.out < 0) {
    return InvalidArgument("computed output size would be negative: ", r.out,
                           " [input size: ", r.in, ", effective filter size: ", effective,
                           ", stride: ", r.stride, "]");
  }
  *w = r;
  return OkStatus();
}

Result<int64_t> ConvGroups(int64_t in_c, int64_t filter_in_c, int64_t out_c) {
  if (in_c < 0 || filter_in_c < 0) return int64_t{-1};
  if (in_c == filter_in_c) return int64_t{1};
  // No input channels but some in the filter: zero groups, which nothing divides by.
  if (in_c == 0) {
    return InvalidArgument("input depth is 0 but the filter's in_channels is ", filter_in_c);
  }
  if (filter_in_c == 0 || in_c % filter_in_c != 0) {
    return InvalidArgument("input depth must be evenly divisible by filter depth: ", in_c, " vs ",
                           filter_in_c);
  }
  const int64_t groups = in_c / filter_in_c;
  if (out_c >= 0 && (out_c % groups != 0 || out_c < groups)) {
    return InvalidArgument("output depth must be evenly divisible by number of groups: ", out_c,
                           " vs ", groups);
  }
  return groups;
}

namespace {

// The check without the node: the callers add it in front. `legacy`: conv_ops' wording and
// checks (WindowAttrOptions::legacy_2d).
Status CheckList(std::string_view what, const std::vector<int64_t>& v, int spatial, bool legacy,
                 std::array<int64_t, 3>* out) {
  const size_t want = static_cast<size_t>(spatial) + 2;
  if (v.size() != want) {
    return InvalidArgument(what, " must have ", want, " entries (", spatial == 3 ? "NDHWC" : "NHWC",
                           "), got ", DimsString(v));
  }
  if (legacy) {
    for (int i = 1; i <= spatial; ++i) {
      if (v[i] <= 0) return InvalidArgument(what, " ", DimsString(v), ": entries must be positive");
    }
  } else {
    for (int64_t x : v) {
      // TF holds these lists as int32; larger entries would also overflow the window arithmetic.
      if (x <= 0 || x > std::numeric_limits<int32_t>::max()) {
        return InvalidArgument(what, " ", DimsString(v), ": entries must be positive int32 values");
      }
    }
  }
  if (v.front() != 1 || v.back() != 1) {
    return Unimplemented(what, " ", DimsString(v), ": only 1 is supported in the batch and ",
                         legacy ? "depth" : "channel", " dimensions");
  }
  *out = {1, 1, 1};
  // 2-D windows use the last two of the three slots; the first (depth) stays 1.
  for (int i = 0; i < spatial; ++i) (*out)[3 - spatial + i] = v[1 + i];
  return OkStatus();
}

Status WithNode(const PrepareContext& ctx, const Status& s) {
  if (s.ok()) return s;
  return s.WithContext("node '" + std::string(ctx.node_name) + "' (" + std::string(ctx.op) + ")");
}

// padding and explicit_paddings.
Status ReadPaddingAttrs(const PrepareContext& ctx, const WindowAttrOptions& opts, WindowSpec* a) {
  const bool legacy = opts.legacy_2d;
  KILN_PREPARE_ASSIGN(ctx, std::string padding, ctx.attrs.GetString("padding"));
  std::vector<int64_t> p;
  // conv_ops' ops read explicit_paddings first, and for every op (it must then be empty).
  if (legacy) {
    KILN_PREPARE_ASSIGN(ctx, p, ctx.attrs.GetIntList("explicit_paddings", {}));
  }
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
  if (!legacy) {
    if (!opts.allow_explicit) return OkStatus();
    KILN_PREPARE_ASSIGN(ctx, p, ctx.attrs.GetIntList("explicit_paddings", {}));
  }
  if (a->padding != WindowPadding::kExplicit) {
    if (!p.empty()) {
      return ctx.Error("attr 'explicit_paddings' ", DimsString(p),
                       " must be empty unless padding is \"EXPLICIT\"");
    }
    return OkStatus();
  }
  const size_t want = 2 * (static_cast<size_t>(opts.spatial) + 2);
  if (p.size() != want) {
    return ctx.Error("attr 'explicit_paddings' must have ", want, " entries (before and after for ",
                     legacy ? "N, H, W, C" : "every dimension", "), got ", DimsString(p));
  }
  for (int64_t v : p) {
    if (v < 0) return ctx.Error("attr 'explicit_paddings' ", DimsString(p), ": negative entry");
  }
  if (p[0] != 0 || p[1] != 0 || p[want - 2] != 0 || p[want - 1] != 0) {
    return ctx.Error("attr 'explicit_paddings' ", DimsString(p), ": the batch and ",
                     legacy ? "depth" : "channel", " dimensions cannot be padded");
  }
  for (int i = 0; i < opts.spatial; ++i) {
    a->pad_before[3 - opts.spatial + i] = p[2 + 2 * i];
    a->pad_after[3 - opts.spatial + i] = p[3 + 2 * i];
  }
  return OkStatus();
}

}  // namespace

Status CheckWindowList(const PrepareContext& ctx, std::string_view what,
                       const std::vector<int64_t>& v, int spatial, std::array<int64_t, 3>* out) {
  return WithNode(ctx, CheckList(what, v, spatial, /*legacy=*/false, out));
}
Status CheckWindowList(const KernelContext& ctx, std::string_view what,
                       const std::vector<int64_t>& v, int spatial, std::array<int64_t, 3>* out) {
  Status s = CheckList(what, v, spatial, /*legacy=*/false, out);
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
      return PrepareUnimplemented(ctx, "data_format \"", format, "\" is not supported on CPU",
                                  opts.legacy_2d ? "" : " (as in TensorFlow's CPU kernel)",
                                  "; only \"", last, "\" is");
    }
    if (format != last) {
      return ctx.Error("attr 'data_format': expected \"", last, "\" or \"", first, "\", got \"",
                       format, "\"");
    }
  }
  if (opts.legacy_2d) KILN_RETURN_IF_ERROR(ReadPaddingAttrs(ctx, opts, a));
  std::vector<int64_t> list;
  auto check = [&](std::string_view what, std::array<int64_t, 3>* out) {
    return WithNode(ctx, CheckList(what, list, opts.spatial, opts.legacy_2d, out));
  };
  if (opts.read_ksize) {
    KILN_PREPARE_ASSIGN(ctx, list, ctx.attrs.GetIntList("ksize"));
    KILN_RETURN_IF_ERROR(check("attr 'ksize'", &a->ksize));
  }
  if (opts.read_strides) {
    KILN_PREPARE_ASSIGN(ctx, list, ctx.attrs.GetIntList("strides"));
    KILN_RETURN_IF_ERROR(check("attr 'strides'", &a->strides));
  }
  if (opts.read_dilations) {
    KILN_PREPARE_ASSIGN(
        ctx, list, ctx.attrs.GetIntList("dilations", std::vector<int64_t>(opts.spatial + 2, 1)));
    KILN_RETURN_IF_ERROR(check("attr 'dilations'", &a->dilations));
  }
  if (opts.legacy_2d) return OkStatus();
  return ReadPaddingAttrs(ctx, opts, a);
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
