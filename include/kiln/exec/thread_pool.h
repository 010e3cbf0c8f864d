// Intra-op parallelism. One pool of threads serves every kernel: ours through ParallelFor and
// oneDNN's, which runs on the same OpenMP threads (see libexec/device/thread_pool.cc), so the
// two never compete for cores. A loaded model fixes its thread count (LoadOptions); concurrent
// callers each get their own team.
#pragma once

#include <cstdint>
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

// The number of cores this process may use (sched affinity), at least 1.
int DefaultThreadCount();

class ThreadPool {
 public:
  // `num_threads` <= 0 means DefaultThreadCount().
  explicit ThreadPool(int num_threads);
  int num_threads() const { return num_threads_; }

  // Runs fn(begin, end) over [0, n), split into at most num_threads() contiguous ranges of at
  // least `min_per_thread` items each, and returns when all are done. With one range (small n,
  // one thread) fn runs inline on the caller.
  void ParallelFor(int64_t n, int64_t min_per_thread, FunctionRef<void(int64_t, int64_t)> fn) const;

  // Makes libraries that size their own parallel regions from the calling thread (oneDNN)
  // use this pool's thread count. Cheap; called before such a library runs.
  void ApplyToCallingThread() const;

 private:
  int num_threads_;
};

}  // namespace kiln::exec
