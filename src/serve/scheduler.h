// The one thread that drives the engine. Jobs (anything that touches a
// session: appends, evictions, scores, lookups) run one at a time, in
// order; between two jobs, one decode step advances every reply being
// generated, all in one forward pass (continuous batching: a reply joins
// the step after its prefill job, and leaves when it ends). The queue is
// bounded: past `max_queue` waiting jobs and replies, new work is refused.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "contract/contract_cache.h"
#include "serve/api_error.h"
#include "serve/metrics.h"

namespace eventkv::serve {

// A reply being generated, stepped by the scheduler on its thread.
class DecodeTask {
 public:
  virtual ~DecodeTask() = default;
  virtual contract::ContractCache& cache() = 0;
  virtual int32_t pending() const = 0;  // the token to feed next
  // Takes the logits after pending(); returns true when the reply is done.
  virtual bool step(std::span<const float> logits) = 0;
  // Closes the reply (its last rows, the journal); `error` when a decode
  // step failed.
  virtual void finish(std::exception_ptr error) = 0;
};

class Scheduler {
 public:
  Scheduler(size_t max_queue, Metrics& metrics);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Runs `job` on the engine thread and waits for it; rethrows what it
  // throws. Throws ApiError 503 when the queue is full, Error once stopped.
  void run(std::function<void()> job);

  // From a job: steps `task` from the next decode step until it is done.
  void add_decode(std::shared_ptr<DecodeTask> task);

  // Finishes the replies being generated, refuses new work and joins.
  void stop();

  // Largest number of replies in one decode step.
  static constexpr size_t kMaxDecodeBatch = 64;

 private:
  struct Job {
    std::function<void()> work;
    std::promise<void> done;
  };

  void loop();
  void decode_step();

  const size_t max_queue_;
  Metrics& metrics_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::vector<std::shared_ptr<DecodeTask>> decoding_;  // engine thread only
  std::thread thread_;
};

}  // namespace eventkv::serve
