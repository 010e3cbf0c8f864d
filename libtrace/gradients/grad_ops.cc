#include "gradients/grad_ops.h"

#include <algorithm>

#include "graph.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"

namespace kiln::trace::internal {

Value Op1(std::string_view op, const Value& x) {
  return OpBuilder(op).Input(x).Attr("T", x.dtype()).BuildOne();
}

Value Op2(std::string_view op, const Value& x, const Value& y) {
  return OpBuilder(op).Input(x).Input(y).Attr("T", x.dtype()).BuildOne();
}

Value AddN(const Values& xs) {
  if (xs.size() == 1) return xs[0];
  return OpBuilder("AddN")
      .Inputs(xs)
      .Attr("N", static_cast<int64_t>(xs.size()))
      .Attr("T", xs[0].dtype())
      .BuildOne();
}

Value ZerosLike(const Value& x) { return Op1("ZerosLike", x); }
Value OnesLike(const Value& x) { return Op1("OnesLike", x); }

Value Int32s(std::span<const int64_t> v) {
  Tensor t(DType::kInt32, Shape{static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.flat<int32_t>()[i] = static_cast<int32_t>(v[i]);
  return Constant(t);
}

Value ShapeValue(const Value& x) {
  if (!x.ok()) return x;
  if (x.shape().IsFullyDefined()) return Int32s(x.shape().dims());
  return OpBuilder("Shape")
      .Input(x)
      .Attr("T", x.dtype())
      .Attr("out_type", DType::kInt32)
      .BuildOne();
}

Value ReshapeTo(const Value& x, const Value& shape) {
  return OpBuilder("Reshape")
      .Input(x)
      .Input(shape)
      .Attr("T", x.dtype())
      .Attr("Tshape", shape.dtype())
      .BuildOne();
}

Value ReshapeLike(const Value& x, const Value& like) {
  if (!x.ok()) return x;
  if (!like.ok()) return like;
  if (x.shape().IsFullyDefined() && x.shape() == like.shape()) return x;
  return ReshapeTo(x, ShapeValue(like));
}

Value SumAxes(const Value& x, const Value& axes, bool keep_dims) {
  OpBuilder b("Sum");
  b.Input(x).Input(axes).Attr("T", x.dtype()).Attr("Tidx", axes.dtype());
  if (keep_dims) b.Attr("keep_dims", true);
  return b.BuildOne();
}

Value BroadcastToShape(const Value& x, const Value& shape) {
  return OpBuilder("BroadcastTo")
      .Input(x)
      .Input(shape)
      .Attr("T", x.dtype())
      .Attr("Tidx", shape.dtype())
      .BuildOne();
}

Value CastTo(const Value& x, DType dtype) {
  if (!x.ok() || x.dtype() == dtype) return x;
  return OpBuilder("Cast").Input(x).Attr("SrcT", x.dtype()).Attr("DstT", dtype).BuildOne();
}

Value SelectV2(const Value& cond, const Value& x, const Value& y) {
  return OpBuilder("SelectV2").Input(cond).Input(x).Input(y).Attr("T", x.dtype()).BuildOne();
}

Value ReduceToShapeOf(const Value& g, const Value& x, const Value& other) {
  if (!g.ok()) return g;
  if (!x.ok()) return x;
  const PartialShape& gs = g.shape();
  const PartialShape& xs = x.shape();
  if (gs.IsFullyDefined() && xs.IsFullyDefined()) {
    if (gs == xs) return g;
    // Broadcasting aligns trailing dims: sum the leading ones and those x has as 1.
    std::vector<int64_t> axes;
    const int lead = gs.rank() - xs.rank();
    for (int i = 0; i < gs.rank(); ++i) {
      if (i < lead || (xs.dim(i - lead) == 1 && gs.dim(i) != 1)) axes.push_back(i);
    }
    Value summed = axes.empty() ? g : SumAxes(g, Int32s(axes));
    return ReshapeLike(summed, x);
  }
  // Dynamic shapes: TensorFlow's own recipe.
  Value sx = ShapeValue(x);
  Value so = ShapeValue(other);
  Values r =
      OpBuilder("BroadcastGradientArgs").Input(sx).Input(so).Attr("T", DType::kInt32).Build();
  if (r.size() != 2) return r.empty() ? Value::Error(Internal("BroadcastGradientArgs")) : r[0];
  return ReshapeTo(SumAxes(g, r[0]), sx);
}

bool ConstantAxes(const Value& axes, int rank, std::vector<int64_t>* out) {
  const Tensor* t = Graph::ConstantOf(axes);
  if (t == nullptr || t->rank() > 1 || rank < 0) return false;
  out->clear();
  for (int64_t i = 0; i < t->NumElements(); ++i) {
    int64_t a = t->dtype() == DType::kInt64 ? t->flat<int64_t>()[i] : t->flat<int32_t>()[i];
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return false;
    out->push_back(a);
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  return true;
}

}  // namespace kiln::trace::internal
