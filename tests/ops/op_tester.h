// The op tester: every op's cases run through every path and every present device, and the
// results must agree (ggml's test-backend-ops). For each case:
//   - the single-op path (SingleOp, what eager execution uses) on the CPU, twice: outputs have
//     the prepared dtypes and shapes, repeat runs are identical, and outputs of ops that declare
//     fresh outputs never share an input's buffer;
//   - the case's reference (plain loops or known values), within its tolerance;
//   - the graph path: the op as the one node of a function, prepared with known shapes (memory
//     plan, arena, in-place reuse, constant folding of constant inputs) and with an unknown
//     leading dim (the shape specialisation), on one thread and on all, with fresh and with
//     caller-bound outputs: identical to the single-op result (or, for the ops whose kernels
//     are oneDNN's, within the case's tolerance: KernelChoiceOps());
//   - in-place ops: the graph path again with input 0 made by a node of the graph, so the memory
//     plan may give the output input 0's memory (as for a model's intermediates): identical too;
//   - every other device with a kernel for the op, against the CPU within the tolerance.
// Cases live in one file per op family (cases_<family>.cc) and are listed in op_cases.cc.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "exec/kernel_test_util.h"

namespace kiln::testing {

struct OpCase {
  std::string name;  // what a failure names: "AddV2 float32 (2, 3) + (3,)"
  std::string op;
  ProtoAttrMap attrs;
  std::vector<Tensor> inputs;
  std::vector<bool> constant;  // input i is known at prepare time (a Const in the graph)
  // The expected outputs, computed independently of the kernel; empty: none.
  std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)> reference;
  // Floats: |got - want| <= tolerance * max(1, |want|); 0 = exact. Also used across devices.
  double tolerance = 0;
  // How far the graph and in-place paths may be from the single-op path: 0 (bit-identical, what
  // the engine promises for its own kernels), or `tolerance` for the ops of KernelChoiceOps().
  // Set by Build().
  double path_tolerance = 0;
  // False for ops with hidden state (stateful random): outputs are not compared between runs.
  bool deterministic = true;
  // False where the op cannot stand alone in a graph (it needs resources made elsewhere).
  bool graph_path = true;
  ResourceManager* resources = nullptr;
  // Functions the op's func attrs name (If/While/Case branches); null: none.
  std::shared_ptr<const tensorflow::FunctionDefLibrary> functions;
};

// Builds a case in the style of OpRunner: OpCaseBuilder("AddV2").T(kFloat).Input(a)...
class OpCaseBuilder {
 public:
  explicit OpCaseBuilder(std::string op, std::string name = "");
  OpCaseBuilder& Type(const std::string& attr, DType t);
  OpCaseBuilder& TypeList(const std::string& attr, const std::vector<DType>& types);
  OpCaseBuilder& Int(const std::string& attr, int64_t v);
  OpCaseBuilder& IntList(const std::string& attr, const std::vector<int64_t>& v);
  OpCaseBuilder& Float(const std::string& attr, float v);
  OpCaseBuilder& FloatList(const std::string& attr, const std::vector<float>& v);
  OpCaseBuilder& Bool(const std::string& attr, bool v);
  OpCaseBuilder& String(const std::string& attr, const std::string& v);
  OpCaseBuilder& StringList(const std::string& attr, const std::vector<std::string>& v);
  OpCaseBuilder& ShapeAttr(const std::string& attr, const PartialShape& s);
  OpCaseBuilder& ShapeList(const std::string& attr, const std::vector<PartialShape>& shapes);
  OpCaseBuilder& TensorAttr(const std::string& attr, const Tensor& t);
  OpCaseBuilder& T(DType t) { return Type("T", t); }
  OpCaseBuilder& Input(const Tensor& t);
  OpCaseBuilder& ConstInput(const Tensor& t);
  OpCaseBuilder& Reference(std::function<std::vector<Tensor>(const std::vector<Tensor>&)> ref);
  // For single-output ops.
  OpCaseBuilder& Reference1(std::function<Tensor(const std::vector<Tensor>&)> ref);
  OpCaseBuilder& Tolerance(double tol);
  OpCaseBuilder& NonDeterministic();
  OpCaseBuilder& SingleOpOnly();
  OpCaseBuilder& Resources(ResourceManager* rm);
  OpCaseBuilder& Functions(std::shared_ptr<const tensorflow::FunctionDefLibrary> lib);
  OpCase Build();

 private:
  OpCase c_;
};

// Ops whose CPU kernels are oneDNN primitives: oneDNN picks its kernel, blocking and split of
// the reduction per shape, thread count and ISA (on AVX2 a (1, 784) x (784, 33) product splits
// K across threads; on AVX-512 it does not), so their results may differ in the last bits
// between thread counts and paths. docs/design.md, "Numerics: what is bit-identical".
bool IsKernelChoiceOp(std::string_view op);

// The case's op as the one node of a function whose args are its non-constant inputs (its
// constant inputs become Const nodes) and whose outputs have `out_specs`' dtypes.
tensorflow::FunctionDef OneNodeFunction(const OpCase& c, const exec::OpDefinition& def,
                                        const std::vector<TensorSpec>& out_specs);

// Runs every check of the file comment; failures are doctest CHECKs naming the case.
void RunOpCase(const OpCase& c);
void RunOpCases(const std::vector<OpCase>& cases);

// Element-wise comparison for any dtype (floats within `tol` relative, NaN matching NaN;
// everything else exact; variants holding tensor lists or ragged tensors by their contents).
// Returns "" when equal, else what differs.
std::string CompareTensors(const Tensor& got, const Tensor& want, double tol);

}  // namespace kiln::testing

namespace kiln::testing {

// Deterministic pseudo-random values of any dtype: floats (half and bfloat16 too) in [lo, hi],
// integers rounded from it (clamped to the type's range), bools alternating by the draw,
// strings short words.
Tensor RandomOf(DType dtype, const Shape& shape, uint32_t seed, double lo = -3, double hi = 3);
// t's elements as `to`: through a double (complex: the real part; bool: nonzero), integers
// rounded and saturated; strings become their length, and numbers their integer text.
Tensor ConvertElements(const Tensor& t, DType to);
// The next seed of a case list: a call, so several draws in one builder chain stay clear of
// GCC 12's -Wsequence-point (an error under -Werror) on `seed++`.
inline uint32_t NextSeed(uint32_t& seed) { return seed++; }

// The reference of an element-wise op, computed in double (floats) or in T's arithmetic: f is
// applied to every element (unary) or over numpy broadcasting (binary). The result has
// `out` dtype (kInvalid: the input's).
Tensor RefUnaryDouble(const Tensor& x, const std::function<double(double)>& f,
                      DType out = DType::kInvalid);
Tensor RefBinaryDouble(const Tensor& a, const Tensor& b,
                       const std::function<double(double, double)>& f, DType out = DType::kInvalid);

}  // namespace kiln::testing
