// A fixed set of worker threads that run one parallel loop at a time. The
// calling thread works too, so ThreadPool(1) runs everything inline.
// Workers spin briefly between loops (a forward pass issues hundreds of
// short loops per token, and a futex wake-up each time would cost more than
// the work), then sleep. Not re-entrant: parallel_for must not be called
// from inside a task, and one pool serves one caller at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace eventkv::compute {

class ThreadPool {
 public:
  // `n_threads` >= 1, including the caller; throws Error otherwise.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Calls fn(begin, end) on disjoint chunks covering [0, n), at most one chunk
  // per thread, and returns when all are done. Chunk bounds are multiples of
  // `granularity` (but the last). An exception in fn is rethrown here.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                    int64_t granularity = 1);

  // Calls fn(thread_index) once on every thread, thread_index in [0, size()).
  void run_on_all(const std::function<void(int)>& fn);

 private:
  void worker_loop(int index);
  void record_error(std::exception_ptr error);

  int n_threads_;
  std::vector<std::thread> workers_;
  const std::function<void(int)>* task_ = nullptr;  // published by generation_
  std::atomic<uint32_t> generation_{0};             // 32-bit: a futex word
  std::atomic<int> pending_{0};
  std::atomic<bool> stopping_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace eventkv::compute
