// Gradient functions of element-wise math, reductions and matrix products (TensorFlow's
// math_grad.py semantics and op names).
#include <vector>

#include "gradients/grad_ops.h"
#include "host_scalar.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"
#include "tape.h"

namespace kiln::trace::internal {
namespace {

Value Scaled(const Value& x, double c) { return Mul(x, HostScalar(x, c)); }

Result<Values> IdentityGrad(const GradContext& ctx, const Values& g) {
  Values out(ctx.num_inputs());
  out[0] = g[0];
  return out;
}

Result<Values> AddNGrad(const GradContext& ctx, const Values& g) {
  return Values(ctx.num_inputs(), g[0]);
}

Result<Values> AddGrad(const GradContext& ctx, const Values& g) {
  Values out(2);
  if (ctx.need(0)) out[0] = ReduceToShapeOf(g[0], ctx.input(0), ctx.input(1));
  if (ctx.need(1)) out[1] = ReduceToShapeOf(g[0], ctx.input(1), ctx.input(0));
  return out;
}

Result<Values> SubGrad(const GradContext& ctx, const Values& g) {
  Values out(2);
  if (ctx.need(0)) out[0] = ReduceToShapeOf(g[0], ctx.input(0), ctx.input(1));
  if (ctx.need(1)) out[1] = ReduceToShapeOf(Op1("Neg", g[0]), ctx.input(1), ctx.input(0));
  return out;
}

Result<Values> MulGrad(const GradContext& ctx, const Values& g) {
  Values out(2);
  const Value& x = ctx.input(0);
  const Value& y = ctx.input(1);
  if (ctx.need(0)) out[0] = ReduceToShapeOf(Mul(g[0], y), x, y);
  if (ctx.need(1)) out[1] = ReduceToShapeOf(Mul(x, g[0]), y, x);
  return out;
}

Result<Values> DivGrad(const GradContext& ctx, const Values& g) {
  Values out(2);
  const Value& x = ctx.input(0);
  const Value& y = ctx.input(1);
  if (ctx.need(0)) out[0] = ReduceToShapeOf(Div(g[0], y), x, y);
  // d(x/y)/dy = -x / y^2
  if (ctx.need(1)) out[1] = ReduceToShapeOf(Mul(g[0], Div(Div(Op1("Neg", x), y), y)), y, x);
  return out;
}

Result<Values> MaximumMinimumGrad(const GradContext& ctx, const Values& g) {
  Values out(2);
  const Value& x = ctx.input(0);
  const Value& y = ctx.input(1);
  // Ties go to x, as in TensorFlow.
  const bool is_max = ctx.op == "Maximum";
  Value x_wins = OpBuilder(is_max ? "GreaterEqual" : "LessEqual")
                     .Input(x)
                     .Input(y)
                     .Attr("T", x.dtype())
                     .BuildOne();
  Value zeros = ZerosLike(g[0]);
  if (ctx.need(0)) out[0] = ReduceToShapeOf(SelectV2(x_wins, g[0], zeros), x, y);
  if (ctx.need(1)) out[1] = ReduceToShapeOf(SelectV2(x_wins, zeros, g[0]), y, x);
  return out;
}

Result<Values> SquaredDifferenceGrad(const GradContext& ctx, const Values& g) {
  Values out(2);
  const Value& x = ctx.input(0);
  const Value& y = ctx.input(1);
  Value d = Mul(Scaled(g[0], 2.0), Sub(x, y));
  if (ctx.need(0)) out[0] = ReduceToShapeOf(d, x, y);
  if (ctx.need(1)) out[1] = ReduceToShapeOf(Op1("Neg", d), y, x);
  return out;
}

Result<Values> PowGrad(const GradContext& ctx, const Values& g) {
  Values out(2);
  const Value& x = ctx.input(0);
  const Value& y = ctx.input(1);
  const Value& z = ctx.output(0);
  // dz/dx = y * x^(y-1); dz/dy = z * log(x) where x > 0, else 0.
  if (ctx.need(0)) {
    out[0] = ReduceToShapeOf(Mul(g[0], Mul(y, Op2("Pow", x, Sub(y, HostScalar(y, 1.0))))), x, y);
  }
  if (ctx.need(1)) {
    Value positive =
        OpBuilder("Greater").Input(x).Input(ZerosLike(x)).Attr("T", x.dtype()).BuildOne();
    Value safe_x = SelectV2(positive, x, OnesLike(x));
    Value log_x = SelectV2(positive, Op1("Log", safe_x), ZerosLike(x));
    out[1] = ReduceToShapeOf(Mul(g[0], Mul(z, log_x)), y, x);
  }
  return out;
}

Result<Values> NegGrad(const GradContext&, const Values& g) { return Values{Op1("Neg", g[0])}; }

Result<Values> SquareGrad(const GradContext& ctx, const Values& g) {
  return Values{Mul(g[0], Scaled(ctx.input(0), 2.0))};
}

Result<Values> SqrtGrad(const GradContext& ctx, const Values& g) {
  // 0.5 * g / y
  return Values{Div(Scaled(g[0], 0.5), ctx.output(0))};
}

Result<Values> RsqrtGrad(const GradContext& ctx, const Values& g) {
  // -0.5 * g * y^3
  const Value& y = ctx.output(0);
  return Values{Mul(Scaled(g[0], -0.5), Mul(y, Mul(y, y)))};
}

Result<Values> ReciprocalGrad(const GradContext& ctx, const Values& g) {
  const Value& y = ctx.output(0);
  return Values{Op1("Neg", Mul(g[0], Mul(y, y)))};
}

Result<Values> ExpGrad(const GradContext& ctx, const Values& g) {
  return Values{Mul(g[0], ctx.output(0))};
}

Result<Values> LogGrad(const GradContext& ctx, const Values& g) {
  return Values{Div(g[0], ctx.input(0))};
}

Result<Values> Log1pGrad(const GradContext& ctx, const Values& g) {
  return Values{Div(g[0], Add(ctx.input(0), HostScalar(ctx.input(0), 1.0)))};
}

Result<Values> TanhGrad(const GradContext& ctx, const Values& g) {
  return Values{Op2("TanhGrad", ctx.output(0), g[0])};
}

Result<Values> SigmoidGrad(const GradContext& ctx, const Values& g) {
  return Values{Op2("SigmoidGrad", ctx.output(0), g[0])};
}

Result<Values> AbsGrad(const GradContext& ctx, const Values& g) {
  return Values{Mul(g[0], Op1("Sign", ctx.input(0)))};
}

Result<Values> SinGrad(const GradContext& ctx, const Values& g) {
  return Values{Mul(g[0], Op1("Cos", ctx.input(0)))};
}

Result<Values> CosGrad(const GradContext& ctx, const Values& g) {
  return Values{Op1("Neg", Mul(g[0], Op1("Sin", ctx.input(0))))};
}

Result<Values> ErfGrad(const GradContext& ctx, const Values& g) {
  // 2/sqrt(pi) * exp(-x^2)
  const Value& x = ctx.input(0);
  return Values{Mul(Scaled(g[0], 1.1283791670955126), Op1("Exp", Op1("Neg", Op1("Square", x))))};
}

Result<Values> CastGrad(const GradContext& ctx, const Values& g) {
  const DType src = ctx.Type("SrcT");
  if (!IsDifferentiable(src) || !IsDifferentiable(ctx.Type("DstT"))) return Values{Value()};
  return Values{CastTo(g[0], src)};
}

// The reduction's gradient broadcast back over the reduced axes (keep-dims shape, then
// BroadcastTo the input's shape).
Result<Value> BroadcastReduced(const GradContext& ctx, const Value& g) {
  const Value& x = ctx.input(0);
  const int rank = x.shape().rank();
  std::vector<int64_t> axes;
  if (!ConstantAxes(ctx.input(1), rank, &axes)) {
    return Unimplemented("the gradient of ", ctx.op,
                         " needs reduction axes and an input rank known while tracing");
  }
  Value kept = g;
  if (!ctx.Bool("keep_dims")) {
    if (x.shape().IsFullyDefined()) {
      std::vector<int64_t> dims(x.shape().dims().begin(), x.shape().dims().end());
      for (int64_t a : axes) dims[a] = 1;
      kept = ReshapeTo(g, Int32s(dims));
    } else {
      // kept_i = reduced ? 1 : shape_i, from the dynamic shape.
      std::vector<int64_t> keep(rank, 1);
      std::vector<int64_t> ones(rank, 0);
      for (int64_t a : axes) {
        keep[a] = 0;
        ones[a] = 1;
      }
      Value dims = Add(Mul(ShapeValue(x), Int32s(keep)), Int32s(ones));
      kept = ReshapeTo(g, dims);
    }
  }
  return BroadcastToShape(kept, ShapeValue(x));
}

Result<Values> SumGrad(const GradContext& ctx, const Values& g) {
  KILN_ASSIGN_OR_RETURN(Value b, BroadcastReduced(ctx, g[0]));
  return Values{b, Value()};
}

Result<Values> MeanGrad(const GradContext& ctx, const Values& g) {
  KILN_ASSIGN_OR_RETURN(Value b, BroadcastReduced(ctx, g[0]));
  const Value& x = ctx.input(0);
  const Value& y = ctx.output(0);
  Value factor;
  if (x.shape().IsFullyDefined() && y.shape().IsFullyDefined()) {
    const int64_t nx = x.shape().ToShape()->num_elements();
    const int64_t ny = y.shape().ToShape()->num_elements();
    factor = HostScalar(x, ny == 0 ? 1.0 : static_cast<double>(nx) / static_cast<double>(ny));
  } else {
    auto size = [](const Value& v) {
      return OpBuilder("Size")
          .Input(v)
          .Attr("T", v.dtype())
          .Attr("out_type", DType::kInt32)
          .BuildOne();
    };
    Value ratio = OpBuilder("FloorDiv")
                      .Input(size(x))
                      .Input(Op2("Maximum", size(y), HostScalar(DType::kInt32, 1.0)))
                      .Attr("T", DType::kInt32)
                      .BuildOne();
    factor = CastTo(ratio, x.dtype());
  }
  return Values{Div(b, factor), Value()};
}

Result<Values> MaxMinGrad(const GradContext& ctx, const Values& g) {
  // The gradient goes to every input equal to the result, shared among ties (TensorFlow).
  const Value& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Value y_b, BroadcastReduced(ctx, ctx.output(0)));
  KILN_ASSIGN_OR_RETURN(Value g_b, BroadcastReduced(ctx, g[0]));
  Value hits =
      CastTo(OpBuilder("Equal").Input(y_b).Input(x).Attr("T", x.dtype()).BuildOne(), x.dtype());
  Value count = BroadcastToShape(SumAxes(hits, ctx.input(1), /*keep_dims=*/true), ShapeValue(x));
  return Values{Div(Mul(hits, g_b), count), Value()};
}

Result<Values> MatMulGrad(const GradContext& ctx, const Values& g) {
  const bool ta = ctx.Bool("transpose_a");
  const bool tb = ctx.Bool("transpose_b");
  const Value& a = ctx.input(0);
  const Value& b = ctx.input(1);
  Values out(2);
  if (!ta && !tb) {
    if (ctx.need(0)) out[0] = MatMul(g[0], b, false, true);
    if (ctx.need(1)) out[1] = MatMul(a, g[0], true, false);
  } else if (!ta && tb) {
    if (ctx.need(0)) out[0] = MatMul(g[0], b, false, false);
    if (ctx.need(1)) out[1] = MatMul(g[0], a, true, false);
  } else if (ta && !tb) {
    if (ctx.need(0)) out[0] = MatMul(b, g[0], false, true);
    if (ctx.need(1)) out[1] = MatMul(a, g[0], false, false);
  } else {
    if (ctx.need(0)) out[0] = MatMul(b, g[0], true, true);
    if (ctx.need(1)) out[1] = MatMul(g[0], a, true, true);
  }
  return out;
}

Value BatchMatMul(const Value& x, const Value& y, bool adj_x, bool adj_y) {
  OpBuilder b("BatchMatMulV2");
  b.Input(x).Input(y).Attr("T", x.dtype());
  if (adj_x) b.Attr("adj_x", true);
  if (adj_y) b.Attr("adj_y", true);
  return b.BuildOne();
}

Result<Values> BatchMatMulGrad(const GradContext& ctx, const Values& g) {
  const bool ax = ctx.Bool("adj_x");
  const bool ay = ctx.Bool("adj_y");
  const Value& x = ctx.input(0);
  const Value& y = ctx.input(1);
  Value gx;
  Value gy;
  if (!ax && !ay) {
    gx = BatchMatMul(g[0], y, false, true);
    gy = BatchMatMul(x, g[0], true, false);
  } else if (!ax && ay) {
    gx = BatchMatMul(g[0], y, false, false);
    gy = BatchMatMul(g[0], x, true, false);
  } else if (ax && !ay) {
    gx = BatchMatMul(y, g[0], false, true);
    gy = BatchMatMul(x, g[0], false, false);
  } else {
    gx = BatchMatMul(y, g[0], true, true);
    gy = BatchMatMul(g[0], x, true, true);
  }
  // Batch dims broadcast: sum the gradient back over them.
  Values out(2);
  if (ctx.need(0)) out[0] = ReduceToShapeOf(gx, x, y);
  if (ctx.need(1)) out[1] = ReduceToShapeOf(gy, y, x);
  return out;
}

Result<Values> SelectGrad(const GradContext& ctx, const Values& g) {
  const Value& c = ctx.input(0);
  Value zeros = ZerosLike(g[0]);
  Values out(3);
  if (ctx.op == "Select") {
    // Same shapes, or a vector condition over the first dimension.
    if (ctx.need(1))
      out[1] =
          OpBuilder("Select").Input(c).Input(g[0]).Input(zeros).Attr("T", g[0].dtype()).BuildOne();
    if (ctx.need(2))
      out[2] =
          OpBuilder("Select").Input(c).Input(zeros).Input(g[0]).Attr("T", g[0].dtype()).BuildOne();
    return out;
  }
  if (ctx.need(1)) out[1] = ReduceToShapeOf(SelectV2(c, g[0], zeros), ctx.input(1), ctx.input(2));
  if (ctx.need(2)) out[2] = ReduceToShapeOf(SelectV2(c, zeros, g[0]), ctx.input(2), ctx.input(1));
  return out;
}

constexpr GradientDef kMathGradients[] = {
    {"Identity", IdentityGrad},
    {"Snapshot", IdentityGrad},
    {"CheckNumerics", IdentityGrad},
    {"AddN", AddNGrad},
    {"Add", AddGrad},
    {"AddV2", AddGrad},
    {"Sub", SubGrad},
    {"Mul", MulGrad},
    {"RealDiv", DivGrad},
    {"Div", DivGrad},
    {"Maximum", MaximumMinimumGrad},
    {"Minimum", MaximumMinimumGrad},
    {"SquaredDifference", SquaredDifferenceGrad},
    {"Pow", PowGrad},
    {"Neg", NegGrad},
    {"Square", SquareGrad},
    {"Sqrt", SqrtGrad},
    {"Rsqrt", RsqrtGrad},
    {"Reciprocal", ReciprocalGrad},
    {"Exp", ExpGrad},
    {"Log", LogGrad},
    {"Log1p", Log1pGrad},
    {"Tanh", TanhGrad},
    {"Sigmoid", SigmoidGrad},
    {"Abs", AbsGrad},
    {"Sin", SinGrad},
    {"Cos", CosGrad},
    {"Erf", ErfGrad},
    {"Cast", CastGrad},
    {"Sum", SumGrad},
    {"Mean", MeanGrad},
    {"Max", MaxMinGrad},
    {"Min", MaxMinGrad},
    {"MatMul", MatMulGrad},
    {"BatchMatMulV2", BatchMatMulGrad},
    {"BatchMatMulV3", BatchMatMulGrad},
    {"Select", SelectGrad},
    {"SelectV2", SelectGrad},
    // Nothing flows through these (TensorFlow registers them as not differentiable).
    {"StopGradient", nullptr},
    {"Sign", nullptr},
    {"Floor", nullptr},
    {"Ceil", nullptr},
    {"Round", nullptr},
    {"Equal", nullptr},
    {"NotEqual", nullptr},
    {"Less", nullptr},
    {"LessEqual", nullptr},
    {"Greater", nullptr},
    {"GreaterEqual", nullptr},
    {"ArgMax", nullptr},
    {"ArgMin", nullptr},
    {"ZerosLike", nullptr},
    {"OnesLike", nullptr},
    {"FloorDiv", nullptr},
    {"FloorMod", nullptr},
    {"IsFinite", nullptr},
    {"IsNan", nullptr},
};

}  // namespace

std::span<const GradientDef> MathGradients() { return kMathGradients; }

}  // namespace kiln::trace::internal
