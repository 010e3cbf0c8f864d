// ThreadPool on OpenMP's runtime (libgomp). oneDNN, which runs our matrix products and
// convolutions, is built on libgomp; if our own parallel loops used a second pool, its threads
// would compete with the OpenMP threads that spin after every oneDNN call (on 2 cores that
// halves throughput). So our loops enter a parallel region through libgomp's stable C ABI
// (GOMP_parallel, the entry point GCC compiles `#pragma omp parallel` to) and share the team.
// Calling the ABI directly keeps this file free of OpenMP pragmas, so Clang builds it without
// its own (different) OpenMP runtime.
#include "kiln/exec/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <thread>

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

int DefaultThreadCount() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
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

}  // namespace kiln::exec
