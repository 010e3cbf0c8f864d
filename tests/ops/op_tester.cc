#include "ops/op_tester.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <string>

#include "device/test_device.h"
#include "kernels/composite_tensor_variant.h"
#include "kernels/optional_ops.h"
#include "kernels/ragged_util.h"
#include "kernels/tensor_list.h"
#include "kernels/tensor_map.h"
#include "kiln/core/float8.h"
#include "kiln/exec/device.h"
#include "kiln/exec/executor.h"
#include "kiln/exec/op_runner.h"

namespace kiln::testing {
namespace {

using exec::FunctionLibrary;
using exec::PreparedFunction;
using exec::RunOptions;
using exec::ThreadPool;

template <typename T>
std::string CompareTyped(const Tensor& got, const Tensor& want, double tol) {
  const T* g = got.data<T>();
  const T* w = want.data<T>();
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    bool ok;
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(w[i])) {
        ok = std::isnan(g[i]);
      } else if (std::isinf(w[i])) {
        ok = g[i] == w[i];
      } else {
        const double scale = std::max(1.0, std::abs(static_cast<double>(w[i])));
        ok = std::abs(static_cast<double>(g[i]) - static_cast<double>(w[i])) <= tol * scale;
      }
    } else {
      ok = g[i] == w[i];
    }
    if (!ok) {
      std::ostringstream os;
      if constexpr (sizeof(T) == 1 && std::is_integral_v<T>)  // numbers, not characters
        os << "element " << i << ": got " << int{g[i]} << ", want " << int{w[i]};
      else
        os << "element " << i << ": got " << g[i] << ", want " << w[i];
      return os.str();
    }
  }
  return "";
}

// Half and bfloat16 compare through float.
float ToFloat(Half h) { return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(h.bits)); }
float ToFloat(BFloat16 b) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(b.bits));
}

template <typename T>
std::string CompareHalf(const Tensor& got, const Tensor& want, double tol) {
  Tensor g(DType::kFloat, got.shape()), w(DType::kFloat, want.shape());
  for (int64_t i = 0; i < got.NumElements(); ++i) {
    g.data<float>()[i] = ToFloat(got.data<T>()[i]);
    w.data<float>()[i] = ToFloat(want.data<T>()[i]);
  }
  return CompareTyped<float>(g, w, tol);
}

// Complex numbers: |got - want| <= tol * max(1, |want|), on the complex plane.
template <typename R>
std::string CompareComplex(const Tensor& got, const Tensor& want, double tol) {
  const auto* g = got.data<std::complex<R>>();
  const auto* w = want.data<std::complex<R>>();
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    const std::complex<double> gd(g[i].real(), g[i].imag()), wd(w[i].real(), w[i].imag());
    if (std::abs(gd - wd) <= tol * std::max(1.0, std::abs(wd))) continue;
    // Non-finite parts match part by part: NaN with NaN, an infinity with itself.
    auto same = [tol](double a, double b) {
      if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
      if (std::isinf(a) || std::isinf(b)) return a == b;
      return std::abs(a - b) <= tol * std::max(1.0, std::abs(b));
    };
    if (!std::isfinite(std::abs(wd)) && same(gd.real(), wd.real()) && same(gd.imag(), wd.imag()))
      continue;
    std::ostringstream os;
    os << "element " << i << ": got " << gd << ", want " << wd;
    return os.str();
  }
  return "";
}

}  // namespace

tensorflow::FunctionDef OneNodeFunction(const OpCase& c, const exec::OpDefinition& def,
                                        const std::vector<TensorSpec>& out_specs) {
  tensorflow::FunctionDef f;
  auto* sig = f.mutable_signature();
  sig->set_name("op_case");
  auto* node = f.add_node_def();
  node->set_name("node");
  node->set_op(c.op);
  *node->mutable_attr() = c.attrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    if (c.constant[i]) {
      auto* k = f.add_node_def();
      k->set_name(name);
      k->set_op("Const");
      (*k->mutable_attr())["dtype"].set_type(
          static_cast<tensorflow::DataType>(DTypeToProto(c.inputs[i].dtype())));
      Status s = TensorToProto(c.inputs[i], (*k->mutable_attr())["value"].mutable_tensor());
      REQUIRE_MESSAGE(s.ok(), s.ToString());
      node->add_input(name + ":output:0");
    } else {
      auto* a = sig->add_input_arg();
      a->set_name(name);
      a->set_type(static_cast<tensorflow::DataType>(DTypeToProto(c.inputs[i].dtype())));
      node->add_input(name);
    }
  }
  for (size_t i = 0; i < out_specs.size(); ++i) {
    const std::string name = "out" + std::to_string(i);
    auto* o = sig->add_output_arg();
    o->set_name(name);
    o->set_type(static_cast<tensorflow::DataType>(DTypeToProto(out_specs[i].dtype)));
    auto [arg, index] = exec::OutputArgOf(def, static_cast<int>(i), &c.attrs);
    (*f.mutable_ret())[name] = "node:" + std::string(arg) + ":" + std::to_string(index);
  }
  return f;
}

namespace {

// Runs the case's op as the one node of a function; args are the non-constant inputs.
void CheckGraphPath(const OpCase& c, const exec::OpDefinition& def,
                    const std::vector<TensorSpec>& out_specs, const std::vector<Tensor>& want) {
  const tensorflow::FunctionDef fdef = OneNodeFunction(c, def, out_specs);
  const tensorflow::FunctionDefLibrary empty;
  FunctionLibrary library(c.functions ? *c.functions : empty);
  std::vector<Tensor> args;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (!c.constant[i]) args.push_back(c.inputs[i]);

  const ThreadPool one(1), all(0);
  for (bool leading_unknown : {false, true}) {
    std::vector<TensorSpec> specs;
    bool any_unknown = false;
    for (const Tensor& t : args) {
      PartialShape s(t.shape());
      if (leading_unknown && t.rank() > 0 && DTypeIsPod(t.dtype())) {
        std::vector<int64_t> dims(t.shape().dims().begin(), t.shape().dims().end());
        dims[0] = -1;
        s = *PartialShape::FromDims(dims);
        any_unknown = true;
      }
      specs.push_back(TensorSpec{t.dtype(), s});
    }
    if (leading_unknown && !any_unknown) continue;
    exec::PrepareOptions options;
    options.resources = c.resources;
    auto fn = PreparedFunction::Prepare(fdef, library, specs, options);
    // std::string: doctest prints a bare const char* as an address.
    const std::string shapes = leading_unknown ? "unknown leading dim" : "known shapes";
    REQUIRE_MESSAGE(fn.ok(), c.name, ": graph path (", shapes, "): ", fn.status().ToString());
    for (const ThreadPool* pool : {&one, &all}) {
      for (bool bound : {false, true}) {
        std::vector<Tensor> outs(want.size());
        if (bound) {
          for (size_t i = 0; i < want.size(); ++i)
            if (DTypeIsPod(want[i].dtype())) outs[i] = Tensor(want[i].dtype(), want[i].shape());
        }
        RunOptions run;
        run.threads = pool;
        Status s = (*fn)->Run(args, {}, outs, run);
        REQUIRE_MESSAGE(s.ok(), c.name, ": graph path: ", s.ToString());
        if (!c.deterministic) continue;
        for (size_t i = 0; i < want.size(); ++i) {
          const std::string diff = CompareTensors(outs[i], want[i], c.path_tolerance);
          CHECK_MESSAGE(diff.empty(), c.name, ": graph path (", shapes, ", ", pool->num_threads(),
                        " threads", std::string(bound ? ", bound outputs" : ""), ") output ", i,
                        " differs from the single-op path: ", diff);
        }
      }
    }
  }
}

// In-place ops (kOpInPlace): input 0 made inside the graph (a Tile by ones, a fresh planned
// tensor that dies at the op), so the memory plan may put the output in its memory, as it does
// for an intermediate of a model. Must give the single-op result.
void CheckInPlacePath(const OpCase& c, const exec::OpDefinition& def,
                      const std::vector<TensorSpec>& out_specs, const std::vector<Tensor>& want) {
  if ((def.flags & exec::kOpInPlace) == 0 || c.inputs.empty() || c.constant[0] ||
      !DTypeIsPod(c.inputs[0].dtype()) || !c.deterministic)
    return;
  if (want.empty() || !DTypeIsPod(want[0].dtype())) return;
  tensorflow::FunctionDef fdef = OneNodeFunction(c, def, out_specs);
  // A fresh copy of `input` (Tile by ones) named `name`.
  auto copy = [&fdef](const std::string& name, const std::string& input, DType dtype, int rank) {
    auto* ones = fdef.add_node_def();
    ones->set_name(name + "_ones");
    ones->set_op("Const");
    (*ones->mutable_attr())["dtype"].set_type(tensorflow::DT_INT32);
    Status made = TensorToProto(Make<int32_t>(std::vector<int32_t>(rank, 1), {rank}),
                                (*ones->mutable_attr())["value"].mutable_tensor());
    REQUIRE_MESSAGE(made.ok(), made.ToString());
    auto* tile = fdef.add_node_def();
    tile->set_name(name);
    tile->set_op("Tile");
    (*tile->mutable_attr())["T"].set_type(static_cast<tensorflow::DataType>(DTypeToProto(dtype)));
    (*tile->mutable_attr())["Tmultiples"].set_type(tensorflow::DT_INT32);
    tile->add_input(input);
    tile->add_input(name + "_ones:output:0");
  };
  // Input 0 and output 0 both intermediates (a function's arguments and results are never
  // planned): in0 -> copy_in -> op -> copy_out -> out0.
  copy("copy_in", "in0", c.inputs[0].dtype(), c.inputs[0].rank());
  fdef.mutable_node_def(0)->set_input(0, "copy_in:output:0");
  std::string& ret0 = (*fdef.mutable_ret())["out0"];
  copy("copy_out", ret0, want[0].dtype(), want[0].rank());
  ret0 = "copy_out:output:0";

  const tensorflow::FunctionDefLibrary empty;
  FunctionLibrary library(c.functions ? *c.functions : empty);
  std::vector<Tensor> args;
  std::vector<TensorSpec> specs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.constant[i]) continue;
    args.push_back(c.inputs[i]);
    specs.push_back(TensorSpec{c.inputs[i].dtype(), PartialShape(c.inputs[i].shape())});
  }
  exec::PrepareOptions options;
  options.resources = c.resources;
  auto fn = PreparedFunction::Prepare(fdef, library, specs, options);
  REQUIRE_MESSAGE(fn.ok(), c.name, ": in-place path: ", fn.status().ToString());
  const ThreadPool all(0);
  std::vector<Tensor> outs(want.size());
  RunOptions run;
  run.threads = &all;
  Status s = (*fn)->Run(args, {}, outs, run);
  REQUIRE_MESSAGE(s.ok(), c.name, ": in-place path: ", s.ToString());
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string diff = CompareTensors(outs[i], want[i], c.path_tolerance);
    CHECK_MESSAGE(diff.empty(), c.name, ": in-place path (input 0 made in the graph) output ", i,
                  " differs from the single-op path: ", diff);
  }
}

// Variants compare by what they hold: tensor lists element by element, ragged tensors by their
// splits and values, maps entry by entry, composite tensors by metadata and components,
// optionals by whether they hold values and what;
// anything else by identity.
std::string CompareVariants(const Tensor& got, const Tensor& want, double tol) {
  using VariantPtr = std::shared_ptr<const VariantBase>;
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    const VariantBase* g = got.data<VariantPtr>()[i].get();
    const VariantBase* w = want.data<VariantPtr>()[i].get();
    const std::string at = "variant " + std::to_string(i) + ": ";
    if (g == w) continue;
    if (g == nullptr || w == nullptr) return at + "one side is empty";
    if (const auto* wl = dynamic_cast<const exec::TensorList*>(w)) {
      const auto* gl = dynamic_cast<const exec::TensorList*>(g);
      if (gl == nullptr) return at + "not a TensorList: " + g->DebugString();
      if (gl->element_dtype() != wl->element_dtype() ||
          gl->element_shape() != wl->element_shape() || gl->size() != wl->size())
        return at + gl->DebugString() + " vs " + wl->DebugString();
      for (int64_t k = 0; k < wl->size(); ++k) {
        const Tensor& ge = gl->tensors()[k];
        const Tensor& we = wl->tensors()[k];
        if (ge.IsInitialized() != we.IsInitialized())
          return at + "element " + std::to_string(k) + " is set on one side only";
        if (!we.IsInitialized()) continue;
        const std::string d = CompareTensors(ge, we, tol);
        if (!d.empty()) return at + "element " + std::to_string(k) + ": " + d;
      }
      continue;
    }
    if (const auto* wr = dynamic_cast<const exec::RaggedVariant*>(w)) {
      const auto* gr = dynamic_cast<const exec::RaggedVariant*>(g);
      if (gr == nullptr) return at + "not a ragged tensor: " + g->DebugString();
      if (gr->ragged_rank() != wr->ragged_rank())
        return at + gr->DebugString() + " vs " + wr->DebugString();
      for (int k = 0; k < wr->ragged_rank(); ++k) {
        const std::string d = CompareTensors(gr->splits()[k], wr->splits()[k], 0);
        if (!d.empty()) return at + "splits " + std::to_string(k) + ": " + d;
      }
      const std::string d = CompareTensors(gr->values(), wr->values(), tol);
      if (!d.empty()) return at + "values: " + d;
      continue;
    }
    if (const auto* wm = dynamic_cast<const exec::TensorMap*>(w)) {  // entries in order
      const auto* gm = dynamic_cast<const exec::TensorMap*>(g);
      if (gm == nullptr) return at + "not a TensorMap: " + g->DebugString();
      if (gm->size() != wm->size()) return at + gm->DebugString() + " vs " + wm->DebugString();
      for (int64_t k = 0; k < wm->size(); ++k) {
        const std::string e = "entry " + std::to_string(k);
        std::string d = CompareTensors(gm->entries()[k].key, wm->entries()[k].key, 0);
        if (!d.empty()) return at + e + " key: " + d;
        d = CompareTensors(gm->entries()[k].value, wm->entries()[k].value, tol);
        if (!d.empty()) return at + e + " value: " + d;
      }
      continue;
    }
    if (const auto* wc = dynamic_cast<const exec::CompositeTensorVariant*>(w)) {
      const auto* gc = dynamic_cast<const exec::CompositeTensorVariant*>(g);
      if (gc == nullptr) return at + "not a CompositeTensorVariant: " + g->DebugString();
      if (gc->metadata() != wc->metadata() || gc->type_spec_class() != wc->type_spec_class() ||
          gc->components().size() != wc->components().size())
        return at + gc->DebugString() + " vs " + wc->DebugString();
      for (size_t k = 0; k < wc->components().size(); ++k) {
        const std::string d = CompareTensors(gc->components()[k], wc->components()[k], tol);
        if (!d.empty()) return at + "component " + std::to_string(k) + ": " + d;
      }
      continue;
    }
    if (const auto* wo = dynamic_cast<const exec::OptionalValue*>(w)) {
      const auto* go = dynamic_cast<const exec::OptionalValue*>(g);
      if (go == nullptr) return at + "not an Optional: " + g->DebugString();
      if (go->has_value() != wo->has_value() ||
          (wo->has_value() && go->values().size() != wo->values().size()))
        return at + go->DebugString() + " vs " + wo->DebugString();
      for (size_t k = 0; wo->has_value() && k < wo->values().size(); ++k) {
        const std::string d = CompareTensors(go->values()[k], wo->values()[k], tol);
        if (!d.empty()) return at + "value " + std::to_string(k) + ": " + d;
      }
      continue;
    }
    return at + "different " + w->TypeName() + " objects";
  }
  return "";
}

}  // namespace

bool IsKernelChoiceOp(std::string_view op) {
  static constexpr std::string_view kOps[] = {
      "MatMul",
      "_FusedMatMul",
      "BatchMatMul",
      "BatchMatMulV2",
      "BatchMatMulV3",
      "Einsum",
      "Conv2D",
      "_FusedConv2D",
      "DepthwiseConv2dNative",
      "_FusedDepthwiseConv2dNative",
      "AvgPool",
      "Conv3D",
      "Conv2DBackpropInput",
      "Conv3DBackpropInputV2",
      "Conv2DBackpropFilter",
      "Conv3DBackpropFilterV2",
      "DepthwiseConv2dNativeBackpropInput",
      "DepthwiseConv2dNativeBackpropFilter",
  };
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

std::string CompareTensors(const Tensor& got, const Tensor& want, double tol) {
  if (got.dtype() != want.dtype())
    return "dtype " + DTypeShortName(got.dtype()) + " vs " + DTypeShortName(want.dtype());
  if (got.shape() != want.shape())
    return "shape " + got.shape().ToString() + " vs " + want.shape().ToString();
  switch (want.dtype()) {
    case DType::kFloat:
      return CompareTyped<float>(got, want, tol);
    case DType::kDouble:
      return CompareTyped<double>(got, want, tol);
    case DType::kHalf:
      return CompareHalf<Half>(got, want, std::max(tol, 1e-3));
    case DType::kBFloat16:
      return CompareHalf<BFloat16>(got, want, std::max(tol, 1e-2));
    case DType::kInt8:
      return CompareTyped<int8_t>(got, want, 0);
    case DType::kInt16:
      return CompareTyped<int16_t>(got, want, 0);
    case DType::kInt32:
      return CompareTyped<int32_t>(got, want, 0);
    case DType::kInt64:
      return CompareTyped<int64_t>(got, want, 0);
    case DType::kUInt8:
      return CompareTyped<uint8_t>(got, want, 0);
    case DType::kUInt16:
      return CompareTyped<uint16_t>(got, want, 0);
    case DType::kUInt32:
      return CompareTyped<uint32_t>(got, want, 0);
    case DType::kUInt64:
      return CompareTyped<uint64_t>(got, want, 0);
    case DType::kBool:
      return CompareTyped<bool>(got, want, 0);
    case DType::kString:
      return CompareTyped<std::string>(got, want, 0);
    case DType::kVariant:
      return CompareVariants(got, want, tol);
    case DType::kComplex64:
      return CompareComplex<float>(got, want, tol);
    case DType::kComplex128:
      return CompareComplex<double>(got, want, tol);
    default:
      return TensorsEqual(got, want) ? "" : "values differ (" + want.DebugString() + ")";
  }
}

OpCaseBuilder::OpCaseBuilder(std::string op, std::string name) {
  c_.op = std::move(op);
  c_.name = name.empty() ? c_.op : std::move(name);
}
OpCaseBuilder& OpCaseBuilder::Type(const std::string& attr, DType t) {
  c_.attrs[attr].set_type(static_cast<tensorflow::DataType>(DTypeToProto(t)));
  return *this;
}
OpCaseBuilder& OpCaseBuilder::TypeList(const std::string& attr, const std::vector<DType>& types) {
  auto* list = c_.attrs[attr].mutable_list();
  for (DType t : types) list->add_type(static_cast<tensorflow::DataType>(DTypeToProto(t)));
  return *this;
}
OpCaseBuilder& OpCaseBuilder::Int(const std::string& attr, int64_t v) {
  c_.attrs[attr].set_i(v);
  return *this;
}
OpCaseBuilder& OpCaseBuilder::IntList(const std::string& attr, const std::vector<int64_t>& v) {
  auto* list = c_.attrs[attr].mutable_list();
  for (int64_t x : v) list->add_i(x);
  return *this;
}
OpCaseBuilder& OpCaseBuilder::Float(const std::string& attr, float v) {
  c_.attrs[attr].set_f(v);
  return *this;
}
OpCaseBuilder& OpCaseBuilder::FloatList(const std::string& attr, const std::vector<float>& v) {
  auto* list = c_.attrs[attr].mutable_list();
  for (float x : v) list->add_f(x);
  return *this;
}
OpCaseBuilder& OpCaseBuilder::Bool(const std::string& attr, bool v) {
  c_.attrs[attr].set_b(v);
  return *this;
}
OpCaseBuilder& OpCaseBuilder::String(const std::string& attr, const std::string& v) {
  c_.attrs[attr].set_s(v);
  return *this;
}
OpCaseBuilder& OpCaseBuilder::StringList(const std::string& attr,
                                         const std::vector<std::string>& v) {
  auto* list = c_.attrs[attr].mutable_list();
  for (const std::string& x : v) list->add_s(x);
  return *this;
}
OpCaseBuilder& OpCaseBuilder::ShapeAttr(const std::string& attr, const PartialShape& s) {
  PartialShapeToProto(s, c_.attrs[attr].mutable_shape());
  return *this;
}
OpCaseBuilder& OpCaseBuilder::ShapeList(const std::string& attr,
                                        const std::vector<PartialShape>& shapes) {
  auto* list = c_.attrs[attr].mutable_list();
  for (const PartialShape& s : shapes) PartialShapeToProto(s, list->add_shape());
  return *this;
}
OpCaseBuilder& OpCaseBuilder::TensorAttr(const std::string& attr, const Tensor& t) {
  Status s = TensorToProto(t, c_.attrs[attr].mutable_tensor());
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  return *this;
}
OpCaseBuilder& OpCaseBuilder::Input(const Tensor& t) {
  c_.inputs.push_back(t);
  c_.constant.push_back(false);
  return *this;
}
OpCaseBuilder& OpCaseBuilder::ConstInput(const Tensor& t) {
  c_.inputs.push_back(t);
  c_.constant.push_back(true);
  return *this;
}
OpCaseBuilder& OpCaseBuilder::Reference(
    std::function<std::vector<Tensor>(const std::vector<Tensor>&)> ref) {
  c_.reference = std::move(ref);
  return *this;
}
OpCaseBuilder& OpCaseBuilder::Reference1(std::function<Tensor(const std::vector<Tensor>&)> ref) {
  c_.reference = [ref = std::move(ref)](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{ref(in)};
  };
  return *this;
}
OpCaseBuilder& OpCaseBuilder::Tolerance(double tol) {
  c_.tolerance = tol;
  return *this;
}
OpCaseBuilder& OpCaseBuilder::NonDeterministic() {
  c_.deterministic = false;
  return *this;
}
OpCaseBuilder& OpCaseBuilder::SingleOpOnly() {
  c_.graph_path = false;
  return *this;
}
OpCaseBuilder& OpCaseBuilder::Resources(ResourceManager* rm) {
  c_.resources = rm;
  return *this;
}
OpCaseBuilder& OpCaseBuilder::Functions(std::shared_ptr<const tensorflow::FunctionDefLibrary> lib) {
  c_.functions = std::move(lib);
  return *this;
}
OpCase OpCaseBuilder::Build() {
  c_.path_tolerance = IsKernelChoiceOp(c_.op) ? c_.tolerance : 0;
  if (c_.name == c_.op) {
    c_.name += " (";
    for (size_t i = 0; i < c_.inputs.size(); ++i)
      c_.name += (i ? ", " : "") + DTypeShortName(c_.inputs[i].dtype()) + " " +
                 c_.inputs[i].shape().ToString();
    c_.name += ")";
  }
  return c_;
}

void RunOpCase(const OpCase& c) {
  INFO("op case: ", c.name);
  // KILN_OP_TESTER_VERBOSE=1 names each case as it starts (to find a case that crashes).
  static const bool verbose = std::getenv("KILN_OP_TESTER_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "op case: %s\n", c.name.c_str());
  const exec::OpDefinition* def = exec::FindOp(c.op);
  REQUIRE_MESSAGE(def != nullptr, c.name, ": op not in the table");

  // Single-op path on the CPU, twice.
  std::vector<TensorSpec> specs;
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    specs.push_back(TensorSpec{c.inputs[i].dtype(), PartialShape(c.inputs[i].shape())});
    values.push_back(c.constant[i] ? &c.inputs[i] : nullptr);
  }
  exec::SingleOpOptions options;
  options.resources = c.resources;
  const tensorflow::FunctionDefLibrary empty;
  const FunctionLibrary library(c.functions ? *c.functions : empty);
  options.library = &library;
  auto op = exec::SingleOp::Prepare(c.op, "node", c.attrs, specs, values, options);
  REQUIRE_MESSAGE(op.ok(), c.name, ": prepare: ", op.status().ToString());
  auto first = op->Run(c.inputs);
  REQUIRE_MESSAGE(first.ok(), c.name, ": run: ", first.status().ToString());
  const std::vector<TensorSpec>& out_specs = op->output_specs();
  REQUIRE(first->size() == out_specs.size());
  for (size_t i = 0; i < first->size(); ++i) {
    const Tensor& t = (*first)[i];
    CHECK_MESSAGE(out_specs[i].shape.IsCompatibleWith(t.shape()), c.name, ": output ", i, " shape ",
                  t.shape().ToString(), " does not fit the prepared ", out_specs[i].ToString());
    if ((def->flags & exec::kOpFreshOutputs) != 0)
      for (const Tensor& in : c.inputs)
        CHECK_MESSAGE(!t.SharesBufferWith(in), c.name, ": output ", i,
                      " shares an input's buffer, but the op declares fresh outputs");
  }
  if (c.deterministic) {
    auto again = op->Run(c.inputs);
    REQUIRE_MESSAGE(again.ok(), c.name, ": second run: ", again.status().ToString());
    for (size_t i = 0; i < first->size(); ++i) {
      const std::string diff = CompareTensors((*again)[i], (*first)[i], 0);
      CHECK_MESSAGE(diff.empty(), c.name, ": output ", i, " differs between two runs: ", diff);
    }
  }
  if (c.reference) {
    std::vector<Tensor> want = c.reference(c.inputs);
    REQUIRE_MESSAGE(want.size() == first->size(), c.name, ": the reference gives ", want.size(),
                    " outputs, the op ", first->size());
    for (size_t i = 0; i < want.size(); ++i) {
      const std::string diff = CompareTensors((*first)[i], want[i], c.tolerance);
      CHECK_MESSAGE(diff.empty(), c.name, ": output ", i, " vs the reference: ", diff);
    }
  }
  if (c.graph_path) {
    CheckGraphPath(c, *def, out_specs, *first);
    CheckInPlacePath(c, *def, out_specs, *first);
  }

  // Other devices, against the CPU: every device of the process (the test device always, a GPU
  // where there is one) whose kernel takes these inputs.
  GetTestDevice();
  // How many cases each device ran, printed at exit: a GPU run says what it compared.
  static struct DeviceCounts {
    std::mutex mu;
    std::map<std::string, int> cases;
    ~DeviceCounts() {
      for (const auto& [name, n] : cases)
        std::fprintf(stderr, "op tester: %d cases compared on %s against the CPU\n", n,
                     name.c_str());
    }
  } counts;
  for (exec::Device* device : exec::ListDevices()) {
    if (device == exec::HostDevice() || device->FindKernel(c.op) == nullptr) continue;
    exec::SingleOpOptions device_options = options;
    device_options.device = device;
    const std::string where = c.name + " on " + device->name();
    auto dev = exec::RunSingleOp(c.op, "node", c.attrs, c.inputs, device_options);
    if (!dev.ok() && dev.status().code() == StatusCode::kUnimplemented) continue;  // its dtypes
    REQUIRE_MESSAGE(dev.ok(), where, ": ", dev.status().ToString());
    // A GPU sums in another order and has its own exp/tanh: float32 agrees to 1e-4 relative.
    const double tolerance =
        device->type() == exec::DeviceType::kGpu ? std::max(c.tolerance, 1e-4) : c.tolerance;
    for (size_t i = 0; i < first->size(); ++i) {
      const std::string diff = CompareTensors((*dev)[i], (*first)[i], tolerance);
      CHECK_MESSAGE(diff.empty(), where, ": output ", i, " vs the CPU: ", diff);
    }
    std::lock_guard lock(counts.mu);
    ++counts.cases[device->name()];
  }
}

void RunOpCases(const std::vector<OpCase>& cases) {
  for (const OpCase& c : cases) RunOpCase(c);
}

}  // namespace kiln::testing

namespace kiln::testing {
namespace {

double GetAsDouble(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
#define KILN_CASE(e, T) \
  case DType::e:        \
    return static_cast<double>(t.data<T>()[i]);
    KILN_CASE(kFloat, float)
    KILN_CASE(kDouble, double)
    KILN_CASE(kInt8, int8_t)
    KILN_CASE(kInt16, int16_t)
    KILN_CASE(kInt32, int32_t)
    KILN_CASE(kInt64, int64_t)
    KILN_CASE(kUInt8, uint8_t)
    KILN_CASE(kUInt16, uint16_t)
    KILN_CASE(kUInt32, uint32_t)
    KILN_CASE(kUInt64, uint64_t)
    KILN_CASE(kBool, bool)
#undef KILN_CASE
#define KILN_CASE(e, T) \
  case DType::e:        \
    return static_cast<double>(t.data<T>()[i].value);
    KILN_CASE(kQInt8, QInt8)
    KILN_CASE(kQUInt8, QUInt8)
    KILN_CASE(kQInt16, QInt16)
    KILN_CASE(kQUInt16, QUInt16)
    KILN_CASE(kQInt32, QInt32)
#undef KILN_CASE
    case DType::kHalf:
      return ToFloat(t.data<Half>()[i]);
    case DType::kBFloat16:
      return ToFloat(t.data<BFloat16>()[i]);
    case DType::kFloat8E5M2:
      return F8E5M2::Decode(t.data<Float8E5M2>()[i].bits);
    case DType::kFloat8E4M3FN:
      return F8E4M3FN::Decode(t.data<Float8E4M3FN>()[i].bits);
    case DType::kComplex64:  // the real part
      return t.data<std::complex<float>>()[i].real();
    case DType::kComplex128:
      return t.data<std::complex<double>>()[i].real();
    default:
      FAIL("no double view of ", DTypeShortName(t.dtype()));
      return 0;
  }
}

// v rounded to the nearest T, saturating. The bounds compare as doubles: (double)INT64_MAX is
// 2^63, one past the range, so reaching it means the maximum.
template <typename T>
T SaturatingCast(double v) {
  const double r = std::nearbyint(v);
  if (std::isnan(r)) return 0;
  if (r <= static_cast<double>(std::numeric_limits<T>::lowest())) {
    return std::numeric_limits<T>::lowest();
  }
  if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

void SetFromDouble(Tensor* t, int64_t i, double v) {
  switch (t->dtype()) {
#define KILN_CASE(e, T)                  \
  case DType::e:                         \
    t->data<T>()[i] = static_cast<T>(v); \
    return;
    KILN_CASE(kFloat, float)
    KILN_CASE(kDouble, double)
    KILN_CASE(kBool, bool)
#undef KILN_CASE
#define KILN_INT_CASE(e, T)                 \
  case DType::e:                            \
    t->data<T>()[i] = SaturatingCast<T>(v); \
    return;
    KILN_INT_CASE(kInt8, int8_t)
    KILN_INT_CASE(kInt16, int16_t)
    KILN_INT_CASE(kInt32, int32_t)
    KILN_INT_CASE(kInt64, int64_t)
    KILN_INT_CASE(kUInt8, uint8_t)
    KILN_INT_CASE(kUInt16, uint16_t)
    KILN_INT_CASE(kUInt32, uint32_t)
    KILN_INT_CASE(kUInt64, uint64_t)
#undef KILN_INT_CASE
#define KILN_QUANTIZED_CASE(e, T, V)              \
  case DType::e:                                  \
    t->data<T>()[i].value = SaturatingCast<V>(v); \
    return;
    KILN_QUANTIZED_CASE(kQInt8, QInt8, int8_t)
    KILN_QUANTIZED_CASE(kQUInt8, QUInt8, uint8_t)
    KILN_QUANTIZED_CASE(kQInt16, QInt16, int16_t)
    KILN_QUANTIZED_CASE(kQUInt16, QUInt16, uint16_t)
    KILN_QUANTIZED_CASE(kQInt32, QInt32, int32_t)
#undef KILN_QUANTIZED_CASE
    case DType::kComplex64:
      t->data<std::complex<float>>()[i] = static_cast<float>(v);
      return;
    case DType::kComplex128:
      t->data<std::complex<double>>()[i] = v;
      return;
    case DType::kHalf:
      t->data<Half>()[i].bits =
          Eigen::numext::bit_cast<uint16_t>(Eigen::half(static_cast<float>(v)));
      return;
    case DType::kBFloat16:
      t->data<BFloat16>()[i].bits =
          Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(static_cast<float>(v)));
      return;
    case DType::kFloat8E5M2:
      t->data<Float8E5M2>()[i].bits = F8E5M2::Encode(v);
      return;
    case DType::kFloat8E4M3FN:
      t->data<Float8E4M3FN>()[i].bits = F8E4M3FN::Encode(v);
      return;
    default:
      FAIL("cannot set ", DTypeShortName(t->dtype()), " from a double");
  }
}

}  // namespace

Tensor RandomOf(DType dtype, const Shape& shape, uint32_t seed, double lo, double hi) {
  Tensor t(dtype, shape);
  uint32_t state = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    state = state * 1664525u + 1013904223u;
    const double u = (state >> 8) / double(1u << 24);  // [0, 1)
    if (dtype == DType::kString) {
      t.data<std::string>()[i] =
          std::string(1 + (state >> 28), static_cast<char>('a' + (state >> 8) % 26));
    } else if (dtype == DType::kBool) {
      t.data<bool>()[i] = u < 0.5;
    } else {
      SetFromDouble(&t, i, lo + u * (hi - lo));
    }
  }
  return t;
}

Tensor ConvertElements(const Tensor& t, DType to) {
  Tensor out(to, t.shape());
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    if (to == DType::kString) {
      out.data<std::string>()[i] =
          t.dtype() == DType::kString
              ? t.data<std::string>()[i]
              : std::to_string(static_cast<int64_t>(std::nearbyint(GetAsDouble(t, i))));
    } else {
      SetFromDouble(&out, i,
                    t.dtype() == DType::kString
                        ? static_cast<double>(t.data<std::string>()[i].size())
                        : GetAsDouble(t, i));
    }
  }
  return out;
}

Tensor RefUnaryDouble(const Tensor& x, const std::function<double(double)>& f, DType out) {
  Tensor r(out == DType::kInvalid ? x.dtype() : out, x.shape());
  for (int64_t i = 0; i < x.NumElements(); ++i) SetFromDouble(&r, i, f(GetAsDouble(x, i)));
  return r;
}

Tensor RefBinaryDouble(const Tensor& a, const Tensor& b,
                       const std::function<double(double, double)>& f, DType out) {
  const Shape so = RefBroadcastShape(a.shape(), b.shape());
  Tensor r(out == DType::kInvalid ? a.dtype() : out, so);
  for (int64_t i = 0; i < so.num_elements(); ++i) {
    const std::vector<int64_t> idx = Unravel(i, so);
    SetFromDouble(&r, i,
                  f(GetAsDouble(a, BroadcastIndex(idx, a.shape())),
                    GetAsDouble(b, BroadcastIndex(idx, b.shape()))));
  }
  return r;
}

}  // namespace kiln::testing
