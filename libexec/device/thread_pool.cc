// ThreadPool on OpenMP's runtime (libgomp). oneDNN, which runs our matrix products and
// convolutions, is built on libgomp; if our own parallel loops used a second pool, its threads
// would compete with the OpenMP threads that spin after every oneDNN call (on 2 cores that
// halves throughput). So our loops enter a parallel region through libgomp's stable C ABI
// (GOMP_parallel, the entry point GCC compiles `#pragma omp parallel` to) and share the team.
// Calling the ABI directly keeps this file free of OpenMP pragmas, so Clang builds it without
// its own (different) OpenMP runtime.
#include "kiln/exec/thread_pool.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>

#include "device/cpu_quota.h"
#include "device/denormals.h"

extern "C" {
void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
int omp_get_thread_num(void);
void omp_set_num_threads(int n);
}

namespace kiln::exec {
namespace {

struct Job {
  FunctionRef<void(int64_t, int64_t)>* fn;
  int64_t n;
  int ranges;
};

void RunRange(void* data) {
  const Job& job = *static_cast<Job*>(data);
  const int64_t r = omp_get_thread_num();
  if (r >= job.ranges) return;
  const int64_t begin = job.n * r / job.ranges, end = job.n * (r + 1) / job.ranges;
  // A worker the team made before any call (while preparing) flushes too.
  const ScopedFlushDenormals flush;
  if (begin < end) (*job.fn)(begin, end);
}

// CallingThreadContended's override: -1 measure, 0 no, 1 yes.
std::atomic<int> contention_override{[] {
  const char* v = std::getenv("KILN_CONTENTION");
  if (v == nullptr) return -1;
  if (std::strcmp(v, "on") == 0) return 1;
  if (std::strcmp(v, "off") == 0) return 0;
  return -1;
}()};

// The calling thread's scheduler statistics, sampled at most every kSampleNs.
class ContentionSampler {
 public:
  ContentionSampler() : fd_(open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)) {}
  ~ContentionSampler() {
    if (fd_ >= 0) close(fd_);
  }
  ContentionSampler(const ContentionSampler&) = delete;
  ContentionSampler& operator=(const ContentionSampler&) = delete;

  bool Contended() {
    if (fd_ < 0) return false;
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    const int64_t ns = int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
    if (ns < next_ns_) return contended_;
    next_ns_ = ns + kSampleNs;
    // "<ns on a cpu> <ns waiting on a run queue> <timeslices>"
    char buf[96];
    const ssize_t len = pread(fd_, buf, sizeof(buf) - 1, 0);
    if (len <= 0) return contended_;
    buf[len] = '\0';
    unsigned long long ran = 0, waited = 0;
    if (std::sscanf(buf, "%llu %llu", &ran, &waited) != 2) return contended_;
    if (sampled_) {
      const double d_ran = static_cast<double>(ran - ran_);
      const double d_waited = static_cast<double>(waited - waited_);
      // Too little running since the last sample says nothing: wait for more.
      if (d_ran + d_waited < kMinWindowNs) return contended_;
      Update(d_waited / (d_ran + d_waited));
    }
    sampled_ = true;
    ran_ = ran;
    waited_ = waited;
    return contended_;
  }

 private:
  // One window's verdict. A thread that runs alone while contended sees no waiting when the
  // scheduler has given it a core of its own and crowded the other work onto the rest; going
  // back to all threads then waits again at once. So each such quick return doubles the clean
  // windows the next exit needs (up to kMaxCleanWindows, about 1.3 s of running), and a long
  // clean spell starts again from one.
  void Update(double waited_share) {
    ++windows_since_exit_;
    if (contended_) {
      clean_seen_ = waited_share < 0.05 ? clean_seen_ + 1 : 0;
      if (clean_seen_ >= clean_needed_) {
        contended_ = false;
        windows_since_exit_ = 0;
      }
    } else if (waited_share > 1.0 / 6) {
      contended_ = true;
      clean_seen_ = 0;
      clean_needed_ = windows_since_exit_ <= 2 ? std::min(2 * clean_needed_, kMaxCleanWindows) : 1;
    }
  }

  static constexpr int64_t kSampleNs = 10'000'000;
  static constexpr double kMinWindowNs = 40e6;
  static constexpr int kMaxCleanWindows = 32;
  int fd_;
  int64_t next_ns_ = 0;
  bool sampled_ = false;
  bool contended_ = false;
  int clean_seen_ = 0;
  int clean_needed_ = 1;
  int windows_since_exit_ = 1 << 20;
  unsigned long long ran_ = 0, waited_ = 0;
};

}  // namespace

bool CallingThreadContended() {
  const int fixed = contention_override.load(std::memory_order_relaxed);
  if (fixed >= 0) return fixed == 1;
  thread_local ContentionSampler sampler;
  return sampler.Contended();
}

void OverrideContention(std::optional<bool> contended) {
  contention_override.store(contended.has_value() ? (*contended ? 1 : 0) : -1,
                            std::memory_order_relaxed);
}

void BoundOpenMpSpinning(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  if (setenv("GOMP_SPINCOUNT", kBoundedOpenMpSpin, 0) != 0) return;
  execv("/proc/self/exe", argv);
  // Still here: the program runs on with libgomp's default spinning (the variable set now is
  // harmless, and keeps a program that calls again from trying twice).
}

int DefaultThreadCount() {
  static const int count = [] {
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof(set), &set) == 0
                   ? CPU_COUNT(&set)
                   : static_cast<int>(std::thread::hardware_concurrency());
    if (const std::optional<int> quota = internal::ProcessCpuQuota()) cpus = std::min(cpus, *quota);
    return std::max(1, cpus);
  }();
  return count;
}

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(num_threads > 0 ? num_threads : DefaultThreadCount()) {}

void ThreadPool::ParallelFor(int64_t n, int64_t min_per_thread,
                             FunctionRef<void(int64_t, int64_t)> fn) const {
  if (n <= 0) return;
  int64_t by_size = n / std::max<int64_t>(1, min_per_thread);
  if (by_size > 1 && num_threads_ > 1 && CallingThreadContended()) by_size /= kContendedGrain;
  const int ranges =
      static_cast<int>(std::min<int64_t>(num_threads_, std::max<int64_t>(1, by_size)));
  if (ranges <= 1) {
    fn(0, n);
    return;
  }
  Job job{&fn, n, ranges};
  GOMP_parallel(&RunRange, &job, static_cast<unsigned>(ranges), 0);
}

void ThreadPool::ApplyToCallingThread() const { omp_set_num_threads(num_threads_); }

void ThreadPool::ApplyToCallingThread(int max_threads) const {
  omp_set_num_threads(std::clamp(max_threads, 1, num_threads_));
}

}  // namespace kiln::exec
