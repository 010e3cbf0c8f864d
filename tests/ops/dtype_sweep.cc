// The dtype half of issue 21's goal: for every op kiln runs, the dtypes TensorFlow's CPU kernels
// take (tests/ops/tf_op_dtypes.txt, written from the oracle by tests/tf/op_coverage.py). A dtype
// counts when an op-tester case runs the op with it, or when a case of the op, its inputs
// converted to the dtype, prepares and runs as a model would run it (the single-op path, which
// widens half precision where the executor does). Float32 cases converted to float16,
// bfloat16 and float64 are also checked against the float32 op on the same (rounded) inputs;
// resource and variant are probed with handles to a case's values (WrapInHandles), read back.
// The test fails when the share falls below tests/tf/op_coverage_floor.txt's
// dtypes_covered_percent; KILN_DTYPE_REPORT=<file> writes one line per (op, dtype).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/ragged_util.h"
#include "kernels/tensor_list.h"
#include "kiln/exec/executor.h"
#include "kiln/exec/op_runner.h"
#include "kiln/exec/resources.h"
#include "ops/array_ref.h"
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

// ---- Handle dtypes --------------------------------------------------------------------------
// TF's kernels that move elements (Gather, Pack, Select, Transpose, ...) take resource and
// variant tensors too. The probe makes each element of a case's bound inputs a handle to its
// own value (WrapInHandles, ops/array_ref.h), runs the op, reads the results back through the
// handles and checks them against the case's own results.

// Whether element k of a handle tensor is empty: what TF's kernels fill with where a numeric
// dtype gets zeros (an empty Variant), read back as the zero of the case's dtype.
bool EmptyAt(const Tensor& t, int64_t k) {
  return t.dtype() == DType::kResource ? t.data<ResourcePtr>()[k] == nullptr
                                       : t.data<VariantPtr>()[k] == nullptr;
}

// The scalar a handle made by WrapInHandles holds (an error names what else it holds).
Result<Tensor> Unwrapped(const Tensor& t, int64_t k) {
  if (t.dtype() == DType::kResource) {
    auto var = std::dynamic_pointer_cast<exec::VariableResource>(t.data<ResourcePtr>()[k]);
    if (var == nullptr) return InvalidArgument("element ", k, " is not a variable");
    return var->Read();
  }
  const auto* list = dynamic_cast<const exec::TensorList*>(t.data<VariantPtr>()[k].get());
  if (list == nullptr || list->size() != 1 || !list->tensors()[0].IsInitialized() ||
      list->tensors()[0].NumElements() != 1)
    return InvalidArgument("element ", k, " is not a list of one scalar");
  return list->tensors()[0];
}

// `got` (an output of the handle run) read back as `want`'s dtype: handles of WrapInHandles' kind
// to their values, variants holding lists of handles to lists of values.
Result<Tensor> ReadBack(const Tensor& got, const Tensor& want, DType to) {
  if (got.dtype() == want.dtype() && got.dtype() != DType::kVariant) return got;
  if (got.dtype() == to && !IsHandle(want.dtype())) {
    Tensor out(want.dtype(), got.shape());
    for (int64_t k = 0; k < got.NumElements(); ++k) {
      if (EmptyAt(got, k)) continue;  // a fresh tensor's elements are zeros
      KILN_ASSIGN_OR_RETURN(Tensor item, Unwrapped(got, k));
      if (item.dtype() != want.dtype())
        return InvalidArgument("element ", k, " holds ", DTypeShortName(item.dtype()));
      CopyElement(item, 0, &out, k);
    }
    return out;
  }
  if (got.dtype() != DType::kVariant || want.dtype() != DType::kVariant)
    return InvalidArgument("a ", DTypeShortName(got.dtype()), " output where the case has ",
                           DTypeShortName(want.dtype()));
  Tensor out(DType::kVariant, got.shape());
  for (int64_t k = 0; k < got.NumElements(); ++k) {
    const VariantPtr& held = got.data<VariantPtr>()[k];
    const auto* list = dynamic_cast<const exec::TensorList*>(held.get());
    const auto* wanted = dynamic_cast<const exec::TensorList*>(want.data<VariantPtr>()[k].get());
    if (list == nullptr || wanted == nullptr || list->element_dtype() != to) {
      out.data<VariantPtr>()[k] = held;
      continue;
    }
    std::vector<Tensor> items;
    for (size_t i = 0; i < list->tensors().size(); ++i) {
      const Tensor& item = list->tensors()[i];
      if (!item.IsInitialized() || i >= wanted->tensors().size()) {
        items.push_back(item);
        continue;
      }
      KILN_ASSIGN_OR_RETURN(Tensor value, ReadBack(item, wanted->tensors()[i], to));
      items.push_back(std::move(value));
    }
    out.data<VariantPtr>()[k] = std::make_shared<const exec::TensorList>(
        wanted->element_dtype(), list->element_shape(), std::move(items), list->max_num_elements());
  }
  return out;
}

// t's elements as `to`: converted values, or (a handle dtype) wrapped.
Tensor Converted(const Tensor& t, DType to) {
  return IsHandle(to) ? WrapInHandles(t, to) : ConvertElements(t, to);
}

// A variant tensor whose tensor lists of element dtype `old` are fresh ones of `to`, their
// elements converted, and whose ragged tensors of `old` values hold them converted (other
// elements as they are).
Tensor ConvertLists(const Tensor& t, DType old, DType to) {
  Tensor lists(DType::kVariant, t.shape());
  for (int64_t k = 0; k < lists.NumElements(); ++k) {
    const VariantPtr& held = t.data<VariantPtr>()[k];
    if (const auto* ragged = dynamic_cast<const exec::RaggedVariant*>(held.get());
        ragged != nullptr && ragged->values().dtype() == old) {
      lists.data<VariantPtr>()[k] = std::make_shared<const exec::RaggedVariant>(
          ragged->splits(), Converted(ragged->values(), to));
      continue;
    }
    const auto* list = dynamic_cast<const exec::TensorList*>(held.get());
    if (list == nullptr || list->element_dtype() != old) {
      lists.data<VariantPtr>()[k] = held;
      continue;
    }
    std::vector<Tensor> items;
    for (const Tensor& item : list->tensors())
      items.push_back(item.IsInitialized() && item.dtype() == old ? Converted(item, to) : item);
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
  if (!fresh->Assign(Converted(*value, to)).ok()) return handle;
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
    if (bound[i] && in.dtype() == old) {
      in = Converted(in, to);  // wrapped values are not lists to convert again below
      continue;
    }
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

// A scalar variable handle as the variable's value; other tensors as they are.
Tensor VariableValue(const Tensor& t) {
  if (t.dtype() != DType::kResource || t.NumElements() != 1) return t;
  auto var = std::dynamic_pointer_cast<exec::VariableResource>(t.scalar<ResourcePtr>());
  if (var == nullptr) return t;
  auto value = var->Read();
  return value.ok() ? *value : t;
}

// The handle run's results, read back through the handles, against c's own.
std::string CheckReadBack(const OpCase& c, const std::vector<Tensor>& got, DType to) {
  auto want = RunCase(c);
  if (!want.ok()) return "the case itself: " + want.status().ToString();
  if (want->size() != got.size()) return "a different number of outputs";
  for (size_t i = 0; i < got.size(); ++i) {
    // A variable the case passes through (a ref input it wrote) compares by its value.
    const bool passed = (*want)[i].dtype() == DType::kResource;
    const Tensor w = passed ? VariableValue((*want)[i]) : (*want)[i];
    auto value = ReadBack(passed ? VariableValue(got[i]) : got[i], w, to);
    if (!value.ok()) return "output " + std::to_string(i) + ": " + value.status().ToString();
    const std::string diff = CompareTensors(*value, w, c.tolerance);
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
  if (!HoldsData(to) && !IsHandle(to)) return {"untested", "no case converts to " + name};
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
    if (IsHandle(to)) {
      if (!c->deterministic || ValuesFollowDType(c->op)) return {"ran", c->name};
      const std::string wrong = CheckReadBack(*c, *got, to);
      if (!wrong.empty()) return {"wrong", c->name + ": " + wrong};
      return {"checked", c->name};
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
