// savedmodel-cli quantize's library half: picks the float32 variables to store narrower,
// encodes them, rewrites the meta graph (quantize/variable_uses.h) and writes the new bundle.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <set>

#include "kiln/core/file_util.h"
#include "kiln/exec/quantize.h"
#include "kiln/exec/saved_model.h"
#include "kiln/exec/serving_plan.h"
#include "kiln/exec/tensor_bundle.h"
#include "loader/loader_common.h"
#include "loader/object_graph.h"
#include "quantize/activations.h"
#include "quantize/variable_uses.h"
#include "quantize/weight_codec.h"

namespace kiln::exec {
namespace fs = std::filesystem;
namespace {

std::string SerializeDeterministic(const google::protobuf::MessageLite& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return out;
}

uint64_t BundleBytes(const fs::path& dir) {
  std::error_code ec;
  uint64_t total = 0;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code fec;
    if (it->is_regular_file(fec) && !it->is_symlink(fec)) total += it->file_size(fec);
  }
  return total;
}

// Files of the input bundle that the output does not copy: those it writes itself, the
// fingerprint (of the input's files) and the serving plan (of the input's graph).
bool Rewritten(const fs::path& rel) {
  const std::string s = rel.generic_string();
  return s == "saved_model.pb" || s == "saved_model.pbtxt" || s == "fingerprint.pb" ||
         s == kPlanPath || s.rfind("variables/variables.", 0) == 0;
}

Status CopyOtherFiles(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path rel = fs::relative(it->path(), from);
    if (it->is_directory()) {
      fs::create_directories(to / rel, ec);
    } else if (it->is_regular_file() && !Rewritten(rel)) {
      fs::create_directories((to / rel).parent_path(), ec);
      if (!ec) fs::copy_file(it->path(), to / rel, ec);
    }
    if (ec) return PermissionDenied("copying '", it->path().string(), "': ", ec.message());
  }
  if (ec) return NotFound("cannot list '", from.string(), "': ", ec.message());
  return OkStatus();
}

DType StoredType(QuantizeMode mode) {
  switch (mode) {
    case QuantizeMode::kWeightsInt8:
    case QuantizeMode::kInt8:
      return DType::kInt8;
    case QuantizeMode::kFloat16:
      return DType::kHalf;
    case QuantizeMode::kBFloat16:
      return DType::kBFloat16;
  }
  return DType::kInvalid;
}

// A float32 variable with a value: what tracing found, and what is decided for it.
struct Candidate {
  QuantizedVariable v;
  std::vector<int> object_ids;  // its object nodes (one per checkpoint key)
  Tensor value;
  quantize::VariableUses uses;
  int group = -1;  // candidates whose reads are shared are quantized together, or not at all
};

// The sites a variable's rewrite touches, as keys two variables share when some function
// reads both (a TF2 capture and the TF1 main graph's handle feeding the same argument).
std::vector<std::string> SiteKeys(const quantize::VariableUses& uses) {
  std::vector<std::string> keys;
  for (const auto& r : uses.reads)
    keys.push_back("r" + std::to_string(r.scope) + "/" + std::to_string(r.node));
  for (const auto& e : uses.edits)
    keys.push_back("e" + std::to_string(e.scope) + "/" + std::to_string(e.node) + "/" + e.attr +
                   "/" + std::to_string(e.index));
  return keys;
}

int Find(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

// The union of the uses of a group: each edit and each read once.
quantize::VariableUses Merge(const std::vector<const quantize::VariableUses*>& all) {
  quantize::VariableUses merged;
  std::set<std::string> seen;
  for (const auto* u : all) {
    for (const auto& e : u->edits)
      if (seen.insert("e" + std::to_string(e.scope) + "/" + std::to_string(e.node) + "/" + e.attr +
                      "/" + std::to_string(e.index))
              .second)
        merged.edits.push_back(e);
    for (const auto& r : u->reads)
      if (seen.insert("r" + std::to_string(r.scope) + "/" + std::to_string(r.node)).second)
        merged.reads.push_back(r);
    for (const auto& i : u->initializers)
      if (seen.insert("i" + std::to_string(i.first) + "/" + std::to_string(i.second)).second)
        merged.initializers.push_back(i);
  }
  return merged;
}

bool SameValue(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.ByteSize() == b.ByteSize() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.ByteSize()) == 0;
}

}  // namespace

Result<QuantizeMode> QuantizeModeFromName(std::string_view name) {
  if (name == "weights_int8") return QuantizeMode::kWeightsInt8;
  if (name == "float16") return QuantizeMode::kFloat16;
  if (name == "bfloat16") return QuantizeMode::kBFloat16;
  if (name == "int8") return QuantizeMode::kInt8;
  return InvalidArgument("unknown quantization mode '", name,
                         "'; expected int8, weights_int8, float16 or bfloat16");
}

std::string QuantizeModeName(QuantizeMode mode) {
  switch (mode) {
    case QuantizeMode::kWeightsInt8:
      return "weights_int8";
    case QuantizeMode::kFloat16:
      return "float16";
    case QuantizeMode::kBFloat16:
      return "bfloat16";
    case QuantizeMode::kInt8:
      return "int8";
  }
  return "?";
}

int QuantizeReport::quantized_count() const {
  return static_cast<int>(std::count_if(variables.begin(), variables.end(),
                                        [](const auto& v) { return v.kept_because.empty(); }));
}

Result<QuantizeReport> QuantizeSavedModel(const fs::path& input, const fs::path& output,
                                          const QuantizeOptions& options) {
  std::error_code ec;
  if (fs::exists(output, ec) && fs::equivalent(input, output, ec))
    return InvalidArgument("--output_dir '", output.string(), "' is the input bundle; ",
                           "quantize writes a new bundle and never modifies its input");
  // Nested either way: the copy of the input would hold itself, or replacing the output would
  // take the input with it.
  const fs::path in_abs = fs::weakly_canonical(fs::absolute(input, ec), ec);
  const fs::path out_abs = fs::weakly_canonical(fs::absolute(output, ec), ec);
  const auto inside = [](const fs::path& dir, const fs::path& p) {
    const auto [d, q] = std::mismatch(dir.begin(), dir.end(), p.begin(), p.end());
    return d == dir.end() || (std::next(d) == dir.end() && d->empty());
  };
  if (!in_abs.empty() && !out_abs.empty() && inside(in_abs, out_abs))
    return InvalidArgument("--output_dir '", output.string(), "' is inside the input bundle '",
                           input.string(), "'; choose a directory outside it");
  if (!in_abs.empty() && !out_abs.empty() && inside(out_abs, in_abs))
    return InvalidArgument("--output_dir '", output.string(), "' holds the input bundle '",
                           input.string(), "'; replacing it would delete the input");
  if (fs::exists(output, ec) && !options.overwrite)
    return AlreadyExists("'", output.string(), "' exists; pass --overwrite to replace it");
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<tensorflow::SavedModel> proto, ReadSavedModelProto(input));
  tensorflow::MetaGraphDef* mg = nullptr;
  int mg_index = -1;
  for (int i = 0; i < proto->meta_graphs_size(); ++i)
    if (&proto->meta_graphs(i) == FindMetaGraph(*proto, options.tags)) {
      mg = proto->mutable_meta_graphs(i);
      mg_index = i;
    }
  if (mg == nullptr)
    return NotFound(
        "'", input.string(), "' has no MetaGraphDef with tag-set '",
        [&] {
          std::string t;
          for (const auto& s : options.tags) t += (t.empty() ? "" : ",") + s;
          return t;
        }(),
        "'");
  if (!mg->has_object_graph_def() || mg->object_graph_def().nodes_size() == 0)
    return Unimplemented("'", input.string(),
                         "' is a TF1 SavedModel (no object graph); quantize rewrites TF2 bundles "
                         "(tf.saved_model.save, Keras model.export, kiln's own)");
  // int8 calibrates on the float model: a copy before any rewrite.
  std::unique_ptr<tensorflow::SavedModel> float_proto;
  if (options.mode == QuantizeMode::kInt8)
    float_proto = std::make_unique<tensorflow::SavedModel>(*proto);
  const fs::path prefix = input / "variables" / "variables";
  KILN_ASSIGN_OR_RETURN_CTX(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix),
                            "quantizing '", input.string(), "'");
  KILN_ASSIGN_OR_RETURN(Tensor graph_str, reader->Read(kObjectGraphKey));
  tensorflow::TrackableObjectGraph ckpt;
  if (graph_str.dtype() != DType::kString || graph_str.NumElements() != 1 ||
      !ckpt.ParseFromString(graph_str.scalar<std::string>()))
    return DataLoss("checkpoint entry ", kObjectGraphKey, " of '", input.string(),
                    "' is not a TrackableObjectGraph");
  tensorflow::SavedObjectGraph* og = mg->mutable_object_graph_def();
  const std::vector<int> to_ckpt = MatchCheckpointNodes(*og, ckpt);
  const std::vector<std::string> paths = ObjectPaths(*og);

  quantize::MetaGraphUses graph(mg);
  const std::map<std::string, quantize::Location> restored = graph.RestoredHandles();
  // Each variable's handle as the captured argument of every concrete function.
  std::map<int, std::vector<quantize::Location>> roots;
  for (const auto& [name, cf] : og->concrete_functions()) {
    KILN_ASSIGN_OR_RETURN(std::vector<quantize::Location> args,
                          graph.CaptureArgs(name, cf.bound_inputs_size()));
    for (int i = 0; i < cf.bound_inputs_size(); ++i) roots[cf.bound_inputs(i)].push_back(args[i]);
  }

  QuantizeReport report;
  report.mode = options.mode;
  report.output = output;
  const DType stored = StoredType(options.mode);
  // The object nodes of each checkpoint key (a node the checkpoint does not hold has none).
  std::map<std::string, std::vector<int>> nodes_of_key;
  for (int id = 0; id < og->nodes_size(); ++id) {
    if (!og->nodes(id).has_variable() || to_ckpt[id] < 0) continue;
    for (const auto& attr : ckpt.nodes(to_ckpt[id]).attributes())
      if (attr.name() == "VARIABLE_VALUE") nodes_of_key[attr.checkpoint_key()].push_back(id);
  }

  // 1. Every float32 variable with a value, traced; its own reason to stay float32, if any.
  std::vector<Candidate> cands;
  std::set<std::string> excluded_matched;
  for (int id = 0; id < og->nodes_size(); ++id) {
    const tensorflow::SavedObject& obj = og->nodes(id);
    if (!obj.has_variable() || obj.variable().dtype() != DTypeToProto(DType::kFloat)) continue;
    Candidate c;
    c.v.path = paths[id];
    c.v.name = obj.variable().name();
    const int cid = to_ckpt[id];
    if (cid >= 0)
      for (const auto& attr : ckpt.nodes(cid).attributes())
        if (attr.name() == "VARIABLE_VALUE") c.v.checkpoint_key = attr.checkpoint_key();
    if (c.v.checkpoint_key.empty() || !reader->Contains(c.v.checkpoint_key)) {
      c.v.kept_because = "it has no value in the checkpoint";
      report.variables.push_back(c.v);
      continue;
    }
    c.object_ids = nodes_of_key[c.v.checkpoint_key];
    if (c.object_ids.front() != id) continue;  // listed with its first node
    KILN_ASSIGN_OR_RETURN_CTX(c.value, reader->Read(c.v.checkpoint_key), "reading variable '",
                              c.v.path, "'");
    c.v.shape = c.value.shape();
    std::vector<quantize::Location> r;
    for (int other : c.object_ids) r.insert(r.end(), roots[other].begin(), roots[other].end());
    if (auto it = restored.find(c.v.checkpoint_key); it != restored.end()) r.push_back(it->second);
    c.uses = graph.Trace(r, c.value.rank());
    // int8 stores what products and convolutions read, whatever its size.
    const bool int8 = options.mode == QuantizeMode::kInt8;
    if (!int8 && c.value.NumElements() < options.min_elements) {
      c.v.kept_because = std::to_string(c.value.NumElements()) +
                         " elements, under --min_elements " + std::to_string(options.min_elements);
    } else if (!c.uses.problem.empty()) {
      c.v.kept_because = c.uses.problem;
    } else if (int8 && graph.ActivationSites(c.uses).empty()) {
      const bool product =
          std::any_of(c.uses.consumers.begin(), c.uses.consumers.end(), [](const std::string& op) {
            return op == "MatMul" || op.starts_with("BatchMatMul") || op.starts_with("Conv") ||
                   op.starts_with("DepthwiseConv") || op == "Einsum";
          });
      c.v.kept_because =
          product ? "int8 cannot quantize the input of the products that compute with it (they "
                    "read it through a loop's or function's arguments, as tf.keras's LSTM "
                    "does); --mode weights_int8 stores it as int8"
                  : "no float32 matrix product or convolution computes with it (int8 stores "
                    "those weights; biases and normalization parameters stay float32)";
    }
    for (const std::string& x : options.exclude) {
      if (x != c.v.path && x != c.v.name &&
          std::find(c.uses.consumers.begin(), c.uses.consumers.end(), x) == c.uses.consumers.end())
        continue;
      excluded_matched.insert(x);
      if (c.v.kept_because.empty()) c.v.kept_because = "excluded (--exclude " + x + ")";
    }
    cands.push_back(std::move(c));
  }
  for (const std::string& x : options.exclude)
    if (excluded_matched.count(x) == 0)
      return InvalidArgument("--exclude '", x,
                             "' matches no float32 variable (object path or name) and no op "
                             "type or node name that computes with one");

  // 2. Groups of variables that share reads: each group is quantized as one, or stays float32.
  std::vector<int> parent(cands.size());
  for (size_t i = 0; i < cands.size(); ++i) parent[i] = static_cast<int>(i);
  std::map<std::string, int> site_owner;
  for (size_t i = 0; i < cands.size(); ++i)
    for (const std::string& key : SiteKeys(cands[i].uses)) {
      auto [it, fresh] = site_owner.emplace(key, static_cast<int>(i));
      if (!fresh) parent[Find(parent, static_cast<int>(i))] = Find(parent, it->second);
    }
  std::map<int, std::vector<int>> groups;
  for (size_t i = 0; i < cands.size(); ++i)
    groups[Find(parent, static_cast<int>(i))].push_back(static_cast<int>(i));

  // 3. Encode each group that can be quantized once, and rewrite the graph for it.
  std::map<std::string, Tensor> replaced;  // checkpoint key -> stored value
  std::vector<quantize::VariableUses> applied;
  for (const auto& [root, members] : groups) {
    std::string why;
    for (int m : members) {
      const Candidate& c = cands[m];
      if (why.empty() && !c.v.kept_because.empty())
        why = "it shares its reads with '" + c.v.path + "', which stays float32";
      else if (why.empty() && !SameValue(c.value, cands[members.front()].value))
        why = "it shares its reads with '" + c.v.path + "', which holds other values";
    }
    Candidate& lead = cands[members.front()];
    Result<quantize::EncodedWeight> encoded = InvalidArgument("not encoded");
    int axis = -1;
    if (why.empty()) {
      if (stored == DType::kInt8) {
        axis = options.per_channel && lead.value.rank() >= 2
                   ? (lead.uses.channel_axis >= 0 ? lead.uses.channel_axis : lead.value.rank() - 1)
                   : -1;
        encoded = quantize::EncodeInt8(lead.value, axis);
      } else {
        encoded = quantize::EncodeHalf(lead.value, stored);
      }
      if (!encoded.ok()) why = std::string(encoded.status().message());
    }
    if (!why.empty()) {
      for (int m : members) {
        Candidate& c = cands[m];
        if (c.v.kept_because.empty()) c.v.kept_because = why;
        report.variables.push_back(c.v);
      }
      continue;
    }
    std::vector<const quantize::VariableUses*> all;
    for (int m : members) all.push_back(&cands[m].uses);
    applied.push_back(Merge(all));
    KILN_RETURN_IF_ERROR_CTX(graph.Apply(applied.back(), stored, encoded->scale),
                             "rewriting variable '", lead.v.path, "'");
    for (int m : members) {
      Candidate& c = cands[m];
      c.v.stored = stored;
      c.v.axis = axis;
      c.v.min_scale = encoded->min_scale;
      c.v.max_scale = encoded->max_scale;
      c.v.relative_error = encoded->relative_error;
      c.v.max_abs_error = encoded->max_abs_error;
      for (int id : c.object_ids)
        og->mutable_nodes(id)->mutable_variable()->set_dtype(
            static_cast<tensorflow::DataType>(DTypeToProto(stored)));
      replaced[c.v.checkpoint_key] = encoded->stored;
      report.variables.push_back(c.v);
    }
  }
  KILN_RETURN_IF_ERROR(graph.ApplyInitializers());
  if (replaced.empty()) {
    std::string why;
    for (const auto& v : report.variables)
      why += "\n  " + (v.path.empty() ? v.checkpoint_key : v.path) + ": " + v.kept_because;
    return FailedPrecondition("'", input.string(), "' has no variable to quantize",
                              report.variables.empty() ? " (no float32 variables)" : ":", why);
  }
  if (options.mode == QuantizeMode::kInt8)
    KILN_RETURN_IF_ERROR(quantize::QuantizeActivations(input, *float_proto, mg_index, &graph,
                                                       applied, options, &report.activations));
  const std::string pb = SerializeDeterministic(*proto);
  if (pb.size() >= (size_t{1} << 31))
    return FailedPrecondition("saved_model.pb would be ", pb.size(),
                              " bytes; protobuf cannot hold 2 GiB or more");
  report.input_bytes = BundleBytes(input);
  std::sort(report.variables.begin(), report.variables.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  if (options.dry_run) return report;
  KILN_RETURN_IF_ERROR(WriteDirectoryAtomically(
      output,
      [&](const fs::path& tmp) -> Status {
        KILN_RETURN_IF_ERROR(CopyOtherFiles(input, tmp));
        std::error_code dec;
        fs::create_directories(tmp / "variables", dec);
        if (dec)
          return PermissionDenied("cannot create '", (tmp / "variables").string(),
                                  "': ", dec.message());
        // Keras's model.export holds each variable twice; the output stores equal values once.
        BundleWriteOptions write_options;
        write_options.share_equal_entries = true;
        BundleWriter writer(tmp / "variables" / "variables", write_options);
        for (const std::string& key : reader->Keys()) {
          auto it = replaced.find(key);
          if (it != replaced.end()) {
            KILN_RETURN_IF_ERROR(writer.Add(key, it->second));
            continue;
          }
          KILN_ASSIGN_OR_RETURN_CTX(Tensor t, reader->Read(key), "copying checkpoint entry '", key,
                                    "'");
          KILN_RETURN_IF_ERROR(writer.Add(key, t));
        }
        KILN_RETURN_IF_ERROR(writer.Finish());
        return WriteStringToFile(tmp / "saved_model.pb", pb);
      },
      kSavedModelOwnedPaths));
  report.output_bytes = BundleBytes(output);
  return report;
}

}  // namespace kiln::exec
