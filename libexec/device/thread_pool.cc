// ThreadPool on OpenMP's runtime (libgomp). oneDNN, which runs our matrix products and
// convolutions, is built on libgomp; if our own parallel loops used a second pool, its threads
// would compete with the OpenMP threads that spin after every oneDNN call (on 2 cores that
// halves throughput). So our loops enter a parallel region through libgomp's stable C ABI
// (GOMP_parallel, the entry point GCC compiles `#pragma omp parallel` to) and share the team.
// Calling the ABI directly keeps this file free of OpenMP pragmas, so Clang builds it without
// its own (different) OpenMP runtime.
#include "kiln/exec/thread_pool.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "device/cpu_quota.h"

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
  if (begin < end) (*job.fn)(begin, end);
}

}  // namespace

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
  const int64_t by_size = n / std::max<int64_t>(1, min_per_thread);
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
