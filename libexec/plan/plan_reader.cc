// Reading a serving plan (plan_reader.h). Compiled with and without KILN_NO_PROTOBUF, as the
// FlatGraph it fills (graph/flat_graph.h) has protobuf parts.
#include "plan/plan_reader.h"

#include <cstring>
#include <functional>
#include <limits>

#include "bundle/crc32c.h"
#include "bundle/mapped_file.h"
#include "device/tuning_records.h"
#include "kernels/op_table_builder.h"
#include "kiln/exec/device.h"
#include "kiln/exec/serving_plan.h"
#include "kiln/plan_generated.h"

namespace kiln::exec {

namespace fb = ::flatbuffers;
namespace kp = ::kiln::plan;

void AppendPlanTrailer(std::string* flatbuffer) {
  const uint32_t crc = crc32c::Mask(crc32c::Value(*flatbuffer));
  for (int i = 0; i < 4; ++i) flatbuffer->push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  flatbuffer->append(kPlanTrailerMagic, 4);
}

Result<SourceHash> HashSourceFile(const std::filesystem::path& path) {
  KILN_ASSIGN_OR_RETURN(auto file, MappedFile::Open(path.string()));
  return SourceHash{file->size(), crc32c::Value(file->data(), file->size())};
}

namespace {

// Attr nesting (a func attr's attrs) deeper than this is refused: a hand-made plan must not
// recurse the verifier off the stack.
constexpr int kMaxAttrDepth = 8;
// FlatBuffers' own limit on nesting and tables, generous for real plans.
constexpr fb::uoffset_t kMaxVerifierDepth = 64;
constexpr fb::uoffset_t kMaxVerifierTables = 50'000'000;

template <typename T>
size_t SizeOf(const fb::Vector<T>* v) {
  return v == nullptr ? 0 : v->size();
}

// The FlatBuffers verifier checks a vector's length field (4-byte aligned) but not that 8-byte
// elements are 8-byte aligned; our writer always aligns them, so a plan that does not is refused
// before any element is read. (The builder does not align empty vectors; nothing is read there.)
template <typename T>
bool ElementsAligned(const fb::Vector<T>* v) {
  return v == nullptr || v->size() == 0 || reinterpret_cast<uintptr_t>(v->Data()) % alignof(T) == 0;
}

std::vector<int64_t> Int64s(const fb::Vector<int64_t>* v) {
  return v == nullptr ? std::vector<int64_t>() : std::vector<int64_t>(v->begin(), v->end());
}

// Checks one plan's contents beyond what the FlatBuffers verifier checks (that every offset is
// inside the buffer): every index in range, nodes in topological order, ops and kernels known,
// shapes and constants that fit. Errors name the field: "functions[2].nodes[7].inputs[0]".
class ContentChecker {
 public:
  explicit ContentChecker(const kp::Plan& plan) : plan_(plan) {}

  Status Check() {
    if (plan_.format_version() != kPlanFormatVersion)
      return FailedPrecondition("format_version is ", plan_.format_version(),
                                "; this runtime reads version ", kPlanFormatVersion);
    if (plan_.runtime() == nullptr) return Field("runtime", "is missing");
    for (size_t i = 0; i < SizeOf(plan_.sources()); ++i) {
      const kp::SourceFile* s = plan_.sources()->Get(i);
      if (s->path() == nullptr)
        return Field("sources[" + std::to_string(i) + "].path", "is missing");
    }
    const size_t n_constants = SizeOf(plan_.constants());
    for (size_t i = 0; i < n_constants; ++i)
      KILN_RETURN_IF_ERROR(CheckConstant(*plan_.constants()->Get(i), i));
    for (size_t f = 0; f < SizeOf(plan_.functions()); ++f)
      KILN_RETURN_IF_ERROR(
          CheckFunction(*plan_.functions()->Get(f), "functions[" + std::to_string(f) + "]"));
    if (plan_.model() != nullptr) KILN_RETURN_IF_ERROR(CheckModel(*plan_.model()));
    KILN_RETURN_IF_ERROR(CheckDevices());
    return OkStatus();
  }

 private:
  template <typename... Args>
  static Status Field(const std::string& field, Args&&... args) {
    return DataLoss("plan field ", field, " ", std::forward<Args>(args)...);
  }

  // The device list names devices (a load compares it with its own), and the measured choices
  // fit what the process's tuning store takes.
  Status CheckDevices() {
    if (SizeOf(plan_.devices()) > kMaxPlanDevices)
      return Field("devices", "has ", SizeOf(plan_.devices()), " entries, above ", kMaxPlanDevices);
    for (size_t i = 0; i < SizeOf(plan_.devices()); ++i)
      if (plan_.devices()->Get(i)->size() == 0)
        return Field("devices[" + std::to_string(i) + "]", "is empty");
    if (SizeOf(plan_.tuning()) > tuning::kMaxRecords * kMaxPlanDevices)
      return Field("tuning", "has ", SizeOf(plan_.tuning()), " records, above ",
                   tuning::kMaxRecords * kMaxPlanDevices);
    for (size_t i = 0; i < SizeOf(plan_.tuning()); ++i) {
      const kp::TuningRecord* r = plan_.tuning()->Get(i);
      const std::string field = "tuning[" + std::to_string(i) + "]";
      if (r->device() == nullptr || r->device()->size() == 0)
        return Field(field + ".device", "is missing");
      if (r->key() == nullptr || r->key()->size() == 0 || r->key()->size() > tuning::kMaxKeyBytes)
        return Field(field + ".key", "has ", r->key() == nullptr ? 0 : r->key()->size(),
                     " bytes; a key has 1 to ", tuning::kMaxKeyBytes);
      if (SizeOf(r->value()) > tuning::kMaxValueBytes)
        return Field(field + ".value", "has ", SizeOf(r->value()), " bytes, above ",
                     tuning::kMaxValueBytes);
    }
    return OkStatus();
  }

  static Status CheckShape(const kp::Shape* s, const std::string& field, bool allow_unknown) {
    if (s == nullptr) return Field(field, "is missing");
    if (s->unknown_rank()) {
      if (!allow_unknown) return Field(field, "has unknown rank");
      return OkStatus();
    }
    if (!ElementsAligned(s->dims())) return Field(field + ".dims", "is not 8-byte aligned");
    if (SizeOf(s->dims()) > static_cast<size_t>(kMaxRank))
      return Field(field, "has rank ", SizeOf(s->dims()), ", above the maximum ", kMaxRank);
    int64_t elements = 1;
    for (size_t i = 0; i < SizeOf(s->dims()); ++i) {
      const int64_t d = s->dims()->Get(i);
      if (d < (allow_unknown ? -1 : 0)) return Field(field, ".dims[", i, "] is ", d);
      if (d >= 0 && __builtin_mul_overflow(elements, d, &elements))
        return Field(field, " has more elements than fit in 64 bits");
    }
    return OkStatus();
  }

  static Status CheckDType(int32_t dtype, const std::string& field, bool allow_invalid) {
    if (dtype == 0 && allow_invalid) return OkStatus();
    auto t = DTypeFromProto(dtype);
    if (!t.ok() || *t == DType::kInvalid) return Field(field, "is not a dtype: ", dtype);
    return OkStatus();
  }

  Status CheckConstant(const kp::Constant& c, size_t i) {
    const std::string field = "constants[" + std::to_string(i) + "]";
    KILN_RETURN_IF_ERROR(CheckDType(c.dtype(), field + ".dtype", false));
    const DType dtype = static_cast<DType>(c.dtype());
    if (!DTypeIsPod(dtype) && dtype != DType::kString)
      return Field(field + ".dtype", "is ", DTypeShortName(dtype),
                   "; constants hold numbers or strings");
    if (!ElementsAligned(c.shape())) return Field(field + ".shape", "is not 8-byte aligned");
    if (SizeOf(c.shape()) > static_cast<size_t>(kMaxRank))
      return Field(field + ".shape", "has rank ", SizeOf(c.shape()));
    uint64_t n = 1;
    for (size_t d = 0; d < SizeOf(c.shape()); ++d) {
      const int64_t dim = c.shape()->Get(d);
      if (dim < 0) return Field(field + ".shape", "has dimension ", dim);
      if (dim != 0 && n > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(dim))
        return Field(field + ".shape", "overflows");
      n *= static_cast<uint64_t>(dim);
    }
    if (dtype == DType::kString) {
      if (SizeOf(c.strings()) != n)
        return Field(field + ".strings", "has ", SizeOf(c.strings()), " entries; the shape has ",
                     n);
      for (size_t s = 0; s < n; ++s)
        if (c.strings()->Get(s) == nullptr) return Field(field + ".strings", "has a null entry");
      return OkStatus();
    }
    const uint64_t size = DTypeSize(dtype);
    if (n > std::numeric_limits<uint64_t>::max() / size || SizeOf(c.data()) != n * size)
      return Field(field + ".data", "has ", SizeOf(c.data()), " bytes; ", DTypeShortName(dtype),
                   " of that shape needs ", n, " elements of ", size);
    return OkStatus();
  }

  // `field` names the attrs in errors; it is only called on the error path, as checking runs
  // over every node of every load.
  Status CheckAttrs(const fb::Vector<fb::Offset<kp::Attr>>* attrs,
                    const std::function<std::string()>& field, int depth) {
    if (SizeOf(attrs) == 0) return OkStatus();
    if (depth > kMaxAttrDepth) return Field(field(), "nests deeper than ", kMaxAttrDepth);
    for (size_t a = 0; a < SizeOf(attrs); ++a) {
      const kp::Attr& attr = *attrs->Get(a);
      auto af = [&] { return field() + "[" + std::to_string(a) + "]"; };
      if (attr.name() == nullptr) return Field(af() + ".name", "is missing");
      if (a > 0 && !(attrs->Get(a - 1)->name()->str() < attr.name()->str()))
        return Field(af() + ".name", "'", attr.name()->str(), "' is not sorted or repeats");
      const size_t n_constants = SizeOf(plan_.constants());
      if (!ElementsAligned(attr.ints())) return Field(af() + ".ints", "is not 8-byte aligned");
      switch (attr.kind()) {
        case kp::AttrKind::Tensor:
          if (attr.tensor() < 0 || static_cast<size_t>(attr.tensor()) >= n_constants)
            return Field(af() + ".tensor", "is ", attr.tensor(), "; the plan has ", n_constants,
                         " constants");
          break;
        case kp::AttrKind::TensorList:
          for (size_t t = 0; t < SizeOf(attr.tensors()); ++t)
            if (attr.tensors()->Get(t) < 0 ||
                static_cast<size_t>(attr.tensors()->Get(t)) >= n_constants)
              return Field(af() + ".tensors[" + std::to_string(t) + "]", "is out of range");
          break;
        case kp::AttrKind::Shape:
          KILN_RETURN_IF_ERROR(CheckShape(attr.shape(), af() + ".shape", true));
          break;
        case kp::AttrKind::ShapeList:
          for (size_t s = 0; s < SizeOf(attr.shapes()); ++s)
            KILN_RETURN_IF_ERROR(CheckShape(attr.shapes()->Get(s),
                                            af() + ".shapes[" + std::to_string(s) + "]", true));
          break;
        case kp::AttrKind::Func:
          if (attr.func() == nullptr || attr.func()->name() == nullptr)
            return Field(af() + ".func", "is missing");
          KILN_RETURN_IF_ERROR(CheckAttrs(
              attr.func()->attrs(), [&] { return af() + ".func.attrs"; }, depth + 1));
          break;
        case kp::AttrKind::FuncList:
          for (size_t f = 0; f < SizeOf(attr.funcs()); ++f) {
            const kp::Func* fn = attr.funcs()->Get(f);
            if (fn->name() == nullptr) return Field(af() + ".funcs", "has an unnamed entry");
            KILN_RETURN_IF_ERROR(CheckAttrs(
                fn->attrs(), [&] { return af() + ".funcs.attrs"; }, depth + 1));
          }
          break;
        case kp::AttrKind::StringList:
          for (size_t s = 0; s < SizeOf(attr.strings()); ++s)
            if (attr.strings()->Get(s)->data() == nullptr)
              return Field(af() + ".strings", "has an entry without data");
          break;
        default:
          if (attr.kind() > kp::AttrKind::MAX)
            return Field(af() + ".kind", "is ", static_cast<int>(attr.kind()));
      }
    }
    return OkStatus();
  }

  Status CheckFunction(const kp::Function& f, const std::string& field) {
    if (f.name() == nullptr) return Field(field + ".name", "is missing");
    const size_t n_args = SizeOf(f.arg_names());
    if (SizeOf(f.arg_dtypes()) != n_args || SizeOf(f.prepared_dtypes()) != n_args ||
        SizeOf(f.prepared_shapes()) != n_args ||
        (SizeOf(f.input_shapes()) != 0 && SizeOf(f.input_shapes()) != n_args))
      return Field(field, "has ", n_args, " arg_names, ", SizeOf(f.arg_dtypes()), " arg_dtypes, ",
                   SizeOf(f.prepared_dtypes()), " prepared_dtypes, ", SizeOf(f.prepared_shapes()),
                   " prepared_shapes and ", SizeOf(f.input_shapes()), " input_shapes");
    for (size_t a = 0; a < n_args; ++a) {
      auto af = [&] { return field + ".args[" + std::to_string(a) + "]"; };
      if (f.arg_names()->Get(a) == nullptr) return Field(af(), "has no name");
      KILN_RETURN_IF_ERROR(CheckDType(f.arg_dtypes()->Get(a), af() + ".dtype", true));
      KILN_RETURN_IF_ERROR(CheckDType(f.prepared_dtypes()->Get(a), af() + ".prepared_dtype", true));
      KILN_RETURN_IF_ERROR(CheckShape(f.prepared_shapes()->Get(a), af() + ".prepared_shape", true));
      if (SizeOf(f.input_shapes()) != 0)
        KILN_RETURN_IF_ERROR(CheckShape(f.input_shapes()->Get(a), af() + ".input_shape", true));
    }
    const size_t n_out = SizeOf(f.output_names());
    if (SizeOf(f.output_dtypes()) != n_out || SizeOf(f.outputs()) != n_out)
      return Field(field, "has ", n_out, " output_names, ", SizeOf(f.output_dtypes()),
                   " output_dtypes and ", SizeOf(f.outputs()), " outputs");
    for (size_t o = 0; o < n_out; ++o) {
      if (f.output_names()->Get(o) == nullptr) return Field(field + ".output_names", "has a null");
      KILN_RETURN_IF_ERROR(CheckDType(f.output_dtypes()->Get(o),
                                      field + ".output_dtypes[" + std::to_string(o) + "]", true));
    }
    if (!ElementsAligned(f.arena_offsets()))
      return Field(field + ".arena_offsets", "is not 8-byte aligned");
    const size_t n_nodes = SizeOf(f.nodes());
    if (n_nodes < n_args) return Field(field + ".nodes", "has fewer nodes than arguments");
    if (SizeOf(f.kernels()) != n_nodes)
      return Field(field + ".kernels", "has ", SizeOf(f.kernels()), " entries for ", n_nodes,
                   " nodes");
    const size_t n_constants = SizeOf(plan_.constants());
    for (size_t v = 0; v < n_nodes; ++v) {
      const kp::Node& n = *f.nodes()->Get(v);
      auto nf = [&] { return field + ".nodes[" + std::to_string(v) + "]"; };
      if (n.name() == nullptr || n.op() == nullptr) return Field(nf(), "has no name or op");
      const std::string_view op = n.op()->string_view();
      // Arguments come first, in order; nothing else is an argument.
      if ((v < n_args) != (op == "_Arg"))
        return Field(nf() + ".op", "is '", op, "'; nodes 0..", n_args, " and only those are _Arg");
      if (op == "_Arg" && n.arg_index() != static_cast<int32_t>(v))
        return Field(nf() + ".arg_index", "is ", n.arg_index(), ", expected ", v);
      if (op != "_Arg" && n.arg_index() != -1) return Field(nf() + ".arg_index", "is set");
      if (n.constant() != -1) {
        if (op != "Const") return Field(nf() + ".constant", "is set on a '", op, "' node");
        if (n.constant() < 0 || static_cast<size_t>(n.constant()) >= n_constants)
          return Field(nf() + ".constant", "is ", n.constant(), "; the plan has ", n_constants,
                       " constants");
      } else if (op == "Const") {
        return Field(nf() + ".constant", "is missing on a Const node");
      }
      const bool sink = op == "NoOp" && n.attrs() == nullptr;
      if (op != "_Arg" && !sink && FindOp(op) == nullptr)
        return Unimplemented("plan field ", nf(), ".op '", op, "' is not an op of this runtime",
                             OpTableNote());
      const std::string_view kernel = f.kernels()->Get(v)->string_view();
      if (!kernel.empty()) {
        Result<Device*> device = FindDevice(kernel);
        if (!device.ok())
          return Field(field + ".kernels[" + std::to_string(v) + "]", "is '", kernel,
                       "': ", device.status().message());
        if ((*device)->FindKernel(op) == nullptr)
          return Field(nf() + ".op", "'", op, "' has no ", kernel, " kernel");
      }
      for (size_t i = 0; i < SizeOf(n.inputs()); ++i) {
        const kp::Edge* e = n.inputs()->Get(i);
        if (e->node() < 0 || static_cast<size_t>(e->node()) >= v || e->output() < 0)
          return Field(nf() + ".inputs[" + std::to_string(i) + "]", "is (", e->node(), ", ",
                       e->output(), "); inputs come from an earlier node (0..", v, ")");
      }
      for (size_t i = 0; i < SizeOf(n.control_inputs()); ++i) {
        const int32_t c = n.control_inputs()->Get(i);
        if (c < 0 || static_cast<size_t>(c) >= v)
          return Field(nf() + ".control_inputs[" + std::to_string(i) + "]", "is ", c,
                       "; control inputs come from an earlier node");
      }
      KILN_RETURN_IF_ERROR(CheckAttrs(
          n.attrs(), [&] { return nf() + ".attrs"; }, 0));
    }
    for (size_t o = 0; o < n_out; ++o) {
      const kp::Edge* e = f.outputs()->Get(o);
      if (e->node() < 0 || static_cast<size_t>(e->node()) >= n_nodes || e->output() < 0)
        return Field(field + ".outputs[" + std::to_string(o) + "]", "is (", e->node(), ", ",
                     e->output(), ") of ", n_nodes, " nodes");
    }
    for (size_t k = 0; k < SizeOf(f.keep()); ++k)
      if (f.keep()->Get(k) < 0 || static_cast<size_t>(f.keep()->Get(k)) >= n_nodes)
        return Field(field + ".keep[" + std::to_string(k) + "]", "is out of range");
    return OkStatus();
  }

  // The function a signature or method calls, with `n_args` caller arguments and `captures`.
  Status CheckCall(int32_t function, size_t n_args,
                   const fb::Vector<fb::Offset<kp::Capture>>* captures, const std::string& field) {
    if (function < 0 || static_cast<size_t>(function) >= SizeOf(plan_.functions()))
      return Field(field + ".function", "is ", function, "; the plan has ",
                   SizeOf(plan_.functions()), " functions");
    const kp::Function& fn = *plan_.functions()->Get(static_cast<fb::uoffset_t>(function));
    if (n_args + SizeOf(captures) != SizeOf(fn.arg_names()))
      return Field(field, "passes ", n_args, " arguments and ", SizeOf(captures),
                   " captures to a function of ", SizeOf(fn.arg_names()), " arguments");
    const size_t n_vars = SizeOf(plan_.model()->variables());
    for (size_t c = 0; c < SizeOf(captures); ++c) {
      const kp::Capture& cap = *captures->Get(c);
      const std::string cf = field + ".captures[" + std::to_string(c) + "]";
      const int kinds = static_cast<int>(cap.variable() != -1) +
                        static_cast<int>(cap.constant() != -1) +
                        static_cast<int>(cap.asset() != nullptr);
      if (kinds != 1) return Field(cf, "must be one variable, constant or asset");
      if (cap.variable() != -1 &&
          (cap.variable() < 0 || static_cast<size_t>(cap.variable()) >= n_vars))
        return Field(cf + ".variable", "is ", cap.variable(), "; the model has ", n_vars);
      if (cap.constant() != -1 &&
          (cap.constant() < 0 || static_cast<size_t>(cap.constant()) >= SizeOf(plan_.constants())))
        return Field(cf + ".constant", "is out of range");
      if (cap.asset() != nullptr) {
        const std::string_view a = cap.asset()->string_view();
        if (a.empty() || a.find('/') != std::string_view::npos || a == "." || a == "..")
          return Field(cf + ".asset", "'", a, "' is not a file name");
      }
    }
    return OkStatus();
  }

  Status CheckArgs(const fb::Vector<fb::Offset<kp::SignatureArg>>* args, const std::string& field) {
    for (size_t a = 0; a < SizeOf(args); ++a) {
      const kp::SignatureArg& arg = *args->Get(a);
      const std::string af = field + "[" + std::to_string(a) + "]";
      if (arg.key() == nullptr) return Field(af + ".key", "is missing");
      KILN_RETURN_IF_ERROR(CheckDType(arg.dtype(), af + ".dtype", true));
      KILN_RETURN_IF_ERROR(CheckShape(arg.shape(), af + ".shape", true));
    }
    return OkStatus();
  }

  Status CheckModel(const kp::Model& m) {
    for (size_t i = 0; i < SizeOf(m.variables()); ++i) {
      const kp::Variable& v = *m.variables()->Get(i);
      const std::string vf = "model.variables[" + std::to_string(i) + "]";
      if (v.path() == nullptr) return Field(vf + ".path", "is missing");
      KILN_RETURN_IF_ERROR(CheckDType(v.dtype(), vf + ".dtype", false));
      KILN_RETURN_IF_ERROR(CheckShape(v.shape(), vf + ".shape", true));
    }
    for (size_t i = 0; i < SizeOf(m.signatures()); ++i) {
      const kp::Signature& sig = *m.signatures()->Get(i);
      const std::string sf = "model.signatures[" + std::to_string(i) + "]";
      if (sig.key() == nullptr) return Field(sf + ".key", "is missing");
      KILN_RETURN_IF_ERROR(CheckArgs(sig.inputs(), sf + ".inputs"));
      KILN_RETURN_IF_ERROR(CheckArgs(sig.outputs(), sf + ".outputs"));
      KILN_RETURN_IF_ERROR(CheckCall(sig.function(), SizeOf(sig.inputs()), sig.captures(), sf));
      const kp::Function& fn = *plan_.functions()->Get(static_cast<fb::uoffset_t>(sig.function()));
      if (SizeOf(sig.input_to_arg()) != SizeOf(sig.inputs()) ||
          SizeOf(sig.output_from_ret()) != SizeOf(sig.outputs()))
        return Field(sf, "has ", SizeOf(sig.input_to_arg()), " input_to_arg for ",
                     SizeOf(sig.inputs()), " inputs, ", SizeOf(sig.output_from_ret()),
                     " output_from_ret for ", SizeOf(sig.outputs()), " outputs");
      for (size_t a = 0; a < SizeOf(sig.input_to_arg()); ++a)
        if (sig.input_to_arg()->Get(a) < 0 ||
            static_cast<size_t>(sig.input_to_arg()->Get(a)) >= SizeOf(sig.inputs()))
          return Field(sf + ".input_to_arg[" + std::to_string(a) + "]", "is out of range");
      for (size_t o = 0; o < SizeOf(sig.output_from_ret()); ++o)
        if (sig.output_from_ret()->Get(o) < 0 ||
            static_cast<size_t>(sig.output_from_ret()->Get(o)) >= SizeOf(fn.outputs()))
          return Field(sf + ".output_from_ret[" + std::to_string(o) + "]", "is out of range");
      if (sig.alone_function() != -1) {
        KILN_RETURN_IF_ERROR(CheckCall(sig.alone_function(), SizeOf(sig.inputs()), sig.captures(),
                                       sf + ".alone_function"));
        const kp::Function& alone =
            *plan_.functions()->Get(static_cast<fb::uoffset_t>(sig.alone_function()));
        if (SizeOf(alone.outputs()) != SizeOf(fn.outputs()))
          return Field(sf + ".alone_function", "has ", SizeOf(alone.outputs()),
                       " outputs; the signature's function has ", SizeOf(fn.outputs()));
      }
    }
    for (size_t i = 0; i < SizeOf(m.methods()); ++i) {
      const kp::Method& meth = *m.methods()->Get(i);
      const std::string mf = "model.methods[" + std::to_string(i) + "]";
      if (meth.name() == nullptr) return Field(mf + ".name", "is missing");
      for (size_t c = 0; c < SizeOf(meth.concretes()); ++c) {
        const kp::Concrete& conc = *meth.concretes()->Get(c);
        const std::string cf = mf + ".concretes[" + std::to_string(c) + "]";
        const size_t n = SizeOf(conc.arg_names());
        if (SizeOf(conc.arg_dtypes()) != n || SizeOf(conc.arg_shapes()) != n)
          return Field(cf, "has ", n, " arg_names, ", SizeOf(conc.arg_dtypes()), " arg_dtypes and ",
                       SizeOf(conc.arg_shapes()), " arg_shapes");
        for (size_t a = 0; a < n; ++a) {
          if (conc.arg_names()->Get(a) == nullptr) return Field(cf + ".arg_names", "has a null");
          KILN_RETURN_IF_ERROR(CheckDType(conc.arg_dtypes()->Get(a), cf + ".arg_dtypes", true));
          KILN_RETURN_IF_ERROR(CheckShape(conc.arg_shapes()->Get(a), cf + ".arg_shapes", true));
        }
        KILN_RETURN_IF_ERROR(CheckCall(conc.function(), n, conc.captures(), cf));
      }
    }
    return OkStatus();
  }

  const kp::Plan& plan_;
};

// A constant as a tensor: numbers alias the plan's bytes when they are aligned (always, in a
// mapped plan that our writer made), else they are copied. `mapped`: the bytes are a mapping
// of the plan file, whose pages a view may give back once read (packed weights).
Result<Tensor> DecodeConstant(const kp::Constant& c, const std::shared_ptr<const void>& owner,
                              bool mapped) {
  const DType dtype = static_cast<DType>(c.dtype());
  KILN_ASSIGN_OR_RETURN(Shape shape, Shape::FromDims(Int64s(c.shape())));
  if (dtype == DType::kString) {
    Tensor t(dtype, shape);
    auto out = t.flat<std::string>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = c.strings()->Get(i)->str();
    return t;
  }
  const uint8_t* bytes = c.data() ? c.data()->data() : nullptr;
  const size_t n = SizeOf(c.data());
  if (bytes != nullptr && n > 0 && reinterpret_cast<uintptr_t>(bytes) % kTensorAlignment == 0)
    return Tensor(dtype, shape,
                  TensorBuffer::ReadOnlyView(dtype, shape.num_elements(), bytes, owner, mapped));
  Tensor t(dtype, shape);
  if (n > 0) std::memcpy(t.raw_data(), bytes, n);
  return t;
}

}  // namespace

Result<std::shared_ptr<const ServingPlan>> ServingPlan::Verify(std::shared_ptr<ServingPlan> plan,
                                                               std::string_view name,
                                                               bool verify_checksum) {
  const std::string where = "serving plan '" + std::string(name) + "'";
  if (plan->size_ < 8 + kPlanTrailerSize || !kp::PlanBufferHasIdentifier(plan->data_))
    return DataLoss(where, ": not a kiln plan (no 'KPLN' identifier)");
  const uint8_t* trailer = plan->data_ + plan->size_ - kPlanTrailerSize;
  if (std::memcmp(trailer + 4, kPlanTrailerMagic, 4) != 0)
    return DataLoss(where, ": truncated (no 'KPL1' trailer at its end)");
  plan->size_ -= kPlanTrailerSize;
  if (verify_checksum) {
    uint32_t stored = 0;
    for (int i = 0; i < 4; ++i) stored |= static_cast<uint32_t>(trailer[i]) << (8 * i);
    const uint32_t actual = ChecksumOf(reinterpret_cast<const char*>(plan->data_), plan->size_,
                                       nullptr, plan->file_ != nullptr && plan->file_->mapped());
    if (crc32c::Unmask(stored) != actual)
      return DataLoss(where, ": checksum mismatch (the file is corrupt)");
  }
  fb::Verifier verifier(plan->data_, plan->size_, kMaxVerifierDepth, kMaxVerifierTables);
  if (!kp::VerifyPlanBuffer(verifier))
    return DataLoss(where, ": the FlatBuffers verifier refused it (truncated or corrupt)");
  plan->root_ = kp::GetPlan(plan->data_);
  KILN_RETURN_IF_ERROR_CTX(ContentChecker(*plan->root_).Check(), where);
  return std::shared_ptr<const ServingPlan>(std::move(plan));
}

Result<std::shared_ptr<const ServingPlan>> ServingPlan::Open(const std::filesystem::path& path,
                                                             bool verify_checksum) {
  std::shared_ptr<ServingPlan> plan(new ServingPlan());
  KILN_ASSIGN_OR_RETURN(plan->file_, MappedFile::Open(path.string()));
  plan->data_ = reinterpret_cast<const uint8_t*>(plan->file_->data());
  plan->size_ = plan->file_->size();
  const std::shared_ptr<const MappedFile> file = plan->file_;
  auto verified = Verify(std::move(plan), path.string(), verify_checksum);
  // The structural check read all of the plan's tables: loading reads what it needs again.
  if (verified.ok()) file->ReleasePages();
  return verified;
}

Result<std::shared_ptr<const ServingPlan>> ServingPlan::FromBytes(std::string_view bytes,
                                                                  bool verify_checksum) {
  std::shared_ptr<ServingPlan> plan(new ServingPlan());
  plan->copy_ = std::make_shared<std::string>(bytes);
  plan->data_ = reinterpret_cast<const uint8_t*>(plan->copy_->data());
  plan->size_ = plan->copy_->size();
  return Verify(std::move(plan), "<bytes>", verify_checksum);
}

std::string ServingPlan::StaleReason(const std::filesystem::path& dir,
                                     std::span<const std::string> tags, bool freeze_variables,
                                     std::span<Device* const> devices, Precision precision) const {
  const kp::Plan& p = *root_;
  if (p.runtime()->string_view() != kPlanRuntime)
    return "it was written by '" + p.runtime()->str() + "', this is '" + kPlanRuntime + "'";
  if (std::string why = DeviceMismatch(devices); !why.empty()) return why;
  const std::string planned_precision =
      p.precision() == nullptr ? std::string("fp32") : p.precision()->str();
  if (planned_precision != PrecisionName(precision))
    return "it was compiled for precision " + planned_precision + ", this load asks for " +
           PrecisionName(precision);
  std::vector<std::string> plan_tags;
  for (size_t i = 0; i < SizeOf(p.tags()); ++i) plan_tags.push_back(p.tags()->Get(i)->str());
  if (std::vector<std::string>(tags.begin(), tags.end()) != plan_tags)
    return "it was compiled for other tags";
  if (p.freeze_variables() != freeze_variables)
    return std::string("it was compiled with freeze_variables=") +
           (p.freeze_variables() ? "true" : "false") + ", this load has the opposite";
  for (const char* rel : kPlanSourceFiles) {
    const kp::SourceFile* recorded = nullptr;
    for (size_t i = 0; i < SizeOf(p.sources()); ++i)
      if (p.sources()->Get(i)->path()->string_view() == rel) recorded = p.sources()->Get(i);
    const std::filesystem::path path = dir / rel;
    const bool exists = std::filesystem::exists(path);
    if (recorded == nullptr) {
      if (exists) return std::string(rel) + " was added after the plan was compiled";
      continue;
    }
    if (!exists) return std::string(rel) + " was removed after the plan was compiled";
    auto h = HashSourceFile(path);
    if (!h.ok()) return std::string(rel) + " cannot be read: " + h.status().message();
    if (h->size != recorded->size() || h->crc32c != recorded->crc32c())
      return std::string(rel) + " changed after the plan was compiled";
  }
  return "";
}

const kp::Function* ServingPlan::Find(std::string_view name, std::span<const TensorSpec> arg_specs,
                                      std::span<const int32_t> frozen_args) const {
  for (size_t i = 0; i < SizeOf(root_->functions()); ++i) {
    const kp::Function* f = root_->functions()->Get(i);
    bool same = f->name()->string_view() == name &&
                SizeOf(f->prepared_dtypes()) == arg_specs.size() &&
                SizeOf(f->frozen_args()) == frozen_args.size();
    for (size_t a = 0; a < frozen_args.size() && same; ++a)
      same = f->frozen_args()->Get(static_cast<fb::uoffset_t>(a)) == frozen_args[a];
    for (size_t a = 0; a < arg_specs.size() && same; ++a)
      same = f->prepared_dtypes()->Get(a) == static_cast<int32_t>(arg_specs[a].dtype) &&
             arg_specs[a].shape == ServingPlan::ShapeOf(f->prepared_shapes()->Get(a));
    if (same) return f;
  }
  return nullptr;
}

Status ServingPlan::CheckPrepared(const kp::Function& f, const PreparedFunction& pf) {
  const std::string where = "plan function '" + f.name()->str() + "'";
  if (pf.plan_stats().steps != f.steps())
    return FailedPrecondition(where, ": prepared to ", pf.plan_stats().steps,
                              " steps; the plan recorded ", f.steps());
  const size_t arena_bytes = pf.plan_stats().arena_bytes;
  const std::vector<size_t> offsets = pf.ArenaOffsets();
  if (arena_bytes != f.arena_bytes() || offsets.size() != SizeOf(f.arena_offsets()))
    return FailedPrecondition(where, ": memory plan of ", arena_bytes, " bytes in ", offsets.size(),
                              " tensors; the plan recorded ", f.arena_bytes(), " bytes in ",
                              SizeOf(f.arena_offsets()));
  for (size_t i = 0; i < offsets.size(); ++i)
    if (offsets[i] != f.arena_offsets()->Get(static_cast<fb::uoffset_t>(i)))
      return FailedPrecondition(where, ": planned tensor ", i, " lands at offset ", offsets[i],
                                "; the plan recorded ",
                                f.arena_offsets()->Get(static_cast<fb::uoffset_t>(i)));
  return OkStatus();
}

namespace {

class GraphDecoder {
 public:
  GraphDecoder(const kp::Plan& plan, std::shared_ptr<const void> owner, bool mapped, FlatGraph* g)
      : plan_(plan), owner_(std::move(owner)), mapped_(mapped), g_(g) {}

  Result<const Tensor*> Constant(int32_t index) {
    if (auto it = decoded_.find(index); it != decoded_.end()) return it->second;
    KILN_ASSIGN_OR_RETURN(
        Tensor t, DecodeConstant(*plan_.constants()->Get(static_cast<fb::uoffset_t>(index)), owner_,
                                 mapped_));
    g_->owned_values.push_back(std::move(t));
    decoded_[index] = &g_->owned_values.back();
    return &g_->owned_values.back();
  }

  // A node's attrs. Function attrs keep their function's name only: that is all a kernel
  // reads of them (AttrReader::GetFunctionName).
  Result<NativeAttrMap> Attrs(const fb::Vector<fb::Offset<kp::Attr>>* attrs) {
    std::vector<NativeAttr> out(SizeOf(attrs));
    for (size_t a = 0; a < out.size(); ++a)
      KILN_RETURN_IF_ERROR(Attr(*attrs->Get(static_cast<fb::uoffset_t>(a)), &out[a]));
    return NativeAttrMap(std::move(out));
  }

  Status Attr(const kp::Attr& a, NativeAttr* v) {
    using Kind = NativeAttr::Kind;
    auto bytes = [](const fb::Vector<uint8_t>* b) {
      return b == nullptr ? std::string()
                          : std::string(reinterpret_cast<const char*>(b->data()), b->size());
    };
    v->name = a.name()->str();
    switch (a.kind()) {
      case kp::AttrKind::None:
        return OkStatus();
      case kp::AttrKind::Int:
        v->kind = Kind::kInt;
        v->i = a.i();
        return OkStatus();
      case kp::AttrKind::Float:
        v->kind = Kind::kFloat;
        v->f = a.f();
        return OkStatus();
      case kp::AttrKind::Bool:
        v->kind = Kind::kBool;
        v->b = a.b();
        return OkStatus();
      case kp::AttrKind::Type:
        v->kind = Kind::kType;
        v->type = a.type();
        return OkStatus();
      case kp::AttrKind::String:
        v->kind = Kind::kString;
        v->s = bytes(a.s());
        return OkStatus();
      case kp::AttrKind::Shape:
        v->kind = Kind::kShape;
        v->shape = ServingPlan::ShapeOf(a.shape());
        return OkStatus();
      case kp::AttrKind::Tensor: {
        v->kind = Kind::kTensor;
        KILN_ASSIGN_OR_RETURN(v->tensor, Constant(a.tensor()));
        return OkStatus();
      }
      case kp::AttrKind::Func:
        v->kind = Kind::kFunc;
        v->s = a.func()->name()->str();
        return OkStatus();
      case kp::AttrKind::IntList:
        v->kind = Kind::kList;
        v->ints = Int64s(a.ints());
        return OkStatus();
      case kp::AttrKind::FloatList:
        v->kind = Kind::kList;
        if (a.floats() != nullptr) v->floats.assign(a.floats()->begin(), a.floats()->end());
        return OkStatus();
      case kp::AttrKind::BoolList:
        v->kind = Kind::kList;
        for (size_t i = 0; i < SizeOf(a.bools()); ++i) v->bools.push_back(a.bools()->Get(i) != 0);
        return OkStatus();
      case kp::AttrKind::TypeList:
        v->kind = Kind::kList;
        if (a.types() != nullptr) v->types.assign(a.types()->begin(), a.types()->end());
        return OkStatus();
      case kp::AttrKind::StringList:
        v->kind = Kind::kList;
        for (size_t i = 0; i < SizeOf(a.strings()); ++i)
          v->strings.push_back(bytes(a.strings()->Get(i)->data()));
        return OkStatus();
      case kp::AttrKind::ShapeList:
        v->kind = Kind::kList;
        for (size_t i = 0; i < SizeOf(a.shapes()); ++i)
          v->shapes.push_back(ServingPlan::ShapeOf(a.shapes()->Get(i)));
        return OkStatus();
      case kp::AttrKind::TensorList: {
        v->kind = Kind::kList;
        for (size_t i = 0; i < SizeOf(a.tensors()); ++i) {
          KILN_ASSIGN_OR_RETURN(const Tensor* t, Constant(a.tensors()->Get(i)));
          v->tensors.push_back(t);
        }
        return OkStatus();
      }
      case kp::AttrKind::FuncList:
        v->kind = Kind::kList;
        for (size_t i = 0; i < SizeOf(a.funcs()); ++i)
          v->strings.push_back(a.funcs()->Get(i)->name()->str());
        return OkStatus();
    }
    return DataLoss("attr '", a.name()->str(), "' has kind ", static_cast<int>(a.kind()));
  }

 private:
  const kp::Plan& plan_;
  std::shared_ptr<const void> owner_;
  bool mapped_;
  FlatGraph* g_;
  std::map<int32_t, const Tensor*> decoded_;
};

}  // namespace

PartialShape ServingPlan::ShapeOf(const kp::Shape* s) {
  if (s == nullptr || s->unknown_rank()) return PartialShape::UnknownRank();
  auto ps = PartialShape::FromDims(Int64s(s->dims()));  // checked by ContentChecker
  return ps.ok() ? *ps : PartialShape::UnknownRank();
}

std::vector<TensorSpec> ServingPlan::PreparedSpecs(const kp::Function& f) {
  std::vector<TensorSpec> specs;
  for (size_t a = 0; a < SizeOf(f.prepared_dtypes()); ++a)
    specs.push_back(TensorSpec{static_cast<DType>(f.prepared_dtypes()->Get(a)),
                               ShapeOf(f.prepared_shapes()->Get(a))});
  return specs;
}

std::shared_ptr<const void> ServingPlan::Owner() const {
  return file_ ? std::shared_ptr<const void>(file_) : std::shared_ptr<const void>(copy_);
}

Result<Tensor> ServingPlan::ConstantTensor(int32_t index) const {
  if (index < 0 || static_cast<size_t>(index) >= SizeOf(root_->constants()))
    return DataLoss("plan constant ", index, " is out of range");
  return DecodeConstant(*root_->constants()->Get(static_cast<fb::uoffset_t>(index)), Owner(),
                        file_ != nullptr && file_->mapped());
}

Result<std::shared_ptr<const PreparedFunction>> ServingPlan::Prepare(
    const kp::Function& function, const FunctionLibrary& library, std::span<const TensorSpec> specs,
    const PrepareOptions& options) const {
  KILN_ASSIGN_OR_RETURN(PlanGraph g, Decode(function));
  // Decoding reads each constant's length beside its bytes, which maps the page-cache folio
  // around it (up to 2 MiB where the file was written in large pieces): those pages go back,
  // so that preparing maps each weight only while it packs it (and packing gives its pages
  // back), and what stays resident is what calls read.
  if (file_ != nullptr) file_->ReleasePages();
  KILN_ASSIGN_OR_RETURN(auto prepared,
                        PreparedFunction::PrepareGraph(g.graph, g.iface, library, specs, options));
  if (file_ != nullptr) file_->ReleasePages();
  KILN_RETURN_IF_ERROR(CheckPrepared(function, *prepared));
  return prepared;
}

Result<PlanGraph> ServingPlan::Decode(const kp::Function& f) const {
  auto iface = std::make_shared<FunctionInterface>();
  iface->name = f.name()->str();
  for (size_t a = 0; a < SizeOf(f.arg_names()); ++a) {
    iface->arg_names.push_back(f.arg_names()->Get(a)->str());
    iface->arg_dtypes.push_back(static_cast<DType>(f.arg_dtypes()->Get(a)));
    if (SizeOf(f.input_shapes()) != 0)
      iface->input_shapes.push_back(ShapeOf(f.input_shapes()->Get(a)));
  }
  for (size_t o = 0; o < SizeOf(f.output_names()); ++o) {
    iface->output_names.push_back(f.output_names()->Get(o)->str());
    iface->output_dtypes.push_back(static_cast<DType>(f.output_dtypes()->Get(o)));
  }
  auto g = std::make_shared<FlatGraph>();
  // Whatever aliases the plan's bytes keeps the plan (and its mapping) alive.
  GraphDecoder decoder(*root_, Owner(), file_ != nullptr && file_->mapped(), g.get());
  const std::string fname = iface->name;
  g->nodes.reserve(SizeOf(f.nodes()));
  for (size_t v = 0; v < SizeOf(f.nodes()); ++v) {
    const kp::Node& pn = *f.nodes()->Get(v);
    FlatNode n;
    n.name = pn.name()->str();
    n.op = pn.op()->str();
    n.arg_index = pn.arg_index();
    if (pn.constant() >= 0) {
      KILN_ASSIGN_OR_RETURN_CTX(n.value, decoder.Constant(pn.constant()), "plan function '", fname,
                                "', node '", n.name, "'");
    } else if (pn.attrs() != nullptr) {
      KILN_ASSIGN_OR_RETURN_CTX(NativeAttrMap attrs, decoder.Attrs(pn.attrs()), "plan function '",
                                fname, "', node '", n.name, "'");
      g->owned_native_attrs.push_back(std::move(attrs));
      n.native_attrs = &g->owned_native_attrs.back();
    }
    for (size_t i = 0; i < SizeOf(pn.inputs()); ++i)
      n.inputs.push_back(Edge{pn.inputs()->Get(i)->node(), pn.inputs()->Get(i)->output()});
    for (size_t i = 0; i < SizeOf(pn.control_inputs()); ++i)
      n.control_inputs.push_back(pn.control_inputs()->Get(i));
    if (n.op != "_Arg" && !n.IsInliningSink()) {
      n.def = FindOp(n.op);
      n.stateful = n.def == nullptr || (n.def->flags & kOpStateful) != 0;
    }
    g->nodes.push_back(std::move(n));
  }
  for (size_t o = 0; o < SizeOf(f.outputs()); ++o)
    g->outputs.push_back(Edge{f.outputs()->Get(o)->node(), f.outputs()->Get(o)->output()});
  for (size_t k = 0; k < SizeOf(f.keep()); ++k) g->keep.push_back(f.keep()->Get(k));
  return PlanGraph{std::move(g), std::move(iface)};
}

}  // namespace kiln::exec
