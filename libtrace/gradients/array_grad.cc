// Gradient functions of shape and data-movement ops (TensorFlow's array_grad.py semantics).
#include <span>
#include <vector>

#include "gradients/grad_ops.h"
#include "graph.h"
#include "kiln/trace/array_ops.h"
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

Value TransposeBy(const Value& x, std::span<const int64_t> perm) {
  return OpBuilder("Transpose")
      .Input(x)
      .Input(Int32s(perm))
      .Attr("T", x.dtype())
      .Attr("Tperm", DType::kInt32)
      .BuildOne();
}

// A rank-1 int32 shape assembled from known dims and dims of values: a constant when every dim
// is known while tracing (the planner then sees static shapes), else runs of constants and
// slices of Shape ops joined by ConcatV2, as TensorFlow's graph-mode gradients build it.
class ShapeBuilder {
 public:
  ShapeBuilder& Known(int64_t dim) {
    known_.push_back(dim);
    return *this;
  }
  // x's dims [begin, end).
  ShapeBuilder& DimsOf(const Value& x, int begin, int end) {
    bool all_known = true;
    for (int i = begin; i < end; ++i) all_known = all_known && x.shape().dim(i) >= 0;
    if (all_known) {
      for (int i = begin; i < end; ++i) known_.push_back(x.shape().dim(i));
      return *this;
    }
    Flush();
    const std::vector<int64_t> start = {begin};
    const std::vector<int64_t> size = {end - begin};
    pieces_.push_back(SliceOf(ShapeValue(x), start, Int32s(size)));
    return *this;
  }
  Value Build() {
    if (pieces_.empty()) return Int32s(known_);
    Flush();
    return OpBuilder("ConcatV2")
        .Inputs(pieces_)
        .Input(Scalar<int32_t>(0))
        .Attr("N", static_cast<int64_t>(pieces_.size()))
        .Attr("T", DType::kInt32)
        .Attr("Tidx", DType::kInt32)
        .BuildOne();
  }

 private:
  void Flush() {
    if (!known_.empty()) pieces_.push_back(Int32s(known_));
    known_.clear();
  }
  std::vector<int64_t> known_;
  Values pieces_;
};

// Dim i of x as an int32 scalar: a constant when known, else sliced out of Shape(x).
Value DimOf(const Value& x, int i) {
  if (x.shape().dim(i) >= 0) return Scalar<int32_t>(static_cast<int32_t>(x.shape().dim(i)));
  const std::vector<int64_t> start = {i};
  const std::vector<int64_t> one = {1};
  const std::vector<int64_t> scalar;
  return ReshapeTo(SliceOf(ShapeValue(x), start, Int32s(one)), Int32s(scalar));
}

// a * b for int32 scalars, folded when both are constants.
Value MulDims(const Value& a, const Value& b) {
  const Tensor* x = Graph::ConstantOf(a);
  const Tensor* y = Graph::ConstantOf(b);
  if (x != nullptr && y != nullptr)
    return Scalar<int32_t>(x->flat<int32_t>()[0] * y->flat<int32_t>()[0]);
  return Mul(a, b);
}

// GatherV2's batch_dims, made non-negative as TensorFlow's gradient does.
Result<int64_t> GatherBatchDims(const GradContext& ctx, int64_t axis) {
  int64_t batch_dims = ctx.Int("batch_dims");
  const PartialShape& indices = ctx.input(1).shape();
  if (batch_dims < 0) {
    if (indices.unknown_rank()) {
      return Unimplemented("the gradient of ", ctx.op, " with a negative batch_dims (", batch_dims,
                           ") needs the rank of its indices known while tracing");
    }
    batch_dims += indices.rank();
  }
  if (batch_dims < 0 || batch_dims > axis) {
    return InvalidArgument("the gradient of ", ctx.op, ": batch_dims (", batch_dims,
                           ") must be between 0 and the axis (", axis, ")");
  }
  return batch_dims;
}

// Indices into the params flattened over the batch dims: indices + (flat batch index) * size of
// the gathered axis (TensorFlow's _GetBatchIndices).
Result<Value> BatchIndices(const GradContext& ctx, int64_t batch_dims, const Value& axis_size) {
  const Value& params = ctx.input(0);
  const Value& indices = ctx.input(1);
  if (indices.shape().unknown_rank()) {
    return Unimplemented("the gradient of ", ctx.op, " with batch_dims ", batch_dims,
                         " needs the rank of its indices known while tracing");
  }
  Value batch = Scalar<int32_t>(1);
  for (int i = 0; i < batch_dims; ++i) batch = MulDims(batch, DimOf(params, i));
  Value offsets = Mul(Range(Scalar<int32_t>(0), batch, Scalar<int32_t>(1)), axis_size);
  ShapeBuilder offsets_shape;
  offsets_shape.DimsOf(params, 0, static_cast<int>(batch_dims));
  for (int i = static_cast<int>(batch_dims); i < indices.shape().rank(); ++i)
    offsets_shape.Known(1);
  offsets = ReshapeTo(CastTo(offsets, indices.dtype()), offsets_shape.Build());
  return Add(indices, offsets);
}

Result<Values> GatherGrad(const GradContext& ctx, const Values& g) {
  // TensorFlow's _GatherV2Grad, dense (UnsortedSegmentSum instead of IndexedSlices): move the
  // gathered axis to just after the batch dims, sum the gradient's rows into the params' rows,
  // move the axis back. Shapes unknown while tracing are read with Shape ops.
  const Value& params = ctx.input(0);
  const Value& indices = ctx.input(1);
  const PartialShape& ps = params.shape();
  if (ps.unknown_rank()) {
    return Unimplemented("the gradient of ", ctx.op,
                         " needs the rank of its params known while tracing");
  }
  const int rank = ps.rank();
  int64_t axis = 0;
  int64_t batch_dims = 0;
  if (ctx.num_inputs() > 2) {  // GatherV2; Gather is axis 0 without batch dims
    KILN_ASSIGN_OR_RETURN(axis, ConstantAxis(ctx, 2, rank));
    KILN_ASSIGN_OR_RETURN(batch_dims, GatherBatchDims(ctx, axis));
  }
  const int a = static_cast<int>(axis);
  const int b = static_cast<int>(batch_dims);
  // perm: [batch dims, axis, other outer dims, inner dims].
  std::vector<int64_t> perm;
  for (int i = 0; i < b; ++i) perm.push_back(i);
  perm.push_back(a);
  for (int i = b; i < a; ++i) perm.push_back(i);
  for (int i = a + 1; i < rank; ++i) perm.push_back(i);
  std::vector<int64_t> inverse(rank);
  for (int i = 0; i < rank; ++i) inverse[perm[i]] = i;

  // The gradient as [params dims before axis, gathered rows, params dims after axis].
  int64_t rows = -1;
  if (!indices.shape().unknown_rank()) {
    rows = 1;
    for (int i = b; i < indices.shape().rank(); ++i) {
      const int64_t d = indices.shape().dim(i);
      rows = d < 0 || rows < 0 ? -1 : rows * d;
    }
  }
  Value values = ReshapeTo(
      g[0], ShapeBuilder().DimsOf(params, 0, a).Known(rows).DimsOf(params, a + 1, rank).Build());
  if (a != b) values = TransposeBy(values, perm);

  const Value axis_size = DimOf(params, a);
  Value flat_indices = indices;
  Value segments = axis_size;
  if (b > 0) {
    KILN_ASSIGN_OR_RETURN(flat_indices, BatchIndices(ctx, batch_dims, axis_size));
    ShapeBuilder flat_shape;
    flat_shape.Known(-1).DimsOf(params, b, a).DimsOf(params, a + 1, rank);
    values = ReshapeTo(values, flat_shape.Build());
    for (int i = 0; i < b; ++i) segments = MulDims(segments, DimOf(params, i));
  }
  const std::vector<int64_t> minus_one = {-1};
  flat_indices = ReshapeTo(flat_indices, Int32s(minus_one));
  Value dense = OpBuilder("UnsortedSegmentSum")
                    .Input(values)
                    .Input(flat_indices)
                    .Input(segments)
                    .Attr("T", values.dtype())
                    .Attr("Tindices", flat_indices.dtype())
                    .Attr("Tnumsegments", segments.dtype())
                    .BuildOne();
  if (b > 0) {
    ShapeBuilder unflat;
    for (int64_t p : perm) unflat.DimsOf(params, static_cast<int>(p), static_cast<int>(p) + 1);
    dense = ReshapeTo(dense, unflat.Build());
  }
  if (a != b) dense = TransposeBy(dense, inverse);
  Values out(ctx.num_inputs());
  out[0] = ReshapeLike(dense, params);
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
