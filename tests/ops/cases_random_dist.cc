// Op-tester cases of the gamma, Poisson and binomial ops (random_distribution_ops.cc). The
// expected values are TensorFlow 2.21's: recorded from its CPU kernels (tf.raw_ops with the same
// shapes, seeds and parameters, TF_ENABLE_ONEDNN_OPTS=0) and compared exactly. Each output
// element draws from its own skipped Philox stream, so the values do not depend on threads.
// Stateful ops advance between calls: only their first single-op call is compared.
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/philox.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

using Dims = std::vector<int64_t>;
using Values = std::vector<double>;

Tensor ShapeTensor(const Dims& dims) {
  std::vector<int32_t> d(dims.begin(), dims.end());
  return Make<int32_t>(d, Shape{static_cast<int64_t>(d.size())});
}

Shape ShapeOf(const Dims& dims) { return *Shape::FromDims(dims); }

// What one recorded case needs: the reference is the recorded output.
OpCaseBuilder& Expect(OpCaseBuilder& b, DType t, const Dims& shape, const Values& want) {
  const Tensor out = FromDoubles(t, ShapeOf(shape), want);
  return b.Reference1([out](const std::vector<Tensor>&) { return out; });
}

std::string Name(const std::string& op, DType t, const Dims& shape) {
  return op + " " + DTypeShortName(t) + " " + ShapeOf(shape).ToString();
}

// ---- gamma -----------------------------------------------------------------------------------

struct GammaCase {
  DType t;
  Dims shape, alpha_shape;
  Values alpha;
  std::array<int64_t, 2> seed;
  Values want;
};

// TF's values (StatelessRandomGammaV2, and V3 with StatelessRandomGetKeyCounter's key and
// counter for the same seed: identical).
const std::vector<GammaCase>& GammaCases() {
  static const std::vector<GammaCase> cases = {
      {DType::kFloat,
       {5},
       {},
       {0.5},
       {1, 2},
       {0.0669536143541336, 0.6282354593276978, 0.18136732280254364, 0.047589920461177826,
        0.1735631376504898}},
      {DType::kFloat,
       {3, 2},
       {2},
       {2.5, 1.0},
       {1, 2},
       {3.4498653411865234, 1.8935091495513916, 2.4584896564483643, 0.22994834184646606,
        4.014803409576416, 1.1978732347488403}},
      {DType::kDouble,
       {4},
       {},
       {7.0},
       {-3, 11},
       {6.24775163540006, 5.308703481859952, 4.113967953459219, 3.6151640589522436}},
      {DType::kHalf,
       {2, 3},
       {3},
       {0.3, 1.0, 4.0},
       {5, 6},
       {0.00260162353515625, 0.1480712890625, 10.828125, 3.260374069213867e-05, 0.7958984375,
        3.65625}},
      {DType::kFloat,
       {2, 2, 3},
       {2, 3},
       {0.1, 0.9, 1.0, 1.5, 30.0, 0.001},
       {123, 456},
       {0.36395561695098877, 0.13011644780635834, 1.184268832206726, 1.8435773849487305,
        27.807199478149414, 0.0, 0.2651923596858978, 1.7284818887710571, 1.5412213802337646,
        1.5883911848068237, 30.272138595581055, 5.84414289605211e-26}},
      {DType::kDouble,
       {3, 2},
       {2},
       {1.0, 0.25},
       {7, 7},
       {0.2279390244177177, 0.0007083348785758831, 0.19136490028394593, 0.053935141284547815,
        0.017404212139128798, 0.09070577061804114}},
  };
  return cases;
}

// The key and counter StatelessRandomGetKeyCounter makes from a seed.
std::array<Tensor, 2> KeyCounter(const std::array<int64_t, 2>& seed) {
  const exec::random::Philox gen = exec::random::StatelessGenerator(static_cast<uint64_t>(seed[0]),
                                                                    static_cast<uint64_t>(seed[1]));
  auto join = [](uint32_t lo, uint32_t hi) { return lo | (uint64_t{hi} << 32); };
  return {Make<uint64_t>({join(gen.key()[0], gen.key()[1])}, {1}),
          Make<uint64_t>(
              {join(gen.counter()[0], gen.counter()[1]), join(gen.counter()[2], gen.counter()[3])},
              {2})};
}

void AddGamma(std::vector<OpCase>& c) {
  for (const GammaCase& g : GammaCases()) {
    const Tensor alpha = FromDoubles(g.t, ShapeOf(g.alpha_shape), g.alpha);
    OpCaseBuilder v2("StatelessRandomGammaV2", Name("StatelessRandomGammaV2", g.t, g.shape));
    v2.Type("dtype", g.t).Type("T", DType::kInt32).Type("Tseed", DType::kInt64);
    v2.ConstInput(ShapeTensor(g.shape)).Input(Make<int64_t>({g.seed[0], g.seed[1]}, {2}));
    c.push_back(Expect(v2.Input(alpha), g.t, g.shape, g.want).Build());

    const auto kc = KeyCounter(g.seed);
    for (int alg : {1, 3}) {  // Philox, and "auto" (Philox on CPUs)
      OpCaseBuilder v3("StatelessRandomGammaV3", Name("StatelessRandomGammaV3", g.t, g.shape) +
                                                     " alg " + std::to_string(alg));
      v3.Type("dtype", g.t).Type("shape_dtype", DType::kInt32).ConstInput(ShapeTensor(g.shape));
      v3.Input(kc[0]).Input(kc[1]).Input(Tensor::Scalar<int32_t>(alg)).Input(alpha);
      c.push_back(Expect(v3, g.t, g.shape, g.want).Build());
    }
  }
  // V3 with a key and counter of its own (counter words past 2^32, alg auto too).
  struct V3Case {
    DType t;
    Dims shape, alpha_shape;
    Values alpha;
    uint64_t key, c0, c1;
    int alg;
    Values want;
  };
  const std::vector<V3Case> v3_cases = {
      {DType::kFloat,
       {6},
       {},
       {0.5},
       1u,
       2u,
       3u,
       1,
       {0.04886431246995926, 0.02243569679558277, 0.1330306977033615, 0.9721124768257141,
        0.037520743906497955, 1.0354208946228027}},
      {DType::kFloat,
       {2, 2},
       {2},
       {3.0, 0.7},
       244837814094590u,
       18446744073709551360u,
       9u,
       3,
       {2.314385414123535, 1.424825668334961, 3.276242971420288, 0.03156488016247749}},
      {DType::kDouble,
       {5},
       {},
       {1.0},
       42u,
       0u,
       0u,
       1,
       {3.1511368227920604, 5.0375988830504586, 1.01365983303931, 0.5216010720381579,
        1.214989986318414}},
  };
  for (const V3Case& v : v3_cases) {
    OpCaseBuilder b("StatelessRandomGammaV3", Name("StatelessRandomGammaV3 key", v.t, v.shape));
    b.Type("dtype", v.t).ConstInput(ShapeTensor(v.shape)).Input(Make<uint64_t>({v.key}, {1}));
    b.Input(Make<uint64_t>({v.c0, v.c1}, {2})).Input(Tensor::Scalar<int32_t>(v.alg));
    b.Input(FromDoubles(v.t, ShapeOf(v.alpha_shape), v.alpha));
    c.push_back(Expect(b, v.t, v.shape, v.want).Build());
  }
  // Empty outputs need no alpha check.
  OpCaseBuilder empty("StatelessRandomGammaV2", "StatelessRandomGammaV2 empty");
  empty.Type("dtype", DType::kFloat).Type("T", DType::kInt32).ConstInput(ShapeTensor({0, 3}));
  empty.Input(Make<int64_t>({1, 2}, {2})).Input(FromDoubles(DType::kFloat, Shape{3}, {1, 2, 3}));
  c.push_back(Expect(empty, DType::kFloat, {0, 3}, {}).Build());
}

// ---- Poisson ---------------------------------------------------------------------------------

struct PoissonCase {
  DType rate_type, out_type;
  Dims shape, lam_shape;
  Values lam;
  std::array<int64_t, 2> seed;
  Values want;
};

// TF's StatelessRandomPoisson values: Knuth's method below rate 10, Hormann's above.
void AddPoisson(std::vector<OpCase>& c) {
  const std::vector<PoissonCase> cases = {
      {DType::kFloat, DType::kFloat, {6}, {}, {3.5}, {1, 2}, {6.0, 5.0, 4.0, 6.0, 3.0, 7.0}},
      {DType::kFloat,
       DType::kInt32,
       {3, 2},
       {2},
       {0.5, 25.0},
       {1, 2},
       {3.0, 38.0, 2.0, 20.0, 1.0, 29.0}},
      {DType::kDouble, DType::kInt64, {4}, {}, {150.0}, {-5, 3}, {148.0, 133.0, 132.0, 133.0}},
      {DType::kHalf,
       DType::kHalf,
       {2, 3},
       {3},
       {1.0, 10.0, 0.0},
       {4, 4},
       {0.0, 12.0, 0.0, 0.0, 11.0, 0.0}},
      {DType::kInt32, DType::kDouble, {2, 2}, {2}, {7.0, 12.0}, {9, 1}, {7.0, 12.0, 4.0, 4.0}},
      {DType::kInt64, DType::kInt32, {3}, {3}, {0.0, 2.0, 1000.0}, {9, 2}, {0.0, 1.0, 1004.0}},
      {DType::kDouble, DType::kFloat, {2, 2}, {2}, {-1.0, 9.99}, {3, 8}, {0.0, 10.0, 0.0, 16.0}},
  };
  for (const PoissonCase& p : cases) {
    OpCaseBuilder b("StatelessRandomPoisson", Name("StatelessRandomPoisson", p.out_type, p.shape) +
                                                  " lam " + DTypeShortName(p.rate_type));
    b.Type("dtype", p.out_type).Type("Rtype", p.rate_type).Type("T", DType::kInt32);
    b.Type("Tseed", DType::kInt64).ConstInput(ShapeTensor(p.shape));
    b.Input(Make<int64_t>({p.seed[0], p.seed[1]}, {2}));
    b.Input(FromDoubles(p.rate_type, ShapeOf(p.lam_shape), p.lam));
    c.push_back(Expect(b, p.out_type, p.shape, p.want).Build());
  }
}

// ---- binomial --------------------------------------------------------------------------------

struct BinomialCase {
  DType t, out_type;
  Dims shape, counts_shape;
  Values counts;
  Dims probs_shape;
  Values probs;
  std::array<int64_t, 2> seed;
  Values want;
};

// TF's StatelessRandomBinomial values: inversion, BTRS, p > 0.5 mirrored, p = 0 and 1, count 0,
// counts and probs broadcast against each other.
void AddBinomial(std::vector<OpCase>& c) {
  const std::vector<BinomialCase> cases = {
      {DType::kFloat,
       DType::kInt64,
       {6},
       {},
       {10.0},
       {},
       {0.3},
       {1, 2},
       {5.0, 5.0, 5.0, 4.0, 4.0, 3.0}},
      {DType::kDouble,
       DType::kFloat,
       {2, 3},
       {3},
       {5.0, 100.0, 40.0},
       {},
       {0.25},
       {1, 2},
       {3.0, 31.0, 7.0, 1.0, 36.0, 12.0}},
      {DType::kDouble,
       DType::kInt32,
       {2, 2, 2},
       {2, 1},
       {1000.0, 7.0},
       {2},
       {0.9, 0.5},
       {3, 4},
       {889.0, 472.0, 6.0, 5.0, 896.0, 502.0, 6.0, 3.0}},
      {DType::kHalf,
       DType::kHalf,
       {4},
       {4},
       {0.0, 8.0, 50.0, 12.0},
       {4},
       {0.5, 0.0, 0.75, 1.0},
       {6, 1},
       {0.0, 0.0, 35.0, 12.0}},
      {DType::kFloat,
       DType::kDouble,
       {3, 2},
       {2},
       {200.0, 30.0},
       {2},
       {0.01, 0.6},
       {11, 12},
       {2.0, 20.0, 2.0, 17.0, 3.0, 18.0}},
  };
  for (const BinomialCase& p : cases) {
    OpCaseBuilder b(
        "StatelessRandomBinomial",
        Name("StatelessRandomBinomial", p.out_type, p.shape) + " " + DTypeShortName(p.t));
    b.Type("dtype", p.out_type).T(p.t).Type("S", DType::kInt32).Type("Tseed", DType::kInt64);
    b.ConstInput(ShapeTensor(p.shape)).Input(Make<int64_t>({p.seed[0], p.seed[1]}, {2}));
    b.Input(FromDoubles(p.t, ShapeOf(p.counts_shape), p.counts));
    b.Input(FromDoubles(p.t, ShapeOf(p.probs_shape), p.probs));
    c.push_back(Expect(b, p.out_type, p.shape, p.want).Build());
  }
}

// ---- stateful --------------------------------------------------------------------------------

// TF's first call of a node seeded by seed/seed2 (RandomGamma takes -log(1 - u) for alpha 1;
// the output is shape + the parameter's shape).
void AddStateful(std::vector<OpCase>& c) {
  struct GammaStateful {
    DType t;
    Dims shape, alpha_shape;
    Values alpha;
    int64_t seed, seed2;
    Values want;
  };
  const std::vector<GammaStateful> gammas = {
      {DType::kFloat,
       {4},
       {},
       {0.5},
       3,
       5,
       {0.7825867533683777, 0.4133295714855194, 0.9013304114341736, 0.01924828439950943}},
      {DType::kDouble,
       {2, 3},
       {2},
       {1.0, 3.0},
       4,
       5,
       {0.4615600845343407, 4.323455099286258, 1.4933029394137605, 3.05691889815951,
        0.5865211364076302, 3.6022885923178842, 0.45838064474907797, 1.5394975000196762,
        1.5929088965016758, 1.618412803629107, 2.7283335355605547, 4.075154684995588}},
      {DType::kHalf,
       {3},
       {2},
       {0.8, 12.0},
       5,
       5,
       {0.048858642578125, 9.6953125, 0.70556640625, 10.1171875, 1.578125, 9.6953125}},
      {DType::kFloat,
       {2},
       {3},
       {1.0, 2.0, 0.2},
       6,
       5,
       {0.021329011768102646, 1.2067852020263672, 0.0010513424640521407, 0.04062580317258835,
        2.8585903644561768, 6.568484241142869e-05}},
  };
  for (const GammaStateful& g : gammas) {
    Dims out = g.shape;
    out.insert(out.end(), g.alpha_shape.begin(), g.alpha_shape.end());
    OpCaseBuilder b("RandomGamma", Name("RandomGamma", g.t, out));
    b.T(g.t).Type("S", DType::kInt32).Int("seed", g.seed).Int("seed2", g.seed2);
    b.ConstInput(ShapeTensor(g.shape)).Input(FromDoubles(g.t, ShapeOf(g.alpha_shape), g.alpha));
    c.push_back(Expect(b, g.t, out, g.want).NonDeterministic().Build());
  }
  struct PoissonStateful {
    DType rate_type, out_type;
    Dims shape, rate_shape;
    Values rate;
    int64_t seed, seed2;
    Values want;
  };
  const std::vector<PoissonStateful> poissons = {
      {DType::kFloat, DType::kInt64, {5}, {}, {4.0}, 10, 2, {4.0, 8.0, 6.0, 5.0, 7.0}},
      {DType::kDouble, DType::kFloat, {2}, {2}, {0.7, 40.0}, 11, 2, {1.0, 45.0, 1.0, 44.0}},
      {DType::kHalf, DType::kInt32, {2, 2}, {1}, {15.0}, 12, 2, {18.0, 7.0, 14.0, 13.0}},
  };
  for (const PoissonStateful& p : poissons) {
    Dims out = p.shape;
    out.insert(out.end(), p.rate_shape.begin(), p.rate_shape.end());
    OpCaseBuilder b("RandomPoissonV2", Name("RandomPoissonV2", p.out_type, out));
    b.Type("dtype", p.out_type).Type("R", p.rate_type).Type("S", DType::kInt32);
    b.Int("seed", p.seed).Int("seed2", p.seed2).ConstInput(ShapeTensor(p.shape));
    b.Input(FromDoubles(p.rate_type, ShapeOf(p.rate_shape), p.rate));
    c.push_back(Expect(b, p.out_type, out, p.want).NonDeterministic().Build());
  }
}

// ---- parameterized truncated normal ----------------------------------------------------------

struct Param {
  Dims shape;
  Values v;
};

Tensor ParamTensor(DType t, const Param& p) { return FromDoubles(t, ShapeOf(p.shape), p.v); }

// TF's values: uniform rejection (narrow bounds), normal rejection (wide), the exponential
// tail, broadcast parameters, half, a one-sided bound below the mean.
void AddTruncatedNormal(std::vector<OpCase>& c) {
  struct Stateless {
    DType t;
    Dims shape;
    Param means, stddevs, minvals, maxvals;
    std::array<int64_t, 2> seed;
    Values want;
  };
  const std::vector<Stateless> cases = {
      {DType::kFloat,
       {6},
       {{}, {0.0}},
       {{}, {1.0}},
       {{}, {-1.0}},
       {{}, {1.0}},
       {1, 2},
       {0.6881208419799805, -0.6159093379974365, 0.9924464225769043, -0.6792252063751221,
        -0.12129712104797363, -0.8304636478424072}},
      {DType::kFloat,
       {5},
       {{}, {0.0}},
       {{}, {1.0}},
       {{}, {-3.0}},
       {{}, {3.0}},
       {1, 2},
       {0.544110119342804, 0.20738030970096588, 0.0735643208026886, 0.04643455147743225,
        -1.301589846611023}},
      {DType::kDouble,
       {4},
       {{}, {0.0}},
       {{}, {1.0}},
       {{}, {2.0}},
       {{}, {INFINITY}},
       {3, 4},
       {2.022862624288435, 2.6860172402669678, 2.027208033067746, 2.7112905977769506}},
      {DType::kFloat,
       {3, 2},
       {{2}, {1.0, -2.0}},
       {{2}, {2.0, 0.5}},
       {{}, {0.0}},
       {{2}, {5.0, 1.5}},
       {5, 6},
       {3.047968864440918, 0.049767494201660156, 3.5591068267822266, 0.1417548656463623,
        2.8240199089050293, 0.15113258361816406}},
      {DType::kHalf,
       {2, 3},
       {{3}, {0.0, 1.0, 10.0}},
       {{}, {1.0}},
       {{3}, {-0.5, -INFINITY, 12.0}},
       {{3}, {0.5, 0.0, 20.0}},
       {7, 8},
       {-0.3466796875, -0.23046875, 12.1796875, -0.435546875, -0.498046875, 12.609375}},
      {DType::kDouble,
       {2, 2, 2},
       {{2, 1}, {0.0, 5.0}},
       {{2}, {1.0, 3.0}},
       {{}, {-10.0}},
       {{}, {4.0}},
       {9, 10},
       {-1.0737733804956957, 0.8610155895954603, 3.2609960716179516, 0.7607539801942007,
        1.152497378877097, -7.745544761927251, 3.075386735815381, 2.6643168276640417}},
  };
  for (const Stateless& p : cases) {
    OpCaseBuilder b("StatelessParameterizedTruncatedNormal",
                    Name("StatelessParameterizedTruncatedNormal", p.t, p.shape));
    b.Type("dtype", p.t).Type("S", DType::kInt32).Type("Tseed", DType::kInt64);
    b.ConstInput(ShapeTensor(p.shape)).Input(Make<int64_t>({p.seed[0], p.seed[1]}, {2}));
    b.Input(ParamTensor(p.t, p.means)).Input(ParamTensor(p.t, p.stddevs));
    b.Input(ParamTensor(p.t, p.minvals)).Input(ParamTensor(p.t, p.maxvals));
    c.push_back(Expect(b, p.t, p.shape, p.want).Build());
  }
  struct Stateful {
    DType t;
    Dims shape;
    Param means, stdevs, minvals, maxvals;
    int64_t seed, seed2;
    Values want;
  };
  const std::vector<Stateful> stateful = {
      {DType::kFloat,
       {7},
       {{}, {0.0}},
       {{}, {1.0}},
       {{}, {-1.0}},
       {{}, {1.0}},
       30,
       1,
       {-0.04593014717102051, -0.5487799644470215, -0.6367225646972656, -0.41035008430480957,
        -0.5302731990814209, 0.7043111324310303, 0.9627988338470459}},
      {DType::kDouble,
       {2, 3},
       {{2}, {0.0, 3.0}},
       {{}, {1.0}},
       {{}, {-2.0}},
       {{}, {2.5}},
       31,
       1,
       {-0.8471204419810705, -1.3272746933673614, -0.7987716121223385, 2.3612706410743267,
        2.2900288723733917, 2.4686010979427775}},
      {DType::kFloat,
       {3, 2},
       {{}, {1.0}},
       {{1}, {2.0}},
       {{3}, {-1.0, 3.0, -INFINITY}},
       {{3}, {1.0, INFINITY, 0.0}},
       32,
       1,
       {-0.5226216316223145, -0.5864593982696533, 7.690873146057129, 4.088838577270508,
        -1.0392637252807617, -1.196640968322754}},
      {DType::kHalf,
       {5},
       {{}, {0.0}},
       {{}, {1.0}},
       {{}, {-2.0}},
       {{}, {2.0}},
       33,
       1,
       {-0.82470703125, 0.93701171875, 1.146484375, 0.7490234375, 0.90576171875}},
  };
  for (const Stateful& p : stateful) {
    OpCaseBuilder b("ParameterizedTruncatedNormal",
                    Name("ParameterizedTruncatedNormal", p.t, p.shape));
    b.Type("dtype", p.t).T(DType::kInt32).Int("seed", p.seed).Int("seed2", p.seed2);
    b.ConstInput(ShapeTensor(p.shape));
    b.Input(ParamTensor(p.t, p.means)).Input(ParamTensor(p.t, p.stdevs));
    b.Input(ParamTensor(p.t, p.minvals)).Input(ParamTensor(p.t, p.maxvals));
    c.push_back(Expect(b, p.t, p.shape, p.want).NonDeterministic().Build());
  }
}

// ---- StatelessShuffle ------------------------------------------------------------------------

// TF's orders for an arange input (rows of dim 0 permuted), as float and int32.
void AddShuffle(std::vector<OpCase>& c) {
  struct Shuffle {
    Dims shape;
    uint64_t key, c0, c1;
    int alg;
    Values want;
  };
  const std::vector<Shuffle> cases = {
      {{6}, 1u, 2u, 3u, 1, {2, 3, 1, 0, 5, 4}},
      {{5, 2}, 77u, 5u, 0u, 3, {8, 9, 6, 7, 2, 3, 0, 1, 4, 5}},
      {{9}, 0xabcdefu, uint64_t{1} << 40, 7u, 1, {2, 4, 7, 3, 1, 8, 5, 0, 6}},
      {{3, 2, 2}, 5u, 6u, 7u, 1, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
      {{1, 3}, 5u, 6u, 7u, 1, {0, 1, 2}},
      {{}, 5u, 6u, 7u, 1, {0}},
  };
  for (const Shuffle& s : cases) {
    for (DType t : {DType::kFloat, DType::kInt32}) {
      Values arange(s.want.size());
      for (size_t i = 0; i < arange.size(); ++i) arange[i] = static_cast<double>(i);
      OpCaseBuilder b("StatelessShuffle", Name("StatelessShuffle", t, s.shape));
      b.T(t).Input(FromDoubles(t, ShapeOf(s.shape), arange));
      b.Input(Make<uint64_t>({s.key}, {1})).Input(Make<uint64_t>({s.c0, s.c1}, {2}));
      b.Input(Tensor::Scalar<int32_t>(s.alg));
      c.push_back(Expect(b, t, s.shape, s.want).Build());
    }
  }
}

// ---- RandomIndexShuffle ----------------------------------------------------------------------

// TF's permuted positions (recorded from TF 2.21): index and max_index (a scalar) of `t`, seeds
// of `ts` ([3] or one row of 3 per index).
void AddIndexShuffle(std::vector<OpCase>& c) {
  auto add = [&c](DType t, DType ts, const Dims& index_shape, const Values& index,
                  const Dims& seed_shape, const Values& seed, double max, int rounds,
                  const Values& want) {
    OpCaseBuilder b("RandomIndexShuffle", Name("RandomIndexShuffle", t, index_shape) + " rounds " +
                                              std::to_string(rounds) + " seed " +
                                              DTypeShortName(ts) + " " +
                                              ShapeOf(seed_shape).ToString());
    b.Type("dtype", t).Type("Tseed", ts).Int("rounds", rounds);
    b.Input(FromDoubles(t, ShapeOf(index_shape), index));
    b.Input(FromDoubles(ts, ShapeOf(seed_shape), seed));
    b.Input(FromDoubles(t, Shape(), {max}));
    const bool scalar = index_shape.empty() && seed_shape.size() == 1;
    c.push_back(
        Expect(b, t, scalar ? Dims{} : Dims{static_cast<int64_t>(want.size())}, want).Build());
  };
  const Values iota10 = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  add(DType::kInt64, DType::kInt64, {10}, iota10, {3}, {1, 2, 3}, 9, 4,
      {2, 0, 6, 4, 8, 1, 7, 9, 5, 3});
  add(DType::kInt32, DType::kInt32, {}, {17}, {3}, {5, -6, 7}, 1000, 4, {266});
  add(DType::kInt64, DType::kInt64, {8}, {0, 1, 2, 3, 4, 5, 6, 7}, {3}, {1, 2, 3}, 7, 6,
      {1, 6, 3, 7, 0, 5, 4, 2});
  add(DType::kInt64, DType::kInt64, {}, {3}, {2, 3}, {1, 2, 3, 3, 2, 1}, 100000, 4, {98787, 71494});
  // a 62-bit block (max_index 2^31 - 1) and negative seed words
  add(DType::kInt32, DType::kInt32, {6}, {0, 1, 2, 3, 4, 5}, {3}, {-5, 2147483647, 0}, 2147483647,
      4, {972860776, 177680306, 357113213, 1448105228, 715192599, 1677658480});
  add(DType::kInt64, DType::kUInt32, {6}, {0, 1, 2, 3, 4, 5}, {3}, {7, 8, 9}, 65536, 4,
      {17988, 4108, 54956, 45710, 17170, 5468});
  add(DType::kUInt32, DType::kUInt64, {4}, {0, 1, 2, 0}, {4, 3},
      {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 70000, 4, {13622, 11501, 5665, 50555});
}

}  // namespace

std::vector<OpCase> RandomDistCases() {
  std::vector<OpCase> c;
  AddGamma(c);
  AddPoisson(c);
  AddBinomial(c);
  AddStateful(c);
  AddTruncatedNormal(c);
  AddShuffle(c);
  AddIndexShuffle(c);
  return c;
}

}  // namespace kiln::testing
