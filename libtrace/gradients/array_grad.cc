// Gradient functions of shape and data-movement ops (TensorFlow's array_grad.py semantics).
#include <vector>

#include "gradients/grad_ops.h"
#include "graph.h"
#include "host_scalar.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"
#include "tape.h"

namespace kiln::trace::internal {
namespace {

// Reshape, ExpandDims, Squeeze: the gradient takes the input's shape back.
Result<Values> ReshapeGrad(const GradContext& ctx, const Values& g) {
  Values out(ctx.num_inputs());
  out[0] = ReshapeLike(g[0], ctx.input(0));
  return out;
}

Result<Values> TransposeGrad(const GradContext& ctx, const Values& g) {
  const Value& perm = ctx.input(1);
  Value inverse;
  if (const Tensor* p = Graph::ConstantOf(perm)) {
    std::vector<int64_t> inv(p->NumElements());
    for (int64_t i = 0; i < p->NumElements(); ++i) {
      const int64_t v = p->dtype() == DType::kInt64 ? p->flat<int64_t>()[i] : p->flat<int32_t>()[i];
      if (v < 0 || v >= p->NumElements()) return InvalidArgument("Transpose: bad permutation");
      inv[v] = i;
    }
    inverse = Int32s(inv);
  } else {
    inverse = Op1("InvertPermutation", perm);
  }
  return Values{OpBuilder("Transpose")
                    .Input(g[0])
                    .Input(inverse)
                    .Attr("T", g[0].dtype())
                    .Attr("Tperm", inverse.dtype())
                    .BuildOne(),
                Value()};
}

// The int value of a scalar constant input, normalised against `rank`.
Result<int64_t> ConstantAxis(const GradContext& ctx, size_t input, int rank) {
  std::vector<int64_t> axes;
  if (!ConstantAxes(ctx.input(input), rank, &axes) || axes.size() != 1) {
    return Unimplemented("the gradient of ", ctx.op, " needs its axis known while tracing");
  }
  return axes[0];
}

Value SliceOf(const Value& x, std::span<const int64_t> begin, const Value& size) {
  return OpBuilder("Slice")
      .Input(x)
      .Input(Int32s(begin))
      .Input(size)
      .Attr("T", x.dtype())
      .Attr("Index", DType::kInt32)
      .BuildOne();
}

Result<Values> ConcatGrad(const GradContext& ctx, const Values& g) {
  // ConcatV2(values..., axis): each input gets its slice of the gradient along the axis.
  const size_t n = ctx.num_inputs() - 1;
  const int rank = g[0].shape().rank();
  KILN_ASSIGN_OR_RETURN(int64_t axis, ConstantAxis(ctx, n, rank));
  Values out(n + 1);
  int64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    const Value& x = ctx.input(i);
    if (x.shape().unknown_rank() || x.shape().dim(static_cast<int>(axis)) < 0) {
      return Unimplemented(
          "the gradient of ConcatV2 needs each input's size along the axis "
          "known while tracing");
    }
    std::vector<int64_t> begin(rank, 0);
    begin[axis] = offset;
    std::vector<int64_t> size(rank, -1);
    size[axis] = x.shape().dim(static_cast<int>(axis));
    offset += size[axis];
    if (ctx.need(i)) out[i] = SliceOf(g[0], begin, Int32s(size));
  }
  return out;
}

Result<Values> PackGrad(const GradContext& ctx, const Values& g) {
  const int64_t n = ctx.Int("N");
  Values parts = OpBuilder("Unpack")
                     .Input(g[0])
                     .Attr("num", n)
                     .Attr("T", g[0].dtype())
                     .Attr("axis", ctx.Int("axis"))
                     .Build();
  if (static_cast<int64_t>(parts.size()) != n) return parts[0].status();
  return parts;
}

Result<Values> UnpackGrad(const GradContext& ctx, const Values& g) {
  Values parts;
  for (size_t i = 0; i < g.size(); ++i) {
    parts.push_back(g[i].empty() ? ZerosLike(ctx.output(i)) : g[i]);
  }
  return Values{OpBuilder("Pack")
                    .Inputs(parts)
                    .Attr("N", static_cast<int64_t>(parts.size()))
                    .Attr("T", parts[0].dtype())
                    .Attr("axis", ctx.Int("axis"))
                    .BuildOne()};
}

Result<Values> SliceGrad(const GradContext& ctx, const Values& g) {
  // Pad the gradient back: before = begin, after = shape(x) - begin - shape(y).
  const Value& x = ctx.input(0);
  const Value& y = ctx.output(0);
  Value begin = CastTo(ctx.input(1), DType::kInt32);
  Value after = Sub(Sub(ShapeValue(x), begin), ShapeValue(y));
  Value pads = OpBuilder("Pack")
                   .Input(begin)
                   .Input(after)
                   .Attr("N", int64_t{2})
                   .Attr("T", DType::kInt32)
                   .Attr("axis", int64_t{1})
                   .BuildOne();
  Value padded = OpBuilder("Pad")
                     .Input(g[0])
                     .Input(pads)
                     .Attr("T", g[0].dtype())
                     .Attr("Tpaddings", DType::kInt32)
                     .BuildOne();
  return Values{padded, Value(), Value()};
}

Result<Values> PadGrad(const GradContext& ctx, const Values& g) {
  // Slice out the unpadded part: begin = paddings[:, 0], size = shape(x).
  const Value& x = ctx.input(0);
  const Tensor* p = Graph::ConstantOf(ctx.input(1));
  if (p == nullptr) return Unimplemented("the gradient of Pad needs constant paddings");
  std::vector<int64_t> begin;
  for (int64_t i = 0; i < p->dim(0); ++i) {
    begin.push_back(p->dtype() == DType::kInt64 ? p->flat<int64_t>()[2 * i]
                                                : p->flat<int32_t>()[2 * i]);
  }
  Values out(ctx.num_inputs());
  out[0] = SliceOf(g[0], begin, ShapeValue(x));
  return out;
}

Result<Values> GatherGrad(const GradContext& ctx, const Values& g) {
  // Dense form of TensorFlow's IndexedSlices: rows summed by index (axis 0, batch_dims 0).
  const Value& params = ctx.input(0);
  std::vector<int64_t> axes;
  if (ctx.num_inputs() > 2 && (!ConstantAxes(ctx.input(2), params.shape().rank(), &axes) ||
                               axes.size() != 1 || axes[0] != 0 || ctx.Int("batch_dims") != 0)) {
    return Unimplemented("the gradient of ", ctx.op, " is implemented for axis 0 only");
  }
  const Value& indices = ctx.input(1);
  if (params.shape().unknown_rank() || !params.shape().IsFullyDefined()) {
    return Unimplemented("the gradient of ", ctx.op, " needs the params' shape known");
  }
  std::vector<int64_t> flat_shape = {-1};
  for (int i = 1; i < params.shape().rank(); ++i) flat_shape.push_back(params.shape().dim(i));
  std::vector<int64_t> minus_one = {-1};
  Value values = ReshapeTo(g[0], Int32s(flat_shape));
  Value flat_indices = ReshapeTo(indices, Int32s(minus_one));
  Value rows = HostScalar(indices.dtype(), static_cast<double>(params.shape().dim(0)));
  Value dense = OpBuilder("UnsortedSegmentSum")
                    .Input(values)
                    .Input(flat_indices)
                    .Input(rows)
                    .Attr("T", values.dtype())
                    .Attr("Tindices", indices.dtype())
                    .Attr("Tnumsegments", rows.dtype())
                    .BuildOne();
  Values out(ctx.num_inputs());
  out[0] = dense;
  return out;
}

Result<Values> BroadcastToGrad(const GradContext& ctx, const Values& g) {
  return Values{ReduceToShapeOf(g[0], ctx.input(0), ctx.output(0)), Value()};
}

Result<Values> TileGrad(const GradContext& ctx, const Values& g) {
  // Reshape the gradient to [m0, d0, m1, d1, ...] and sum over the multiples' axes.
  const Value& x = ctx.input(0);
  const Tensor* m = Graph::ConstantOf(ctx.input(1));
  if (m == nullptr || !x.shape().IsFullyDefined()) {
    return Unimplemented("the gradient of Tile needs constant multiples and a known input shape");
  }
  std::vector<int64_t> split;
  std::vector<int64_t> axes;
  for (int i = 0; i < x.shape().rank(); ++i) {
    const int64_t mult =
        m->dtype() == DType::kInt64 ? m->flat<int64_t>()[i] : m->flat<int32_t>()[i];
    axes.push_back(static_cast<int64_t>(split.size()));
    split.push_back(mult);
    split.push_back(x.shape().dim(i));
  }
  Value summed = SumAxes(ReshapeTo(g[0], Int32s(split)), Int32s(axes));
  return Values{ReshapeLike(summed, x), Value()};
}

Result<Values> SplitGrad(const GradContext& ctx, const Values& g) {
  // Split(axis, value) / SplitV(value, size_splits, axis): concatenate the parts' gradients.
  const bool v = ctx.op == "SplitV";
  const size_t value_index = v ? 0 : 1;
  const size_t axis_index = v ? 2 : 0;
  Values parts;
  for (size_t i = 0; i < g.size(); ++i) {
    parts.push_back(g[i].empty() ? ZerosLike(ctx.output(i)) : g[i]);
  }
  Value joined = OpBuilder("ConcatV2")
                     .Inputs(parts)
                     .Input(ctx.input(axis_index))
                     .Attr("N", static_cast<int64_t>(parts.size()))
                     .Attr("T", parts[0].dtype())
                     .Attr("Tidx", ctx.input(axis_index).dtype())
                     .BuildOne();
  Values out(ctx.num_inputs());
  out[value_index] = joined;
  return out;
}

constexpr GradientDef kArrayGradients[] = {
    {"Reshape", ReshapeGrad},
    {"ExpandDims", ReshapeGrad},
    {"Squeeze", ReshapeGrad},
    {"Transpose", TransposeGrad},
    {"ConcatV2", ConcatGrad},
    {"Pack", PackGrad},
    {"Unpack", UnpackGrad},
    {"Slice", SliceGrad},
    {"Pad", PadGrad},
    {"GatherV2", GatherGrad},
    {"Gather", GatherGrad},
    {"ResourceGather", nullptr},
    {"BroadcastTo", BroadcastToGrad},
    {"Tile", TileGrad},
    {"Split", SplitGrad},
    {"SplitV", SplitGrad},
    {"PreventGradient", nullptr},
    {"Shape", nullptr},
    {"ShapeN", nullptr},
    {"Size", nullptr},
    {"Rank", nullptr},
    {"Fill", nullptr},
    {"Range", nullptr},
    {"OneHot", nullptr},
    {"RandomUniform", nullptr},
    {"RandomStandardNormal", nullptr},
    {"StatelessRandomUniformV2", nullptr},
};

}  // namespace

std::span<const GradientDef> ArrayGradients() { return kArrayGradients; }

}  // namespace kiln::trace::internal
