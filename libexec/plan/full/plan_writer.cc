// savedmodel-cli compile: loads a bundle keeping each prepared function's final graph, and
// writes those graphs, their interfaces and the hashes of the files they came from as a
// FlatBuffer (schema/kiln/plan.fbs).
#include <algorithm>
#include <map>
#include <span>

#include "bundle/crc32c.h"
#include "device/tuning_records.h"
#include "graph/flat_graph.h"
#include "kiln/core/file_util.h"
#include "kiln/core/proto_convert.h"
#include "kiln/exec/saved_model.h"
#include "kiln/exec/serving_plan.h"
#include "kiln/plan_generated.h"
#include "loader/loader_common.h"
#include "loader/saved_model_access.h"
#include "plan/plan_reader.h"
#include "tensorflow/framework.pb.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {

namespace fb = ::flatbuffers;
namespace kp = ::kiln::plan;

namespace {

class PlanWriter {
 public:
  explicit PlanWriter(const CompileOptions& options) : options_(options) {}

  // One prepared function, returning its index in the plan; an error says why it cannot be
  // planned (the loader then prepares it from the protobuf, as without a plan).
  Result<int32_t> AddFunction(const PreparedFunction& pf) {
    const FlatGraph* g = pf.final_graph();
    if (g == nullptr) return Internal("function '", pf.name(), "' kept no graph");
    const FunctionInterface& iface = pf.interface();
    const std::string key = FunctionKey(pf);
    for (size_t i = 0; i < functions_done_.size(); ++i)
      if (functions_done_[i].first == pf.name() && functions_done_[i].second == key)
        return static_cast<int32_t>(i);
    std::vector<fb::Offset<kp::Node>> nodes;
    std::vector<fb::Offset<fb::String>> kernels;
    // Where each node runs: its step's device (copies are named by their consumer, skip them).
    const std::vector<ScheduledStep> schedule = pf.Schedule();
    std::map<std::string_view, std::string> placed;
    for (const ScheduledStep& step : schedule)
      if (step.op != "_Copy") placed.emplace(step.node_name, step.device);
    for (const FlatNode& n : g->nodes) {
      KILN_ASSIGN_OR_RETURN_CTX(auto node, Node(n), "function '", pf.name(), "', node '", n.name,
                                "'");
      nodes.push_back(node);
      const bool runs = n.def != nullptr && n.value == nullptr && n.op != "Const";
      auto it = placed.find(n.name);
      kernels.push_back(b_.CreateString(!runs ? "" : it != placed.end() ? it->second : "cpu"));
    }
    std::vector<kp::Edge> outputs;
    for (const Edge& e : g->outputs) outputs.emplace_back(e.node, e.output);
    std::vector<int32_t> arg_dtypes, prep_dtypes, out_dtypes;
    std::vector<fb::Offset<kp::Shape>> input_shapes, prep_shapes;
    for (DType t : iface.arg_dtypes) arg_dtypes.push_back(static_cast<int32_t>(t));
    for (const PartialShape& s : iface.input_shapes) input_shapes.push_back(Shape(s));
    for (const TensorSpec& s : pf.requested_specs()) {
      prep_dtypes.push_back(static_cast<int32_t>(s.dtype));
      prep_shapes.push_back(Shape(s.shape));
    }
    for (DType t : iface.output_dtypes) out_dtypes.push_back(static_cast<int32_t>(t));
    std::vector<uint64_t> offsets;
    for (size_t offset : pf.ArenaOffsets()) offsets.push_back(offset);
    auto name = b_.CreateString(pf.name());
    auto arg_names = b_.CreateVectorOfStrings(iface.arg_names);
    auto out_names = b_.CreateVectorOfStrings(iface.output_names);
    auto arg_dt = b_.CreateVector(arg_dtypes);
    auto in_sh = b_.CreateVector(input_shapes);
    auto prep_dt = b_.CreateVector(prep_dtypes);
    auto prep_sh = b_.CreateVector(prep_shapes);
    auto out_dt = b_.CreateVector(out_dtypes);
    auto nodes_v = b_.CreateVector(nodes);
    auto outs_v = b_.CreateVectorOfStructs(outputs);
    auto keep_v = b_.CreateVector(g->keep);
    auto device = b_.CreateString(pf.devices().front()->name());
    auto kernels_v = b_.CreateVector(kernels);
    auto offsets_v = b_.CreateVector(offsets);
    auto frozen_v = b_.CreateVector(pf.frozen_args().data(), pf.frozen_args().size());
    functions_.push_back(kp::CreateFunction(b_, name, arg_names, arg_dt, in_sh, prep_dt, prep_sh,
                                            out_names, out_dt, nodes_v, outs_v, keep_v, device,
                                            kernels_v, pf.plan_stats().steps,
                                            pf.plan_stats().arena_bytes, offsets_v, frozen_v));
    functions_done_.emplace_back(pf.name(), key);
    return static_cast<int32_t>(functions_.size()) - 1;
  }

  // Whether a planned function calls another function (a func attr): a load from the plan
  // alone would then need saved_model.pb's function library.
  bool uses_functions() const { return uses_functions_; }
  size_t num_functions() const { return functions_.size(); }

  // The model section (see plan.fbs); `index_of` maps each prepared function to its index.
  // `alone_index`: by signature key, the function a load of the signatures alone runs.
  Status SetModel(const SavedModel& m, bool complete,
                  const std::map<const PreparedFunction*, int32_t>& index_of,
                  const std::map<std::string, int32_t>& alone_index) {
    const internal::PlanFacts& facts = internal::SavedModelAccess::plan_facts(m);
    auto captures = [&](const std::vector<internal::CaptureSource>& sources)
        -> Result<fb::Offset<fb::Vector<fb::Offset<kp::Capture>>>> {
      std::vector<fb::Offset<kp::Capture>> out;
      for (const auto& c : sources) {
        int32_t constant = -1;
        if (c.constant.IsInitialized()) {
          KILN_ASSIGN_OR_RETURN(constant, Constant(c.constant));
        }
        auto asset = c.asset.empty() ? 0 : b_.CreateString(c.asset);
        if (c.variable < 0 && constant < 0 && c.asset.empty())
          return Unimplemented("a capture that is not a variable, constant or asset");
        out.push_back(kp::CreateCapture(b_, c.variable, constant, asset));
      }
      return b_.CreateVector(out);
    };
    auto args = [&](std::span<const SignatureArg> list) {
      std::vector<fb::Offset<kp::SignatureArg>> out;
      for (const SignatureArg& a : list)
        out.push_back(
            kp::CreateSignatureArg(b_, b_.CreateString(a.key), b_.CreateString(a.tensor_name),
                                   static_cast<int32_t>(a.spec.dtype), Shape(a.spec.shape)));
      return b_.CreateVector(out);
    };
    std::vector<fb::Offset<kp::Variable>> vars;
    for (size_t i = 0; i < m.variables().size(); ++i) {
      const RestoredVariable& v = m.variables()[i];
      const std::string key = i < facts.checkpoint_keys.size() ? facts.checkpoint_keys[i] : "";
      vars.push_back(kp::CreateVariable(b_, b_.CreateString(v.path), b_.CreateString(key),
                                        static_cast<int32_t>(v.resource->dtype()),
                                        Shape(v.resource->shape()), v.trainable));
    }
    std::vector<fb::Offset<kp::Signature>> sigs;
    for (const std::string& key : m.SignatureNames()) {
      KILN_ASSIGN_OR_RETURN(const Signature* sig, m.GetSignature(key));
      const Signature::Parts& parts = sig->parts();
      auto it = index_of.find(parts.function.get());
      auto src = facts.signature_captures.find(key);
      if (it == index_of.end() || src == facts.signature_captures.end())
        return Unimplemented("signature '", key, "' is not planned");
      KILN_ASSIGN_OR_RETURN(auto caps, captures(src->second));
      auto ins = args(parts.inputs);
      auto outs = args(parts.outputs);
      auto i2a = b_.CreateVector(parts.input_to_arg);
      auto o2r = b_.CreateVector(parts.output_from_ret);
      const auto alone = alone_index.find(key);
      const int32_t alone_function =
          alone == alone_index.end() || alone->second == it->second ? -1 : alone->second;
      sigs.push_back(kp::CreateSignature(b_, b_.CreateString(key), it->second, ins, outs, i2a, o2r,
                                         caps, alone_function));
    }
    std::vector<fb::Offset<kp::Method>> methods;
    for (const std::string& name : m.FunctionNames()) {
      KILN_ASSIGN_OR_RETURN(const RestoredFunction* fn, m.GetFunction(name));
      const std::span<const RestoredFunction::Concrete> fn_concretes = fn->concrete_functions();
      auto src = facts.method_captures.find(name);
      // A method none of whose concrete functions takes only tensors (a Python default such as
      // `bias=3.0`, Keras' `training` flag) has no concretes and nothing to plan.
      const size_t planned = src == facts.method_captures.end() ? 0 : src->second.size();
      if (planned != fn_concretes.size())
        return Unimplemented("method '", name, "' is not planned");
      std::vector<fb::Offset<kp::Concrete>> concretes;
      for (size_t c = 0; c < fn_concretes.size(); ++c) {
        const auto& conc = fn_concretes[c];
        auto it = index_of.find(conc.function.get());
        if (it == index_of.end()) return Unimplemented("method '", name, "' is not planned");
        KILN_ASSIGN_OR_RETURN(auto caps, captures(src->second[c]));
        std::vector<int32_t> dtypes;
        std::vector<fb::Offset<kp::Shape>> shapes;
        for (const TensorSpec& spec : conc.arg_specs) {
          dtypes.push_back(static_cast<int32_t>(spec.dtype));
          shapes.push_back(Shape(spec.shape));
        }
        auto names = b_.CreateVectorOfStrings(conc.arg_names);
        auto dt = b_.CreateVector(dtypes);
        auto sh = b_.CreateVector(shapes);
        concretes.push_back(kp::CreateConcrete(b_, it->second, names, dt, sh, caps));
      }
      auto cv = b_.CreateVector(concretes);
      methods.push_back(kp::CreateMethod(b_, b_.CreateString(name), cv));
    }
    auto vars_v = b_.CreateVector(vars);
    auto sigs_v = b_.CreateVector(sigs);
    auto methods_v = b_.CreateVector(methods);
    model_ = kp::CreateModel(b_, vars_v, facts.variables_frozen, sigs_v, methods_v, complete);
    return OkStatus();
  }

  // The finished FlatBuffer, for a load on `devices` holding `tuning` (records by device).
  Result<std::string> Finish(const std::filesystem::path& dir, std::span<Device* const> devices,
                             const std::vector<std::pair<std::string, tuning::Record>>& tuning) {
    std::vector<fb::Offset<kp::SourceFile>> sources;
    for (const char* rel : kPlanSourceFiles) {
      const std::filesystem::path p = dir / rel;
      if (!std::filesystem::exists(p)) continue;  // a bundle without variables
      KILN_ASSIGN_OR_RETURN(SourceHash h, HashSourceFile(p));
      sources.push_back(kp::CreateSourceFile(b_, b_.CreateString(rel), h.size, h.crc32c));
    }
    auto runtime = b_.CreateString(kPlanRuntime);
    auto tags = b_.CreateVectorOfStrings(options_.tags);
    auto sources_v = b_.CreateVector(sources);
    auto functions_v = b_.CreateVector(functions_);
    auto constants_v = b_.CreateVector(constants_);
    std::vector<std::string> device_names;
    for (const Device* d : devices) device_names.push_back(d->name());
    auto devices_v = b_.CreateVectorOfStrings(device_names);
    std::vector<fb::Offset<kp::TuningRecord>> records;
    for (const auto& [device, r] : tuning) {
      auto value =
          b_.CreateVector(reinterpret_cast<const uint8_t*>(r.value.data()), r.value.size());
      records.push_back(
          kp::CreateTuningRecord(b_, b_.CreateString(device), b_.CreateString(r.key), value));
    }
    auto tuning_v = b_.CreateVector(records);
    auto root = kp::CreatePlan(b_, kPlanFormatVersion, runtime, tags, options_.freeze_variables,
                               sources_v, functions_v, constants_v, model_, devices_v, tuning_v,
                               b_.CreateString(PrecisionName(options_.precision)));
    b_.Finish(root, kp::PlanIdentifier());
    std::string bytes(reinterpret_cast<const char*>(b_.GetBufferPointer()), b_.GetSize());
    AppendPlanTrailer(&bytes);
    return bytes;
  }

 private:
  // What a load finds a function by besides its name (ServingPlan::Find).
  static std::string FunctionKey(const PreparedFunction& pf) {
    std::string key;
    for (const TensorSpec& s : pf.requested_specs()) key += s.ToString() + ";";
    key += "frozen";
    for (int32_t a : pf.frozen_args()) key += " " + std::to_string(a);
    return key;
  }

  fb::Offset<kp::Shape> Shape(const PartialShape& s) {
    if (s.unknown_rank()) return kp::CreateShape(b_, true, 0);
    std::vector<int64_t> dims;
    for (int i = 0; i < s.rank(); ++i) dims.push_back(s.dim(i));
    return kp::CreateShape(b_, false, b_.CreateVector(dims));
  }

  Result<int32_t> Constant(const Tensor& t) {
    std::vector<int64_t> dims(t.shape().dims().begin(), t.shape().dims().end());
    auto shape = b_.CreateVector(dims);
    fb::Offset<fb::Vector<uint8_t>> data = 0;
    fb::Offset<fb::Vector<fb::Offset<fb::String>>> strings = 0;
    if (t.dtype() == DType::kString) {
      std::vector<fb::Offset<fb::String>> ss;
      for (const std::string& s : t.flat<std::string>()) ss.push_back(b_.CreateString(s));
      strings = b_.CreateVector(ss);
    } else if (DTypeIsPod(t.dtype())) {
      const size_t bytes = static_cast<size_t>(t.NumElements()) * DTypeSize(t.dtype());
      b_.ForceVectorAlignment(bytes, 1, kPlanConstantAlignment);
      data = b_.CreateVector(static_cast<const uint8_t*>(t.raw_data()), bytes);
    } else {
      return Unimplemented("a constant of dtype ", DTypeShortName(t.dtype()),
                           " cannot be stored in a plan");
    }
    constants_.push_back(
        kp::CreateConstant(b_, static_cast<int32_t>(t.dtype()), shape, data, strings));
    return static_cast<int32_t>(constants_.size()) - 1;
  }

  Result<fb::Offset<kp::Func>> Func(const tensorflow::NameAttrList& f) {
    std::vector<fb::Offset<kp::Attr>> attrs;
    KILN_RETURN_IF_ERROR(Attrs(f.attr(), &attrs));
    return kp::CreateFunc(b_, b_.CreateString(f.name()), b_.CreateVectorOfSortedTables(&attrs));
  }

  fb::Offset<kp::Bytes> BytesOf(const std::string& s) {
    return kp::CreateBytes(b_,
                           b_.CreateVector(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
  }

  Status Attrs(const ProtoAttrMap& map, std::vector<fb::Offset<kp::Attr>>* out) {
    // Sorted so the plan is the same bytes for the same graph (protobuf maps have no order).
    std::vector<const std::string*> names;
    for (const auto& [name, v] : map) names.push_back(&name);
    std::sort(names.begin(), names.end(), [](auto* a, auto* b) { return *a < *b; });
    for (const std::string* name : names) {
      KILN_ASSIGN_OR_RETURN_CTX(auto a, Attr(*name, map.at(*name)), "attr '", *name, "'");
      out->push_back(a);
    }
    return OkStatus();
  }

  // One Attr table: its name, kind and the one field `set` adds. What the field points to
  // (vectors, tables) must be built before, as FlatBuffers builds no object inside another.
  template <typename Set>
  fb::Offset<kp::Attr> MakeAttr(fb::Offset<fb::String> name, kp::AttrKind kind, Set set) {
    kp::AttrBuilder a(b_);
    a.add_name(name);
    a.add_kind(kind);
    set(a);
    return a.Finish();
  }

  Result<fb::Offset<kp::Attr>> Attr(const std::string& name, const tensorflow::AttrValue& v) {
    using tensorflow::AttrValue;
    using K = kp::AttrKind;
    auto n = b_.CreateString(name);
    switch (v.value_case()) {
      case AttrValue::kI:
        return MakeAttr(n, K::Int, [&](kp::AttrBuilder& a) { a.add_i(v.i()); });
      case AttrValue::kF:
        return MakeAttr(n, K::Float, [&](kp::AttrBuilder& a) { a.add_f(v.f()); });
      case AttrValue::kB:
        return MakeAttr(n, K::Bool, [&](kp::AttrBuilder& a) { a.add_b(v.b()); });
      case AttrValue::kType:
        return MakeAttr(n, K::Type, [&](kp::AttrBuilder& a) { a.add_type(v.type()); });
      case AttrValue::kS: {
        auto s = b_.CreateVector(reinterpret_cast<const uint8_t*>(v.s().data()), v.s().size());
        return MakeAttr(n, K::String, [&](kp::AttrBuilder& a) { a.add_s(s); });
      }
      case AttrValue::kShape: {
        KILN_ASSIGN_OR_RETURN(PartialShape ps, PartialShapeFromProto(v.shape()));
        auto s = Shape(ps);
        return MakeAttr(n, K::Shape, [&](kp::AttrBuilder& a) { a.add_shape(s); });
      }
      case AttrValue::kTensor: {
        KILN_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(v.tensor()));
        KILN_ASSIGN_OR_RETURN(int32_t index, Constant(t));
        return MakeAttr(n, K::Tensor, [&](kp::AttrBuilder& a) { a.add_tensor(index); });
      }
      case AttrValue::kFunc: {
        uses_functions_ = true;
        KILN_ASSIGN_OR_RETURN(auto f, Func(v.func()));
        return MakeAttr(n, K::Func, [&](kp::AttrBuilder& a) { a.add_func(f); });
      }
      case AttrValue::kPlaceholder:
        return Unimplemented("a placeholder attr cannot be stored in a plan");
      case AttrValue::kList:
        return ListAttr(n, v.list());
      case AttrValue::VALUE_NOT_SET:
        return MakeAttr(n, K::None, [](kp::AttrBuilder&) {});
    }
    return Unimplemented("unknown attr value kind ", static_cast<int>(v.value_case()));
  }

  // A list attr keeps the one kind of entries it holds; an empty list is stored as IntList,
  // which reads back as an empty list of any kind.
  Result<fb::Offset<kp::Attr>> ListAttr(fb::Offset<fb::String> n,
                                        const tensorflow::AttrValue::ListValue& l) {
    using K = kp::AttrKind;
    if (l.s_size() > 0) {
      std::vector<fb::Offset<kp::Bytes>> v;
      for (const std::string& s : l.s()) v.push_back(BytesOf(s));
      auto vec = b_.CreateVector(v);
      return MakeAttr(n, K::StringList, [&](kp::AttrBuilder& a) { a.add_strings(vec); });
    }
    if (l.f_size() > 0) {
      auto vec = b_.CreateVector(std::vector<float>(l.f().begin(), l.f().end()));
      return MakeAttr(n, K::FloatList, [&](kp::AttrBuilder& a) { a.add_floats(vec); });
    }
    if (l.b_size() > 0) {
      auto vec = b_.CreateVector(std::vector<uint8_t>(l.b().begin(), l.b().end()));
      return MakeAttr(n, K::BoolList, [&](kp::AttrBuilder& a) {
        a.add_bools(fb::Offset<fb::Vector<uint8_t>>(vec.o));
      });
    }
    if (l.type_size() > 0) {
      auto vec = b_.CreateVector(std::vector<int32_t>(l.type().begin(), l.type().end()));
      return MakeAttr(n, K::TypeList, [&](kp::AttrBuilder& a) { a.add_types(vec); });
    }
    if (l.shape_size() > 0) {
      std::vector<fb::Offset<kp::Shape>> v;
      for (const auto& s : l.shape()) {
        KILN_ASSIGN_OR_RETURN(PartialShape ps, PartialShapeFromProto(s));
        v.push_back(Shape(ps));
      }
      auto vec = b_.CreateVector(v);
      return MakeAttr(n, K::ShapeList, [&](kp::AttrBuilder& a) { a.add_shapes(vec); });
    }
    if (l.tensor_size() > 0) {
      std::vector<int32_t> v;
      for (const auto& t : l.tensor()) {
        KILN_ASSIGN_OR_RETURN(Tensor value, TensorFromProto(t));
        KILN_ASSIGN_OR_RETURN(int32_t index, Constant(value));
        v.push_back(index);
      }
      auto vec = b_.CreateVector(v);
      return MakeAttr(n, K::TensorList, [&](kp::AttrBuilder& a) { a.add_tensors(vec); });
    }
    if (l.func_size() > 0) {
      uses_functions_ = true;
      std::vector<fb::Offset<kp::Func>> v;
      for (const auto& f : l.func()) {
        KILN_ASSIGN_OR_RETURN(auto fo, Func(f));
        v.push_back(fo);
      }
      auto vec = b_.CreateVector(v);
      return MakeAttr(n, K::FuncList, [&](kp::AttrBuilder& a) { a.add_funcs(vec); });
    }
    auto vec = b_.CreateVector(std::vector<int64_t>(l.i().begin(), l.i().end()));
    return MakeAttr(n, K::IntList, [&](kp::AttrBuilder& a) { a.add_ints(vec); });
  }

  Result<fb::Offset<kp::Node>> Node(const FlatNode& n) {
    // CompilePlan prepares from the protobuf (PlanUse::kIgnore); a graph decoded from a plan
    // carries native attrs, which this writer does not read.
    if (n.native_attrs != nullptr)
      return Internal("node '", n.name, "' comes from a serving plan; compile from the protobuf");
    int32_t constant = -1;
    fb::Offset<fb::Vector<fb::Offset<kp::Attr>>> attrs_v = 0;
    if (n.value != nullptr) {
      KILN_ASSIGN_OR_RETURN(constant, Constant(*n.value));
    } else if (n.op == "Const" && n.attrs != nullptr) {
      auto it = n.attrs->find("value");
      if (it == n.attrs->end() || !it->second.has_tensor())
        return InvalidArgument("Const has no tensor 'value'");
      KILN_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(it->second.tensor()));
      KILN_ASSIGN_OR_RETURN(constant, Constant(t));
    } else if (n.attrs != nullptr) {
      std::vector<fb::Offset<kp::Attr>> attrs;
      KILN_RETURN_IF_ERROR(Attrs(*n.attrs, &attrs));
      attrs_v = b_.CreateVectorOfSortedTables(&attrs);
    }
    std::vector<kp::Edge> inputs;
    for (const Edge& e : n.inputs) inputs.emplace_back(e.node, e.output);
    auto name = b_.CreateString(n.name);
    auto op = b_.CreateString(n.op);
    auto inputs_v = b_.CreateVectorOfStructs(inputs);
    auto controls_v = b_.CreateVector(n.control_inputs);
    return kp::CreateNode(b_, name, op, attrs_v, inputs_v, controls_v, n.arg_index, constant);
  }

  const CompileOptions& options_;
  fb::FlatBufferBuilder b_{1 << 16};
  std::vector<fb::Offset<kp::Function>> functions_;
  std::vector<fb::Offset<kp::Constant>> constants_;
  std::vector<std::pair<std::string, std::string>> functions_done_;
  fb::Offset<kp::Model> model_ = 0;
  bool uses_functions_ = false;
};

// Calls each signature once per batch size with zeros, so that its kernels on devices other
// than the host measure their choices for those shapes (tuning_records.h).
void RunTuningCalls(const SavedModel& model, std::span<const int64_t> batches,
                    CompileReport* report) {
  for (const std::string& key : model.SignatureNames()) {
    Result<const Signature*> sig = model.GetSignature(key);
    if (!sig.ok()) continue;
    for (const int64_t batch : batches) {
      std::vector<Tensor> inputs;
      std::string why;
      for (const SignatureArg& in : (*sig)->inputs()) {
        const PartialShape& s = in.spec.shape;
        if (s.unknown_rank()) {
          why = "input '" + in.key + "' has an unknown rank";
          break;
        }
        std::vector<int64_t> dims;
        for (int i = 0; i < s.rank() && why.empty(); ++i) {
          if (s.dim(i) >= 0) {
            dims.push_back(s.dim(i));
          } else if (i == 0) {
            dims.push_back(batch);
          } else {
            why = "input '" + in.key + "' has the shape " + s.ToCliString() +
                  " (only the leading dimension may be unknown)";
          }
        }
        if (!why.empty()) break;
        Result<Shape> shape = Shape::FromDims(dims);
        if (!DTypeIsPod(in.spec.dtype) || !shape.ok()) {
          why = "input '" + in.key + "' is " + in.spec.ToString();
          break;
        }
        // Zeros of a size a call of the model plausibly takes; an absurd signature shape is not
        // allocated.
        constexpr int64_t kMaxInputBytes = int64_t{1} << 30;
        if (shape->num_elements() >
            kMaxInputBytes / static_cast<int64_t>(DTypeSize(in.spec.dtype))) {
          why = "input '" + in.key + "' at batch " + std::to_string(batch) + " is over 1 GiB";
          break;
        }
        inputs.emplace_back(in.spec.dtype, *shape);
      }
      if (why.empty()) {
        std::vector<Tensor> outputs;
        Status st = (*sig)->RunFlat(inputs, &outputs);
        if (!st.ok()) why = "a call with zeros failed: " + st.message();
      }
      if (!why.empty()) {
        report->not_tuned.push_back("signature '" + key + "': " + why);
        break;
      }
      report->tuned.push_back("signature '" + key + "' at batch " + std::to_string(batch));
    }
  }
}

// Plans the signature functions of a load of every signature alone and, where some signature
// writes a variable (a load of another one alone then freezes it), of each signature alone.
// The loaded models stay in `keep` until the plan is written.
// `alone_index` gets, by signature key, the function the load of every signature alone runs.
void PlanSignatureLoads(const std::filesystem::path& dir, const LoadOptions& full,
                        const std::vector<std::string>& keys, PlanWriter* writer,
                        std::vector<std::unique_ptr<SavedModel>>* keep, CompileReport* report,
                        std::map<std::string, int32_t>* alone_index) {
  auto plan = [&](const std::vector<std::string>& signatures) {
    LoadOptions lo = full;
    lo.restored_functions = false;
    lo.signatures = signatures;
    Result<std::unique_ptr<SavedModel>> loaded = SavedModel::Load(dir, lo);
    if (!loaded.ok()) {
      // Such a load prepares from saved_model.pb, as it would without a plan.
      report->not_planned.push_back(
          "a load of " + (signatures.empty() ? "the signatures" : "'" + signatures[0] + "'") +
          " alone: " + loaded.status().message());
      return false;
    }
    std::unique_ptr<SavedModel> m = std::move(loaded).value();
    for (const std::string& key : m->SignatureNames()) {
      const Signature* sig = m->GetSignature(key).value();  // a name it gave
      const size_t before = writer->num_functions();
      auto index = writer->AddFunction(sig->function());
      if (!index.ok()) {
        report->not_planned.push_back(sig->function().name() +
                                      " (signatures alone): " + index.status().message());
        continue;
      }
      if (writer->num_functions() > before)
        report->planned.push_back(sig->function().name() + " (signatures alone)");
      if (signatures.empty()) (*alone_index)[key] = *index;
    }
    const bool writes = !internal::SavedModelAccess::plan_facts(*m).variables_frozen;
    keep->push_back(std::move(m));
    return writes;
  };
  if (plan({}) && keys.size() > 1)
    for (const std::string& key : keys) plan({key});
}

}  // namespace

Result<CompileReport> CompilePlan(const std::filesystem::path& dir, const CompileOptions& options) {
  LoadOptions lo;
  lo.devices = options.devices;
  lo.tags = options.tags;
  lo.signatures = options.signatures;
  lo.freeze_variables = options.freeze_variables;
  lo.precision = options.precision;
  lo.plan = PlanUse::kIgnore;
  lo.keep_graphs = true;
  CompileReport report;
  auto loaded = SavedModel::Load(dir, lo);
  bool some_signatures = !options.signatures.empty();
  if (!loaded.ok() && !some_signatures) {
    // One signature that cannot be prepared (an op this runtime lacks) does not cost the others
    // their plan: plan the signatures that load on their own, and list the rest.
    auto proto = ReadSavedModelProto(dir);
    const tensorflow::MetaGraphDef* mg = proto.ok() ? FindMetaGraph(**proto, lo.tags) : nullptr;
    if (mg == nullptr) return loaded.status().WithContext("compile");
    lo.signatures.clear();
    for (const auto& [key, sig] : mg->signature_def()) {
      if (key == "__saved_model_init_op") continue;
      LoadOptions one = lo;
      one.signatures = {key};
      one.keep_graphs = false;
      auto alone = SavedModel::Load(dir, one);
      if (alone.ok())
        lo.signatures.push_back(key);
      else
        report.not_planned.push_back("signature '" + key + "': " + alone.status().message());
    }
    if (lo.signatures.empty()) return loaded.status().WithContext("compile");
    report.not_planned.push_back("the restored functions: the bundle does not load as a whole (" +
                                 loaded.status().message() + ")");
    some_signatures = true;
    loaded = SavedModel::Load(dir, lo);
  }
  KILN_ASSIGN_OR_RETURN_CTX(auto model, std::move(loaded), "compile");
  PlanWriter writer(options);
  // The signatures that did not load are not the model section's concern: it covers the
  // signatures this plan has (a load asking for another one reads saved_model.pb).
  const size_t not_planned_at_load = report.not_planned.size();
  std::map<const PreparedFunction*, int32_t> index_of;
  auto add = [&](const PreparedFunction& pf) {
    auto index = writer.AddFunction(pf);
    if (index.ok()) {
      report.planned.push_back(pf.name());
      index_of[&pf] = *index;
    } else {
      report.not_planned.push_back(pf.name() + ": " + index.status().message());
    }
  };
  std::vector<const PreparedFunction*> functions;
  for (const std::string& key : model->SignatureNames()) {
    KILN_ASSIGN_OR_RETURN(const Signature* sig, model->GetSignature(key));
    functions.push_back(&sig->function());
  }
  for (const std::string& name : model->FunctionNames()) {
    KILN_ASSIGN_OR_RETURN(const RestoredFunction* fn, model->GetFunction(name));
    for (const auto& c : fn->concrete_functions()) functions.push_back(c.function.get());
  }
  for (size_t i = 0; i < functions.size(); ++i) {
    add(*functions[i]);
    if (options.progress) options.progress(functions[i]->name(), i + 1, functions.size());
  }
  // Loads of signatures alone (the server's, `run`'s) freeze what those signatures do not write,
  // and the restored functions loaded above may write more (tf_keras saves the training call,
  // which assigns the batch norms' moving averages): such loads fold other reads and prepare
  // other graphs, which the plan holds too (ServingPlan::Find tells them apart).
  std::vector<std::unique_ptr<SavedModel>> signature_loads;
  std::map<std::string, int32_t> alone_index;
  const size_t not_planned_before_alone = report.not_planned.size();
  // (Without freezing, every load prepares the same graphs.)
  if (!some_signatures && options.freeze_variables &&
      !internal::SavedModelAccess::plan_facts(*model).variables_frozen)
    PlanSignatureLoads(dir, lo, model->SignatureNames(), &writer, &signature_loads, &report,
                       &alone_index);
  // What those loads could not plan they prepare from saved_model.pb, as without a plan; the
  // model section (for loads of the whole model) does not depend on it.
  const size_t not_planned_alone = report.not_planned.size() - not_planned_before_alone;
  KILN_ASSIGN_OR_RETURN(const std::vector<Device*> devices, ResolveDevices(options.devices));
  if (devices.size() > 1) RunTuningCalls(*model, options.tune_batches, &report);
  std::vector<std::pair<std::string, tuning::Record>> records;
  for (const Device* d : devices)
    for (tuning::Record& r : tuning::Export(*d)) records.emplace_back(d->name(), std::move(r));
  report.tuning_records = records.size();
  // The model section lets loads skip saved_model.pb; without it, loads read saved_model.pb and
  // take the planned functions from the plan.
  const bool all_planned = report.not_planned.size() == not_planned_at_load + not_planned_alone;
  const internal::PlanFacts& facts = internal::SavedModelAccess::plan_facts(*model);
  if (facts.self_contained && !writer.uses_functions() && all_planned) {
    Status st = writer.SetModel(*model, !some_signatures, index_of, alone_index);
    report.self_contained = st.ok();
    if (!st.ok()) report.not_self_contained = st.message();
  } else {
    report.not_self_contained = !facts.self_contained ? facts.not_self_contained
                                : writer.uses_functions()
                                    ? "a planned function calls other functions"
                                    : "some functions are not planned";
  }
  KILN_ASSIGN_OR_RETURN(std::string bytes, writer.Finish(dir, devices, records));
  report.path = dir / kPlanPath;
  report.bytes = bytes.size();
  KILN_RETURN_IF_ERROR(WriteFileAtomically(report.path, bytes));
  return report;
}

}  // namespace kiln::exec
