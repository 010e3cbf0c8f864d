// The TF1 load: Session-style signatures over the main graph, after its restore and init ops.
#include <algorithm>
#include <filesystem>

#include "kiln/core/proto_convert.h"
#include "loader/loader_common.h"
#include "loader/saved_model_loader.h"
#include "loader/tf1_graph.h"
#include "tensorflow/framework.pb.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace {

// A TF1 signature may name a ref tensor (DT_FLOAT_REF = DT_FLOAT + 100): its value is fetched.
tensorflow::DataType ValueType(tensorflow::DataType t) {
  return t > 100 ? static_cast<tensorflow::DataType>(t - 100) : t;
}

std::vector<TensorSpec> StringScalarSpecs(size_t n) {
  return std::vector<TensorSpec>(n, TensorSpec{DType::kString, PartialShape::Scalar()});
}

// Keeps the functions a TF1 graph's loops and conditionals became, and adds them to the library.
void Adopt(std::vector<std::unique_ptr<tensorflow::FunctionDef>>* helpers,
           std::vector<std::unique_ptr<tensorflow::FunctionDef>>* owner, FunctionLibrary* library) {
  for (auto& f : *helpers) {
    library->Add(*f);
    owner->push_back(std::move(f));
  }
  helpers->clear();
}

// Why a signature cannot be served (its first tensor that is not a dense tensor's name), or "".
std::string SparseTensorInfo(const std::string& key, const tensorflow::SignatureDef& sd,
                             const std::filesystem::path& dir) {
  auto check = [&](const auto& map, const char* side) -> std::string {
    for (const auto& [k, ti] : map) {
      if (ti.encoding_case() == tensorflow::TensorInfo::kName) continue;
      const char* kind = ti.encoding_case() == tensorflow::TensorInfo::kCooSparse
                             ? "a sparse (coo_sparse)"
                             : "a composite";
      return "signature '" + key + "' of '" + dir.string() + "': " + side + " '" + k + "' is " +
             kind + " tensor; kiln serves signatures of dense tensors (TF Serving cannot " +
             "feed this one either); the model's other signatures are served";
    }
    return {};
  };
  std::string why = check(sd.inputs(), "input");
  return why.empty() ? check(sd.outputs(), "output") : why;
}

}  // namespace

PartialShape SavedModelLoader::Tf1FedShape(const std::string& tensor_name) const {
  const std::string node = NodeOfTensor(tensor_name);
  const size_t colon = tensor_name.rfind(':');
  if (colon != std::string::npos && tensor_name.substr(colon + 1) != "0")
    return PartialShape::UnknownRank();
  for (const auto& n : main_graph_->node()) {
    if (n.name() != node) continue;
    if (n.op() != "Placeholder" && n.op() != "PlaceholderWithDefault")
      return PartialShape::UnknownRank();
    auto attr = n.attr().find("shape");
    if (attr == n.attr().end() || !attr->second.has_shape()) return PartialShape::UnknownRank();
    const auto& proto = attr->second.shape();
    // Up to GraphDef version 21 a Placeholder's scalar shape meant "unknown" (TF's rule).
    if (n.op() == "Placeholder" && main_graph_->versions().producer() <= 21 &&
        !proto.unknown_rank() && proto.dim_size() == 0)
      return PartialShape::UnknownRank();
    auto shape = PartialShapeFromProto(proto);
    return shape.ok() ? *shape : PartialShape::UnknownRank();
  }
  return PartialShape::UnknownRank();
}

Status SavedModelLoader::BuildTf1Signature(const std::string& key,
                                           const tensorflow::SignatureDef& sd,
                                           Signature::Parts* sig,
                                           std::unique_ptr<tensorflow::FunctionDef>* fdef,
                                           std::vector<TensorSpec>* arg_specs) {
  const std::string where = "signature '" + key + "'";
  sig->name = key;
  std::vector<std::string> in_keys;
  for (const auto& [k, ti] : sd.inputs()) in_keys.push_back(k);
  std::sort(in_keys.begin(), in_keys.end());
  std::vector<Tf1Feed> feeds;
  for (const std::string& k : in_keys) {
    const auto& ti = sd.inputs().at(k);
    SignatureArg a;
    a.key = k;
    a.tensor_name = ti.name();
    KILN_ASSIGN_OR_RETURN_CTX(a.spec.dtype, DTypeFromProto(ValueType(ti.dtype())), where,
                              " input '", k, "'");
    KILN_ASSIGN_OR_RETURN_CTX(a.spec.shape, PartialShapeFromProto(ti.tensor_shape()), where,
                              " input '", k, "'");
    sig->input_to_arg.push_back(static_cast<int>(sig->inputs.size()));
    const PartialShape fed = Tf1FedShape(ti.name());
    sig->fed_shapes.push_back(fed);
    sig->inputs.push_back(a);
    arg_specs->push_back(TensorSpec{a.spec.dtype, fed});
    feeds.push_back({ti.name(), ValueType(ti.dtype())});
  }
  std::vector<std::string> out_keys;
  for (const auto& [k, ti] : sd.outputs()) out_keys.push_back(k);
  std::sort(out_keys.begin(), out_keys.end());
  std::vector<std::pair<std::string, tensorflow::DataType>> fetches;
  for (size_t i = 0; i < out_keys.size(); ++i) {
    const auto& ti = sd.outputs().at(out_keys[i]);
    SignatureArg o;
    o.key = out_keys[i];
    o.tensor_name = ti.name();
    KILN_ASSIGN_OR_RETURN_CTX(o.spec.dtype, DTypeFromProto(ValueType(ti.dtype())), where,
                              " output '", o.key, "'");
    KILN_ASSIGN_OR_RETURN_CTX(o.spec.shape, PartialShapeFromProto(ti.tensor_shape()), where,
                              " output '", o.key, "'");
    sig->outputs.push_back(o);
    sig->output_from_ret.push_back(static_cast<int>(i));
    fetches.emplace_back(ti.name(), ValueType(ti.dtype()));
  }
  std::vector<std::unique_ptr<tensorflow::FunctionDef>> helpers;
  KILN_ASSIGN_OR_RETURN_CTX(
      *fdef, Tf1Function(*main_graph_, "__tf1_signature_" + key, feeds, fetches, {}, &helpers),
      "loading ", where, " of TF1-style SavedModel '", dir_.string(), "'");
  Adopt(&helpers, &Access::synthesized(*model_), core().library.get());
  return OkStatus();
}

Status SavedModelLoader::RunTf1Target(const tensorflow::FunctionDef& fdef,
                                      const std::vector<std::string>& values,
                                      const std::string& what) {
  PrepareOptions popts;
  popts.resources = core().resources.get();
  popts.devices = devices_;
  popts.keep_stateful = false;
  KILN_ASSIGN_OR_RETURN_CTX(
      auto fn,
      PreparedFunction::Prepare(fdef, *core().library, StringScalarSpecs(values.size()), popts),
      "loading ", what, " of TF1-style SavedModel '", dir_.string(), "'");
  std::vector<Tensor> args;
  for (const std::string& v : values) args.push_back(Tensor::StringScalar(v));
  std::vector<Tensor> outs;
  RunOptions run;
  run.threads = core().threads.get();
  KILN_RETURN_IF_ERROR_CTX(fn->Run(args, &outs, run), "running ", what, " of '", dir_.string(),
                           "'");
  return OkStatus();
}

Status SavedModelLoader::LoadTf1() {
  const auto& mg = meta_graph();
  KILN_RETURN_IF_ERROR(CheckRequestedSignatures());
  std::vector<FunctionToCheck> checks;
  KILN_ASSIGN_OR_RETURN(const auto assets, Tf1AssetFeeds(mg, dir_));
  std::vector<Tf1Feed> asset_feeds;
  std::vector<std::string> asset_values;
  for (const auto& [tensor, path] : assets) {
    asset_feeds.push_back({tensor, tensorflow::DT_STRING});
    asset_values.push_back(path);
  }

  const auto& saver = mg.saver_def();
  const std::string variables = (dir_ / "variables" / "variables").string();
  std::vector<std::unique_ptr<tensorflow::FunctionDef>> helpers;
  std::unique_ptr<tensorflow::FunctionDef> restore;
  if (!saver.restore_op_name().empty() && !saver.filename_tensor_name().empty() &&
      std::filesystem::exists(variables + ".index")) {
    std::vector<Tf1Feed> feeds = {{saver.filename_tensor_name(), tensorflow::DT_STRING}};
    feeds.insert(feeds.end(), asset_feeds.begin(), asset_feeds.end());
    KILN_ASSIGN_OR_RETURN_CTX(
        restore,
        Tf1Function(*main_graph_, "__tf1_restore", feeds, {}, {saver.restore_op_name()}, &helpers),
        "the saver's restore op of '", dir_.string(), "'");
    checks.push_back(
        {"the restore op '" + saver.restore_op_name() + "'", restore.get(), false, true});
  }
  KILN_ASSIGN_OR_RETURN_CTX(std::string init_name, Tf1InitOpName(mg), "'", dir_.string(), "'");
  std::unique_ptr<tensorflow::FunctionDef> init;
  if (!init_name.empty()) {
    KILN_ASSIGN_OR_RETURN_CTX(
        init, Tf1Function(*main_graph_, "__tf1_init", asset_feeds, {}, {init_name}, &helpers),
        "the init op of '", dir_.string(), "'");
    checks.push_back({"the init op '" + init_name + "'", init.get(), false, true});
  }

  Adopt(&helpers, &Access::synthesized(*model_), core().library.get());

  struct Pending {
    Signature::Parts sig;
    std::unique_ptr<tensorflow::FunctionDef> fdef;
    std::vector<TensorSpec> arg_specs;
  };
  std::vector<Pending> pending;
  std::vector<std::string> keys;
  for (const auto& [key, sd] : mg.signature_def())
    if ((!sd.inputs().empty() || !sd.outputs().empty()) && key != "__saved_model_init_op" &&
        WantsSignature(options_, key))
      keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  for (const std::string& key : keys) {
    const tensorflow::SignatureDef& sd = mg.signature_def().at(key);
    // A signature of sparse or composite tensors (a TF1 coo_sparse TensorInfo): TF Serving
    // cannot feed it either; the model serves its other signatures, this one names why not.
    if (std::string why = SparseTensorInfo(key, sd, dir_); !why.empty()) {
      if (!options_.signatures.empty()) return Unimplemented(why);
      core().unavailable_signatures[key] = why;
      continue;
    }
    Pending p;
    KILN_RETURN_IF_ERROR(BuildTf1Signature(key, sd, &p.sig, &p.fdef, &p.arg_specs));
    pending.push_back(std::move(p));
  }
  for (const Pending& p : pending)
    checks.push_back({"signature '" + p.sig.name + "'", p.fdef.get(), false, true});
  KILN_RETURN_IF_ERROR(RefuseUnsupportedOps(checks));

  if (restore) {
    std::vector<std::string> values = {variables};
    values.insert(values.end(), asset_values.begin(), asset_values.end());
    KILN_RETURN_IF_ERROR(RunTf1Target(*restore, values, "the restore op"));
  }
  if (init) KILN_RETURN_IF_ERROR(RunTf1Target(*init, asset_values, "the init op"));

  for (Pending& p : pending) {
    PrepareOptions popts;
    popts.resources = core().resources.get();
    popts.devices = devices_;
    popts.keep_stateful = false;
    const std::string where = "signature '" + p.sig.name + "'";
    KILN_ASSIGN_OR_RETURN_CTX(p.sig.function, PrepareFunction(*p.fdef, p.arg_specs, popts),
                              "loading ", where, " of TF1-style SavedModel '", dir_.string(), "'");
    Access::synthesized(*model_).push_back(std::move(p.fdef));
    const std::string key = p.sig.name;
    KILN_ASSIGN_OR_RETURN_CTX(Signature made,
                              Signature::Make(std::move(p.sig), core().threads.get()), "loading '",
                              dir_.string(), "'");
    core().signatures.emplace(key, std::move(made));
  }
  return OkStatus();
}

}  // namespace kiln::exec
