// Text output of `show`, following tensorflow/python/tools/saved_model_cli.py (TF 2.21):
// _show_tag_sets, _show_signature_def_map_keys, _show_inputs_outputs, _print_tensor_info,
// _show_ops_in_metagraph, _show_all, _show_defined_functions and _print_args. Comments name
// the Python function each piece mirrors; odd bytes (the "\b\b" after argument lists, the
// trailing space of an empty method name) are TensorFlow's own.
#include <algorithm>
#include <sstream>

#include "kiln/exec/op_coverage.h"
#include "model_info.h"
#include "python_format.h"
#include "shape_text.h"
#include "show.h"
#include "structured_value.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::cli {
namespace {

std::string Indent(int n) { return std::string(2 * static_cast<size_t>(n), ' '); }

// _print_tensor_info
void PrintTensorInfo(const tensorflow::TensorInfo& info, int indent, std::ostream& os) {
  const std::string in = Indent(indent);
  std::string dtype = TfDataTypeEnumName(info.dtype());
  if (dtype.empty()) dtype = "DT_" + std::to_string(info.dtype());  // refused by the reader
  os << in << "    dtype: " << dtype << "\n";
  os << in << "    shape: " << ShapeText(info.tensor_shape(), ShapeStyle::kCli) << "\n";
  os << in << "    name: " << info.name() << "\n";
}

// _show_inputs_outputs
void PrintInputsOutputs(const SignatureFacts& sig, int indent, std::ostream& os) {
  const std::string in = Indent(indent);
  os << in << "The given SavedModel SignatureDef contains the following input(s):\n";
  for (const auto& t : sig.inputs) {
    os << in << "  inputs['" << t.key << "'] tensor_info:\n";
    PrintTensorInfo(*t.proto, indent + 1, os);
  }
  os << in << "The given SavedModel SignatureDef contains the following output(s):\n";
  for (const auto& t : sig.outputs) {
    os << in << "  outputs['" << t.key << "'] tensor_info:\n";
    PrintTensorInfo(*t.proto, indent + 1, os);
  }
  os << in << "Method name is: " << sig.method_name << "\n";
}

// _show_ops_in_metagraph: print('... ops:' % tags, set) puts one space between the two.
void PrintOps(const tensorflow::MetaGraphDef& mg, std::ostream& os) {
  std::vector<std::string> tags(mg.meta_info_def().tags().begin(), mg.meta_info_def().tags().end());
  os << "The MetaGraph with tag set " << PyReprStringList(tags)
     << " contains the following ops: " << PyReprSortedStringSet(OpsUsedByGraphDef(mg.graph_def()))
     << "\n";
}

// kiln's addition to --list_ops: the ops of that MetaGraph this runtime cannot run.
void PrintUnrunnableOps(const tensorflow::MetaGraphDef& mg, std::ostream& os) {
  const std::vector<std::string> ops = exec::UnrunnableOpsInGraph(mg.graph_def());
  if (ops.empty()) {
    os << "kiln can run every op of this MetaGraph.\n";
  } else {
    os << "Ops kiln cannot run: " << PyReprSortedStringSet(ops) << "\n";
  }
  // What a build with only some op families needs (docs/design.md, "Ops and kernels").
  std::string families;
  for (const std::string& f : exec::OpFamiliesOfGraph(mg.graph_def()))
    families += (families.empty() ? "" : ";") + f;
  os << "Op families it uses (KILN_OP_FAMILIES): " << families << "\n";
}

bool PyTruthy(const PyValue& v) {
  using K = PyValue::Kind;
  switch (v.kind) {
    case K::kNone:
    case K::kMissing:
      return false;
    case K::kBool:
      return v.b;
    case K::kInt:
      return v.i != 0;
    case K::kFloat:
      return v.f != 0;
    case K::kString:
      return !v.s.empty();
    case K::kList:
    case K::kTuple:
    case K::kDict:
    case K::kNamedTuple:
      return !v.items.empty();
    case K::kTensorShape:
      return !v.shape.unknown_rank() && v.shape.dim_size() > 0;
    default:
      return true;
  }
}

// What `for element in arguments` yields: a dict gives its keys.
std::vector<PyValue> Elements(const PyValue& arguments) {
  if (!arguments.is(PyValue::Kind::kDict)) return PyIterate(arguments);
  std::vector<PyValue> keys;
  for (const auto& k : arguments.keys) {
    PyValue s;
    s.kind = PyValue::Kind::kString;
    s.s = k;
    keys.push_back(std::move(s));
  }
  return keys;
}

std::string MaybeAddQuotes(const PyValue& v) {
  const std::string q = v.is(PyValue::Kind::kString) ? "'" : "";
  return q + PyStr(v) + q;
}

// _print_args
void PrintArgs(const std::vector<PyValue>& arguments, const std::string& argument_type, int indent,
               std::ostream& os) {
  const std::string in = Indent(indent);
  int index = 0;
  for (const PyValue& element : arguments) {
    ++index;
    if (indent == 4) os << in << argument_type << " #" << index << "\n";
    if (element.is(PyValue::Kind::kString)) {
      os << in << "  " << element.s << "\n";
    } else if (element.is(PyValue::Kind::kTensorSpec)) {
      os << Indent(indent + 1) << (element.has_name ? element.name : "None") << ": "
         << PyRepr(element) << "\n";
    } else if (PyIsNonDictIterable(element)) {
      os << in << "  DType: " << PyTypeName(element) << "\n";
      os << in << "  Value: [";
      for (const PyValue& value : PyIterate(element)) os << MaybeAddQuotes(value) << ", ";
      os << "\b\b]\n";
    } else if (element.is(PyValue::Kind::kDict)) {
      os << in << "  DType: dict\n";
      os << in << "  Value: {";
      for (size_t i = 0; i < element.items.size(); ++i)
        os << "'" << element.keys[i] << "': " << MaybeAddQuotes(element.items[i]) << ", ";
      os << "\b\b}\n";
    } else {
      os << in << "  DType: " << PyTypeName(element) << "\n";
      os << in << "  Value: " << PyStr(element) << "\n";
    }
  }
}

// _show_defined_functions
void PrintDefinedFunctions(const tensorflow::SavedModel& model, std::ostream& os) {
  const tensorflow::MetaGraphDef* mg = ObjectGraphMetaGraph(model);
  if (mg == nullptr) return;
  os << "\nConcrete Functions:";
  for (const FunctionFacts& fn : RootFunctions(mg->object_graph_def())) {
    os << "\n  Function Name: '" << fn.name << "'\n";
    int index = 0;
    for (const ConcreteFunctionFacts& cf : fn.concrete_functions) {
      ++index;
      std::optional<PyValue> args, kwargs;
      if (cf.args) {
        args = cf.args;
        kwargs = cf.kwargs;
      } else if (!cf.arg_keywords.empty()) {
        PyValue list;
        list.kind = PyValue::Kind::kList;
        for (const auto& k : cf.arg_keywords) {
          PyValue s;
          s.kind = PyValue::Kind::kString;
          s.s = k;
          list.items.push_back(std::move(s));
        }
        args = std::move(list);
      }
      if (args && PyTruthy(*args)) {
        os << "    Option #" << index << "\n";
        os << "      Callable with:\n";
        PrintArgs(Elements(*args), "Argument", 4, os);
      }
      if (kwargs && PyTruthy(*kwargs)) PrintArgs(Elements(*kwargs), "Named Argument", 4, os);
    }
  }
}

std::string JoinTags(const std::vector<std::string>& tags, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < tags.size(); ++i) s += (i ? sep : "") + tags[i];
  return s;
}

// _show_all
Status PrintAll(const tensorflow::SavedModel& model, std::ostream& os) {
  for (const MetaGraphFacts& facts : SortedMetaGraphs(model)) {
    os << "\nMetaGraphDef with tag-set: '" << JoinTags(facts.tags, ", ")
       << "' contains the following SignatureDefs:\n";
    // Like TF, look the meta graph up again by its tag set (the first one with these tags).
    KILN_ASSIGN_OR_RETURN(const tensorflow::MetaGraphDef* mg,
                          FindMetaGraph(model, JoinTags(facts.tags, ",")));
    for (const std::string& key : SortedSignatureKeys(*mg)) {
      os << "\nsignature_def['" << key << "']:\n";
      KILN_ASSIGN_OR_RETURN(SignatureFacts sig, GetSignature(*mg, key));
      PrintInputsOutputs(sig, 1, os);
    }
    PrintOps(*mg, os);
  }
  PrintDefinedFunctions(model, os);
  return OkStatus();
}

}  // namespace

Status ShowText(const tensorflow::SavedModel& model, const ShowOptions& options,
                std::ostream& out) {
  std::ostringstream os;
  if (options.all) {
    KILN_RETURN_IF_ERROR(PrintAll(model, os));
  } else if (!options.tag_set && options.list_ops) {
    // kiln: every MetaGraph's ops, marking those this runtime cannot run (TF only says that
    // --list_ops needs a tag-set).
    for (const MetaGraphFacts& facts : SortedMetaGraphs(model)) {
      PrintOps(*facts.proto, os);
      PrintUnrunnableOps(*facts.proto, os);
    }
  } else if (!options.tag_set) {
    // _show_tag_sets
    os << "The given SavedModel contains the following tag-sets:\n";
    for (MetaGraphFacts& facts : SortedMetaGraphs(model)) {
      std::sort(facts.tags.begin(), facts.tags.end());
      os << PyReprString(JoinTags(facts.tags, ", ")) << "\n";
    }
  } else {
    KILN_ASSIGN_OR_RETURN(const tensorflow::MetaGraphDef* mg,
                          FindMetaGraph(model, *options.tag_set));
    if (options.list_ops) {
      PrintOps(*mg, os);
      PrintUnrunnableOps(*mg, os);
    }
    if (!options.signature_def) {
      // _show_signature_def_map_keys
      os << "The given SavedModel MetaGraphDef contains SignatureDefs with the following keys:\n";
      for (const std::string& key : SortedSignatureKeys(*mg))
        os << "SignatureDef key: \"" << key << "\"\n";
    } else {
      KILN_ASSIGN_OR_RETURN(SignatureFacts sig, GetSignature(*mg, *options.signature_def));
      PrintInputsOutputs(sig, 0, os);
    }
  }
  out << os.str();
  return OkStatus();
}

}  // namespace kiln::cli
