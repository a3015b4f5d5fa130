#include "serve/scheduler.h"

#include <chrono>

namespace eventkv::serve {

Scheduler::Scheduler(size_t max_queue, Metrics& metrics)
    : max_queue_(max_queue), metrics_(metrics), thread_([this] { loop(); }) {}

Scheduler::~Scheduler() {
  stop();
}

void Scheduler::stop() {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Scheduler::run(std::function<void()> job) {
  std::future<void> done;
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) api_fail(503, "the server is shutting down");
    if (jobs_.size() + static_cast<size_t>(metrics_.generating.load()) >= max_queue_) {
      api_fail(503, "the server is busy: ", jobs_.size(), " jobs and ", metrics_.generating.load(),
               " replies are waiting (--max-queue ", max_queue_, ")");
    }
    jobs_.push_back({std::move(job), {}});
    done = jobs_.back().done.get_future();
    metrics_.queue_depth = static_cast<int64_t>(jobs_.size());
  }
  wake_.notify_one();
  done.get();
}

void Scheduler::add_decode(std::shared_ptr<DecodeTask> task) {
  decoding_.push_back(std::move(task));
  metrics_.generating = static_cast<int64_t>(decoding_.size());
}

void Scheduler::loop() {
  while (true) {
    std::optional<Job> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !jobs_.empty() || !decoding_.empty(); });
      if (stopping_ && decoding_.empty()) {
        for (Job& left : jobs_)
          left.done.set_exception(std::make_exception_ptr(Error("the server is shutting down")));
        jobs_.clear();
        return;
      }
      if (!jobs_.empty()) {
        job.emplace(std::move(jobs_.front()));
        jobs_.pop_front();
        metrics_.queue_depth = static_cast<int64_t>(jobs_.size());
      }
    }
    // One job, then one decode step: prefills and decoding interleave.
    if (job) {
      try {
        job->work();
        job->done.set_value();
      } catch (...) {
        job->done.set_exception(std::current_exception());
      }
    }
    if (!decoding_.empty()) decode_step();
  }
}

void Scheduler::decode_step() {
  const size_t n = std::min(decoding_.size(), kMaxDecodeBatch);
  std::vector<contract::ContractCache*> caches;
  std::vector<int32_t> tokens;
  for (size_t i = 0; i < n; ++i) {
    caches.push_back(&decoding_[i]->cache());
    tokens.push_back(decoding_[i]->pending());
  }
  std::vector<char> done(n, 0);
  std::exception_ptr error;
  const auto start = std::chrono::steady_clock::now();
  try {
    const std::vector<std::vector<float>> logits =
        contract::ContractCache::extend_replies(caches, tokens);
    for (size_t i = 0; i < n; ++i) done[i] = decoding_[i]->step(logits[i]) ? 1 : 0;
  } catch (...) {
    error = std::current_exception();
    done.assign(n, 1);
  }
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - start);
  metrics_.decode_tokens += static_cast<int64_t>(n);
  metrics_.decode_micros += micros.count();
  ++metrics_.decode_steps;
  // Finished replies leave (counted out before they answer, so a client's
  // next request finds room); those stepped go behind the ones that waited.
  std::vector<std::shared_ptr<DecodeTask>> still(decoding_.begin() + static_cast<std::ptrdiff_t>(n),
                                                 decoding_.end());
  std::vector<std::shared_ptr<DecodeTask>> finished;
  for (size_t i = 0; i < n; ++i)
    (done[i] != 0 ? finished : still).push_back(std::move(decoding_[i]));
  decoding_ = std::move(still);
  metrics_.generating = static_cast<int64_t>(decoding_.size());
  for (const auto& task : finished) task->finish(error);
}

}  // namespace eventkv::serve
