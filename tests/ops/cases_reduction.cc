// Op-tester cases of the reductions (Sum, Mean, Max, Min, Prod, All, Any) and ArgMax/ArgMin.
// The reference visits every input element once, in order, and folds it into its output
// element in double (for integers: exactly, as the values stay small).
#include <cmath>
#include <limits>

#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

Tensor AsDouble(const Tensor& t) {
  return RefUnaryDouble(
      t, [](double v) { return v; }, DType::kDouble);
}

// The output shape and, per input element, its output position.
struct Folding {
  Shape out;
  std::vector<int64_t> target;
};
Folding Fold(const Shape& in, std::vector<int64_t> axes, bool keep_dims) {
  std::vector<bool> reduced(in.rank(), false);
  for (int64_t a : axes) reduced[a < 0 ? a + in.rank() : a] = true;
  Folding f;
  Shape kept;
  for (int i = 0; i < in.rank(); ++i) {
    if (!reduced[i]) kept.AddDim(in.dim(i));
    if (!reduced[i] || keep_dims) f.out.AddDim(reduced[i] ? 1 : in.dim(i));
  }
  for (int64_t e = 0; e < in.num_elements(); ++e) {
    const std::vector<int64_t> idx = Unravel(e, in);
    int64_t pos = 0;
    for (int i = 0; i < in.rank(); ++i)
      if (!reduced[i]) pos = pos * in.dim(i) + idx[i];
    f.target.push_back(pos);
  }
  return f;
}

enum class Kind { kSum, kMean, kMax, kMin, kProd, kAll, kAny, kEuclidean };

Tensor RefReduce(const Tensor& x, const std::vector<int64_t>& axes, bool keep_dims, Kind kind) {
  const Folding f = Fold(x.shape(), axes, keep_dims);
  const Tensor v = AsDouble(x);
  const int64_t n = f.out.num_elements();
  std::vector<double> acc(n);
  std::vector<int64_t> count(n, 0);
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    acc[i] = kind == Kind::kMax                            ? -inf
             : kind == Kind::kMin                          ? inf
             : (kind == Kind::kProd || kind == Kind::kAll) ? 1
                                                           : 0;
  }
  for (int64_t e = 0; e < x.NumElements(); ++e) {
    double& a = acc[f.target[e]];
    const double val = v.data<double>()[e];
    ++count[f.target[e]];
    switch (kind) {
      case Kind::kSum:
      case Kind::kMean:
        a += val;
        break;
      case Kind::kProd:
        a *= val;
        break;
      case Kind::kEuclidean:
        a += val * val;
        break;
      case Kind::kMax:
        a = (std::isnan(val) || val > a) ? val : a;
        break;
      case Kind::kMin:
        a = (std::isnan(val) || val < a) ? val : a;
        break;
      case Kind::kAll:
        a = a != 0 && val != 0;
        break;
      case Kind::kAny:
        a = a != 0 || val != 0;
        break;
    }
  }
  const bool integer = x.dtype() != DType::kFloat && x.dtype() != DType::kDouble &&
                       x.dtype() != DType::kHalf && x.dtype() != DType::kBFloat16;
  Tensor out(DType::kDouble, f.out);
  for (int64_t i = 0; i < n; ++i) {
    double r = acc[i];
    if (kind == Kind::kMean) r = integer ? (count[i] ? std::trunc(r / count[i]) : 0) : r / count[i];
    if (kind == Kind::kEuclidean) r = integer ? std::trunc(std::sqrt(r)) : std::sqrt(r);
    out.data<double>()[i] = r;
  }
  return RefUnaryDouble(
      out, [](double d) { return d; }, x.dtype());
}

std::string AxesString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

void AddReduce(std::vector<OpCase>* c, const std::string& op, Kind kind, DType t, const Shape& s,
               const std::vector<int64_t>& axes, bool keep_dims, double tol, uint32_t seed,
               double lo = -3, double hi = 3) {
  OpCaseBuilder b(op, op + " " + DTypeShortName(t) + " " + s.ToString() + " axes " +
                          AxesString(axes) + (keep_dims ? " keep_dims" : ""));
  if (kind != Kind::kAll && kind != Kind::kAny) b.T(t);
  b.Type("Tidx", DType::kInt32);  // its default, named so the dtype sweep can vary it
  if (keep_dims) b.Bool("keep_dims", true);
  c->push_back(b.Input(RandomOf(t, s, seed, lo, hi))
                   .ConstInput(Make<int32_t>(std::vector<int32_t>(axes.begin(), axes.end()),
                                             Shape{static_cast<int64_t>(axes.size())}))
                   .Reference1([axes, keep_dims, kind](const std::vector<Tensor>& in) {
                     return RefReduce(in[0], axes, keep_dims, kind);
                   })
                   .Tolerance(tol)
                   .Build());
}

// ArgMax / ArgMin along `axis` by a plain scan; NaN never wins (TF passes over it).
Tensor RefArg(const Tensor& x, int axis, bool max, DType out_type) {
  const Tensor v = AsDouble(x);
  Shape out_shape;
  for (int i = 0; i < x.rank(); ++i)
    if (i != axis) out_shape.AddDim(x.dim(i));
  Tensor out(DType::kDouble, out_shape);
  std::vector<double> best(out_shape.num_elements(), std::numeric_limits<double>::quiet_NaN());
  for (int64_t e = 0; e < x.NumElements(); ++e) {
    const std::vector<int64_t> idx = Unravel(e, x.shape());
    int64_t pos = 0;
    for (int i = 0; i < x.rank(); ++i)
      if (i != axis) pos = pos * x.dim(i) + idx[i];
    const double val = v.data<double>()[e];
    double& b = best[pos];
    if (idx[axis] == 0) out.data<double>()[pos] = 0;
    if (!std::isnan(val) && (std::isnan(b) || (max ? val > b : val < b))) {
      b = val;
      out.data<double>()[pos] = static_cast<double>(idx[axis]);
    }
  }
  return RefUnaryDouble(
      out, [](double d) { return d; }, out_type);
}

}  // namespace

std::vector<OpCase> ReductionCases() {
  std::vector<OpCase> c;
  const std::vector<std::pair<std::string, Kind>> ops = {{"Sum", Kind::kSum},
                                                         {"Mean", Kind::kMean},
                                                         {"Max", Kind::kMax},
                                                         {"Min", Kind::kMin},
                                                         {"Prod", Kind::kProd}};
  // Axis sets: inner, outer, interleaved, all, none, negative; keep_dims.
  struct Geometry {
    Shape shape;
    std::vector<int64_t> axes;
    bool keep_dims;
  };
  const std::vector<Geometry> geometries = {
      {Shape{3, 4}, {1}, false},          {Shape{3, 4}, {0}, true},
      {Shape{2, 3, 4, 5}, {1, 3}, false}, {Shape{2, 3, 4, 5}, {0, 2}, true},
      {Shape{2, 3, 4}, {0, 1, 2}, false}, {Shape{3, 4}, {}, false},
      {Shape{2, 1, 5}, {-1}, false},      {Shape{}, {}, false},
      {Shape{0, 3}, {0}, false},
  };
  uint32_t seed = 1;
  for (const auto& [op, kind] : ops) {
    for (DType t : {DType::kFloat, DType::kInt32}) {
      for (const Geometry& g : geometries) {
        // Products of many values leave the range: floats near 1, integers -1, 0 or 1.
        const bool prod = kind == Kind::kProd;
        const double lo = prod ? (t == DType::kFloat ? 0.5 : -1.4) : -3;
        const double hi = prod ? (t == DType::kFloat ? 1.5 : 1.4) : 3;
        AddReduce(&c, op, kind, t, g.shape, g.axes, g.keep_dims, 1e-5, seed++, lo, hi);
      }
    }
    for (DType t : {DType::kDouble, DType::kHalf, DType::kBFloat16, DType::kInt8, DType::kUInt8,
                    DType::kInt64, DType::kUInt32}) {
      const bool u = t == DType::kUInt8 || t == DType::kUInt32;
      const bool prod = kind == Kind::kProd;
      AddReduce(&c, op, kind, t, Shape{4, 6}, {1}, false, 1e-12, seed++, prod ? 1 : (u ? 0 : -3),
                prod ? 2 : 3);
      AddReduce(&c, op, kind, t, Shape{4, 6}, {0}, false, 1e-12, seed++, prod ? 1 : (u ? 0 : -3),
                prod ? 2 : 3);
    }
  }
  // Large: threads over outputs, long reductions in blocks, column runs over a reduced outer dim.
  for (const auto& [op, kind] : std::vector<std::pair<std::string, Kind>>{
           {"Sum", Kind::kSum}, {"Mean", Kind::kMean}, {"Max", Kind::kMax}}) {
    AddReduce(&c, op, kind, DType::kFloat, Shape{4, 40000}, {1}, false, 1e-4, seed++);
    AddReduce(&c, op, kind, DType::kFloat, Shape{70000}, {0}, false, 1e-4, seed++);
    AddReduce(&c, op, kind, DType::kFloat, Shape{3000, 40}, {0}, false, 1e-4, seed++);
    AddReduce(&c, op, kind, DType::kFloat, Shape{1, 60, 60, 16}, {1, 2}, true, 1e-4, seed++);
    AddReduce(&c, op, kind, DType::kFloat, Shape{300, 300}, {1}, false, 1e-4, seed++);
  }
  // EuclideanNorm (integers take the square root truncated, as TF's kernel).
  for (DType t : {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16, DType::kInt32,
                  DType::kUInt8}) {
    const double tol = t == DType::kFloat ? 1e-5 : (t == DType::kDouble ? 1e-12 : 0);
    AddReduce(&c, "EuclideanNorm", Kind::kEuclidean, t, Shape{3, 4}, {1}, false, tol, seed++);
    AddReduce(&c, "EuclideanNorm", Kind::kEuclidean, t, Shape{2, 3, 4}, {0, 2}, true, tol, seed++);
    AddReduce(&c, "EuclideanNorm", Kind::kEuclidean, t, Shape{0, 3}, {0}, false, tol, seed++);
  }
  AddReduce(&c, "EuclideanNorm", Kind::kEuclidean, DType::kFloat, Shape{70000}, {0}, false, 1e-4,
            seed++);
  AddReduce(&c, "Sum", Kind::kSum, DType::kHalf, Shape{50, 700}, {1}, false, 0, seed++);
  AddReduce(&c, "Mean", Kind::kMean, DType::kBFloat16, Shape{700, 50}, {0}, false, 0, seed++);
  // NaN wins a max or min; empty reductions give the identity (a NaN float mean).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const auto& [op, kind] :
       std::vector<std::pair<std::string, Kind>>{{"Max", Kind::kMax}, {"Min", Kind::kMin}}) {
    const Kind k = kind;
    c.push_back(OpCaseBuilder(op, op + " NaN")
                    .T(DType::kFloat)
                    .Input(Make<float>({1, nan, 3, 0, 2, 5}, {2, 3}))
                    .ConstInput(Make<int32_t>({1}, {1}))
                    .Reference1([k](const std::vector<Tensor>& in) {
                      return RefReduce(in[0], {1}, false, k);
                    })
                    .Build());
  }
  // Integer sums wrap; integer means do not (64-bit sums), as TF's.
  c.push_back(OpCaseBuilder("Sum", "Sum uint8 wraps")
                  .T(DType::kUInt8)
                  .Input(Make<uint8_t>({200, 100}, {2}))
                  .ConstInput(Make<int32_t>({0}, {1}))
                  .Reference1([](const auto&) { return Tensor::Scalar<uint8_t>(44); })
                  .Build());
  c.push_back(OpCaseBuilder("Mean", "Mean uint8 sums wide")
                  .T(DType::kUInt8)
                  .Input(Make<uint8_t>({200, 100, 255}, {3}))
                  .ConstInput(Make<int32_t>({0}, {1}))
                  .Reference1([](const auto&) { return Tensor::Scalar<uint8_t>(185); })
                  .Build());
  c.push_back(OpCaseBuilder("Mean", "Mean int64 axis as int64")
                  .T(DType::kInt64)
                  .Type("Tidx", DType::kInt64)
                  .Input(Make<int64_t>({-7, 0, 5, 6}, {2, 2}))
                  .ConstInput(Make<int64_t>({-1}, {1}))
                  .Reference1([](const auto&) {
                    return Make<int64_t>({-3, 5}, {2});
                  })
                  .Build());
  // A reduction axis only known when running.
  c.push_back(OpCaseBuilder("Sum", "Sum axis as a runtime input")
                  .T(DType::kDouble)
                  .Input(RandomOf(DType::kDouble, Shape{5, 6}, 3))
                  .Input(Tensor::Scalar<int32_t>(1))
                  .Reference1([](const std::vector<Tensor>& in) {
                    return RefReduce(in[0], {1}, false, Kind::kSum);
                  })
                  .Tolerance(1e-12)
                  .Build());
  // All, Any.
  for (const auto& [op, kind] :
       std::vector<std::pair<std::string, Kind>>{{"All", Kind::kAll}, {"Any", Kind::kAny}}) {
    for (const Geometry& g : geometries) {
      AddReduce(&c, op, kind, DType::kBool, g.shape, g.axes, g.keep_dims, 0, seed++);
    }
    AddReduce(&c, op, kind, DType::kBool, Shape{40, 2000}, {0}, false, 0, seed++);
  }

  // ArgMax, ArgMin over each axis; ties go to the first index.
  for (bool max : {true, false}) {
    const std::string op = max ? "ArgMax" : "ArgMin";
    for (DType t : {DType::kFloat, DType::kInt32, DType::kHalf, DType::kUInt8, DType::kBool,
                    DType::kDouble, DType::kInt64}) {
      for (int axis : {0, 1, -1}) {
        for (DType out : {DType::kInt64, DType::kInt32}) {
          const Shape s = t == DType::kFloat && axis == 1 ? Shape{30, 2000, 3} : Shape{4, 5, 3};
          const int a = axis < 0 ? axis + s.rank() : axis;
          OpCaseBuilder b(op);
          if (out != DType::kInt64) b.Type("output_type", out);
          c.push_back(b.T(t)
                          .Input(RandomOf(t, s, seed++, 0, 9))
                          .ConstInput(Tensor::Scalar<int32_t>(axis))
                          .Reference1([a, max, out](const std::vector<Tensor>& in) {
                            return RefArg(in[0], a, max, out);
                          })
                          .Build());
        }
      }
    }
    c.push_back(OpCaseBuilder(op, op + " passes over NaN")
                    .T(DType::kFloat)
                    .Input(Make<float>({nan, 1, 3, 1, nan, 0, nan, nan, nan}, {3, 3}))
                    .ConstInput(Tensor::Scalar<int32_t>(1))
                    .Reference1([max](const std::vector<Tensor>& in) {
                      return RefArg(in[0], 1, max, DType::kInt64);
                    })
                    .Build());
  }
  c.push_back(OpCaseBuilder("ArgMax", "ArgMax int16 indices")
                  .T(DType::kFloat)
                  .Type("output_type", DType::kInt16)
                  .Input(RandomOf(DType::kFloat, Shape{6, 7}, 5))
                  .Input(Tensor::Scalar<int32_t>(0))
                  .Reference1([](const std::vector<Tensor>& in) {
                    return RefArg(in[0], 0, true, DType::kInt16);
                  })
                  .Build());
  return c;
}

}  // namespace kiln::testing
