#include "kiln/serve/batcher.h"

#include <algorithm>

#include "kiln/serve/tensor_rows.h"

namespace kiln::serve {

Status BatchingOptions::Validate() const {
  if (max_batch_size < 1) return InvalidArgument("max_batch_size must be >= 1");
  if (batch_timeout_micros < 0) return InvalidArgument("batch_timeout_micros must be >= 0");
  if (max_enqueued_batches < 1) return InvalidArgument("max_enqueued_batches must be >= 1");
  if (num_batch_threads < 1 || num_batch_threads > 256)
    return InvalidArgument("num_batch_threads must be in [1, 256]");
  for (size_t i = 0; i < allowed_batch_sizes.size(); ++i) {
    if (allowed_batch_sizes[i] < 1 || (i && allowed_batch_sizes[i] <= allowed_batch_sizes[i - 1]))
      return InvalidArgument("allowed_batch_sizes must be positive and ascending");
  }
  if (enable_large_batch_splitting &&
      (max_execution_batch_size < 0 || max_execution_batch_size > max_batch_size))
    return InvalidArgument("max_execution_batch_size (", max_execution_batch_size,
                           ") must be in [1, max_batch_size (", max_batch_size, ")]");
  if (!allowed_batch_sizes.empty() && allowed_batch_sizes.back() != BatchLimit())
    return InvalidArgument(
        "the last allowed batch size (", allowed_batch_sizes.back(), ") must equal ",
        BatchLimit() == max_batch_size ? "max_batch_size" : "max_execution_batch_size", " (",
        BatchLimit(), ")");
  return OkStatus();
}

bool Batcher::CanBatch(const exec::Signature& signature) {
  if (signature.inputs().empty() || signature.outputs().empty()) return false;
  for (const auto& a : signature.inputs()) {
    const PartialShape& s = a.spec.shape;
    if (s.unknown_rank() || s.rank() < 1 || s.dim(0) != -1) return false;
    if (!DTypeIsPod(a.spec.dtype) && a.spec.dtype != DType::kString) return false;
  }
  for (const auto& a : signature.outputs()) {
    const PartialShape& s = a.spec.shape;
    if (!s.unknown_rank() && s.rank() < 1) return false;
  }
  return true;
}

Batcher::Batcher(const exec::Signature* signature, BatchingOptions options, Metrics* metrics,
                 std::string model_name)
    : signature_(signature),
      options_(std::move(options)),
      metrics_(metrics),
      model_name_(std::move(model_name)) {
  for (int i = 0; i < options_.num_batch_threads; ++i) threads_.emplace_back([this] { Loop(); });
}

Batcher::~Batcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

int64_t Batcher::PaddedSize(int64_t rows) const {
  for (int64_t s : options_.allowed_batch_sizes)
    if (s >= rows) return s;
  return rows;
}

bool Batcher::Compatible(const Task& a, const Task& b) const {
  for (const auto& [k, t] : a.inputs) {
    auto it = b.inputs.find(k);
    if (it == b.inputs.end()) return false;
    const Tensor& u = it->second;
    if (u.dtype() != t.dtype() || u.rank() != t.rank()) return false;
    for (int i = 1; i < t.rank(); ++i)
      if (u.dim(i) != t.dim(i)) return false;
  }
  return a.inputs.size() == b.inputs.size();
}

Result<std::map<std::string, Tensor>> Batcher::Run(std::map<std::string, Tensor> inputs,
                                                   std::chrono::steady_clock::time_point deadline) {
  exec::RunOptions alone;
  alone.deadline = deadline;
  int64_t rows = -1;
  bool batchable = inputs.size() == signature_->inputs().size();
  for (const auto& [k, t] : inputs) {
    if (t.rank() < 1 || (rows >= 0 && t.dim(0) != rows)) batchable = false;
    if (t.rank() >= 1) rows = t.dim(0);
  }
  // Requests the batch cannot hold run alone (the signature reports what is wrong, if anything).
  const int64_t limit = options_.BatchLimit();
  const bool split = options_.enable_large_batch_splitting && rows > limit;
  if (!batchable || rows < 1 || (rows > limit && !split)) return signature_->Run(inputs, alone);
  const auto now = std::chrono::steady_clock::now();
  auto make_task = [&](std::map<std::string, Tensor> part, int64_t part_rows) {
    auto task = std::make_unique<Task>();
    task->inputs = std::move(part);
    task->rows = part_rows;
    task->enqueued = now;
    task->deadline = deadline;
    return task;
  };
  std::vector<std::unique_ptr<Task>> tasks;
  if (!split) {
    tasks.push_back(make_task(std::move(inputs), rows));
    return Enqueue(std::move(tasks));
  }
  for (int64_t at = 0; at < rows; at += limit) {
    const int64_t n = std::min(limit, rows - at);
    std::map<std::string, Tensor> part;
    for (const auto& [k, t] : inputs) part.emplace(k, SliceRows(t, at, n));
    tasks.push_back(make_task(std::move(part), n));
  }
  return Enqueue(std::move(tasks));
}

Result<std::map<std::string, Tensor>> Batcher::Enqueue(std::vector<std::unique_ptr<Task>> tasks) {
  std::vector<std::future<Result<std::map<std::string, Tensor>>>> answers;
  int64_t rows = 0;
  for (auto& t : tasks) {
    answers.push_back(t->done.get_future());
    rows += t->rows;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return Unavailable("model '", model_name_, "' is unloading");
    if (queued_rows_ + rows > options_.max_enqueued_batches * options_.BatchLimit())
      return Unavailable("the batching queue of model '", model_name_, "' is full (", queued_rows_,
                         " rows waiting); retry later");
    queued_rows_ += rows;
    for (auto& t : tasks) queue_.push_back(std::move(t));
  }
  if (metrics_) metrics_->AddQueueDepth(model_name_, static_cast<int64_t>(answers.size()));
  cv_.notify_all();
  if (answers.size() == 1) return answers[0].get();
  std::vector<std::map<std::string, Tensor>> parts;
  Status failed;
  for (auto& a : answers) {  // every chunk is waited for, so none outlives the request
    auto r = a.get();
    if (!r.ok() && failed.ok()) failed = r.status();
    if (r.ok()) parts.push_back(std::move(r).value());
  }
  if (!failed.ok()) return failed;
  std::map<std::string, Tensor> out;
  for (const auto& [key, first] : parts[0]) {
    std::vector<Tensor> rows_of_key;
    for (const auto& p : parts) rows_of_key.push_back(p.at(key));
    KILN_ASSIGN_OR_RETURN(Tensor stacked, ConcatRows(rows_of_key));
    out.emplace(key, std::move(stacked));
  }
  return out;
}

void Batcher::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping and drained
    // Requests whose deadline has passed are answered now, not when their batch would run.
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::unique_ptr<Task>> expired;
    auto earliest = std::chrono::steady_clock::time_point::max();
    for (auto it = queue_.begin(); it != queue_.end();) {
      if ((*it)->deadline <= now) {
        queued_rows_ -= (*it)->rows;
        expired.push_back(std::move(*it));
        it = queue_.erase(it);
      } else {
        earliest = std::min(earliest, (*it)->deadline);
        ++it;
      }
    }
    if (!expired.empty()) {
      lock.unlock();
      if (metrics_) metrics_->AddQueueDepth(model_name_, -static_cast<int64_t>(expired.size()));
      for (auto& t : expired)
        t->done.set_value(
            DeadlineExceeded("the request's deadline passed while it waited for a batch of model '",
                             model_name_, "'"));
      lock.lock();
      continue;
    }
    const auto full_at =
        queue_.front()->enqueued + std::chrono::microseconds(options_.batch_timeout_micros);
    if (!stop_ && queued_rows_ < options_.BatchLimit() && now < full_at) {
      cv_.wait_until(lock, std::min(full_at, earliest));
      continue;  // look again: more requests, an expired one, or the timeout
    }
    std::vector<std::unique_ptr<Task>> batch;
    int64_t rows = 0;
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (rows + (*it)->rows > options_.BatchLimit()) break;
      if (!batch.empty() && !Compatible(*batch.front(), **it)) {
        ++it;
        continue;
      }
      rows += (*it)->rows;
      batch.push_back(std::move(*it));
      it = queue_.erase(it);
    }
    queued_rows_ -= rows;
    lock.unlock();
    if (metrics_) metrics_->AddQueueDepth(model_name_, -static_cast<int64_t>(batch.size()));
    RunBatch(batch);
    lock.lock();
  }
}

void Batcher::RunBatch(std::vector<std::unique_ptr<Task>>& tasks) {
  int64_t rows = 0;
  for (const auto& t : tasks) rows += t->rows;
  const int64_t padded = PaddedSize(rows);
  if (metrics_) metrics_->ObserveBatchSize(model_name_, padded);
  auto fail = [&](const Status& s) {
    for (auto& t : tasks) t->done.set_value(s);
  };
  exec::RunOptions options;
  options.deadline = tasks[0]->deadline;
  for (const auto& t : tasks) options.deadline = std::max(options.deadline, t->deadline);
  // Every batch is held to one row per input row, the lone task too: whether a request is
  // refused must not depend on what else was queued beside it.
  auto check_rows = [&](const std::map<std::string, Tensor>& out) {
    for (const auto& [key, t] : out) {
      if (t.rank() < 1 || t.dim(0) != padded)
        return InvalidArgument("batched output '", key, "' has shape ", t.shape().ToString(),
                               "; a batched signature must answer one row per input row");
    }
    return OkStatus();
  };
  if (tasks.size() == 1 && padded == rows) {
    auto out = signature_->Run(tasks[0]->inputs, options);
    if (out.ok()) {
      if (Status s = check_rows(*out); !s.ok()) return fail(s);
    }
    tasks[0]->done.set_value(std::move(out));
    return;
  }
  std::map<std::string, Tensor> merged;
  for (const auto& [key, first] : tasks[0]->inputs) {
    std::vector<Tensor> parts;
    parts.reserve(tasks.size());
    for (const auto& t : tasks) parts.push_back(t->inputs.at(key));
    auto cat = ConcatRows(parts, padded);
    if (!cat.ok()) return fail(cat.status());
    merged.emplace(key, std::move(cat).value());
  }
  auto out = signature_->Run(merged, options);
  if (!out.ok()) return fail(out.status());
  if (Status s = check_rows(*out); !s.ok()) return fail(s);
  int64_t at = 0;
  for (auto& task : tasks) {
    std::map<std::string, Tensor> mine;
    for (const auto& [key, t] : *out) mine.emplace(key, SliceRows(t, at, task->rows));
    at += task->rows;
    task->done.set_value(std::move(mine));
  }
}

}  // namespace kiln::serve
