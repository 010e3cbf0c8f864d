#include "kernels/window_geometry.h"

#include <algorithm>

namespace kiln::exec {
namespace {

template <typename... Args>
Status PrepareUnimplemented(const PrepareContext& ctx, Args&&... args) {
  return Unimplemented("node '", ctx.node_name, "' (", ctx.op, "): ", std::forward<Args>(args)...);
}

}  // namespace

Status ComputeOutputSize(Padding padding, Window* w) {
  if (w->in < 0) {
    w->out = -1;
    return OkStatus();
  }
  const int64_t effective = (w->k - 1) * w->dilation + 1;
  switch (padding) {
    case Padding::kValid:
      w->out = (w->in - effective + w->stride) / w->stride;
      w->pad_before = w->pad_after = 0;
      break;
    case Padding::kExplicit:
      w->out = (w->in + w->pad_before + w->pad_after - effective + w->stride) / w->stride;
      break;
    case Padding::kSame: {
      w->out = (w->in + w->stride - 1) / w->stride;
      const int64_t needed = std::max<int64_t>(0, (w->out - 1) * w->stride + effective - w->in);
      w->pad_before = needed / 2;
      w->pad_after = needed - w->pad_before;
      break;
    }
  }
  if (w->out < 0) {
    return InvalidArgument("computed output size would be negative: ", w->out,
                           " [input size: ", w->in, ", effective filter size: ", effective,
                           ", stride: ", w->stride, "]");
  }
  return OkStatus();
}

std::string ListString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

Status ReadSpatialList(const PrepareContext& ctx, std::string_view name, bool required, int64_t* h,
                       int64_t* w) {
  std::vector<int64_t> v;
  if (required) {
    KILN_PREPARE_ASSIGN(ctx, v, ctx.attrs.GetIntList(name));
  } else {
    KILN_PREPARE_ASSIGN(ctx, v, ctx.attrs.GetIntList(name, {1, 1, 1, 1}));
  }
  if (v.size() != 4) {
    return ctx.Error("attr '", name, "' must have 4 entries (NHWC), got ", ListString(v));
  }
  if (v[1] <= 0 || v[2] <= 0) {
    return ctx.Error("attr '", name, "' ", ListString(v), ": entries must be positive");
  }
  if (v[0] != 1 || v[3] != 1) {
    return PrepareUnimplemented(ctx, "attr '", name, "' ", ListString(v),
                                ": only 1 is supported in the batch and depth dimensions");
  }
  *h = v[1];
  *w = v[2];
  return OkStatus();
}

Status ReadPadding(const PrepareContext& ctx, bool allow_explicit, WindowAttrs* a) {
  KILN_PREPARE_ASSIGN(ctx, std::string format, ctx.attrs.GetString("data_format", "NHWC"));
  if (format == "NCHW" || format == "NCHW_VECT_C") {
    return PrepareUnimplemented(ctx, "data_format \"", format,
                                "\" is not supported on CPU; only \"NHWC\" is");
  }
  if (format != "NHWC") {
    return ctx.Error("attr 'data_format': expected \"NHWC\" or \"NCHW\", got \"", format, "\"");
  }
  KILN_PREPARE_ASSIGN(ctx, std::string padding, ctx.attrs.GetString("padding"));
  KILN_PREPARE_ASSIGN(ctx, a->explicit_paddings, ctx.attrs.GetIntList("explicit_paddings", {}));
  if (padding == "SAME") {
    a->padding = Padding::kSame;
  } else if (padding == "VALID") {
    a->padding = Padding::kValid;
  } else if (padding == "EXPLICIT" && allow_explicit) {
    a->padding = Padding::kExplicit;
  } else {
    return ctx.Error(
        "attr 'padding': expected ",
        allow_explicit ? "\"SAME\", \"VALID\" or \"EXPLICIT\"" : "\"SAME\" or \"VALID\"",
        ", got \"", padding, "\"");
  }
  const auto& p = a->explicit_paddings;
  if (a->padding != Padding::kExplicit) {
    if (!p.empty()) {
      return ctx.Error("attr 'explicit_paddings' ", ListString(p),
                       " must be empty unless padding is \"EXPLICIT\"");
    }
    return OkStatus();
  }
  if (p.size() != 8) {
    return ctx.Error(
        "attr 'explicit_paddings' must have 8 entries (before and after for N, H, "
        "W, C), got ",
        ListString(p));
  }
  for (int64_t v : p) {
    if (v < 0) return ctx.Error("attr 'explicit_paddings' ", ListString(p), ": negative entry");
  }
  if (p[0] != 0 || p[1] != 0 || p[6] != 0 || p[7] != 0) {
    return ctx.Error("attr 'explicit_paddings' ", ListString(p),
                     ": the batch and depth dimensions cannot be padded");
  }
  return OkStatus();
}

Status MakeGeometry(const WindowAttrs& a, std::span<const int64_t> input, int64_t k_h, int64_t k_w,
                    ConvGeometry* g) {
  g->batch = input[0];
  g->in_c = input[3];
  g->h = Window{input[1], k_h, a.stride_h, a.dil_h};
  g->w = Window{input[2], k_w, a.stride_w, a.dil_w};
  if (a.padding == Padding::kExplicit) {
    g->h.pad_before = a.explicit_paddings[2];
    g->h.pad_after = a.explicit_paddings[3];
    g->w.pad_before = a.explicit_paddings[4];
    g->w.pad_after = a.explicit_paddings[5];
  }
  KILN_RETURN_IF_ERROR(ComputeOutputSize(a.padding, &g->h));
  return ComputeOutputSize(a.padding, &g->w);
}

Result<int64_t> ConvGroups(int64_t in_c, int64_t filter_in_c, int64_t out_c) {
  if (in_c < 0 || filter_in_c < 0) return int64_t{-1};
  if (in_c == filter_in_c) return int64_t{1};
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

}  // namespace kiln::exec
