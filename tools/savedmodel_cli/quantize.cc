// savedmodel-cli quantize: writes a copy of a SavedModel with its weights stored as int8 or half
// precision, and in int8 mode its activations quantized with ranges from calibration data
// (kiln/exec/quantize.h), then measures what that costs: each signature of both bundles run on
// the same inputs (calibration data, or generated ones), and the difference of every float
// output printed and, with --report, written as JSON (docs/quantize.md).
#include "kiln/exec/quantize.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "bench.h"
#include "commands.h"
#include "kiln/core/file_util.h"
#include "kiln/exec/saved_model.h"
#include "progress.h"
#include "run.h"

namespace kiln::cli {
namespace fs = std::filesystem;
namespace {

struct QuantizeArgs : CommandArgs {
  std::string dir, output_dir, mode, tag_set = "serve", calibration, calibration_dir, report,
                                     method = "minmax";
  double percentile = 99.99;
  std::vector<std::string> signatures, exclude;
  bool per_channel = false, per_tensor = false, overwrite = false;
  int64_t min_elements = 1024, batch = 4;
};

// How far one output of the quantized model is from the float model's.
struct OutputError {
  std::string signature, key;
  int64_t elements = 0;
  double max_abs = 0, relative = 0;
  int64_t rows = 0, argmax_agree = 0;  // rank-2 outputs: rows whose argmax is the same
};

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> v;
  if (t.dtype() == DType::kFloat)
    for (float x : t.flat<float>()) v.push_back(x);
  else if (t.dtype() == DType::kDouble)
    for (double x : t.flat<double>()) v.push_back(x);
  return v;
}

OutputError Compare(const std::string& sig, const std::string& key, const Tensor& ref,
                    const Tensor& got) {
  OutputError e{sig, key};
  const std::vector<double> a = AsDoubles(ref), b = AsDoubles(got);
  e.elements = static_cast<int64_t>(a.size());
  if (a.size() != b.size()) {
    e.max_abs = e.relative = INFINITY;
    return e;
  }
  double diff2 = 0, norm2 = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = a[i] - b[i];
    e.max_abs = std::max(e.max_abs, std::abs(d));
    diff2 += d * d;
    norm2 += a[i] * a[i];
  }
  e.relative = norm2 > 0 ? std::sqrt(diff2 / norm2) : std::sqrt(diff2);
  if (ref.rank() == 2 && ref.dim(1) > 1) {
    e.rows = ref.dim(0);
    const int64_t n = ref.dim(1);
    for (int64_t r = 0; r < e.rows; ++r) {
      const auto arg = [&](const std::vector<double>& v) {
        return std::max_element(v.begin() + r * n, v.begin() + (r + 1) * n) - (v.begin() + r * n);
      };
      e.argmax_agree += arg(a) == arg(b) ? 1 : 0;
    }
  }
  return e;
}

// The calibration feeds of one signature: --calibration ('x=a.npy;...'), or the .npy files of
// --calibration_dir named by input key, or generated inputs.
Result<std::map<std::string, Tensor>> Feeds(const QuantizeArgs& a, const exec::Signature& sig,
                                            std::ostream& err) {
  std::string files = a.calibration;
  if (!a.calibration_dir.empty()) {
    if (!fs::is_directory(a.calibration_dir))
      return NotFound("--calibration_dir '", a.calibration_dir, "' is not a directory");
    for (const exec::SignatureArg& in : sig.inputs()) {
      const fs::path f = fs::path(a.calibration_dir) / (in.key + ".npy");
      if (!fs::exists(f))
        return NotFound("--calibration_dir '", a.calibration_dir, "' has no ", in.key,
                        ".npy for input '", in.key, "' of signature '", sig.name(), "'");
      files += (files.empty() ? "" : ";") + in.key + "=" + f.string();
    }
  }
  if (!files.empty()) {
    KILN_ASSIGN_OR_RETURN(FeedArgs args, ParseFeedArgs(files, ""));
    KILN_ASSIGN_OR_RETURN_CTX(auto feeds, MakeFeeds(args, sig, err), "calibration data");
    for (const auto& [key, t] : feeds)
      if (t.NumElements() == 0)
        return InvalidArgument("calibration data for input '", key, "' is empty (shape ",
                               t.shape().ToString(), ")");
    return feeds;
  }
  std::mt19937 rng(20261202);
  std::map<std::string, Tensor> feeds;
  for (const exec::SignatureArg& in : sig.inputs()) {
    KILN_ASSIGN_OR_RETURN_CTX(feeds[in.key], RandomInput(in.spec, a.batch, rng),
                              "generating input '", in.key, "'");
  }
  return feeds;
}

// `s` padded to `width`, and at least one space after it.
std::string Cell(const std::string& s, size_t width) {
  return s + std::string(s.size() < width ? width - s.size() : 1, ' ');
}

std::string Significant(double v, int precision) {
  std::ostringstream s;
  s << std::setprecision(precision) << v;
  return s.str();
}

void PrintReport(const exec::QuantizeReport& r, const std::vector<OutputError>& errors,
                 bool generated, std::ostream& out) {
  out << "Wrote " << r.output.string() << ": " << r.quantized_count() << " of "
      << r.variables.size() << " float32 variables stored as "
      << (r.mode == exec::QuantizeMode::kWeightsInt8 ? "int8" : exec::QuantizeModeName(r.mode))
      << (r.mode == exec::QuantizeMode::kInt8
              ? ", " +
                    std::to_string(
                        std::count_if(r.activations.begin(), r.activations.end(),
                                      [](const auto& x) { return x.kept_because.empty(); })) +
                    " of " + std::to_string(r.activations.size()) + " activations quantized"
              : std::string())
      << "; " << r.input_bytes << " -> " << r.output_bytes << " bytes ("
      << Significant(static_cast<double>(r.output_bytes) / static_cast<double>(r.input_bytes), 3)
      << "x)\n";
  out << std::left << std::setw(40) << "variable" << std::setw(18) << "shape" << std::setw(10)
      << "stored" << std::setw(6) << "axis" << std::setw(24) << "scale min..max"
      << "relative error\n";
  // A tf.Module's variables are all named "Variable": where a name repeats, the object path
  // (what quantize's errors and --exclude name) tells the rows apart.
  std::map<std::string, int> name_count;
  for (const auto& v : r.variables) ++name_count[v.name];
  for (const auto& v : r.variables) {
    const std::string label = v.name.empty()           ? v.path
                              : name_count[v.name] > 1 ? v.path + " (" + v.name + ")"
                                                       : v.name;
    out << Cell(label, 40) << Cell(v.shape.ToString(), 18);
    if (!v.kept_because.empty()) {
      out << "float32   kept: " << v.kept_because << "\n";
      continue;
    }
    out << std::setw(10) << DTypeShortName(v.stored) << std::setw(6)
        << (v.axis < 0 ? std::string("-") : std::to_string(v.axis)) << std::setw(24)
        << (v.stored == DType::kInt8
                ? Significant(v.min_scale, 3) + ".." + Significant(v.max_scale, 3)
                : "-")
        << Significant(v.relative_error, 3) << "\n";
  }
  if (!r.activations.empty()) {
    out << std::left << std::setw(56) << "activation" << std::setw(22) << "seen min..max"
        << "8-bit range\n";
    for (const auto& x : r.activations) {
      std::string name = x.tensor;
      for (const auto& c : x.consumers) name += (&c == &x.consumers.front() ? " -> " : ", ") + c;
      out << Cell(name, 56)
          << Cell(x.elements > 0 ? Significant(x.seen_min, 3) + ".." + Significant(x.seen_max, 3)
                                 : std::string("-"),
                  22);
      if (!x.kept_because.empty())
        out << "float32   kept: " << x.kept_because << "\n";
      else
        out << (x.narrow_range ? "symmetric " : "unsigned ") << Significant(x.min, 4) << ".."
            << Significant(x.max, 4) << "\n";
    }
  }
  out << "Output error against the float model ("
      << (generated ? "generated inputs" : "calibration data") << "):\n";
  for (const auto& e : errors) {
    out << "  " << e.signature << "/" << e.key << ": max |diff| " << Significant(e.max_abs, 3)
        << ", relative " << Significant(e.relative, 3);
    if (e.rows > 0) out << ", same argmax in " << e.argmax_agree << " of " << e.rows << " rows";
    out << "\n";
  }
}

Status WriteJson(const exec::QuantizeReport& r, const std::vector<OutputError>& errors,
                 const std::string& path) {
  nlohmann::ordered_json j;
  j["mode"] = exec::QuantizeModeName(r.mode);
  j["output_dir"] = r.output.string();
  j["input_bytes"] = r.input_bytes;
  j["output_bytes"] = r.output_bytes;
  j["variables"] = nlohmann::ordered_json::array();
  for (const auto& v : r.variables) {
    nlohmann::ordered_json e;
    e["path"] = v.path;
    e["name"] = v.name;
    e["checkpoint_key"] = v.checkpoint_key;
    e["shape"] = v.shape.ToVector();
    e["stored"] = v.kept_because.empty() ? DTypeShortName(v.stored) : "float32";
    if (v.kept_because.empty()) {
      e["axis"] = v.axis;
      if (v.stored == DType::kInt8) {
        e["min_scale"] = v.min_scale;
        e["max_scale"] = v.max_scale;
      }
      e["relative_error"] = v.relative_error;
      e["max_abs_error"] = v.max_abs_error;
    } else {
      e["kept_because"] = v.kept_because;
    }
    j["variables"].push_back(e);
  }
  if (r.mode == exec::QuantizeMode::kInt8) {
    j["activations"] = nlohmann::ordered_json::array();
    for (const auto& x : r.activations) {
      nlohmann::ordered_json e;
      e["function"] = x.function;
      e["tensor"] = x.tensor;
      e["consumers"] = x.consumers;
      e["elements"] = x.elements;
      e["seen_min"] = x.seen_min;
      e["seen_max"] = x.seen_max;
      if (x.kept_because.empty()) {
        e["min"] = x.min;
        e["max"] = x.max;
        e["narrow_range"] = x.narrow_range;
      } else {
        e["kept_because"] = x.kept_because;
      }
      j["activations"].push_back(e);
    }
  }
  j["outputs"] = nlohmann::ordered_json::array();
  for (const auto& o : errors) {
    nlohmann::ordered_json e;
    e["signature"] = o.signature;
    e["output"] = o.key;
    e["elements"] = o.elements;
    e["max_abs_error"] = o.max_abs;
    e["relative_error"] = o.relative;
    if (o.rows > 0) {
      e["rows"] = o.rows;
      e["same_argmax"] = o.argmax_agree;
    }
    j["outputs"].push_back(e);
  }
  return WriteFileAtomically(path, j.dump(2) + "\n");
}

}  // namespace

std::unique_ptr<CommandArgs> SetupQuantizeCommand(CLI::App& cmd) {
  auto a = std::make_unique<QuantizeArgs>();
  cmd.add_option("--dir", a->dir, "SavedModel directory to quantize (never modified)")->required();
  cmd.add_option("--output_dir", a->output_dir, "Where the quantized SavedModel is written")
      ->required();
  cmd.add_option("--mode", a->mode, "int8, weights_int8, float16 or bfloat16")->required();
  cmd.add_option("--tag_set", a->tag_set, "Comma-separated tags of a MetaGraphDef (serve)");
  cmd.add_option("--signature_def", a->signatures,
                 "Signatures calibrated (int8) and the error is measured on (repeatable; "
                 "default: all; activations only other signatures compute stay float32)");
  cmd.add_option("--calibration", a->calibration,
                 "Representative inputs, as run's --inputs: 'x=calib.npy;y=c.npz[y]'");
  cmd.add_option("--calibration_dir", a->calibration_dir,
                 "A directory with <input key>.npy for each input");
  cmd.add_option("--calibration_method", a->method,
                 "int8: an activation's range is the largest magnitude seen (minmax) or a "
                 "percentile of the magnitudes (percentile)");
  cmd.add_option("--percentile", a->percentile,
                 "int8 with --calibration_method percentile: the percentile (99.99)");
  cmd.add_flag("--per_channel", a->per_channel, "One int8 scale per output channel (default)");
  cmd.add_flag("--per_tensor", a->per_tensor, "One int8 scale per weight tensor");
  cmd.add_option("--exclude", a->exclude,
                 "Keep float32: a variable's path or name, or an op type or node name that "
                 "computes with it (repeatable)");
  cmd.add_option("--min_elements", a->min_elements,
                 "Variables with fewer elements stay float32 (1024; not in int8 mode)");
  cmd.add_option("--batch", a->batch, "Rows of generated inputs when no calibration data (4)");
  cmd.add_option("--report", a->report, "Write the report as JSON to this file");
  cmd.add_flag("--overwrite", a->overwrite, "Replace an existing --output_dir");
  return a;
}

Status RunQuantizeCommand(const CommandArgs& args, std::ostream& out, std::ostream& err) {
  const auto& a = static_cast<const QuantizeArgs&>(args);
  if (a.per_channel && a.per_tensor)
    return InvalidArgument("--per_channel and --per_tensor exclude each other");
  if (!a.calibration.empty() && !a.calibration_dir.empty())
    return InvalidArgument("give --calibration or --calibration_dir, not both");
  exec::QuantizeOptions options;
  KILN_ASSIGN_OR_RETURN(options.mode, exec::QuantizeModeFromName(a.mode));
  options.tags = SplitCommaList(a.tag_set);
  options.per_channel = !a.per_tensor;
  options.exclude = a.exclude;
  options.min_elements = a.min_elements;
  options.overwrite = a.overwrite;
  if (a.method == "percentile")
    options.method = exec::CalibrationMethod::kPercentile;
  else if (a.method != "minmax")
    return InvalidArgument("--calibration_method '", a.method, "': expected minmax or percentile");
  if (!(a.percentile > 0 && a.percentile <= 100))
    return InvalidArgument("--percentile ", a.percentile, ": expected a value in (0, 100]");
  options.percentile = a.percentile;
  if (options.mode == exec::QuantizeMode::kInt8 && a.calibration.empty() &&
      a.calibration_dir.empty())
    return InvalidArgument(
        "--mode int8 needs calibration data (--calibration or --calibration_dir): the "
        "activations' ranges come from running the float model on representative inputs");
  // Everything is checked before anything is written: the bundle and the flags (a dry run of
  // the rewrite), then the calibration data, on which the float model runs (missing files and
  // data of the wrong dtype or shape fail here). In int8 mode that run is the calibration's,
  // inside QuantizeSavedModel and still before writing: the data goes through the float model
  // once.
  // Steps: plan, the float runs, write, load the copy, the copy's runs (names known after the
  // load; the total is set then).
  Progress progress(err, "quantize:", 0);
  progress.Update(0, "(planning the rewrite)");
  exec::QuantizeOptions dry = options;
  dry.dry_run = true;
  KILN_RETURN_IF_ERROR(exec::QuantizeSavedModel(a.dir, a.output_dir, dry).status());
  progress.Update(1, "(loading the float model)");
  exec::LoadOptions load;
  load.tags = options.tags;
  load.signatures = a.signatures;
  load.plan = exec::PlanUse::kIgnore;
  KILN_ASSIGN_OR_RETURN_CTX(auto before, exec::SavedModel::Load(a.dir, load),
                            "loading the float model");
  const bool int8 = options.mode == exec::QuantizeMode::kInt8;
  struct Run {
    std::string name;
    std::map<std::string, Tensor> feeds, ref;
  };
  std::vector<Run> runs;
  const std::vector<std::string> names =
      a.signatures.empty() ? before->SignatureNames() : a.signatures;
  progress.set_total(3 + 2 * static_cast<int64_t>(names.size()));
  for (const std::string& name : names) {
    progress.Update(1 + static_cast<int64_t>(runs.size()), "float model: signature '" + name + "'");
    KILN_ASSIGN_OR_RETURN(const exec::Signature* sig, before->GetSignature(name));
    Run r{name, {}, {}};
    KILN_ASSIGN_OR_RETURN(r.feeds, Feeds(a, *sig, err));
    if (!int8) {
      KILN_ASSIGN_OR_RETURN_CTX(r.ref, sig->Run(r.feeds), "running the float model's '", name,
                                "' on the calibration data");
    }
    runs.push_back(std::move(r));
  }
  before.reset();
  progress.Update(1 + static_cast<int64_t>(runs.size()), "(writing " + a.output_dir + ")");
  // int8: the calibration data runs through a copy of the float model that observes the
  // activations the quantized weights compute with; its outputs are the float model's.
  const auto run_float = [&](const fs::path& dir, const char* what) -> Status {
    KILN_ASSIGN_OR_RETURN_CTX(auto model, exec::SavedModel::Load(dir, load), what);
    for (Run& r : runs) {
      KILN_ASSIGN_OR_RETURN(const exec::Signature* sig, model->GetSignature(r.name));
      KILN_ASSIGN_OR_RETURN_CTX(r.ref, sig->Run(r.feeds), what, ": signature '", r.name, "'");
    }
    return OkStatus();
  };
  bool calibrated = false;
  options.calibrate = [&](const fs::path& observed) {
    calibrated = true;
    return run_float(observed, "running the calibration data");
  };
  KILN_ASSIGN_OR_RETURN(exec::QuantizeReport report,
                        exec::QuantizeSavedModel(a.dir, a.output_dir, options));
  // No activation to calibrate: the float model's own run, for the report.
  if (int8 && !calibrated) KILN_RETURN_IF_ERROR(run_float(a.dir, "running the float model"));
  progress.Update(2 + static_cast<int64_t>(runs.size()), "(loading the quantized model)");
  KILN_ASSIGN_OR_RETURN_CTX(auto after, exec::SavedModel::Load(a.output_dir, load),
                            "loading the quantized model");
  std::vector<OutputError> errors;
  int64_t done = 3 + static_cast<int64_t>(runs.size());
  for (const Run& r : runs) {
    progress.Update(done++, "quantized model: signature '" + r.name + "'");
    KILN_ASSIGN_OR_RETURN(const exec::Signature* sig, after->GetSignature(r.name));
    KILN_ASSIGN_OR_RETURN_CTX(auto got, sig->Run(r.feeds), "running the quantized model's '",
                              r.name, "'");
    for (const auto& [key, t] : r.ref)
      if (IsFloatingPoint(t.dtype()) && got.count(key))
        errors.push_back(Compare(r.name, key, t, got.at(key)));
  }
  progress.Done();
  PrintReport(report, errors, a.calibration.empty() && a.calibration_dir.empty(), out);
  if (!a.report.empty()) KILN_RETURN_IF_ERROR(WriteJson(report, errors, a.report));
  return OkStatus();
}

}  // namespace kiln::cli
