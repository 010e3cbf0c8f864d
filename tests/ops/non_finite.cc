#include "ops/non_finite.h"

#include <algorithm>
#include <limits>
#include <set>

namespace kiln::testing {

constexpr std::string_view kSpecialFunctionReason =
    "the C++ library's Bessel, erf-inverse, incomplete gamma and zeta references throw or differ "
    "at NaN and +-Inf; tests/tf (test_math_ops_tf.py, 'special', which feeds NaN and +-Inf) holds "
    "these ops to TF's values there";

constexpr std::string_view kForwardRunReason =
    "the reference is finite differences of a forward run whose outputs are the case's gate "
    "inputs: a non-finite input makes the whole loss NaN, where TF's formulas keep it to the "
    "elements it reaches (the formula cases of cases_rnn_grad.cc cover non-finite values)";

const std::vector<OpTesterExemption>& NonFiniteExemptions() {
  static const std::vector<OpTesterExemption> exemptions = {
      {"LSTMBlockCellGrad of a forward run", kForwardRunReason},
      {"BlockLSTMGrad of a forward run", kForwardRunReason},
      {"BlockLSTMGradV2 of a forward run", kForwardRunReason},
      {"GRUBlockCellGrad of a forward run", kForwardRunReason},
      {"Cast", "NaN or Inf to an integer is undefined in C++ and differs by CPU in TF"},
      {"CheckNumerics", "reports NaN and Inf by design (its own cases cover that)"},
      {"RaggedRange", "float bounds of ranges, not data: TF refuses non-finite ones, as kiln"},
      {"CumulativeLogsumexp",
       "TF's reducer is order-dependent on NaN (a leading NaN gives -Inf forward, NaN "
       "reversed); the kernel follows it, the reference does not model it"},
      {"Conv3DBackpropInputV2",
       "TF convolves zero-padded gradients with the filter, so a non-finite filter value also "
       "reaches positions (0 x NaN) that the plain-loop reference skips"},
      {"_FusedDepthwiseConv2dNative",
       "oneDNN's max-based ReLU/ReLU6 turns NaN into 0; checking depthwise inputs costs more "
       "than the convolution (docs/tf-compat.md, \"Non-finite values\")"},
      {"HistogramFixedWidth",
       "NaN values are an error (TF: \"must not contain NaN\"); its own cases hold the bins of "
       "+-Inf"},
      {"BesselI0", kSpecialFunctionReason},
      {"BesselI0e", kSpecialFunctionReason},
      {"BesselI1", kSpecialFunctionReason},
      {"BesselI1e", kSpecialFunctionReason},
      {"BesselJ0", kSpecialFunctionReason},
      {"BesselJ1", kSpecialFunctionReason},
      {"BesselK0", kSpecialFunctionReason},
      {"BesselK0e", kSpecialFunctionReason},
      {"BesselK1", kSpecialFunctionReason},
      {"BesselK1e", kSpecialFunctionReason},
      {"BesselY0", kSpecialFunctionReason},
      {"BesselY1", kSpecialFunctionReason},
      {"Erfinv", kSpecialFunctionReason},
      {"Ndtri", kSpecialFunctionReason},
      {"Igamma", kSpecialFunctionReason},
      {"Igammac", kSpecialFunctionReason},
      {"Zeta", kSpecialFunctionReason},
      {"Polygamma", kSpecialFunctionReason},
      {"Betainc", kSpecialFunctionReason},
      {"NthElement",
       "TF runs std::nth_element, whose result with NaN in a row is unspecified; kiln sorts NaN "
       "last, the reference does not model either"},
      {"LowerBound", "a binary search over a row holding NaN (so not sorted) is unspecified"},
      {"UpperBound", "a binary search over a row holding NaN (so not sorted) is unspecified"},
      {"InTopK", "a non-finite prediction makes the row false by design (its own cases cover it)"},
      {"InTopKV2",
       "a non-finite prediction makes the row false by design (its own cases cover it)"},
      {"_FusedConv2D grouped", "thin (grouped) convolutions skip the input check, as depthwise"},
      {"_KilnInt8",
       "the integer products round their input to 8-bit levels, where NaN is level 0 (kiln's "
       "own ops for int8 bundles: docs/quantize.md)"},
      {"ScaleAndTranslateGrad",
       "TF's spans multiply their zero weights too (0 x Inf = NaN reaches more pixels), which the "
       "plain-loop adjoint skips, as for the forward op (the image family)"},
      {"NearestNeighbors",
       "TF's distance |p|^2 + |c|^2 - 2 p.c (which the kernel follows) makes Inf - Inf = NaN where "
       "the reference's direct squared distance gives Inf, and ranks neighbours by it"},
  };
  return exemptions;
}

const std::vector<OpTesterExemption>& NonFiniteExemptFamilies() {
  static const std::vector<OpTesterExemption> families = {
      {"quantized",
       "references are TF's recorded results for finite inputs; TF casts NaN and Inf to "
       "integers with undefined results"},
      {"linalg", "decompositions and solves refuse non-finite matrices with an error, as TF's"},
      {"tf_recorded",
       "references are TF's recorded results for the recorded (finite) inputs; other inputs "
       "have no reference"},
      {"image",
       "interpolation (resize, ScaleAndTranslate, crop) and FFT references do not yet model "
       "TF's 0 x Inf weights; left for a follow-up"},
  };
  return families;
}

namespace {

bool SameOutputs(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].shape() != b[i].shape() || !CompareTensors(a[i], b[i], 0).empty()) return false;
  return true;
}

}  // namespace

std::vector<OpCase> NonFiniteVariants(const std::vector<OpCase>& cases) {
  std::set<std::string_view> skip;
  for (const OpTesterExemption& e : NonFiniteExemptions()) skip.insert(e.op);
  constexpr float kSpecials[] = {std::numeric_limits<float>::quiet_NaN(),
                                 std::numeric_limits<float>::infinity(),
                                 -std::numeric_limits<float>::infinity(), -0.0f};
  std::vector<OpCase> out;
  for (const OpCase& c : cases) {
    if (!c.reference || !c.deterministic || skip.count(c.op)) continue;
    if (std::any_of(skip.begin(), skip.end(),
                    [&](std::string_view s) { return c.name.rfind(s, 0) == 0; }))
      continue;  // an exemption naming the start of case names
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const Tensor& t = c.inputs[i];
      if (!t.IsInitialized() || t.dtype() != DType::kFloat || t.NumElements() < 4) continue;
      OpCase v = c;
      Tensor special = t.DeepCopy();
      for (int k = 0; k < 4; ++k) special.data<float>()[k] = kSpecials[k];
      v.inputs[i] = special;
      // A reference that gives the same answer for these inputs does not read them (fixed
      // expected values, or elements the op does not touch): nothing to learn.
      if (SameOutputs(c.reference(c.inputs), v.reference(v.inputs))) break;
      v.name = c.name + " [NaN, +Inf, -Inf, -0 in input " + std::to_string(i) + "]";
      out.push_back(std::move(v));
      break;  // the first float input with room: the op's data
    }
  }
  return out;
}

}  // namespace kiln::testing
