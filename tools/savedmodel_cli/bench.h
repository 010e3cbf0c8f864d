// `savedmodel-cli bench`: how fast a signature runs and how much memory the process uses, the
// way TFLite's benchmark_model and ONNX Runtime's onnxruntime_perf_test report it: bundle size,
// load time, the first call, then per-call percentiles over timed runs after warm-up runs,
// throughput, and resident memory. Inputs not given are generated. Layout in docs/cli.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/op_table.h"

namespace kiln::cli {

struct BenchOptions {
  std::filesystem::path dir;
  std::string tag_set = "serve";  // comma-separated
  std::string signature_def = "serving_default";
  std::string inputs;          // as `run --inputs`
  std::string input_exprs;     // as `run --input_exprs`
  std::string input_examples;  // as `run --input_examples`
  int threads = 0;             // LoadOptions::num_threads; 0 = all cores
  int runs = 100;              // timed runs (at least)
  int warmup = 10;             // untimed runs after the first call
  double min_seconds = 0;      // keep timing until this much time has passed, too
  int64_t batch = 1;           // the first unknown dim of generated inputs
  bool json = false;
  bool skip_checksums = false;     // LoadOptions::verify_checksums = false (trusted bundles)
  std::string plan = "auto";       // LoadOptions::plan: auto, ignore or require
  std::string device;              // LoadOptions::devices, comma-separated; "" = the host
  bool cuda_graphs = false;        // LoadOptions::device_graphs
  std::string precision = "fp32";  // LoadOptions::precision
  // Inputs copied once to the first device of `device`, results left there
  // (LoadOptions::results_on_device), each call waiting for the device: what a service that
  // keeps its data on the GPU sees, without the copies to and from the host.
  bool device_io = false;
};

struct BenchInput {
  std::string key;
  DType dtype = DType::kInvalid;
  Shape shape;
  bool generated = false;  // made by bench, not given on the command line
};

struct BenchReport {
  std::string dir;
  std::string signature;
  int threads = 0;
  int runs = 0;  // timed runs made
  int warmup = 0;
  uint64_t bundle_bytes = 0;
  double load_ms = 0;
  int plan_functions = 0;  // functions the load prepared from the serving plan
  double first_call_ms = 0;
  double p50_us = 0, p90_us = 0, p99_us = 0, mean_us = 0, min_us = 0;
  double calls_per_s = 0;
  std::optional<double> examples_per_s;  // when the signature has a batch dim
  int64_t peak_rss_kb = 0;
  int64_t rss_after_load_kb = 0;
  std::vector<BenchInput> inputs;  // sorted by key, as the signature lists them
  std::string cpu_isa;             // the kernels' ISA: kiln/exec/cpu_isa.h's CpuIsaSummary()
  // Where the signature's steps run (device name, steps), and the copies between devices per
  // call (copy_bytes -1: they depend on the fed shapes).
  std::vector<std::pair<std::string, int>> device_steps;
  int half_in_float = 0;  // half-precision nodes computed in float32 regions (PlanStats)
  int copies = 0;
  int64_t copy_bytes = 0;
  std::string device_graph;  // PlanStats::device_graph (with --cuda_graphs)
  std::string io_device;     // where inputs and results stayed (--device_io), or ""
};

// Loads, feeds, times. Warnings (an input given twice) go to `err`.
Result<BenchReport> RunBench(const BenchOptions& options, std::ostream& err);

// The short aligned table, or one JSON object with exactly the keys docs/cli.md lists.
void PrintBenchText(const BenchReport& report, std::ostream& out);
void PrintBenchJson(const BenchReport& report, std::ostream& out);

// A random input for `spec`: unknown dims are `batch` for the first and 1 for the others (an
// unknown rank is a scalar). Floating-point and complex values in [-1, 1), integers in [0, 10),
// bools either way, strings of 1 to 8 lowercase letters. InvalidArgument for dtypes with no
// value to make (resource, variant).
Result<Tensor> RandomInput(const exec::TensorSpec& spec, int64_t batch, std::mt19937& rng);

// The nearest-rank percentile (p in (0, 100]) of sorted values: the smallest value with at
// least p% of the values at or below it.
double Percentile(std::span<const double> sorted, double p);

// Sum of the sizes of the regular files under `dir` (symlinks not followed).
Result<uint64_t> DirectoryBytes(const std::filesystem::path& dir);

// The process's resident set now (/proc/self/statm), and at its peak (getrusage), in KiB.
int64_t CurrentRssKb();
int64_t PeakRssKb();

}  // namespace kiln::cli
