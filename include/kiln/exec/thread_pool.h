// Intra-op parallelism. One pool of threads serves every kernel: ours through ParallelFor and
// oneDNN's, which runs on the same OpenMP threads (see libexec/device/thread_pool.cc), so the
// two never compete for cores. A loaded model fixes its thread count (LoadOptions); concurrent
// callers each get their own team.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

namespace kiln::exec {

// A non-owning reference to a callable, so a parallel loop never allocates.
template <typename Sig>
class FunctionRef;
template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& f)  // NOLINT(google-explicit-constructor)
      : obj_(const_cast<void*>(static_cast<const void*>(&f))), call_([](void* o, Args... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(a)...);
        }) {}
  R operator()(Args... a) const { return call_(obj_, std::forward<Args>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, Args...);
};

// The number of cores this process may use: its CPU affinity, capped by a cgroup CPU quota
// (cpu.max; a container's --cpus), at least 1. Read once per process.
int DefaultThreadCount();

// libgomp's threads (oneDNN's and ours) spin for about 3 ms after every parallel region unless
// told otherwise; with other work on the cores, every region then waits for descheduled
// spinners (measured: a batch-256 MLP 8x slower on all cores than on one, beside one busy
// process per core). libgomp reads its settings once, when it is loaded, so a program can set
// them for itself only by starting again. A program's main() calls this first: when neither
// OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set, it sets GOMP_SPINCOUNT to kBoundedOpenMpSpin
// (about 0.1 ms of spinning, then the threads sleep) and re-executes the program
// (/proc/self/exe) with the same arguments, as Java's launcher does to set its library path.
// It returns (having done nothing) when either is set, or when the re-execution fails. kiln's
// programs (savedmodel-cli, savedmodel-server, kiln-run) call it; a program that embeds kiln
// may, or set the variable in its service's environment (docs/design.md, "Threads").
inline constexpr const char* kBoundedOpenMpSpin = "10000";
void BoundOpenMpSpinning(char** argv);

// Whether other work holds the cores the calling thread runs on: over its last ~40 ms of running
// (several of the scheduler's slices), the thread waited for a core (the kernel's run delay,
// /proc/thread-self/schedstat) more than a sixth of the time (less than a twentieth clears it).
// Then every wake-up waits for another task's slice to end (milliseconds): a parallel region's
// workers to start, and the caller to resume after the join. So kernels split only work worth
// that (ParallelFor, and oneDNN's twin primitives: kernels/cpu/onednn.h). Cheap: a coarse clock
// read, and a read of the file every 10 ms at most, per thread.
// KILN_CONTENTION=on|off in the environment fixes the answer (benchmarks, tests).
bool CallingThreadContended();
// Fixes CallingThreadContended's answer for every thread (`true`/`false`), or gives it back to
// the measurement (`std::nullopt`); for tests.
void OverrideContention(std::optional<bool> contended);

// How much larger a range must be for ParallelFor to split work while the caller is contended:
// a range worth a few microseconds on a quiet machine, times this, outlasts the waits of a
// region (measured: EfficientNetB0 beside two busy processes, 17 ms a call on one thread, 27-33
// ms on two with one 0.4 ms Sigmoid split).
inline constexpr int64_t kContendedGrain = 4096;

class ThreadPool {
 public:
  // `num_threads` <= 0 means DefaultThreadCount().
  explicit ThreadPool(int num_threads);
  int num_threads() const { return num_threads_; }

  // Runs fn(begin, end) over [0, n), split into at most num_threads() contiguous ranges of at
  // least `min_per_thread` items each (kContendedGrain times that while the calling thread is
  // contended), and returns when all are done. With one range (small n, one thread) fn runs
  // inline on the caller.
  void ParallelFor(int64_t n, int64_t min_per_thread, FunctionRef<void(int64_t, int64_t)> fn) const;

  // Makes libraries that size their own parallel regions from the calling thread (oneDNN)
  // use this pool's thread count. Cheap; called before such a library runs.
  void ApplyToCallingThread() const;
  // The same with at most `max_threads` (a kernel's cost model: kernels/onednn.h).
  void ApplyToCallingThread(int max_threads) const;

 private:
  int num_threads_;
};

}  // namespace kiln::exec
