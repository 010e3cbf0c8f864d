// Op-tester cases of CTCLoss. The expected loss and gradient are TF 2.21's (tf.raw_ops.CTCLoss
// on CPU, recorded for float32; float64 agrees to float precision as TF's log-sum-exp runs in
// float) for logits inputs[t, b, c] = 2 sin(0.7 t + 1.3 b + 0.5 c).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct CtcCase {
  const char* name;
  int64_t time, batch, classes;
  std::vector<std::vector<int>> labels;
  std::vector<int> seq_len;
  bool collapse, merge, ignore_longer;
  std::vector<double> loss, grad;  // TF's
};

}  // namespace

std::vector<OpCase> CtcLossCases() {
  const std::vector<CtcCase> cases = {
      {"default",
       5,
       2,
       4,
       {{0, 1}, {2, 2, 1}},
       {5, 4},
       false,
       true,
       false,
       {3.899995803833008, 8.536956787109375},
       {-0.0458615869,
        0.159629613,
        0.329292715,
        -0.443060786,
        0.338745773,
        0.345788985,
        -0.780896544,
        0.0963617861,
        -0.321518183,
        0.263381273,
        0.324677318,
        -0.266540378,
        0.545652628,
        0.293046713,
        0.117404796,
        -0.9561041,
        -0.377180547,
        0.18444106,
        0.200172335,
        -0.00743255764,
        0.624856949,
        0.236515731,
        -0.907880127,
        0.0465073995,
        0.0657285452,
        -0.175974309,
        0.109506361,
        0.000739730895,
        0.525346458,
        -0.778680384,
        0.130573452,
        0.122760437,
        0.622790933,
        -0.680761278,
        0.0937394202,
        -0.0357685648,
        0,
        0,
        0,
        0}},
      {"collapse",
       5,
       2,
       4,
       {{0, 1}, {2, 2, 1}},
       {5, 4},
       true,
       true,
       false,
       {3.899995803833008, 4.536561965942383},
       {-0.0458615869,
        0.159629613,
        0.329292715,
        -0.443060786,
        0.338745773,
        0.345788985,
        -0.654472351,
        -0.0300625265,
        -0.321518183,
        0.263381273,
        0.324677318,
        -0.266540378,
        0.545652628,
        -0.229056537,
        -0.270117521,
        -0.0464789867,
        -0.377180547,
        0.18444106,
        0.200172335,
        -0.00743255764,
        0.624856949,
        -0.605863452,
        0.0135637149,
        -0.0325574018,
        0.0657285452,
        -0.175974309,
        0.109506361,
        0.000739730895,
        0.525346458,
        -0.44391042,
        0.130573452,
        -0.212009668,
        0.622790933,
        -0.680761278,
        0.0937394202,
        -0.0357685648,
        0,
        0,
        0,
        0}},
      {"nomerge",
       5,
       2,
       4,
       {{0, 1}, {2, 2, 1}},
       {5, 4},
       false,
       false,
       false,
       {6.090775966644287, 6.544222831726074},
       {0.0431117266,
        0.159629613,
        0.329292715,
        -0.532033801,
        0.338745773,
        0.345788985,
        -0.620541215,
        -0.0639936775,
        0.0736726075,
        0.286796212,
        0.324677318,
        -0.685145497,
        0.545652628,
        0.293046713,
        -0.746273041,
        -0.0924262926,
        -0.0287024677,
        0.316126704,
        0.200172335,
        -0.487596214,
        0.624856949,
        -0.282730311,
        -0.204557836,
        -0.137568399,
        0.0736269951,
        -0.00349968672,
        0.109506361,
        -0.179633141,
        0.525346458,
        -0.259433985,
        0.130573452,
        -0.396485597,
        0.622790933,
        -0.452164531,
        0.0937394202,
        -0.264364958,
        0,
        0,
        0,
        0}},
      {"ignore",
       5,
       2,
       4,
       {{0, 1}, {2, 2, 1}},
       {5, 2},
       false,
       true,
       true,
       {3.899995803833008, 0.0},
       {-0.0458615869, 0.159629613,  0.329292715,  -0.443060786,   0, 0, 0, 0,
        -0.321518183,  0.263381273,  0.324677318,  -0.266540378,   0, 0, 0, 0,
        -0.377180547,  0.18444106,   0.200172335,  -0.00743255764, 0, 0, 0, 0,
        0.0657285452,  -0.175974309, 0.109506361,  0.000739730895, 0, 0, 0, 0,
        0.622790933,   -0.680761278, 0.0937394202, -0.0357685648,  0, 0, 0, 0}},
      {"nopath",
       3,
       1,
       3,
       {{1, 1}},
       {2},
       false,
       true,
       false,
       {kInf},
       {0.111233935, 0.290175706, 0.598590374, 0.20912756, 0.371885926, 0.41898647, 0, 0, 0}},
      {"blankend",
       4,
       2,
       4,
       {{0, 3}, {1}},
       {4, 3},
       false,
       true,
       false,
       {3.062347650527954, 3.2602734565734863},
       {0.0114738792,
        0.159629613,
        0.329292715,
        -0.500396252,
        0.338745773,
        -0.419894367,
        0.219103426,
        -0.137954891,
        -0.244635046,
        0.288178563,
        0.324677318,
        -0.368220776,
        0.545652628,
        -0.662491322,
        0.117404796,
        -0.000566069037,
        -0.518147707,
        0.344072521,
        0.200172335,
        -0.026097022,
        0.624856949,
        -0.588072777,
        0.0921198726,
        -0.128904104,
        -0.365552962,
        0.282541126,
        0.109506361,
        -0.026494354,
        0,
        0,
        0,
        0}},
  };
  std::vector<OpCase> c;
  for (DType t : {DType::kFloat, DType::kDouble}) {
    for (const CtcCase& k : cases) {
      std::vector<double> x;
      for (int64_t ti = 0; ti < k.time; ++ti)
        for (int64_t b = 0; b < k.batch; ++b)
          for (int64_t cl = 0; cl < k.classes; ++cl)
            x.push_back(2 * std::sin(0.7 * ti + 1.3 * b + 0.5 * cl));
      std::vector<double> idx, vals;
      for (size_t b = 0; b < k.labels.size(); ++b) {
        for (size_t i = 0; i < k.labels[b].size(); ++i) {
          idx.insert(idx.end(), {static_cast<double>(b), static_cast<double>(i)});
          vals.push_back(k.labels[b][i]);
        }
      }
      const int64_t n = static_cast<int64_t>(vals.size());
      const Shape in_shape{k.time, k.batch, k.classes};
      const std::vector<double> loss = k.loss, grad = k.grad;
      c.push_back(
          OpCaseBuilder("CTCLoss", std::string("CTCLoss ") + DTypeShortName(t) + " " + k.name)
              .T(t)
              .Bool("preprocess_collapse_repeated", k.collapse)
              .Bool("ctc_merge_repeated", k.merge)
              .Bool("ignore_longer_outputs_than_inputs", k.ignore_longer)
              .Input(FromDoubles(t, in_shape, x))
              .Input(FromDoubles(DType::kInt64, Shape{n, 2}, idx))
              .Input(FromDoubles(DType::kInt32, Shape{n}, vals))
              .Input(FromDoubles(DType::kInt32, Shape{k.batch},
                                 std::vector<double>(k.seq_len.begin(), k.seq_len.end())))
              .Reference([t, in_shape, loss, grad](const std::vector<Tensor>&) {
                return std::vector<Tensor>{FromDoubles(t, Shape{in_shape.dim(1)}, loss),
                                           FromDoubles(t, in_shape, grad)};
              })
              .Tolerance(2e-5)
              .Build());
    }
  }
  return c;
}

}  // namespace kiln::testing
