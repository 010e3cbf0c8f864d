// Dynamic batching for one signature of one loaded version (TF Serving's BatchingSession
// semantics): concurrent requests are queued, stacked along dimension 0 up to max_batch_size
// rows (or until batch_timeout_micros after the oldest request), padded up to the next allowed
// batch size with copies of the first row, run once, and the outputs split back per request.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/saved_model.h"
#include "kiln/serve/metrics.h"

namespace kiln::serve {

struct BatchingOptions {
  bool enabled = false;  // off by default, as in TF Serving
  int64_t max_batch_size = 32;
  int64_t batch_timeout_micros = 1000;
  std::vector<int64_t> allowed_batch_sizes;  // ascending; the last must equal max_batch_size
  int64_t max_enqueued_batches = 64;         // queue limit = this * max_batch_size rows
  int num_batch_threads = 1;
  // TF Serving's large batch splitting: a request larger than the execution batch size
  // (max_execution_batch_size, default max_batch_size) is split into chunks that join batches
  // of their own, and the answers are stacked back. Batches then hold at most that many rows.
  bool enable_large_batch_splitting = false;
  int64_t max_execution_batch_size = 0;  // 0: max_batch_size
  // The most rows one batch runs.
  int64_t BatchLimit() const {
    return enable_large_batch_splitting && max_execution_batch_size > 0 ? max_execution_batch_size
                                                                        : max_batch_size;
  }
  // Checks the constraints above.
  Status Validate() const;
};

class Batcher {
 public:
  // Whether `signature` can be batched: every input and output has rank >= 1 and inputs take
  // any size in dimension 0.
  static bool CanBatch(const exec::Signature& signature);

  Batcher(const exec::Signature* signature, BatchingOptions options, Metrics* metrics,
          std::string model_name);
  // Runs what is queued, then stops the threads.
  ~Batcher();
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Blocks until the batch holding these inputs has run. A request larger than max_batch_size
  // runs alone (split into chunks with enable_large_batch_splitting); a full queue is an
  // Unavailable error. A request whose deadline passes while it waits is answered DEADLINE_EXCEEDED
  // and left out of its batch; a batch runs until the latest deadline of its requests.
  Result<std::map<std::string, Tensor>> Run(std::map<std::string, Tensor> inputs,
                                            std::chrono::steady_clock::time_point deadline =
                                                std::chrono::steady_clock::time_point::max());

 private:
  struct Task {
    std::map<std::string, Tensor> inputs;
    int64_t rows = 0;
    std::chrono::steady_clock::time_point enqueued;
    std::chrono::steady_clock::time_point deadline;
    std::promise<Result<std::map<std::string, Tensor>>> done;
  };
  void Loop();
  void RunBatch(std::vector<std::unique_ptr<Task>>& tasks);
  bool Compatible(const Task& a, const Task& b) const;
  int64_t PaddedSize(int64_t rows) const;

  const exec::Signature* signature_;
  BatchingOptions options_;
  Metrics* metrics_;
  std::string model_name_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Task>> queue_;
  int64_t queued_rows_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
  // Queues the tasks (all or none) and waits for their answers, stacked in order.
  Result<std::map<std::string, Tensor>> Enqueue(std::vector<std::unique_ptr<Task>> tasks);
};

}  // namespace kiln::serve
