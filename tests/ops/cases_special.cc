// Op-tester cases of special_function_ops.cc (tf.math.special's Dawsn, Expint, FresnelCos,
// FresnelSin, Spence): TensorFlow's own outputs recorded from the oracle (special_values.h),
// for float and double, once as recorded and once tiled large enough to be split across
// threads. special_ulps_test.cc holds the same values to a few ulps.
#include <string>
#include <vector>

#include "ops/op_cases.h"
#include "ops/special_values.h"

namespace kiln::testing {
namespace {

namespace sv = special_values;

template <typename T>
Tensor Tiled(const std::vector<double>& v, int repeats) {
  std::vector<T> out;
  out.reserve(v.size() * repeats);
  for (int r = 0; r < repeats; ++r)
    for (double d : v) out.push_back(static_cast<T>(d));
  return Make<T>(out, Shape{static_cast<int64_t>(out.size())});
}

template <typename T>
void Add(std::vector<OpCase>* cases, const std::string& op, const std::vector<double>& x,
         const std::vector<double>& want, double tol) {
  for (int repeats : {1, 64}) {
    const Tensor w = Tiled<T>(want, repeats);
    cases->push_back(
        OpCaseBuilder(op, op + " " + DTypeShortName(kDTypeOf<T>) + " x" + std::to_string(repeats))
            .T(kDTypeOf<T>)
            .Input(Tiled<T>(x, repeats))
            .Reference1([w](const std::vector<Tensor>&) { return w; })
            .Tolerance(tol)
            .Build());
  }
}

}  // namespace

std::vector<OpCase> SpecialCases() {
  std::vector<OpCase> c;
  struct Op {
    const char* name;
    const std::vector<double>& f;
    const std::vector<double>& d;
  };
  const Op ops[] = {{"Dawsn", sv::kDawsnF, sv::kDawsnD},
                    {"Expint", sv::kExpintF, sv::kExpintD},
                    {"FresnelCos", sv::kFresnelCosF, sv::kFresnelCosD},
                    {"FresnelSin", sv::kFresnelSinF, sv::kFresnelSinD},
                    {"Spence", sv::kSpenceF, sv::kSpenceD}};
  for (const Op& op : ops) {
    Add<float>(&c, op.name, sv::kXF, op.f, 5e-7);
    Add<double>(&c, op.name, sv::kXD, op.d, 1e-15);
  }
  return c;
}

}  // namespace kiln::testing
