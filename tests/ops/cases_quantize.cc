// Op-tester cases of FakeQuantWithMinMaxArgs / Vars / VarsPerChannel and QuantizeAndDequantize
// V2 / V3 / V4. The fake-quant reference builds
// the grid of levels itself (the range moved so that 0 is a level, as the ops document) and
// snaps every value to its nearest level, ties upward; exact agreement with TF's arithmetic is
// checked against TensorFlow in tests/tf.
#include <algorithm>
#include <cmath>
#include <string>

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

// QuantizeAndDequantize: the largest scale that maps [lo, hi] into the integer range while 0
// stays 0, values (clamped when the range is given) scaled, rounded half to even, scaled back.
// One range per channel of `axis` (-1: the whole tensor), the channel's own when not given.
Tensor RefQdq(const Tensor& x, const std::vector<double>& lo_in, const std::vector<double>& hi_in,
              bool given, int bits, bool is_signed, bool narrow, int axis) {
  Tensor out(DType::kFloat, x.shape());
  const int64_t depth = axis < 0 ? 1 : x.dim(axis);
  int64_t inner = 1;
  for (int d = axis + 1; axis >= 0 && d < x.rank(); ++d) inner *= x.dim(d);
  const double qmin = is_signed ? -std::ldexp(1.0, bits - 1) + (narrow ? 1 : 0) : 0;
  const double qmax = is_signed ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
  auto channel = [&](int64_t i) { return (i / inner) % depth; };
  std::vector<double> lo(depth, 1e300), hi(depth, -1e300);
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const int64_t c = channel(i);
    lo[c] = given ? lo_in[c] : std::min(lo[c], double(x.data<float>()[i]));
    hi[c] = given ? hi_in[c] : std::max(hi[c], double(x.data<float>()[i]));
  }
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const int64_t c = channel(i);
    const double from_min = qmin * lo[c] > 0 ? qmin / lo[c] : 1e300;
    const double from_max = qmax * hi[c] > 0 ? qmax / hi[c] : 1e300;
    const double scale = std::min(from_min, from_max);
    double v = x.data<float>()[i];
    if (given) v = std::clamp(v, qmin / scale, qmax / scale);
    out.data<float>()[i] = static_cast<float>(std::nearbyint(v * scale) / scale);
  }
  return out;
}

void AddQdqCases(std::vector<OpCase>& c, uint32_t& seed) {
  struct Q {
    const char* op;
    Shape shape;
    int axis;
    bool given, is_signed, narrow;
    int bits;
  };
  for (const Q& q :
       std::vector<Q>{{"QuantizeAndDequantizeV2", Shape{4, 30}, -1, true, true, false, 8},
                      {"QuantizeAndDequantizeV2", Shape{4, 30}, -1, false, true, true, 4},
                      {"QuantizeAndDequantizeV4", Shape{3, 5, 2}, 1, false, true, false, 8},
                      {"QuantizeAndDequantizeV4", Shape{6, 3}, 1, true, false, false, 8},
                      {"QuantizeAndDequantizeV3", Shape{50}, -1, true, true, false, 5}}) {
    const int64_t depth = q.axis < 0 ? 1 : q.shape.dim(q.axis);
    std::vector<float> lo(depth), hi(depth);
    for (int64_t k = 0; k < depth; ++k) {
      lo[k] = q.is_signed ? -1.0f - 0.5f * static_cast<float>(k) : 0.0f;
      hi[k] = 1.5f + 0.25f * static_cast<float>(k);
    }
    const Shape range = q.axis < 0 ? Shape{} : Shape{depth};
    OpCaseBuilder b(q.op);
    b.T(DType::kFloat).Bool("range_given", q.given).Int("axis", q.axis);
    if (!q.is_signed) b.Bool("signed_input", false);
    if (q.narrow) b.Bool("narrow_range", true);
    if (std::string(q.op) != "QuantizeAndDequantizeV3") b.Int("num_bits", q.bits);
    // Values off the rounding midpoints, where float and double may differ.
    Tensor x = RandomOf(DType::kFloat, q.shape, seed++, -3, 3);
    b.Input(x).Input(Make<float>(lo, range)).Input(Make<float>(hi, range));
    if (std::string(q.op) == "QuantizeAndDequantizeV3") b.Input(Tensor::Scalar<int32_t>(q.bits));
    const std::vector<double> lo_d(lo.begin(), lo.end()), hi_d(hi.begin(), hi.end());
    c.push_back(b.Reference1([q, lo_d, hi_d](const std::vector<Tensor>& in) {
                   return RefQdq(in[0], lo_d, hi_d, q.given, q.bits, q.is_signed, q.narrow, q.axis);
                 })
                    .Tolerance(1e-5)
                    .Build());
  }
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
  // Per channel of the last dimension, an empty range (all zeros) among them.
  const std::vector<float> ch_min = {-6, -1, 0.5f, 0}, ch_max = {6, 5, 3, 0};
  c.push_back(OpCaseBuilder("FakeQuantWithMinMaxVarsPerChannel")
                  .Input(Inputs(Shape{25, 4}, seed++, -1, 5, 8, false))
                  .Input(Make<float>(ch_min, Shape{4}))
                  .Input(Make<float>(ch_max, Shape{4}))
                  .Reference1([ch_min, ch_max](const std::vector<Tensor>& in) {
                    Tensor out(DType::kFloat, in[0].shape());
                    for (int ch = 0; ch < 4; ++ch) {
                      Tensor col(DType::kFloat, Shape{25});
                      for (int r = 0; r < 25; ++r)
                        col.data<float>()[r] = in[0].data<float>()[r * 4 + ch];
                      const Tensor q = RefFakeQuant(col, ch_min[ch], ch_max[ch], 8, false);
                      for (int r = 0; r < 25; ++r)
                        out.data<float>()[r * 4 + ch] = q.data<float>()[r];
                    }
                    return out;
                  })
                  .Tolerance(1e-5)
                  .Build());
  AddQdqCases(c, seed);
  return c;
}

}  // namespace kiln::testing
