// Large float32 GEMM against the machine's peak (issue 22). The peak is measured here, from the
// CPU's FMA throughput: independent fused multiply-adds on the widest vectors the ISA cap allows
// (KILN_MAX_CPU_ISA / ONEDNN_MAX_CPU_ISA, kiln::exec::ActiveCpuIsa), on every thread at once.
// kiln's MatMul kernel then runs square and model-shaped products the way a model's Dense does
// (prepared once with constant weights through SingleOp, then called), and each row prints its
// GFLOP/s and its share of that peak. Issue 22's goal: a large GEMM at >= 85 % of the peak.
// Usage: bench_gemm_roofline [threads (1)] [seconds per row (1)]
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "kiln/core/tensor.h"
#include "kiln/exec/cpu_isa.h"
#include "kiln/exec/op_runner.h"
#include "kiln/exec/thread_pool.h"
#include "tensorflow/framework.pb.h"

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// `iters` rounds of kAcc independent FMAs on one vector register each (more chains than the
// FMA latency times the FMA ports, so the ports never wait); returns a sum so nothing is dead.
constexpr int kAcc = 12;

__attribute__((target("avx2,fma"))) float FmaAvx2(int64_t iters) {
  __m256 acc[kAcc];
  for (int j = 0; j < kAcc; ++j) acc[j] = _mm256_set1_ps(static_cast<float>(j));
  const __m256 a = _mm256_set1_ps(0.9999f), b = _mm256_set1_ps(1e-4f);
  for (int64_t i = 0; i < iters; ++i)
    for (int j = 0; j < kAcc; ++j) acc[j] = _mm256_fmadd_ps(acc[j], a, b);
  float sum = 0;
  for (int j = 0; j < kAcc; ++j) {
    alignas(32) float v[8];
    _mm256_store_ps(v, acc[j]);
    for (float x : v) sum += x;
  }
  return sum;
}

__attribute__((target("avx512f"))) float FmaAvx512(int64_t iters) {
  // Loads, not _mm512_set1_ps: GCC 12 warns that its expansion reads an undefined vector.
  alignas(64) float init[kAcc][16], av[16], bv[16];
  for (int j = 0; j < kAcc; ++j) std::fill_n(init[j], 16, static_cast<float>(j));
  std::fill_n(av, 16, 0.9999f);
  std::fill_n(bv, 16, 1e-4f);
  __m512 acc[kAcc];
  for (int j = 0; j < kAcc; ++j) acc[j] = _mm512_load_ps(init[j]);
  const __m512 a = _mm512_load_ps(av), b = _mm512_load_ps(bv);
  for (int64_t i = 0; i < iters; ++i)
    for (int j = 0; j < kAcc; ++j) acc[j] = _mm512_fmadd_ps(acc[j], a, b);
  float sum = 0;
  for (int j = 0; j < kAcc; ++j) {
    _mm512_store_ps(init[j], acc[j]);
    for (float x : init[j]) sum += x;
  }
  return sum;
}

// GFLOP/s of `threads` threads each running the FMA loop at once, best of three.
double PeakGflops(kiln::exec::CpuIsa isa, int threads) {
  const int lanes = isa == kiln::exec::CpuIsa::kAvx512 ? 16 : 8;
  const int64_t iters = 20'000'000;
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::thread> pool;
    std::vector<float> sink(threads);
    const Clock::time_point t0 = Clock::now();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        sink[t] = isa == kiln::exec::CpuIsa::kAvx512 ? FmaAvx512(iters) : FmaAvx2(iters);
      });
    for (std::thread& th : pool) th.join();
    const double s = SecondsSince(t0);
    best = std::max(best, 2.0 * kAcc * lanes * static_cast<double>(iters) * threads / s / 1e9);
    if (sink[0] == 12345.f) std::printf(" ");  // keep the sums
  }
  return best;
}

struct Gemm {
  const char* what;
  int64_t m, k, n;
};

// kiln's MatMul of an [m, k] input by constant [k, n] weights: GFLOP/s, median over rounds of
// about `seconds` in all.
kiln::Result<double> KilnGflops(const Gemm& g, const kiln::exec::ThreadPool& pool, double seconds) {
  kiln::Tensor a(kiln::DType::kFloat, kiln::Shape{g.m, g.k});
  kiln::Tensor w(kiln::DType::kFloat, kiln::Shape{g.k, g.n});
  for (int64_t i = 0; i < a.NumElements(); ++i) a.data<float>()[i] = (i % 17) * 0.01f - 0.08f;
  for (int64_t i = 0; i < w.NumElements(); ++i) w.data<float>()[i] = (i % 13) * 0.01f - 0.06f;
  kiln::exec::ProtoAttrMap attrs;
  attrs["T"].set_type(static_cast<tensorflow::DataType>(kiln::DTypeToProto(kiln::DType::kFloat)));
  attrs["transpose_a"].set_b(false);
  attrs["transpose_b"].set_b(false);
  const kiln::exec::TensorSpec specs[] = {{kiln::DType::kFloat, kiln::PartialShape(a.shape())},
                                          {kiln::DType::kFloat, kiln::PartialShape(w.shape())}};
  const kiln::Tensor* known[] = {nullptr, &w};
  kiln::exec::SingleOpOptions options;
  options.threads = &pool;
  KILN_ASSIGN_OR_RETURN(
      kiln::exec::SingleOp op,
      kiln::exec::SingleOp::Prepare("MatMul", "gemm", attrs, specs, known, options));
  const kiln::Tensor inputs[] = {a, w};
  KILN_RETURN_IF_ERROR(op.Run(inputs).status());  // warm up (and JIT)
  const double flops =
      2.0 * static_cast<double>(g.m) * static_cast<double>(g.k) * static_cast<double>(g.n);
  std::vector<double> rates;
  const Clock::time_point start = Clock::now();
  while (rates.size() < 5 || (SecondsSince(start) < seconds && rates.size() < 1000)) {
    const Clock::time_point t0 = Clock::now();
    KILN_RETURN_IF_ERROR(op.Run(inputs).status());
    rates.push_back(flops / SecondsSince(t0) / 1e9);
  }
  std::nth_element(rates.begin(), rates.begin() + rates.size() / 2, rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::max(1, std::atoi(argv[1])) : 1;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 1.0;
  const kiln::exec::CpuIsa isa = kiln::exec::ActiveCpuIsa();
  std::printf("gemm_roofline: %d thread(s), kernels: %s\n", threads,
              kiln::exec::CpuIsaSummary().c_str());
  if (isa == kiln::exec::CpuIsa::kBaseline) {
    std::printf("no AVX2/FMA here: no peak to measure\n");
    return 0;
  }
  const double peak = PeakGflops(isa, threads);
  std::printf("peak (FMA throughput, %s, %d thread(s)): %.1f GFLOP/s\n\n",
              std::string(kiln::exec::CpuIsaName(isa)).c_str(), threads, peak);
  const Gemm rows[] = {
      {"square 1024", 1024, 1024, 1024},
      {"square 2048", 2048, 2048, 2048},
      {"BERT-base FFN in, 8 x 128 tokens", 1024, 768, 3072},
      {"BERT-base FFN out, 8 x 128 tokens", 1024, 3072, 768},
      {"BERT-base projection, 128 tokens", 128, 768, 768},
      {"MLP 784-512, batch 256", 256, 784, 512},
      {"ResNet50 3x3 conv as GEMM (56x56, 64 ch)", 3136, 576, 64},
  };
  kiln::exec::ThreadPool pool(threads);
  std::printf("| product | m x k x n | kiln GFLOP/s | of peak |\n|---|---|---|---|\n");
  bool large_ok = true;
  for (const Gemm& g : rows) {
    kiln::Result<double> r = KilnGflops(g, pool, seconds);
    if (!r.ok()) {
      std::fprintf(stderr, "%s: %s\n", g.what, r.status().ToString().c_str());
      return 1;
    }
    std::printf("| %s | %lld x %lld x %lld | %.1f | %.0f %% |\n", g.what,
                static_cast<long long>(g.m), static_cast<long long>(g.k),
                static_cast<long long>(g.n), *r, 100 * *r / peak);
    if (g.m == 2048) large_ok = *r >= 0.85 * peak;
  }
  std::printf("\nissue 22 goal, square 2048 >= 85 %% of the peak: %s\n", large_ok ? "yes" : "no");
  return 0;
}
