// Threads beside other work: the contention signal (kiln/exec/thread_pool.h), ParallelFor's
// split while contended, and oneDNN twins built for fewer threads (kernels/cpu/onednn.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "kernels/cpu/onednn.h"
#include "kiln/exec/thread_pool.h"

extern "C" int omp_get_thread_num(void);

namespace kiln::exec {
namespace {

// Resets the override when a test case ends, however it ends.
struct ContentionOverride {
  explicit ContentionOverride(std::optional<bool> c) { OverrideContention(c); }
  ~ContentionOverride() { OverrideContention(std::nullopt); }
  ContentionOverride(const ContentionOverride&) = delete;
  ContentionOverride& operator=(const ContentionOverride&) = delete;
};

TEST_CASE("contention: an override fixes the answer, and beside busy threads the thread waits") {
  {
    const ContentionOverride on(true);
    CHECK(CallingThreadContended());
  }
  {
    const ContentionOverride off(false);
    CHECK_FALSE(CallingThreadContended());
  }
  // Four busy threads per CPU: this thread waits for a core most of the time it could run.
  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  const int n = 4 * std::max(1, DefaultThreadCount());
  for (int i = 0; i < n; ++i)
    busy.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  bool seen = false;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  volatile double sink = 0;
  while (!seen && std::chrono::steady_clock::now() < until) {
    for (int i = 0; i < 100000; ++i) sink = sink + 1.0;
    seen = CallingThreadContended();
  }
  stop = true;
  for (std::thread& t : busy) t.join();
  CHECK_MESSAGE(seen, "never contended beside ", n, " busy threads in 5 s");
}

TEST_CASE("parallel for: while contended, only ranges kContendedGrain times larger split") {
  const ThreadPool pool(4);
  for (const bool contended : {false, true}) {
    INFO("contended: ", contended);
    const ContentionOverride fixed(contended);
    for (const int64_t n : {int64_t{100}, 4 * kContendedGrain}) {
      std::mutex mu;
      std::vector<std::pair<int64_t, int64_t>> ranges;
      pool.ParallelFor(n, 1, [&](int64_t b, int64_t e) {
        const std::lock_guard lock(mu);
        ranges.emplace_back(b, e);
      });
      std::sort(ranges.begin(), ranges.end());
      const size_t want = contended && n < 2 * kContendedGrain ? 1 : 4;
      CHECK(ranges.size() == want);
      int64_t next = 0;  // the ranges cover [0, n) once
      for (const auto& [b, e] : ranges) {
        CHECK(b == next);
        next = e;
      }
      CHECK(next == n);
    }
  }
}

// Pseudo-random floats in [-1, 1) filling `md`'s buffer.
std::vector<float> Noise(const dnnl::memory::desc& md, uint32_t seed) {
  std::vector<float> v((md.get_size() + 3) / 4);
  for (float& x : v) {
    seed = seed * 747796405u + 2891336453u;
    x = static_cast<float>(seed >> 8) / 8388608.0f - 1.0f;
  }
  return v;
}

// Runs `p` (built for `threads`) on `args` (copies; dst starts as given) and returns dst.
std::vector<float> RunPrimitive(const ThreadPool& pool, const dnnl::primitive& p,
                                const dnnl::memory::desc& scratch, int threads,
                                std::vector<std::pair<int, const dnnl::memory::desc*>> mds,
                                std::vector<std::vector<float>> data) {
  std::unordered_map<int, dnnl::memory> args;
  size_t dst = 0;
  for (size_t i = 0; i < mds.size(); ++i) {
    args.emplace(mds[i].first, dnnl::memory(*mds[i].second, onednn::Engine(), data[i].data()));
    if (mds[i].first == DNNL_ARG_DST) dst = i;
  }
  std::vector<unsigned char> scratch_buf(scratch.get_size());
  if (!scratch_buf.empty())
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratch, onednn::Engine(), scratch_buf.data()));
  pool.ApplyToCallingThread(threads);
  p.execute(onednn::ThreadStream(), args);
  onednn::ThreadStream().wait();
  pool.ApplyToCallingThread();
  return data[dst];
}

// A primitive built for `threads` and its lean twin: a twin that is kept runs on one thread and
// gives the primitive's bits on operands other than those it was checked with. `must_exist`:
// oneDNN's forward convolutions never split a sum across threads, so their twin is kept; a
// product's may be refused (on AVX2 oneDNN's GEMM splits K across threads for some shapes).
void CheckTwin(const ThreadPool& pool, const dnnl::primitive& p, const dnnl::memory::desc& scratch,
               int threads, double macs,
               const std::vector<std::pair<int, const dnnl::memory::desc*>>& mds, bool must_exist) {
  onednn::LeanTwin twin;
  twin.Plan(macs, threads);
  REQUIRE(twin.threads() == 1);
  std::vector<onednn::MemArg> list;
  for (const auto& [arg, md] : mds) list.push_back({arg, md, nullptr});
  const dnnl::primitive* lean = nullptr;
  switch (list.size()) {  // Get takes an initializer list, as ExecuteBound does
    case 3:
      lean = twin.Get(pool, p, threads, {list[0], list[1], list[2]});
      break;
    case 4:
      lean = twin.Get(pool, p, threads, {list[0], list[1], list[2], list[3]});
      break;
    default:
      FAIL("3 or 4 arguments");
  }
  const char* impl = "?";
  (void)dnnl_primitive_desc_query(p.get_primitive_desc(), dnnl_query_impl_info_str, 0, &impl);
  if (lean == nullptr) {
    const std::string why = "oneDNN's one-thread kernel gives other bits than its " +
                            std::to_string(threads) + "-thread one here (" + impl + ")";
    if (must_exist) FAIL(why);
    MESSAGE(why, ": refused, as it must be");
    return;
  }
  std::vector<std::vector<float>> data;
  for (size_t i = 0; i < mds.size(); ++i) data.push_back(Noise(*mds[i].second, 17 + i));
  const std::vector<float> want = RunPrimitive(pool, p, scratch, threads, mds, data);
  const std::vector<float> got = RunPrimitive(pool, *lean, twin.scratch(), 1, mds, data);
  REQUIRE(want.size() == got.size());
  CHECK(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);
}

TEST_CASE(
    "lean twin: a convolution's and a product's one-thread twins give their bits or are refused") {
  // Four threads whatever the machine has: primitives made now are built for up to four.
  const ThreadPool pool(4);
  pool.ApplyToCallingThread();
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  SUBCASE("a 3x3 convolution with bias, summed into its destination, then ReLU") {
    const dnnl::memory::desc src({1, 64, 28, 28}, dt::f32, tag::nhwc);
    const dnnl::memory::desc dst({1, 64, 28, 28}, dt::f32, tag::nhwc);
    const dnnl::memory::desc bias({64}, dt::f32, tag::x);
    const dnnl::memory::desc w_any({64, 64, 3, 3}, dt::f32, tag::any);
    const double macs = 28.0 * 28 * 64 * 64 * 9;
    dnnl::post_ops ops;
    ops.append_sum(1.f);
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(ops);
    const onednn::BuildThreads build(onednn::ThreadsWorth(macs));
    REQUIRE(build.threads() == 4);
    const dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::convolution_direct, src, w_any, bias, dst,
                                        {1, 1}, {1, 1}, {1, 1}),
        attr, onednn::Engine());
    const dnnl::memory::desc weights = pd.weights_desc();
    CheckTwin(pool, dnnl::convolution_forward(pd), pd.scratchpad_desc(), 4, macs,
              {{DNNL_ARG_SRC, &src},
               {DNNL_ARG_WEIGHTS, &weights},
               {DNNL_ARG_BIAS, &bias},
               {DNNL_ARG_DST, &dst}},
              /*must_exist=*/true);
  }
  SUBCASE("a (64, 512) x (512, 512) product") {
    const dnnl::memory::desc a({64, 512}, dt::f32, tag::ab);
    const dnnl::memory::desc b({512, 512}, dt::f32, tag::ab);
    const dnnl::memory::desc c({64, 512}, dt::f32, tag::ab);
    const double macs = 64.0 * 512 * 512;
    const onednn::BuildThreads build(onednn::ThreadsWorth(macs));
    REQUIRE(build.threads() == 4);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, onednn::Engine());
    CheckTwin(pool, dnnl::matmul(pd), pd.scratchpad_desc(), 4, macs,
              {{DNNL_ARG_SRC, &a}, {DNNL_ARG_WEIGHTS, &b}, {DNNL_ARG_DST, &c}},
              /*must_exist=*/false);
  }
  SUBCASE("no twin for work worth the threads while contended") {
    onednn::LeanTwin twin;
    twin.Plan(8 * onednn::kContendedMacsPerThread, 4);
    CHECK(twin.threads() == 0);
    twin.Plan(2.5 * onednn::kContendedMacsPerThread, 4);
    CHECK(twin.threads() == 2);
  }
  ThreadPool(DefaultThreadCount()).ApplyToCallingThread();
}

}  // namespace
}  // namespace kiln::exec
