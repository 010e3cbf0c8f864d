// Op-tester cases of the element-wise families: arithmetic, comparisons and logic, unary math,
// activations, BiasAdd, softmax, Cast, AddN, ZerosLike/OnesLike, Select.
#include <Eigen/Core>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "kiln/core/float8.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

// Broadcasting shape pairs, from trivial to one big enough to be split across threads.
const std::vector<std::pair<Shape, Shape>>& Pairs() {
  static const std::vector<std::pair<Shape, Shape>> pairs = {
      {Shape{2, 3}, Shape{2, 3}},
      {Shape{2, 3}, Shape{3}},
      {Shape{}, Shape{2, 2}},
      {Shape{4, 1, 5}, Shape{3, 1}},
      {Shape{0, 3}, Shape{3}},
      {Shape{64, 1000}, Shape{1000}},
      // Both sides broadcast, and the output fits input 0's aligned block (GroupNormalization's
      // scale: rsqrt(variance) (n, 1, g, 1) * gamma (1, 1, g, c)).
      {Shape{2, 1, 2, 1}, Shape{1, 1, 2, 2}},
      // A bias over rows, a per-row scale (layer norm), an attention mask over heads: the
      // GPU's vector paths along a broadcasting innermost dim.
      {Shape{6, 48}, Shape{48}},
      {Shape{6, 48}, Shape{6, 1}},
      {Shape{2, 3, 4, 16}, Shape{2, 1, 1, 16}},
      // A per-channel operand of few channels (Keras's Normalization of RGB pixels): walked
      // against a tiled copy, on either side, split across threads in the largest.
      {Shape{1, 37, 41, 3}, Shape{3}},
      {Shape{5}, Shape{2, 17, 19, 5}},
      {Shape{4, 96, 96, 3}, Shape{1, 1, 3}},
  };
  return pairs;
}

void AddBinary(std::vector<OpCase>* cases, const std::string& op, DType t,
               const std::function<double(double, double)>& f, DType out = DType::kInvalid,
               double rhs_lo = -3, double rhs_hi = 3, double tol = 1e-6) {
  uint32_t seed = 11;
  for (const auto& p : Pairs()) {
    Tensor a = RandomOf(t, p.first, seed++);
    Tensor b = RandomOf(t, p.second, seed++, rhs_lo, rhs_hi);
    cases->push_back(OpCaseBuilder(op)
                         .T(t)
                         .Input(a)
                         .Input(b)
                         .Reference1([f, out](const std::vector<Tensor>& in) {
                           return RefBinaryDouble(in[0], in[1], f, out);
                         })
                         .Tolerance(tol)
                         .Build());
  }
}

void AddUnary(std::vector<OpCase>* cases, const std::string& op, DType t,
              const std::function<double(double)>& f, double lo = -3, double hi = 3,
              double tol = 1e-6) {
  for (const Shape& s : {Shape{}, Shape{7}, Shape{3, 4}, Shape{96, 1024}}) {
    cases->push_back(
        OpCaseBuilder(op)
            .T(t)
            .Input(RandomOf(t, s, 5, lo, hi))
            .Reference1([f](const std::vector<Tensor>& in) { return RefUnaryDouble(in[0], f); })
            .Tolerance(tol)
            .Build());
  }
}

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

}  // namespace

std::vector<OpCase> ElementwiseCases() {
  std::vector<OpCase> c;
  auto add = [](double a, double b) { return a + b; };
  for (DType t :
       {DType::kFloat, DType::kDouble, DType::kHalf, DType::kInt32, DType::kInt64, DType::kUInt8}) {
    AddBinary(&c, "AddV2", t, add);
    AddBinary(&c, "Mul", t, [](double a, double b) { return a * b; });
  }
  AddBinary(&c, "Add", DType::kFloat, add);
  AddBinary(&c, "Sub", DType::kFloat, [](double a, double b) { return a - b; });
  AddBinary(&c, "Sub", DType::kInt16, [](double a, double b) { return a - b; });
  // TF's Maximum/Minimum propagate NaN from either side.
  AddBinary(&c, "Maximum", DType::kFloat, [](double a, double b) {
    return std::isnan(a) || std::isnan(b) ? a + b : std::max(a, b);
  });
  AddBinary(&c, "Minimum", DType::kInt32, [](double a, double b) { return std::min(a, b); });
  AddBinary(&c, "Minimum", DType::kBFloat16, [](double a, double b) { return std::min(a, b); });
  AddBinary(
      &c, "RealDiv", DType::kFloat, [](double a, double b) { return a / b; }, DType::kInvalid, 1, 5,
      1e-6);
  AddBinary(
      &c, "RealDiv", DType::kInt32, [](double a, double b) { return std::trunc(a / b); },
      DType::kInvalid, 1, 5);
  AddBinary(
      &c, "FloorDiv", DType::kInt32, [](double a, double b) { return std::floor(a / b); },
      DType::kInvalid, 1, 5);
  // Floats divide in float32 (as TF's kernel and the GPU's do) before the floor.
  AddBinary(
      &c, "FloorDiv", DType::kFloat,
      [](double a, double b) {
        return std::floor(static_cast<double>(static_cast<float>(a) / static_cast<float>(b)));
      },
      DType::kInvalid, 1, 5);
  AddBinary(
      &c, "FloorMod", DType::kFloat,
      [](double a, double b) {
        // TF's formula: fmod, moved to the divisor's sign (2.5 mod +Inf = 2.5, -2.5 mod +Inf =
        // +Inf).
        double r = std::fmod(a, b);
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
      },
      DType::kInvalid, 1, 5, 1e-5);
  AddBinary(
      &c, "Pow", DType::kFloat, [](double a, double b) { return std::pow(a, b); }, DType::kInvalid,
      0, 3, 1e-5);
  for (auto [op, f] : std::vector<std::pair<std::string, std::function<double(double, double)>>>{
           {"Less", [](double a, double b) { return a < b; }},
           {"LessEqual", [](double a, double b) { return a <= b; }},
           {"Greater", [](double a, double b) { return a > b; }},
           {"GreaterEqual", [](double a, double b) { return a >= b; }},
           {"Equal", [](double a, double b) { return a == b; }},
           {"NotEqual", [](double a, double b) { return a != b; }}}) {
    AddBinary(&c, op, DType::kInt32, f, DType::kBool);
    AddBinary(&c, op, DType::kFloat, f, DType::kBool);
  }
  c.push_back(OpCaseBuilder("Equal", "Equal string")
                  .T(DType::kString)
                  .Input(Make<std::string>({"a", "bb", "c"}, {3}))
                  .Input(Make<std::string>({"a", "b", "c"}, {3}))
                  .Reference1([](const auto&) {
                    return Make<bool>({true, false, true}, {3});
                  })
                  .Build());
  // Quantized values compare by their stored integers, with broadcasting.
  for (const bool equal : {true, false}) {
    c.push_back(
        OpCaseBuilder(equal ? "Equal" : "NotEqual", equal ? "Equal qint8" : "NotEqual qint8")
            .T(DType::kQInt8)
            .Input(Make<QInt8>({QInt8{-3}, QInt8{5}, QInt8{127}, QInt8{0}}, {2, 2}))
            .Input(Make<QInt8>({QInt8{-3}, QInt8{127}}, {2}))
            .Reference1([equal](const auto&) {
              return Make<bool>({equal, !equal, !equal, !equal}, {2, 2});
            })
            .Build());
  }
  c.push_back(OpCaseBuilder("NotEqual", "NotEqual, incompatible shapes allowed")
                  .T(DType::kInt32)
                  .Bool("incompatible_shape_error", false)
                  .Input(Make<int32_t>({1, 2, 3}, {3}))
                  .Input(Make<int32_t>({1, 2}, {2}))
                  .Reference1([](const auto&) { return Tensor::Scalar<bool>(true); })
                  .Build());
  for (auto [op, f] : std::vector<std::pair<std::string, std::function<double(double, double)>>>{
           {"LogicalAnd", [](double a, double b) { return a != 0 && b != 0; }},
           {"LogicalOr", [](double a, double b) { return a != 0 || b != 0; }}}) {
    const auto fn = f;  // captured below (Clang 14 cannot capture a structured binding)
    uint32_t seed = 3;
    for (const auto& p : Pairs()) {
      const uint32_t s0 = seed++, s1 = seed++;  // named: GCC 12 warns on two seed++ in a chain
      c.push_back(OpCaseBuilder(op)
                      .Input(RandomOf(DType::kBool, p.first, s0))
                      .Input(RandomOf(DType::kBool, p.second, s1))
                      .Reference1([fn](const std::vector<Tensor>& in) {
                        return RefBinaryDouble(in[0], in[1], fn);
                      })
                      .Build());
    }
  }
  c.push_back(OpCaseBuilder("LogicalNot")
                  .Input(RandomOf(DType::kBool, Shape{5, 7}, 1))
                  .Reference1([](const std::vector<Tensor>& in) {
                    return RefUnaryDouble(in[0], [](double x) { return x == 0; });
                  })
                  .Build());
  c.push_back(OpCaseBuilder("AddV2", "AddV2 string")
                  .T(DType::kString)
                  .Input(Make<std::string>({"a", "b"}, {2}))
                  .Input(Make<std::string>({"x"}, {1}))
                  .Reference1([](const auto&) {
                    return Make<std::string>({"ax", "bx"}, {2});
                  })
                  .Build());

  // Unary math and activations.
  for (DType t : {DType::kFloat, DType::kDouble}) {
    AddUnary(&c, "Neg", t, [](double x) { return -x; });
    AddUnary(&c, "Abs", t, [](double x) { return std::abs(x); });
    AddUnary(&c, "Square", t, [](double x) { return x * x; });
    AddUnary(
        &c, "Sqrt", t, [](double x) { return std::sqrt(x); }, 0, 9);
    AddUnary(
        &c, "Rsqrt", t, [](double x) { return 1 / std::sqrt(x); }, 0.5, 9, 1e-5);
    AddUnary(
        &c, "Exp", t, [](double x) { return std::exp(x); }, -3, 3, 1e-5);
    AddUnary(
        &c, "Log", t, [](double x) { return std::log(x); }, 0.1, 9, 1e-5);
    AddUnary(
        &c, "Tanh", t, [](double x) { return std::tanh(x); }, -3, 3, 1e-5);
    AddUnary(&c, "Sigmoid", t, Sigmoid, -8, 8, 1e-5);
    AddUnary(
        &c, "Reciprocal", t, [](double x) { return 1 / x; }, 0.5, 4, 1e-6);
    AddUnary(&c, "Relu", t, [](double x) { return std::max(x, 0.0); });
    AddUnary(
        &c, "Relu6", t, [](double x) { return std::clamp(x, 0.0, 6.0); }, -3, 9);
    AddUnary(
        &c, "Elu", t, [](double x) { return x < 0 ? std::exp(x) - 1 : x; }, -3, 3, 1e-5);
  }
  AddUnary(&c, "Relu", DType::kHalf, [](double x) { return std::max(x, 0.0); });
  AddUnary(&c, "Neg", DType::kInt32, [](double x) { return -x; });
  AddUnary(&c, "Square", DType::kInt64, [](double x) { return x * x; });

  // BiasAdd: NHWC (bias along the last dim) and NCHW (along dim 1); 37 channels take whole
  // vectors and a tail at every ISA level.
  for (bool nchw : {false, true}) {
    for (const int64_t channels : {3, 37}) {
      const Shape value = nchw ? Shape{2, channels, 4, 5} : Shape{2, 4, 5, channels};
      c.push_back(OpCaseBuilder("BiasAdd", std::string(nchw ? "BiasAdd NCHW" : "BiasAdd NHWC") +
                                               " " + std::to_string(channels) + " channels")
                      .T(DType::kFloat)
                      .String("data_format", nchw ? "NCHW" : "NHWC")
                      .Input(RandomOf(DType::kFloat, value, 1))
                      .Input(RandomOf(DType::kFloat, Shape{channels}, 2))
                      .Reference1([nchw](const std::vector<Tensor>& in) {
                        Tensor out = in[0].DeepCopy();
                        for (int64_t i = 0; i < out.NumElements(); ++i) {
                          const std::vector<int64_t> idx = Unravel(i, out.shape());
                          out.data<float>()[i] += in[1].data<float>()[idx[nchw ? 1 : 3]];
                        }
                        return out;
                      })
                      .Tolerance(1e-6)
                      .Build());
    }
  }
  // Integers wrap (int8: 100 + 100 = -56).
  c.push_back(OpCaseBuilder("BiasAdd", "BiasAdd NHWC int8 wraps")
                  .T(DType::kInt8)
                  .Input(Make<int8_t>({100, -100, 5, 7, 1, 2}, {2, 3}))
                  .Input(Make<int8_t>({100, -100, 0}, {3}))
                  .Reference1([](const std::vector<Tensor>&) {
                    return Make<int8_t>({-56, 56, 5, 107, -99, 2}, {2, 3});
                  })
                  .Build());
  // Softmax and LogSoftmax over the last dim.
  for (bool log : {false, true}) {
    // Rows past 1024 values take the GPU's block-per-row kernel, shorter ones a warp each.
    for (const Shape& s : {Shape{5}, Shape{3, 10}, Shape{2, 3, 7}, Shape{2, 1500}}) {
      c.push_back(OpCaseBuilder(log ? "LogSoftmax" : "Softmax")
                      .T(DType::kFloat)
                      .Input(RandomOf(DType::kFloat, s, 9, -5, 5))
                      .Reference1([log](const std::vector<Tensor>& in) {
                        Tensor out(DType::kFloat, in[0].shape());
                        const int64_t depth = in[0].dim(in[0].rank() - 1);
                        for (int64_t r = 0; r < in[0].NumElements() / depth; ++r) {
                          const float* x = in[0].data<float>() + r * depth;
                          double m = x[0], sum = 0;
                          for (int64_t j = 0; j < depth; ++j) m = std::max<double>(m, x[j]);
                          for (int64_t j = 0; j < depth; ++j) sum += std::exp(x[j] - m);
                          for (int64_t j = 0; j < depth; ++j)
                            out.data<float>()[r * depth + j] = static_cast<float>(
                                log ? x[j] - m - std::log(sum) : std::exp(x[j] - m) / sum);
                        }
                        return out;
                      })
                      .Tolerance(1e-5)
                      .Build());
    }
  }
  // Cast between dtypes, and to bool (any non-zero is true).
  for (auto [src, dst] : std::vector<std::pair<DType, DType>>{{DType::kFloat, DType::kInt32},
                                                              {DType::kInt32, DType::kFloat},
                                                              {DType::kFloat, DType::kDouble},
                                                              {DType::kInt64, DType::kBool},
                                                              {DType::kUInt8, DType::kFloat},
                                                              {DType::kFloat, DType::kFloat},
                                                              // half precision, as TF casts it
                                                              {DType::kFloat, DType::kHalf},
                                                              {DType::kHalf, DType::kFloat},
                                                              {DType::kFloat, DType::kBFloat16},
                                                              {DType::kBFloat16, DType::kFloat},
                                                              {DType::kHalf, DType::kBFloat16},
                                                              {DType::kDouble, DType::kBFloat16},
                                                              {DType::kInt32, DType::kHalf},
                                                              {DType::kHalf, DType::kInt32},
                                                              {DType::kBFloat16, DType::kInt64},
                                                              {DType::kUInt32, DType::kHalf},
                                                              {DType::kHalf, DType::kBool},
                                                              {DType::kBool, DType::kBFloat16}}) {
    const DType to = dst;
    c.push_back(OpCaseBuilder("Cast")
                    .Type("SrcT", src)
                    .Type("DstT", dst)
                    .Input(RandomOf(src, Shape{4, 6}, 4, 0, 9))
                    .Reference1([to](const std::vector<Tensor>& in) {
                      return RefUnaryDouble(
                          in[0],
                          [to](double x) {
                            if (to == DType::kBool) return x != 0 ? 1.0 : 0.0;
                            return IsFloatingPoint(to) ? x : std::trunc(x);
                          },
                          to);
                    })
                    .Build());
  }
  // Float to integer out of range: TF 2.21's results on a large tensor (its vectorised cast;
  // recorded with tf.cast on 4096 elements, TF_ENABLE_ONEDNN_OPTS=0): NaN and values outside
  // int32 give its lowest value, the 8- and 16-bit types saturate that int32, the unsigned wide
  // types wrap negatives through the signed type and give 2^31 / 2^63 out of range.
  {
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> x = {306.0f,   -25.5f,   300.7f,
                                  -300.2f,  1e10f,    -1e10f,
                                  inf,      -inf,     std::numeric_limits<float>::quiet_NaN(),
                                  127.5f,   -128.5f,  255.5f,
                                  65535.7f, 70000.0f, -40000.0f,
                                  4.3e9f,   -1.0f,    2.5f,
                                  -2.5f};
    const Shape s{static_cast<int64_t>(x.size())};
    const uint64_t w = uint64_t{1} << 63, m = ~uint64_t{0};
    const int64_t lo = std::numeric_limits<int64_t>::min();
    const std::vector<Tensor> want = {
        Make<int8_t>({127, -25, 127, -128, -128, -128, -128, -128, -128, 127, -128, 127, 127, 127,
                      -128, -128, -1, 2, -2},
                     s),
        Make<uint8_t>({255, 0, 255, 0, 0, 0, 0, 0, 0, 127, 0, 255, 255, 255, 0, 0, 0, 2, 0}, s),
        Make<int16_t>({306, -25, 300, -300, -32768, -32768, -32768, -32768, -32768, 127, -128, 255,
                       32767, 32767, -32768, -32768, -1, 2, -2},
                      s),
        Make<uint16_t>({306, 0, 300, 0, 0, 0, 0, 0, 0, 127, 0, 255, 65535, 65535, 0, 0, 0, 2, 0},
                       s),
        Make<uint32_t>({306u, 4294967271u, 300u, 4294966996u, 2147483648u, 2147483648u, 2147483648u,
                        2147483648u, 2147483648u, 127u, 4294967168u, 255u, 65535u, 70000u,
                        4294927296u, 2147483648u, 4294967295u, 2u, 4294967294u},
                       s),
        Make<int64_t>({306, -25, 300, -300, 10000000000, -10000000000, lo, lo, lo, 127, -128, 255,
                       65535, 70000, -40000, 4300000256, -1, 2, -2},
                      s),
        Make<uint64_t>({306, m - 24, 300, m - 299, 10000000000, m - 9999999999, w, w, w, 127,
                        m - 127, 255, 65535, 70000, m - 39999, 4300000256, m, 2, m - 1},
                       s),
    };
    for (const Tensor& t : want) {
      c.push_back(OpCaseBuilder("Cast", "Cast float32 -> " + DTypeShortName(t.dtype()) +
                                            " out of range (TF's vectorised results)")
                      .Type("SrcT", DType::kFloat)
                      .Type("DstT", t.dtype())
                      .Input(Make<float>(x, s))
                      .Reference1([t](const auto&) { return t; })
                      .Build());
    }
  }
  // Complex: to a real type keeps the real part; from one, the imaginary part is 0.
  {
    using C = std::complex<float>;
    Tensor z(DType::kComplex64, Shape{3});
    z.data<C>()[0] = C(1.5f, -2);
    z.data<C>()[1] = C(-3, 4);
    z.data<C>()[2] = C(0, 7);
    c.push_back(OpCaseBuilder("Cast", "Cast complex64 -> float16")
                    .Type("SrcT", DType::kComplex64)
                    .Type("DstT", DType::kHalf)
                    .Input(z)
                    .Reference1([](const std::vector<Tensor>& in) {
                      Tensor out(DType::kHalf, in[0].shape());
                      for (int i = 0; i < 3; ++i)
                        out.data<Half>()[i].bits = Eigen::numext::bit_cast<uint16_t>(
                            Eigen::half(in[0].data<std::complex<float>>()[i].real()));
                      return out;
                    })
                    .Build());
    c.push_back(OpCaseBuilder("Cast", "Cast float16 -> complex128")
                    .Type("SrcT", DType::kHalf)
                    .Type("DstT", DType::kComplex128)
                    .Input(RandomOf(DType::kHalf, Shape{5}, 7))
                    .Reference1([](const std::vector<Tensor>& in) {
                      Tensor out(DType::kComplex128, in[0].shape());
                      for (int i = 0; i < 5; ++i)
                        out.data<std::complex<double>>()[i] = {
                            static_cast<double>(
                                Eigen::numext::bit_cast<Eigen::half>(in[0].data<Half>()[i].bits)),
                            0.0};
                      return out;
                    })
                    .Build());
  }
  // Cast with Truncate=True: TF 2.21's results (tf.raw_ops.Cast). The mantissa bits the result
  // lacks are zeroed before converting, for float32 -> bfloat16/float16 and from the 64-bit types
  // to float32/complex64/float16 (so 65535 becomes float16 65504, not inf); float64 -> bfloat16
  // is no such pair and rounds.
  {
    struct Trunc {
      DType src, dst;
      std::vector<double> x, want;
    };
    const double inf = std::numeric_limits<double>::infinity();
    const auto toward0 = [](double v) {
      return static_cast<double>(std::nextafter(static_cast<float>(v), 0.0f));
    };
    const std::vector<Trunc> cases = {
        {DType::kFloat,
         DType::kBFloat16,
         {0.49999997, -3.999, 1.0078, 3.4e38, inf},
         {0.498046875, -3.984375, 1.0, 3.3895313892515355e38, inf}},
        {DType::kFloat,
         DType::kHalf,
         {65519, 65535, 70000, -65535, 0.49999997, 1 + std::ldexp(1.0, -9) - std::ldexp(1.0, -20)},
         {65504, 65504, inf, -65504, 0.499755859375, 1 + std::ldexp(1.0, -10)}},
        {DType::kDouble,
         DType::kFloat,
         {0.1, 1.0 / 3, -2.0 / 3, 1e39},
         {toward0(0.1), toward0(1.0 / 3), toward0(-2.0 / 3), inf}},
        {DType::kDouble, DType::kBFloat16, {0.1, 1.0 / 3}, {0.10009765625, 0.333984375}},
    };
    for (const Trunc& t : cases) {
      const Shape shape{static_cast<int64_t>(t.x.size())};
      const Tensor want = FromDoubles(t.dst, shape, t.want);
      c.push_back(OpCaseBuilder("Cast", "Cast " + DTypeShortName(t.src) + " -> " +
                                            DTypeShortName(t.dst) + " Truncate=True")
                      .Type("SrcT", t.src)
                      .Type("DstT", t.dst)
                      .Bool("Truncate", true)
                      .Input(FromDoubles(t.src, shape, t.x))
                      .Reference1([want](const auto&) { return want; })
                      .Build());
    }
    using Z = std::complex<double>;
    Tensor z(DType::kComplex128, Shape{2});
    z.data<Z>()[0] = Z(0.1, 0.3);
    z.data<Z>()[1] = Z(1.0 / 3, -2.0 / 3);
    Tensor zw(DType::kComplex64, Shape{2});
    zw.data<std::complex<float>>()[0] = {std::nextafter(0.1f, 0.0f), std::nextafter(0.3f, 0.0f)};
    zw.data<std::complex<float>>()[1] = {std::nextafter(1.0f / 3, 0.0f),
                                         std::nextafter(-2.0f / 3, 0.0f)};
    c.push_back(OpCaseBuilder("Cast", "Cast complex128 -> complex64 Truncate=True")
                    .Type("SrcT", DType::kComplex128)
                    .Type("DstT", DType::kComplex64)
                    .Bool("Truncate", true)
                    .Input(z)
                    .Reference1([zw](const auto&) { return zw; })
                    .Build());
  }
  // float8: TF 2.21's own bits for float32 -> float8_e4m3fn / float8_e5m2 (round to nearest
  // even; past the largest finite value e4m3fn gives NaN, e5m2 infinity) and the float32 values
  // of those bits, recorded with tf.cast.
  {
    const float kInf = std::numeric_limits<float>::infinity();
    const float kNaN = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> x = {0.0f,
                                  -0.0f,
                                  1.0f,
                                  -1.5f,
                                  0.1f,
                                  3.14159f,
                                  448.0f,
                                  464.0f,
                                  480.0f,
                                  1000.0f,
                                  -1e9f,
                                  57344.0f,
                                  61440.0f,
                                  65536.0f,
                                  1e-3f,
                                  std::ldexp(1.0f, -9),
                                  std::ldexp(1.0f, -10),
                                  std::ldexp(1.0f, -16),
                                  std::ldexp(1.0f, -17),
                                  std::ldexp(1.0f, -18),
                                  kInf,
                                  -kInf,
                                  kNaN,
                                  0.0703125f,
                                  240.0f,
                                  17.0f,
                                  19.0f};
    const int64_t n = static_cast<int64_t>(x.size());
    struct Recorded {
      DType dtype;
      std::vector<uint8_t> bits;
      std::vector<float> back;
    };
    const Recorded recorded[] = {
        {DType::kFloat8E4M3FN,
         {0x00, 0x80, 0x38, 0xbc, 0x1d, 0x45, 0x7e, 0x7e, 0x7f, 0x7f, 0xff, 0x7f, 0x7f, 0x7f,
          0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x7f, 0xff, 0x7f, 0x19, 0x77, 0x58, 0x5a},
         {0,    -0.0f, 1,    -1.5f, 0.1015625f, 3.25f,        448,          448, kNaN,
          kNaN, kNaN,  kNaN, kNaN,  kNaN,       1.953125e-3f, 1.953125e-3f, 0,   0,
          0,    0,     kNaN, kNaN,  kNaN,       0.0703125f,   240,          16,  20}},
        {DType::kFloat8E5M2,
         {0x00, 0x80, 0x3c, 0xbe, 0x2e, 0x42, 0x5f, 0x5f, 0x60, 0x64, 0xfc, 0x7b, 0x7c, 0x7c,
          0x14, 0x18, 0x14, 0x01, 0x00, 0x00, 0x7c, 0xfc, 0x7e, 0x2c, 0x5c, 0x4c, 0x4d},
         {0,
          -0.0f,
          1,
          -1.5f,
          0.09375f,
          3,
          448,
          448,
          512,
          1024,
          -kInf,
          57344,
          kInf,
          kInf,
          9.765625e-4f,
          1.953125e-3f,
          9.765625e-4f,
          1.5258789e-5f,
          0,
          0,
          kInf,
          -kInf,
          kNaN,
          0.0625f,
          256,
          16,
          20}},
    };
    for (const Recorded& r : recorded) {
      Tensor bits(r.dtype, Shape{n});
      std::memcpy(bits.raw_data(), r.bits.data(), r.bits.size());
      for (const DType from : {DType::kFloat, DType::kDouble, DType::kHalf}) {
        c.push_back(OpCaseBuilder("Cast", "Cast " + DTypeShortName(from) + " -> " +
                                              DTypeShortName(r.dtype) + " (TF's bits)")
                        .Type("SrcT", from)
                        .Type("DstT", r.dtype)
                        .Input(RefUnaryDouble(
                            Make<float>(x, {n}), [](double v) { return v; }, from))
                        .Reference1([bits](const auto&) { return bits; })
                        .Build());
      }
      c.push_back(
          OpCaseBuilder("Cast", "Cast " + DTypeShortName(r.dtype) + " -> float32")
              .Type("SrcT", r.dtype)
              .Type("DstT", DType::kFloat)
              .Input(bits)
              .Reference1([back = r.back, n](const auto&) { return Make<float>(back, {n}); })
              .Build());
      // Finite values to integers truncate; to bool, "not zero".
      Tensor finite(r.dtype, Shape{6});
      const uint8_t some[] = {0x00, 0x38, 0xbc, 0x45, 0x77, 0x5a};
      std::memcpy(finite.raw_data(), some, sizeof(some));
      c.push_back(OpCaseBuilder("Cast", "Cast " + DTypeShortName(r.dtype) + " -> int32")
                      .Type("SrcT", r.dtype)
                      .Type("DstT", DType::kInt32)
                      .Input(finite)
                      .Reference1([finite](const auto&) {
                        Tensor f(DType::kFloat, finite.shape());
                        const auto* b = static_cast<const uint8_t*>(finite.raw_data());
                        for (int i = 0; i < 6; ++i)
                          f.data<float>()[i] = finite.dtype() == DType::kFloat8E4M3FN
                                                   ? static_cast<float>(F8E4M3FN::Decode(b[i]))
                                                   : static_cast<float>(F8E5M2::Decode(b[i]));
                        return RefUnaryDouble(
                            f, [](double v) { return std::trunc(v); }, DType::kInt32);
                      })
                      .Build());
    }
    // Between the two: e5m2's 320 (0x5d) is e4m3fn's 0x7a.
    Tensor e5(DType::kFloat8E5M2, Shape{1});
    static_cast<uint8_t*>(e5.raw_data())[0] = 0x5d;
    Tensor e4(DType::kFloat8E4M3FN, Shape{1});
    static_cast<uint8_t*>(e4.raw_data())[0] = 0x7a;
    c.push_back(OpCaseBuilder("Cast", "Cast float8_e5m2 -> float8_e4m3fn")
                    .Type("SrcT", DType::kFloat8E5M2)
                    .Type("DstT", DType::kFloat8E4M3FN)
                    .Input(e5)
                    .Reference1([e4](const auto&) { return e4; })
                    .Build());
  }
  // Complex arithmetic and the unary functions TF has for complex64 / complex128.
  {
    using C = std::complex<float>;
    Tensor a(DType::kComplex64, Shape{2, 3}), b(DType::kComplex64, Shape{3});
    for (int i = 0; i < 6; ++i) a.data<C>()[i] = C(0.5f * i - 1, 0.25f * i);
    for (int i = 0; i < 3; ++i) b.data<C>()[i] = C(1.5f - i, 0.5f + i);
    using BinFn = C (*)(C, C);
    const std::vector<std::pair<std::string, BinFn>> binary = {
        {"AddV2", [](C x, C y) { return x + y; }},
        {"Sub", [](C x, C y) { return x - y; }},
        {"Mul", [](C x, C y) { return x * y; }},
        {"RealDiv", [](C x, C y) { return x / y; }}};
    for (const auto& [op, f] : binary) {
      const BinFn fn = f;
      c.push_back(OpCaseBuilder(op, op + " complex64 (2, 3) with (3,)")
                      .T(DType::kComplex64)
                      .Input(a)
                      .Input(b)
                      .Reference1([fn](const std::vector<Tensor>& in) {
                        Tensor out(DType::kComplex64, Shape{2, 3});
                        for (int i = 0; i < 6; ++i)
                          out.data<C>()[i] = fn(in[0].data<C>()[i], in[1].data<C>()[i % 3]);
                        return out;
                      })
                      .Tolerance(1e-6)
                      .Build());
    }
    using UnFn = C (*)(C);
    const std::vector<std::pair<std::string, UnFn>> unary = {
        {"Neg", [](C x) { return -x; }},
        {"Square", [](C x) { return x * x; }},
        {"Sqrt", [](C x) { return std::sqrt(x); }},
        {"Exp", [](C x) { return std::exp(x); }},
        {"Log", [](C x) { return std::log(x); }},
        {"Tanh", [](C x) { return std::tanh(x); }}};
    for (const auto& [op, f] : unary) {
      const UnFn fn = f;
      c.push_back(OpCaseBuilder(op, op + " complex64")
                      .T(DType::kComplex64)
                      .Input(b)
                      .Reference1([fn](const std::vector<Tensor>& in) {
                        Tensor out(DType::kComplex64, Shape{3});
                        for (int i = 0; i < 3; ++i) out.data<C>()[i] = fn(in[0].data<C>()[i]);
                        return out;
                      })
                      .Tolerance(1e-5)
                      .Build());
    }
  }
  // AddN: the same shape, summed in order; ZerosLike, OnesLike.
  c.push_back(OpCaseBuilder("AddN")
                  .T(DType::kFloat)
                  .Int("N", 3)
                  .Input(RandomOf(DType::kFloat, Shape{3, 700}, 1))
                  .Input(RandomOf(DType::kFloat, Shape{3, 700}, 2))
                  .Input(RandomOf(DType::kFloat, Shape{3, 700}, 3))
                  .Reference1([](const std::vector<Tensor>& in) {
                    Tensor out(DType::kFloat, in[0].shape());
                    for (int64_t i = 0; i < out.NumElements(); ++i)
                      out.data<float>()[i] = (in[0].data<float>()[i] + in[1].data<float>()[i]) +
                                             in[2].data<float>()[i];
                    return out;
                  })
                  .Build());
  for (const auto& [op, value] :
       std::vector<std::pair<std::string, double>>{{"ZerosLike", 0}, {"OnesLike", 1}}) {
    const double v = value;
    c.push_back(OpCaseBuilder(op)
                    .T(DType::kInt64)
                    .Input(RandomOf(DType::kInt64, Shape{2, 5}, 1))
                    .Reference1([v](const std::vector<Tensor>& in) {
                      return RefUnaryDouble(in[0], [v](double) { return v; });
                    })
                    .Build());
  }
  // Select picks rows by a vector condition; SelectV2 broadcasts all three.
  c.push_back(OpCaseBuilder("Select")
                  .T(DType::kFloat)
                  .Input(Make<bool>({true, false, true}, {3}))
                  .Input(RandomOf(DType::kFloat, Shape{3, 2}, 1))
                  .Input(RandomOf(DType::kFloat, Shape{3, 2}, 2))
                  .Reference1([](const std::vector<Tensor>& in) {
                    Tensor out(DType::kFloat, Shape{3, 2});
                    for (int64_t i = 0; i < 6; ++i)
                      out.data<float>()[i] = in[0].data<bool>()[i / 2] ? in[1].data<float>()[i]
                                                                       : in[2].data<float>()[i];
                    return out;
                  })
                  .Build());
  c.push_back(OpCaseBuilder("SelectV2")
                  .T(DType::kInt32)
                  .Input(RandomOf(DType::kBool, Shape{2, 1, 7}, 3))
                  .Input(RandomOf(DType::kInt32, Shape{3, 1}, 4))
                  .Input(RandomOf(DType::kInt32, Shape{7}, 5))
                  .Reference1([](const std::vector<Tensor>& in) {
                    const Shape s{2, 3, 7};
                    Tensor out(DType::kInt32, s);
                    for (int64_t i = 0; i < s.num_elements(); ++i) {
                      const std::vector<int64_t> idx = Unravel(i, s);
                      out.data<int32_t>()[i] =
                          in[0].data<bool>()[BroadcastIndex(idx, in[0].shape())]
                              ? in[1].data<int32_t>()[BroadcastIndex(idx, in[1].shape())]
                              : in[2].data<int32_t>()[BroadcastIndex(idx, in[2].shape())];
                    }
                    return out;
                  })
                  .Build());
  return c;
}

}  // namespace kiln::testing
