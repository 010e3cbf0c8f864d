// Op-tester cases of FakeQuantWithMinMaxArgs / FakeQuantWithMinMaxVars. The reference builds
// the grid of levels itself (the range moved so that 0 is a level, as the ops document) and
// snaps every value to its nearest level, ties upward; exact agreement with TF's arithmetic is
// checked against TensorFlow in tests/tf.
#include <cmath>

#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

Tensor RefFakeQuant(const Tensor& x, double min, double max, int bits, bool narrow) {
  Tensor out(DType::kFloat, x.shape());
  if (min == 0 && max == 0) return out;  // all zeros
  const double qmin = narrow ? 1 : 0, qmax = std::ldexp(1.0, bits) - 1;
  const double scale = (max - min) / (qmax - qmin);
  // The level nearest to real 0 becomes exactly 0; the grid keeps its step.
  const double zero = std::clamp(std::round(qmin - min / scale), qmin, qmax);
  const double lo = (qmin - zero) * scale, hi = (qmax - zero) * scale;
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const double v = std::clamp(static_cast<double>(x.data<float>()[i]), lo, hi);
    out.data<float>()[i] = static_cast<float>(lo + std::floor((v - lo) / scale + 0.5) * scale);
  }
  return out;
}

// Random inputs moved off the midpoints between levels, where float and double arithmetic
// may round to different neighbours.
Tensor Inputs(const Shape& s, uint32_t seed, double min, double max, int bits, bool narrow) {
  Tensor x = RandomOf(DType::kFloat, s, seed, -8, 8);
  const double qmin = narrow ? 1 : 0, qmax = std::ldexp(1.0, bits) - 1;
  const double scale = (max - min) / (qmax - qmin);
  for (float& v : x.flat<float>()) {
    const double pos = v / scale, frac = pos - std::floor(pos);
    if (std::abs(frac - 0.5) < 1e-3) v += static_cast<float>(0.01 * scale);
  }
  return x;
}

}  // namespace

std::vector<OpCase> QuantizeCases() {
  std::vector<OpCase> c;
  struct Q {
    float min, max;
    int bits;
    bool narrow;
  };
  uint32_t seed = 1;
  for (const Q& q : std::vector<Q>{{-6, 6, 8, false},
                                   {-1, 5, 4, true},
                                   {0.5f, 3, 8, false},
                                   {-3, -0.5f, 16, false},
                                   {-2.3f, 1.7f, 2, true}}) {
    const Q v = q;
    const Shape s = q.bits == 8 && !q.narrow ? Shape{64, 1000} : Shape{4, 25};
    OpCaseBuilder args("FakeQuantWithMinMaxArgs");
    if (q.min != -6) args.Float("min", q.min);
    if (q.max != 6) args.Float("max", q.max);
    if (q.bits != 8) args.Int("num_bits", q.bits);
    if (q.narrow) args.Bool("narrow_range", true);
    c.push_back(args.Input(Inputs(s, seed++, q.min, q.max, q.bits, q.narrow))
                    .Reference1([v](const std::vector<Tensor>& in) {
                      return RefFakeQuant(in[0], v.min, v.max, v.bits, v.narrow);
                    })
                    .Tolerance(1e-5)
                    .Build());
    OpCaseBuilder vars("FakeQuantWithMinMaxVars");
    if (q.bits != 8) vars.Int("num_bits", q.bits);
    if (q.narrow) vars.Bool("narrow_range", true);
    c.push_back(vars.Input(Inputs(s, seed++, q.min, q.max, q.bits, q.narrow))
                    .Input(Tensor::Scalar<float>(q.min))
                    .Input(Tensor::Scalar<float>(q.max))
                    .Reference1([v](const std::vector<Tensor>& in) {
                      return RefFakeQuant(in[0], v.min, v.max, v.bits, v.narrow);
                    })
                    .Tolerance(1e-5)
                    .Build());
  }
  c.push_back(OpCaseBuilder("FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxVars empty range")
                  .Input(RandomOf(DType::kFloat, Shape{10}, seed++))
                  .Input(Tensor::Scalar<float>(0))
                  .Input(Tensor::Scalar<float>(0))
                  .Reference1([](const std::vector<Tensor>& in) {
                    return RefFakeQuant(in[0], 0, 0, 8, false);
                  })
                  .Build());
  return c;
}

}  // namespace kiln::testing
