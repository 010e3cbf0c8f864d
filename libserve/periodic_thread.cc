#include "kiln/serve/periodic_thread.h"

#include <utility>

namespace kiln::serve {

void PeriodicThread::Start(std::chrono::milliseconds interval, std::function<void()> fn) {
  Stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }
  thread_ = std::thread([this, interval, fn = std::move(fn)] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, interval, [this] { return stop_; })) {
      lock.unlock();
      fn();
      lock.lock();
    }
  });
}

void PeriodicThread::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace kiln::serve
