#include "run.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <system_error>

#include "commands.h"
#include "feed_convert.h"
#include "input_exprs.h"
#include "kiln/core/file_util.h"
#include "kiln/core/npy.h"
#include "kiln/exec/saved_model.h"
#include "numpy_format.h"
#include "output_files.h"

namespace kiln::cli {
namespace fs = std::filesystem;

namespace {

// A header whose shape cannot feed `key` is refused before its data is read (or inflated):
// with the message the signature would give once the array is decoded.
Status CheckHeaderShape(const NpyHeader& header, const exec::Signature& sig,
                        const std::string& key) {
  const exec::Signature::Parts& parts = sig.parts();
  for (size_t i = 0; i < parts.inputs.size(); ++i) {
    if (parts.inputs[i].key != key) continue;
    const PartialShape& want =
        parts.fed_shapes.empty() ? parts.inputs[i].spec.shape : parts.fed_shapes[i];
    if (!want.IsCompatibleWith(header.shape))
      return InvalidArgument(
          "signature '", sig.name(), "' input '", key, "': expected shape ", want.ToPythonString(),
          ", got ", header.shape.ToString(),
          want.rank() >= 0 && want.rank() != header.shape.rank()
              ? internal::StrCat(" (rank ", header.shape.rank(), " instead of ", want.rank(), ")")
              : "",
          "; the array's header says so: its data was not read");
  }
  return OkStatus();
}

// Like numpy.load: the file's magic says .npz (a zip) or .npy, whatever its name. Of an .npz
// only the array used is inflated, and only once its header fits the signature.
Result<Tensor> LoadInputFile(const InputFileSpec& spec, const exec::Signature& sig,
                             std::ostream& err) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(spec.filename));
  if (bytes.rfind("PK\x03\x04", 0) == 0) {
    KILN_ASSIGN_OR_RETURN(NpzReader npz, NpzReader::Open(bytes, spec.filename));
    std::string name;
    if (spec.variable) {
      if (!npz.Contains(*spec.variable)) {
        std::string names;
        for (const std::string& k : npz.keys()) names += (names.empty() ? "" : ", ") + k;
        return NotFound("input file ", spec.filename, " does not contain variable with name \"",
                        *spec.variable, "\" (it has: ", names, ")");
      }
      name = *spec.variable;
    } else if (npz.keys().size() != 1) {
      return InvalidArgument("input file ", spec.filename, " contains ", npz.keys().size(),
                             " ndarrays; name the one to use as ", spec.filename, "[<name>]");
    } else {
      name = npz.keys().front();
    }
    KILN_ASSIGN_OR_RETURN(NpyHeader header, npz.Header(name));
    KILN_RETURN_IF_ERROR(CheckHeaderShape(header, sig, spec.key));
    return npz.Read(name);
  }
  if (spec.variable)
    err << "WARNING: Input file " << spec.filename << " contains a single ndarray. Name key \""
        << *spec.variable << "\" ignored.\n";
  KILN_ASSIGN_OR_RETURN(NpyHeader header, ParseNpyHeader(bytes, spec.filename));
  KILN_RETURN_IF_ERROR(CheckHeaderShape(header, sig, spec.key));
  return ParseNpy(bytes, spec.filename);
}

}  // namespace

Result<std::vector<InputFileSpec>> ParseInputsArg(std::string_view arg) {
  static const std::regex with_name(R"(([^=]+)=([^\[\]]+)\[([^\[\]]+)\])");
  static const std::regex plain(R"(([^=]+)=([^\[\]]+))");
  std::vector<InputFileSpec> out;
  size_t start = 0;
  while (start <= arg.size()) {
    size_t end = arg.find(';', start);
    if (end == std::string_view::npos) end = arg.size();
    const std::string piece(arg.substr(start, end - start));
    start = end + 1;
    if (piece.empty()) continue;
    std::smatch m;
    InputFileSpec spec;
    if (std::regex_match(piece, m, with_name)) {
      spec = {m[1], m[2], std::string(m[3])};
    } else if (std::regex_match(piece, m, plain)) {
      spec = {m[1], m[2], std::nullopt};
    } else {
      return InvalidArgument("--inputs \"", piece,
                             "\" format is incorrect: expected \"<input_key>=<filename>\" or "
                             "\"<input_key>=<filename>[<variable_name>]\"");
    }
    std::erase_if(out, [&](const InputFileSpec& s) { return s.key == spec.key; });
    out.push_back(std::move(spec));
  }
  return out;
}

Result<FeedArgs> ParseFeedArgs(std::string_view inputs, std::string_view input_exprs,
                               std::string_view input_examples) {
  FeedArgs args;
  KILN_ASSIGN_OR_RETURN(args.files, ParseInputsArg(inputs));
  KILN_ASSIGN_OR_RETURN(args.exprs, ParseInputExprs(input_exprs));
  KILN_ASSIGN_OR_RETURN(args.examples, ParseInputExamples(input_examples));
  return args;
}

Result<std::map<std::string, Tensor>> MakeFeeds(const FeedArgs& args, const exec::Signature& sig,
                                                std::ostream& err) {
  auto expected_dtype = [&](const std::string& key) -> std::optional<DType> {
    for (const auto& arg : sig.inputs())
      if (arg.key == key) return arg.spec.dtype;
    return std::nullopt;  // not an input: the signature names it in its error
  };

  std::map<std::string, Tensor> feeds;
  for (const InputFileSpec& spec : args.files) {
    KILN_ASSIGN_OR_RETURN_CTX(Tensor t, LoadInputFile(spec, sig, err), "--inputs '", spec.key, "'");
    if (auto want = expected_dtype(spec.key)) {
      KILN_ASSIGN_OR_RETURN(t, CastToInputDType(t, *want, spec.key));
    }
    feeds[spec.key] = std::move(t);
  }
  for (const auto& [key, literal] : args.exprs) {
    if (feeds.count(key))
      err << "WARNING: input_key " << key
          << " has been specified with both --inputs and --input_exprs options. Value in "
             "--input_exprs will be used.\n";
    const DType dtype = expected_dtype(key).value_or(NaturalDType(literal));
    KILN_ASSIGN_OR_RETURN(Tensor t, LiteralToTensor(literal, dtype, key));
    feeds[key] = std::move(t);
  }
  for (const auto& [key, examples] : args.examples) {
    if (feeds.count(key))
      err << "WARNING: input_key " << key
          << " has been specified in multiple options. Value in --input_examples will be used.\n";
    if (const std::optional<DType> want = expected_dtype(key)) {
      KILN_RETURN_IF_ERROR(CheckExamplesInput(key, *want));
    }
    feeds[key] = examples;
  }
  return feeds;
}

std::vector<std::string> SplitCommaList(std::string_view list) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    if (end > start) items.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

Status RunCommand(const RunCommandOptions& options, std::ostream& out, std::ostream& err) {
  // Arguments first: a typo in them should not cost a model load.
  KILN_ASSIGN_OR_RETURN(FeedArgs feed_args,
                        ParseFeedArgs(options.inputs, options.input_exprs, options.input_examples));

  exec::LoadOptions load_options;
  load_options.restored_functions = false;  // signatures only, as the server loads
  load_options.tags = SplitCommaList(options.tag_set);
  // Only the signature that runs is prepared: the bundle's other signatures may need ops this
  // runtime lacks.
  load_options.signatures = {options.signature_def};
  load_options.verify_checksums = !options.skip_checksums;
  load_options.devices = SplitCommaList(options.device);
  KILN_ASSIGN_OR_RETURN(load_options.precision, exec::ParsePrecision(options.precision));
  if (options.threads < 0) {
    return InvalidArgument("--threads must be 0 (all cores) or more, got ", options.threads);
  }
  load_options.num_threads = options.threads;
  load_options.plan = options.plan == "require"  ? exec::PlanUse::kRequire
                      : options.plan == "ignore" ? exec::PlanUse::kIgnore
                                                 : exec::PlanUse::kAuto;
  load_options.warn = [&err](std::string_view msg) { err << "warning: " << msg << "\n"; };
  KILN_ASSIGN_OR_RETURN(auto model, exec::SavedModel::Load(options.dir, load_options));
  KILN_ASSIGN_OR_RETURN(const exec::Signature* sig, model->GetSignature(options.signature_def));
  KILN_ASSIGN_OR_RETURN(auto feeds, MakeFeeds(feed_args, *sig, err));

  // Refuse before running, so nothing is half-written.
  std::error_code ec;
  if (options.outdir) {
    for (const auto& arg : sig->outputs()) {
      KILN_ASSIGN_OR_RETURN(const fs::path path,
                            OutputNpyPath(*options.outdir, arg.key, options.signature_def));
      if (options.overwrite) continue;
      if (fs::exists(path, ec))
        return AlreadyExists("output file ", path.string(),
                             " already exists. Add \"--overwrite\" to overwrite the existing "
                             "output files.");
    }
  }

  // The signature's errors already name it and the input at fault.
  KILN_ASSIGN_OR_RETURN(auto results, sig->Run(feeds));
  for (const auto& [key, tensor] : results) {  // sorted by key, as TF prints them
    out << "Result for output key " << key << ":\n" << NumpyStr(tensor) << "\n";
    if (options.outdir) {
      if (!fs::is_directory(*options.outdir, ec)) {
        fs::create_directories(*options.outdir, ec);
        if (ec)
          return PermissionDenied("cannot create output directory ", options.outdir->string(), ": ",
                                  ec.message());
      }
      KILN_ASSIGN_OR_RETURN(const fs::path path,
                            OutputNpyPath(*options.outdir, key, options.signature_def));
      if (key.find('/') != std::string::npos) fs::create_directories(path.parent_path(), ec);
      KILN_RETURN_IF_ERROR_CTX(WriteNpy(path, tensor), "saving output '", key, "'");
      out << "Output " << key << " is saved to " << path.string() << "\n";
    }
  }
  return OkStatus();
}

namespace {

struct RunArgs : CommandArgs {
  RunCommandOptions run;
  std::string dir, outdir;
  CLI::Option* outdir_opt = nullptr;
};

}  // namespace

std::unique_ptr<CommandArgs> SetupRunCommand(CLI::App& cmd) {
  auto a = std::make_unique<RunArgs>();
  cmd.add_option("--dir", a->dir, "SavedModel directory")->required();
  cmd.add_option("--tag_set", a->run.tag_set, "Comma-separated tags of a MetaGraphDef")->required();
  cmd.add_option("--signature_def", a->run.signature_def, "The SignatureDef key to run")
      ->required();
  cmd.add_option("--inputs", a->run.inputs, "'<key>=<file.npy>;<key>=<file.npz>[<name>]'");
  cmd.add_option("--input_exprs", a->run.input_exprs,
                 "'<key>=<literal>;...': numbers, true/false, quoted strings, nested [lists]");
  cmd.add_option("--input_examples", a->run.input_examples,
                 "'<key>=[{\"<feature>\": [<values>], ...}, ...];...': serialized tf.Examples "
                 "(float, int or string feature lists)");
  a->outdir_opt = cmd.add_option("--outdir", a->outdir, "Write <outdir>/<output_key>.npy");
  cmd.add_flag("--overwrite", a->run.overwrite, "Replace existing output files");
  cmd.add_flag("--skip_checksums", a->run.skip_checksums,
               "Do not verify the variables' CRC32C (only for trusted, verified bundles)");
  cmd.add_option("--plan", a->run.plan,
                 "Use the serving plan: auto (when fresh), ignore, require (savedmodel-cli "
                 "compile)")
      ->check(CLI::IsMember({"auto", "ignore", "require"}));
  cmd.add_option("--device", a->run.device,
                 "Devices in priority order, comma-separated (default: cpu alone)");
  cmd.add_option("--precision", a->run.precision,
                 "What float32 computes in: fp32 (as saved), tf32 (GPU products with TF32), fp16 "
                 "or bf16 (the model in half precision on a GPU)")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}));
  cmd.add_option("--threads", a->run.threads, "Intra-op threads (0: all cores)");
  return a;
}

Status RunRunCommand(const CommandArgs& args, std::ostream& out, std::ostream& err) {
  const auto& a = static_cast<const RunArgs&>(args);
  RunCommandOptions run = a.run;
  run.dir = a.dir;
  if (*a.outdir_opt) run.outdir = a.outdir;
  return RunCommand(run, out, err);
}

}  // namespace kiln::cli
