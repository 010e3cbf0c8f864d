// The dtype half of issue 21's goal: for every op kiln runs, the dtypes TensorFlow's CPU kernels
// take (tests/ops/tf_op_dtypes.txt, written from the oracle by tests/tf/op_coverage.py). A dtype
// counts when an op-tester case runs the op with it, or when a case of the op, its inputs
// converted to the dtype, prepares and runs as a model would run it (the single-op path, which
// widens half precision where the executor does). Float32 cases converted to float16,
// bfloat16 and float64 are also checked against the float32 op on the same (rounded) inputs.
// The test fails when the share falls below tests/tf/op_coverage_floor.txt's
// dtypes_covered_percent; KILN_DTYPE_REPORT=<file> writes one line per (op, dtype).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/tensor_list.h"
#include "kiln/exec/executor.h"
#include "kiln/exec/op_runner.h"
#include "kiln/exec/resources.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

struct TfTypes {
  std::string op, attr;
  std::vector<std::string> dtypes;
  std::vector<std::string> args;  // "=" bound to attr, "-" not; "*N" list of attr N; "#L" type list
};

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

std::vector<TfTypes> ReadTable(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read ", path);
  std::vector<TfTypes> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream fields(line);
    TfTypes t;
    std::string types, args;
    fields >> t.op >> t.attr >> types >> args;
    t.dtypes = Split(types, ',');
    if (args != ".") t.args = Split(args, ',');
    out.push_back(std::move(t));
  }
  return out;
}

double ReadFloor(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::stringstream fields(line);
    std::string k;
    double v = 0;
    if (fields >> k >> v && k == key) return v;
  }
  FAIL("no '", key, "' in ", path);
  return 0;
}

// Which inputs of c hold the constraint's dtype, from the TF OpDef's args; when the expansion
// does not fit the case, the inputs of the constraint's current dtype.
std::vector<bool> BoundInputs(const OpCase& c, const TfTypes& tf, DType old) {
  std::vector<bool> bound;
  bool fits = true;
  for (const std::string& a : tf.args) {
    int64_t n = 1;
    const size_t star = a.find_first_of("*#");
    if (star != std::string::npos) {
      auto it = c.attrs.find(a.substr(star + 1));
      if (it == c.attrs.end()) {
        fits = false;
        break;
      }
      n = a[star] == '*' ? it->second.i() : it->second.list().type_size();
    }
    for (int64_t k = 0; k < n; ++k) bound.push_back(a[0] == '=');
  }
  if (!fits || bound.size() != c.inputs.size()) {
    bound.assign(c.inputs.size(), false);
    for (size_t i = 0; i < c.inputs.size(); ++i) bound[i] = c.inputs[i].dtype() == old;
  }
  return bound;
}

enum class Kind { kFloat, kComplex, kSigned, kUnsigned, kBool, kString, kQuantized, kOther };
Kind KindOf(DType d) {
  if (IsFloatingPoint(d)) return Kind::kFloat;
  if (IsComplex(d)) return Kind::kComplex;
  if (IsQuantized(d)) return Kind::kQuantized;
  if (d == DType::kBool) return Kind::kBool;
  if (d == DType::kString) return Kind::kString;
  if (IsInteger(d)) return IsSigned(d) ? Kind::kSigned : Kind::kUnsigned;
  return Kind::kOther;
}

struct Outcome {
  std::string status;  // "case", "ran", "checked", "refused", "wrong", "untested"
  std::string detail;
};

// The functions c's attrs name (none: an empty library).
exec::FunctionLibrary LibraryOf(const OpCase& c) {
  return exec::FunctionLibrary(c.functions ? *c.functions : tensorflow::FunctionDefLibrary());
}

// c's op prepared on its own, as the op tester's single-op path prepares it (`library` must
// outlive the op).
Result<exec::SingleOp> PrepareCase(const OpCase& c, const exec::FunctionLibrary& library) {
  std::vector<TensorSpec> specs;
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    specs.push_back(TensorSpec{c.inputs[i].dtype(), PartialShape(c.inputs[i].shape())});
    values.push_back(c.constant[i] ? &c.inputs[i] : nullptr);
  }
  exec::SingleOpOptions options;
  options.resources = c.resources;
  options.library = &library;
  return exec::SingleOp::Prepare(c.op, "node", c.attrs, specs, values, options);
}

Result<std::vector<Tensor>> RunCase(const OpCase& c) {
  const exec::FunctionLibrary library = LibraryOf(c);
  KILN_ASSIGN_OR_RETURN(exec::SingleOp op, PrepareCase(c, library));
  return op.Run(c.inputs);
}

// Type attrs that follow the constraint's when it becomes `t`: the real part of a complex T, the
// complex of a real one, BatchMatMulV3's Tb and Tout (Ta's).
std::vector<std::pair<std::string, DType>> FollowingAttrs(std::string_view op, DType t) {
  if (op == "Real" || op == "Imag" || op == "ComplexAbs" || op == "Angle")
    return {{"Tout", t == DType::kComplex128 ? DType::kDouble : DType::kFloat}};
  if (op == "Complex")
    return {{"Tout", t == DType::kDouble ? DType::kComplex128 : DType::kComplex64}};
  if (op == "BatchMatMulV3") return {{"Tb", t}, {"Tout", t}};
  return {};
}

// Ops whose values depend on the dtype by definition (its bytes, or draws made per dtype), so
// a float32 run on the same inputs is no reference.
bool ValuesFollowDType(std::string_view op) {
  return op == "DecodeRaw" || op == "DecodePaddedRaw" || op == "Bitcast" ||
         op.find("Random") != std::string_view::npos;
}

// v (a variant of c, which ran) as the one node of a graph: how a model runs it, which widens
// half precision for kernels that have no half form. Outputs of c's dtype `old` become `to`.
Result<std::vector<Tensor>> RunInGraph(const OpCase& v, const OpCase& c, DType old, DType to) {
  const exec::FunctionLibrary library = LibraryOf(c);
  KILN_ASSIGN_OR_RETURN(exec::SingleOp op, PrepareCase(c, library));
  std::vector<TensorSpec> out_specs = op.output_specs();
  for (TensorSpec& o : out_specs)
    if (o.dtype == old) o.dtype = to;
  const tensorflow::FunctionDef fdef = OneNodeFunction(v, op.definition(), out_specs);
  std::vector<Tensor> args;
  std::vector<TensorSpec> arg_specs;
  for (size_t i = 0; i < v.inputs.size(); ++i) {
    if (v.constant[i]) continue;
    args.push_back(v.inputs[i]);
    arg_specs.push_back(TensorSpec{v.inputs[i].dtype(), PartialShape(v.inputs[i].shape())});
  }
  exec::PrepareOptions options;
  options.resources = v.resources;
  KILN_ASSIGN_OR_RETURN(auto fn,
                        exec::PreparedFunction::Prepare(fdef, library, arg_specs, options));
  std::vector<Tensor> outs;
  KILN_RETURN_IF_ERROR(fn->Run(args, &outs));
  return outs;
}

// A variant tensor whose tensor lists of element dtype `old` are fresh ones of `to`, their
// elements converted (other elements as they are).
Tensor ConvertLists(const Tensor& t, DType old, DType to) {
  Tensor lists(DType::kVariant, t.shape());
  for (int64_t k = 0; k < lists.NumElements(); ++k) {
    const VariantPtr& held = t.data<VariantPtr>()[k];
    const auto* list = dynamic_cast<const exec::TensorList*>(held.get());
    if (list == nullptr || list->element_dtype() != old) {
      lists.data<VariantPtr>()[k] = held;
      continue;
    }
    std::vector<Tensor> items;
    for (const Tensor& item : list->tensors())
      items.push_back(item.IsInitialized() && item.dtype() == old ? ConvertElements(item, to)
                                                                  : item);
    lists.data<VariantPtr>()[k] = std::make_shared<const exec::TensorList>(
        to, list->element_shape(), std::move(items), list->max_num_elements());
  }
  return lists;
}

// A resource handle: to a variable of `old`, a fresh variable of `to` holding its value
// converted; anything else as it is.
Tensor ConvertVariable(const Tensor& handle, DType old, DType to) {
  if (handle.NumElements() != 1) return handle;
  auto var = std::dynamic_pointer_cast<exec::VariableResource>(
      handle.scalar<std::shared_ptr<ResourceBase>>());
  if (var == nullptr || var->dtype() != old) return handle;
  auto value = var->Read();
  if (!value.ok()) return handle;
  auto fresh = std::make_shared<exec::VariableResource>(var->name(), to, var->shape());
  if (!fresh->Assign(ConvertElements(*value, to)).ok()) return handle;
  Tensor h(DType::kResource, Shape());
  h.scalar<std::shared_ptr<ResourceBase>>() = fresh;
  return h;
}

// c with the constraint attr set to `to` and its bound inputs, tensor lists and variables
// converted.
OpCase Variant(const OpCase& c, const TfTypes& tf, DType old, DType to) {
  OpCase v = c;
  v.attrs[tf.attr].set_type(static_cast<tensorflow::DataType>(DTypeToProto(to)));
  for (const auto& [attr, dtype] : FollowingAttrs(c.op, to))
    if (v.attrs.count(attr))
      v.attrs[attr].set_type(static_cast<tensorflow::DataType>(DTypeToProto(dtype)));
  // A resource the variant makes by name (a shared table) is another one than c's: under c's
  // name it would meet c's, of the other dtype, when the op tester runs c in the same process.
  if (auto it = v.attrs.find("shared_name"); it != v.attrs.end() && !it->second.s().empty())
    it->second.set_s(it->second.s() + "_as_" + DTypeShortName(to));
  std::vector<bool> bound = BoundInputs(c, tf, old);
  if (c.op == "BatchMatMulV3") bound.assign(bound.size(), true);  // y is Tb's
  for (size_t i = 0; i < v.inputs.size(); ++i) {
    Tensor& in = v.inputs[i];
    if (bound[i] && in.dtype() == old) in = ConvertElements(in, to);
    if (in.dtype() == DType::kVariant) in = ConvertLists(in, old, to);
    if (in.dtype() == DType::kResource) in = ConvertVariable(in, old, to);
  }
  return v;
}

// A half or float64 result of a float32 case against the float32 op on the same inputs (the
// variant's, read back as float32).
std::string CheckAgainstFloat(const OpCase& c, const TfTypes& tf, const OpCase& v,
                              const std::vector<Tensor>& got, DType to) {
  OpCase back = c;
  const std::vector<bool> bound = BoundInputs(c, tf, DType::kFloat);
  for (size_t i = 0; i < back.inputs.size(); ++i)
    if (bound[i] && v.inputs[i].dtype() == to)
      back.inputs[i] = ConvertElements(v.inputs[i], DType::kFloat);
  auto want = RunCase(back);
  if (!want.ok() || want->size() != got.size()) return "";
  const double tol = to == DType::kHalf ? 1e-2 : to == DType::kBFloat16 ? 5e-2 : 1e-4;
  for (size_t i = 0; i < got.size(); ++i) {
    if ((*want)[i].dtype() != DType::kFloat) continue;
    const Tensor g = got[i].dtype() == to ? ConvertElements(got[i], DType::kFloat) : got[i];
    if (g.dtype() != DType::kFloat)
      return "output " + std::to_string(i) + " is not " + std::string(DTypeShortName(to));
    const std::string diff = CompareTensors(g, (*want)[i], std::max(tol, c.tolerance));
    if (!diff.empty()) return "output " + std::to_string(i) + ": " + diff;
  }
  return "";
}

Outcome Probe(const std::vector<const OpCase*>& cases, const TfTypes& tf, const std::string& name) {
  auto parsed = DTypeFromName(name);
  if (!parsed.ok()) return {"untested", "kiln has no dtype " + name};
  const DType to = *parsed;
  std::vector<std::pair<const OpCase*, DType>> templates;
  for (const OpCase* c : cases) {
    auto it = c->attrs.find(tf.attr);
    if (it == c->attrs.end() || it->second.value_case() != tensorflow::AttrValue::kType) continue;
    auto d = DTypeFromProto(it->second.type());
    if (!d.ok()) continue;
    if (*d == to) return {"case", ""};
    templates.emplace_back(c, *d);
  }
  if (!HoldsData(to)) return {"untested", "no case converts to " + name};
  // Nearest kind first, then float32.
  std::stable_sort(templates.begin(), templates.end(), [&](const auto& a, const auto& b) {
    auto rank = [&](DType d) { return KindOf(d) == KindOf(to) ? 0 : d == DType::kFloat ? 1 : 2; };
    return rank(a.second) < rank(b.second);
  });
  std::string first_error, held;
  for (const auto& [c, old] : templates) {
    if (!HoldsData(old)) continue;
    const OpCase v = Variant(*c, tf, old, to);
    auto got = RunCase(v);
    if (!got.ok() && (to == DType::kHalf || to == DType::kBFloat16)) {
      auto widened = RunInGraph(v, *c, old, to);
      if (widened.ok()) got = std::move(widened);
    }
    if (!got.ok()) {
      const std::string error = got.status().ToString();
      // The case's resource or variant inputs (a variable, a list, an array) were made with
      // its own dtype: unless the op's Prepare refused the dtype itself, nothing was learnt.
      const bool handle_input = std::any_of(c->inputs.begin(), c->inputs.end(),
                                            [](const Tensor& t) { return IsHandle(t.dtype()); });
      if (handle_input && error.find("is not supported") == std::string::npos) {
        if (held.empty()) held = error;
      } else if (first_error.empty()) {
        first_error = error;
      }
      continue;
    }
    if (old == DType::kFloat && c->deterministic && IsFloatingPoint(to) &&
        !ValuesFollowDType(c->op)) {
      const std::string wrong = CheckAgainstFloat(*c, tf, v, *got, to);
      if (!wrong.empty()) return {"wrong", c->name + ": " + wrong};
      return {"checked", c->name};
    }
    return {"ran", c->name};
  }
  if (templates.empty()) return {"untested", "no case sets " + tf.attr};
  if (first_error.empty() && !held.empty())
    return {"untested", "the dtype is held by a resource or variant input: " + held};
  return {"refused", first_error};
}

TEST_CASE("op tester: the dtypes TensorFlow's CPU kernels take") {
  const std::string dir = KILN_TESTDATA_DIR;
  const std::vector<TfTypes> table = ReadTable(dir + "/../ops/tf_op_dtypes.txt");
  std::map<std::string, std::vector<OpCase>, std::less<>> by_op;
  for (const OpCaseFamily& f : AllOpCaseFamilies())
    for (OpCase& c : f.cases()) by_op[c.op].push_back(std::move(c));
  const char* report_path = std::getenv("KILN_DTYPE_REPORT");
  std::ofstream report;
  if (report_path != nullptr) report.open(report_path);
  std::map<std::string, int> counts;
  int pairs = 0, taken = 0, ops = 0;
  for (const TfTypes& tf : table) {
    if (exec::FindOp(tf.op) == nullptr || exec::FindCpuKernel(tf.op) == nullptr) continue;
    ++ops;
    std::vector<const OpCase*> cases;
    for (const OpCase& c : by_op[tf.op]) cases.push_back(&c);
    for (const std::string& name : tf.dtypes) {
      const Outcome o = Probe(cases, tf, name);
      ++pairs;
      ++counts[o.status];
      if (o.status == "case" || o.status == "ran" || o.status == "checked") ++taken;
      if (report.is_open())
        report << tf.op << ' ' << name << ' ' << o.status << ' ' << o.detail << '\n';
    }
  }
  const double percent = 100.0 * taken / std::max(1, pairs);
  std::string summary;
  for (const auto& [status, n] : counts) summary += " " + status + " " + std::to_string(n);
  MESSAGE("dtype coverage: ", taken, " of ", pairs, " (op, dtype) pairs of ", ops, " ops (",
          percent, " %):", summary);
  CHECK(percent >= ReadFloor(dir + "/../tf/op_coverage_floor.txt", "dtypes_covered_percent"));
}

}  // namespace
}  // namespace kiln::testing
