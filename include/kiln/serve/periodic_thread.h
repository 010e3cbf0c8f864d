// A function run every `interval` on a thread of its own (the repository's version polling,
// the config file's polling), until Stop or destruction. Stop wakes the wait at once; a run in
// progress finishes first.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace kiln::serve {

class PeriodicThread {
 public:
  PeriodicThread() = default;
  ~PeriodicThread() { Stop(); }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;
  // Stops a previous run first; `fn` first runs one interval after Start.
  void Start(std::chrono::milliseconds interval, std::function<void()> fn);
  void Stop();

 private:
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

}  // namespace kiln::serve
