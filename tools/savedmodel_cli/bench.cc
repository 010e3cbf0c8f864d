#include "bench.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "commands.h"
#include "kiln/exec/cpu_isa.h"
#include "kiln/exec/saved_model.h"
#include "progress.h"
#include "run.h"
#include "shape_text.h"

namespace kiln::cli {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// Every timed duration is kept for exact percentiles: this bounds that memory (80 MB).
constexpr int64_t kMaxRuns = 10'000'000;

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

Status CheckOptions(const BenchOptions& o) {
  if (o.runs < 1 || o.runs > kMaxRuns)
    return InvalidArgument("--runs must be between 1 and ", kMaxRuns, ", got ", o.runs);
  if (o.warmup < 0) return InvalidArgument("--warmup must be 0 or more, got ", o.warmup);
  if (o.threads < 0)
    return InvalidArgument("--threads must be 0 (all cores) or more, got ", o.threads);
  if (o.batch < 1) return InvalidArgument("--batch must be at least 1, got ", o.batch);
  if (!std::isfinite(o.min_seconds) || o.min_seconds < 0)
    return InvalidArgument("--min_seconds must be 0 or more, got ", o.min_seconds);
  return OkStatus();
}

std::string KeyList(std::span<const exec::SignatureArg> args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "'" : ", '") + a.key + "'";
  return s.empty() ? "none" : s;
}

// Fills `t` (of element type T) with random values.
template <typename T>
void Fill(Tensor* t, std::mt19937& rng) {
  T* data = t->data<T>();
  const int64_t n = t->NumElements();
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      data[i] = (rng() & 1) != 0;
    } else if constexpr (std::is_floating_point_v<T>) {
      data[i] = static_cast<T>(unit(rng));
    } else if constexpr (std::is_integral_v<T>) {
      data[i] = static_cast<T>(rng() % 10);
    } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                         std::is_same_v<T, std::complex<double>>) {
      using R = typename T::value_type;
      data[i] = T(static_cast<R>(unit(rng)), static_cast<R>(unit(rng)));
    } else if constexpr (std::is_same_v<T, Half>) {
      // Sign, exponent 0..14 and any mantissa: a finite value in (-1, 1).
      const uint32_t r = rng();
      data[i].bits =
          static_cast<uint16_t>(((r & 1) << 15) | (((r >> 1) % 15) << 10) | ((r >> 5) & 0x3ff));
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      const float f = static_cast<float>(unit(rng));
      uint32_t bits = 0;
      std::memcpy(&bits, &f, sizeof(bits));
      data[i].bits = static_cast<uint16_t>(bits >> 16);
    } else if constexpr (std::is_same_v<T, std::string>) {
      const size_t len = 1 + rng() % 8;
      std::string s(len, 'a');
      for (char& c : s) c = static_cast<char>('a' + rng() % 26);
      data[i] = std::move(s);
    }
  }
}

// The shape a generated input gets: unknown dims are `batch` (first) or 1.
Result<Shape> GeneratedShape(const PartialShape& spec, int64_t batch) {
  if (spec.unknown_rank()) return Shape();
  std::vector<int64_t> dims;
  for (int i = 0; i < spec.rank(); ++i) {
    const int64_t d = spec.dim(i);
    dims.push_back(d >= 0 ? d : (i == 0 ? batch : 1));
  }
  return Shape::FromDims(dims);
}

// The first input (by key) whose first dim is unknown: its fed size is the batch.
std::optional<int64_t> BatchSize(const exec::Signature& sig, std::span<const Tensor> flat) {
  const auto inputs = sig.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const PartialShape& s = inputs[i].spec.shape;
    if (!s.unknown_rank() && s.rank() >= 1 && s.dim(0) < 0 && flat[i].rank() >= 1)
      return flat[i].shape().dim(0);
  }
  return std::nullopt;
}

std::string Fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

}  // namespace

Result<Tensor> RandomInput(const exec::TensorSpec& spec, int64_t batch, std::mt19937& rng) {
  if (!HoldsData(spec.dtype))
    return InvalidArgument("cannot generate a ", DTypeShortName(spec.dtype),
                           " input; give it with --inputs");
  KILN_ASSIGN_OR_RETURN(Shape shape, GeneratedShape(spec.shape, batch));
  Tensor t(spec.dtype, shape);
  switch (spec.dtype) {
#define KILN_X(e, n, T, ...) \
  case DType::e:             \
    Fill<T>(&t, rng);        \
    break;
    KILN_DTYPES(KILN_X)
#undef KILN_X
    default:
      break;
  }
  return t;
}

double Percentile(std::span<const double> sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted[std::min(index, sorted.size() - 1)];
}

Result<uint64_t> DirectoryBytes(const fs::path& dir) {
  std::error_code ec;
  uint64_t total = 0;
  for (fs::recursive_directory_iterator it(dir, ec), end; it != end; it.increment(ec)) {
    if (ec) break;
    std::error_code fec;
    if (it->is_symlink(fec) || !it->is_regular_file(fec)) continue;
    const uintmax_t size = it->file_size(fec);
    if (!fec) total += size;
  }
  if (ec) return NotFound("cannot list ", dir.string(), ": ", ec.message());
  return total;
}

int64_t CurrentRssKb() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

int64_t PeakRssKb() {
  struct rusage usage;
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return usage.ru_maxrss;  // KiB on Linux
}

Result<BenchReport> RunBench(const BenchOptions& options, std::ostream& err) {
  // Arguments first: a typo in them should not cost a model load.
  KILN_RETURN_IF_ERROR(CheckOptions(options));
  KILN_ASSIGN_OR_RETURN(FeedArgs feed_args,
                        ParseFeedArgs(options.inputs, options.input_exprs, options.input_examples));

  BenchReport report;
  report.dir = options.dir.string();
  report.signature = options.signature_def;
  report.threads = options.threads;
  report.cpu_isa = exec::CpuIsaSummary();
  report.warmup = options.warmup;

  exec::LoadOptions load_options;
  load_options.restored_functions = false;  // signatures only, as the server loads
  load_options.tags = SplitCommaList(options.tag_set);
  load_options.num_threads = options.threads;
  load_options.verify_checksums = !options.skip_checksums;
  load_options.devices = SplitCommaList(options.device);
  load_options.device_graphs = options.cuda_graphs;
  load_options.results_on_device = options.device_io;
  KILN_ASSIGN_OR_RETURN(load_options.precision, exec::ParsePrecision(options.precision));
  load_options.plan = options.plan == "require"  ? exec::PlanUse::kRequire
                      : options.plan == "ignore" ? exec::PlanUse::kIgnore
                                                 : exec::PlanUse::kAuto;
  load_options.warn = [&err](std::string_view msg) { err << "warning: " << msg << "\n"; };
  const Clock::time_point load_start = Clock::now();
  KILN_ASSIGN_OR_RETURN(auto model, exec::SavedModel::Load(options.dir, load_options));
  report.load_ms = Micros(Clock::now() - load_start) / 1000.0;
  report.plan_functions = model->plan_status().functions_from_plan;
  report.rss_after_load_kb = CurrentRssKb();
  KILN_ASSIGN_OR_RETURN(report.bundle_bytes, DirectoryBytes(options.dir));
  KILN_ASSIGN_OR_RETURN(const exec::Signature* sig, model->GetSignature(options.signature_def));
  report.device_steps = sig->function().plan_stats().device_steps;
  report.copies = sig->function().plan_stats().copies;
  report.copy_bytes = sig->function().plan_stats().copy_bytes;
  report.half_in_float = sig->function().plan_stats().half_in_float;
  report.device_graph = sig->function().plan_stats().device_graph;

  // Given inputs, then generated ones for the rest, in the signature's order.
  KILN_ASSIGN_OR_RETURN(auto given, MakeFeeds(feed_args, *sig, err));
  for (const auto& [key, tensor] : given) {
    bool known = false;
    for (const auto& a : sig->inputs()) known |= a.key == key;
    if (!known)
      return InvalidArgument("signature '", sig->name(), "' has no input named '", key,
                             "'; expected inputs: ", KeyList(sig->inputs()));
  }
  std::mt19937 rng(0);  // fixed: the same generated inputs on every run of the command
  std::vector<Tensor> flat;
  for (const auto& a : sig->inputs()) {
    BenchInput in;
    in.key = a.key;
    if (auto it = given.find(a.key); it != given.end()) {
      flat.push_back(it->second);
    } else {
      KILN_ASSIGN_OR_RETURN_CTX(Tensor t, RandomInput(a.spec, options.batch, rng), "input '", a.key,
                                "'");
      flat.push_back(std::move(t));
      in.generated = true;
    }
    in.dtype = flat.back().dtype();
    in.shape = flat.back().shape();
    report.inputs.push_back(std::move(in));
  }

  // The model's own prints to stdout (tf.print(..., output_stream=sys.stdout)) go to stderr:
  // stdout is the report's, and --json must stay one JSON object. Other streams are as usual.
  const exec::PrintSink& usual = exec::DefaultPrintSink();
  const exec::PrintSink print = [&](std::string_view stream, std::string_view text) {
    if (stream != "stdout") return usual(stream, text);
    err << text;
    err.flush();
  };
  // --device_io: the inputs in the first device's memory, and each call waits for the device.
  const exec::Device* io_device = nullptr;
  if (options.device_io) {
    KILN_ASSIGN_OR_RETURN(std::vector<exec::Device*> devices,
                          exec::ResolveDevices(load_options.devices));
    exec::Device* first = devices.front();
    io_device = first;
    report.io_device = first->name();
    for (Tensor& t : flat) {
      if (!DTypeIsPod(t.dtype())) continue;
      KILN_ASSIGN_OR_RETURN(Tensor moved, exec::CopyTensor(t, exec::HostDevice(), first));
      t = std::move(moved);
    }
  }
  exec::RunOptions run;
  run.print = &print;
  std::vector<Tensor> outputs;
  auto call = [&]() -> Status {
    KILN_RETURN_IF_ERROR(sig->RunFlat(flat, &outputs, run));
    return io_device != nullptr ? io_device->Synchronize() : OkStatus();
  };
  const Clock::time_point first_start = Clock::now();
  KILN_RETURN_IF_ERROR(call());
  report.first_call_ms = Micros(Clock::now() - first_start) / 1000.0;
  {
    Progress warmup(err, "bench: warmup", options.warmup);
    for (int i = 0; i < options.warmup; ++i) {
      KILN_RETURN_IF_ERROR(call());
      warmup.Update(i + 1);
    }
  }

  // A profiler started with --profile-from-start off sees the timed calls alone.
  bool on_gpu = false;
  for (const auto& [device, steps] : report.device_steps) on_gpu |= device.rfind("gpu", 0) == 0;
  if (on_gpu) exec::MarkProfiledSpan(true);
  std::vector<double> micros;
  micros.reserve(static_cast<size_t>(options.runs));
  const auto min_time = std::chrono::duration<double>(options.min_seconds);
  const Clock::time_point timed_start = Clock::now();
  Clock::time_point now = timed_start;
  Progress timed(err, "bench: timed runs", options.runs);
  while (static_cast<int64_t>(micros.size()) < kMaxRuns &&
         (static_cast<int64_t>(micros.size()) < options.runs || now - timed_start < min_time)) {
    const Clock::time_point start = Clock::now();
    KILN_RETURN_IF_ERROR(call());
    now = Clock::now();
    micros.push_back(Micros(now - start));
    timed.Update(static_cast<int64_t>(micros.size()));  // outside the timed call
  }
  timed.Done();
  if (on_gpu) exec::MarkProfiledSpan(false);
  const double seconds = Micros(now - timed_start) / 1e6;

  report.runs = static_cast<int>(micros.size());
  std::sort(micros.begin(), micros.end());
  double sum = 0;
  for (double m : micros) sum += m;
  report.p50_us = Percentile(micros, 50);
  report.p90_us = Percentile(micros, 90);
  report.p99_us = Percentile(micros, 99);
  report.mean_us = sum / static_cast<double>(micros.size());
  report.min_us = micros.front();
  report.calls_per_s = seconds > 0 ? static_cast<double>(micros.size()) / seconds : 0;
  if (auto batch = BatchSize(*sig, flat))
    report.examples_per_s = report.calls_per_s * static_cast<double>(*batch);
  // The kernel's high-water mark lags its per-thread RSS counters a little, so a reading taken
  // here can be below one taken earlier; the peak is at least every RSS this process observed.
  report.peak_rss_kb = std::max({PeakRssKb(), CurrentRssKb(), report.rss_after_load_kb});
  return report;
}

// "cpu 12 steps; 0 copies": where the signature's steps run.
static std::string PlacementText(const BenchReport& r) {
  std::string placement;
  for (const auto& [device, steps] : r.device_steps)
    placement += (placement.empty() ? "" : ", ") + device + " " + std::to_string(steps) + " steps";
  placement += "; " + std::to_string(r.copies) + " copies";
  if (r.copies > 0)
    placement += r.copy_bytes >= 0 ? " (" + std::to_string(r.copy_bytes) + " bytes per call)"
                                   : std::string(" (bytes depend on the shapes)");
  if (r.half_in_float > 0)
    placement += "; " + std::to_string(r.half_in_float) + " half-precision ops computed in float32";
  if (!r.device_graph.empty()) placement += "; CUDA graph: " + r.device_graph;
  if (!r.io_device.empty()) placement += "; inputs and results kept on " + r.io_device;
  return placement;
}

void PrintBenchText(const BenchReport& r, std::ostream& out) {
  std::vector<std::pair<std::string, std::string>> rows;
  rows.emplace_back("model", r.dir);
  rows.emplace_back("signature", r.signature);
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    const BenchInput& in = r.inputs[i];
    rows.emplace_back(i == 0 ? "inputs" : "",
                      in.key + ": " + DTypeShortName(in.dtype) + " " +
                          ShapeText(in.shape.dims(), ShapeStyle::kTensorShape) +
                          (in.generated ? " (generated)" : ""));
  }
  rows.emplace_back("threads", r.threads == 0 ? "all cores" : std::to_string(r.threads));
  rows.emplace_back("cpu isa", r.cpu_isa);
  rows.emplace_back("bundle size", std::to_string(r.bundle_bytes) + " bytes");
  rows.emplace_back("load", Fixed(r.load_ms, 3) + " ms");
  rows.emplace_back("first call", Fixed(r.first_call_ms, 3) + " ms");
  rows.emplace_back(
      "runs", std::to_string(r.runs) + " timed, after " + std::to_string(r.warmup) + " warm-up");
  rows.emplace_back("per call", "p50 " + Fixed(r.p50_us, 1) + " us, p90 " + Fixed(r.p90_us, 1) +
                                    " us, p99 " + Fixed(r.p99_us, 1) + " us");
  rows.emplace_back("", "mean " + Fixed(r.mean_us, 1) + " us, min " + Fixed(r.min_us, 1) + " us");
  rows.emplace_back(
      "throughput",
      Fixed(r.calls_per_s, 1) + " calls/s" +
          (r.examples_per_s ? ", " + Fixed(*r.examples_per_s, 1) + " examples/s" : std::string()));
  rows.emplace_back("memory", "peak RSS " + std::to_string(r.peak_rss_kb) +
                                  " KiB, RSS after load " + std::to_string(r.rss_after_load_kb) +
                                  " KiB");
  rows.emplace_back("placement", PlacementText(r));
  size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.first.size());
  for (const auto& row : rows)
    out << row.first << std::string(width - row.first.size() + 2, ' ') << row.second << "\n";
}

void PrintBenchJson(const BenchReport& r, std::ostream& out) {
  nlohmann::ordered_json inputs = nlohmann::ordered_json::object();
  for (const BenchInput& in : r.inputs) {
    nlohmann::ordered_json shape = nlohmann::ordered_json::array();
    for (int64_t d : in.shape.dims()) shape.push_back(d);
    inputs[in.key] = {{"dtype", DTypeShortName(in.dtype)}, {"shape", shape}};
  }
  nlohmann::ordered_json j;
  j["dir"] = r.dir;
  j["signature"] = r.signature;
  j["threads"] = r.threads;
  j["runs"] = r.runs;
  j["warmup"] = r.warmup;
  j["bundle_bytes"] = r.bundle_bytes;
  j["load_ms"] = r.load_ms;
  j["plan_functions"] = r.plan_functions;
  j["first_call_ms"] = r.first_call_ms;
  j["p50_us"] = r.p50_us;
  j["p90_us"] = r.p90_us;
  j["p99_us"] = r.p99_us;
  j["mean_us"] = r.mean_us;
  j["min_us"] = r.min_us;
  j["calls_per_s"] = r.calls_per_s;
  j["examples_per_s"] = r.examples_per_s ? nlohmann::ordered_json(*r.examples_per_s) : nullptr;
  j["peak_rss_kb"] = r.peak_rss_kb;
  j["rss_after_load_kb"] = r.rss_after_load_kb;
  j["inputs"] = std::move(inputs);
  j["cpu_isa"] = r.cpu_isa;
  nlohmann::ordered_json devices = nlohmann::ordered_json::object();
  for (const auto& [device, steps] : r.device_steps) devices[device] = steps;
  j["device_steps"] = std::move(devices);
  j["copies"] = r.copies;
  j["copy_bytes"] = r.copy_bytes;
  j["half_in_float"] = r.half_in_float;
  j["device_graph"] = r.device_graph;
  j["io_device"] = r.io_device;
  out << j.dump() << "\n";
}

namespace {

struct BenchArgs : CommandArgs {
  BenchOptions bench;
  std::string dir;
};

}  // namespace

std::unique_ptr<CommandArgs> SetupBenchCommand(CLI::App& cmd) {
  auto a = std::make_unique<BenchArgs>();
  BenchOptions& o = a->bench;
  cmd.add_option("--dir", a->dir, "SavedModel directory")->required();
  cmd.add_option("--tag_set", o.tag_set, "Comma-separated tags of a MetaGraphDef (serve)");
  cmd.add_option("--signature_def", o.signature_def,
                 "The SignatureDef key to run (serving_default)");
  cmd.add_option("--inputs", o.inputs, "'<key>=<file.npy>;<key>=<file.npz>[<name>]'");
  cmd.add_option("--input_exprs", o.input_exprs,
                 "'<key>=<literal>;...': numbers, true/false, quoted strings, nested [lists]");
  cmd.add_option("--input_examples", o.input_examples,
                 "'<key>=[{\"<feature>\": [<values>], ...}, ...];...': serialized tf.Examples");
  cmd.add_option("--threads", o.threads, "Intra-op threads (0: all cores)");
  cmd.add_option("--device", o.device,
                 "Devices in priority order, comma-separated (default: cpu alone)");
  cmd.add_option("--precision", o.precision,
                 "What float32 computes in: fp32 (as saved), tf32 (GPU products with TF32), fp16 "
                 "or bf16 (the model in half precision on a GPU)")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}));
  cmd.add_flag("--cuda_graphs", o.cuda_graphs,
               "Replay fixed-shape calls on a GPU as one CUDA graph from the third call on");
  cmd.add_flag("--device_io", o.device_io,
               "Keep inputs and results in the first --device's memory; time calls without "
               "the copies to and from the host");
  cmd.add_option("--runs", o.runs, "Timed runs (100)");
  cmd.add_option("--warmup", o.warmup, "Untimed runs before the timed ones (10)");
  cmd.add_option("--min_seconds", o.min_seconds, "Keep timing for at least this long (0)");
  cmd.add_option("--batch", o.batch, "First unknown dim of generated inputs (1)");
  cmd.add_flag("--json", o.json, "Print one JSON object");
  cmd.add_flag("--skip_checksums", o.skip_checksums,
               "Do not verify the variables' CRC32C (only for trusted, verified bundles)");
  cmd.add_option("--plan", o.plan,
                 "Use the serving plan: auto (when fresh), ignore, require (savedmodel-cli "
                 "compile)")
      ->check(CLI::IsMember({"auto", "ignore", "require"}));
  return a;
}

Status RunBenchCommand(const CommandArgs& args, std::ostream& out, std::ostream& err) {
  const auto& a = static_cast<const BenchArgs&>(args);
  BenchOptions options = a.bench;
  options.dir = a.dir;
  KILN_ASSIGN_OR_RETURN(BenchReport report, RunBench(options, err));
  if (options.json) {
    PrintBenchJson(report, out);
  } else {
    PrintBenchText(report, out);
  }
  return OkStatus();
}

}  // namespace kiln::cli
