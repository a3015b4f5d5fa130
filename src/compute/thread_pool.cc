#include "compute/thread_pool.h"

#include <algorithm>
#include <system_error>

#include "util/error.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace eventkv::compute {
namespace {

constexpr int kSpinIterations = 1 << 14;

inline void cpu_relax() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

// Waits until `value` differs from `old`: spins first, then sleeps on it.
template <typename T>
T wait_for_change(const std::atomic<T>& value, T old) {
  for (int i = 0; i < kSpinIterations; ++i) {
    const T now = value.load(std::memory_order_acquire);
    if (now != old) return now;
    cpu_relax();
    // When more threads than cores want to run (another process, a second
    // pool), give the core away now and then instead of burning it.
    if (i % 256 == 255) std::this_thread::yield();
  }
  value.wait(old, std::memory_order_acquire);
  return value.load(std::memory_order_acquire);
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads) {
  if (n_threads < 1) fail("thread count must be at least 1, got ", n_threads);
  workers_.reserve(static_cast<size_t>(n_threads - 1));
  for (int i = 1; i < n_threads; ++i) {
    try {
      workers_.emplace_back([this, i] { worker_loop(i); });
    } catch (const std::system_error& e) {
      // A destructor does not run for a half-built pool: the threads already
      // started must be joined here, or their std::thread ends the process.
      stop_workers();
      fail("cannot start thread ", i + 1, " of ", n_threads, ": ", e.what());
    }
  }
}

ThreadPool::~ThreadPool() {
  stop_workers();
}

void ThreadPool::stop_workers() {
  stopping_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::record_error(std::exception_ptr error) {
  const std::lock_guard<std::mutex> lock(error_mutex_);
  if (!error_) error_ = std::move(error);
}

void ThreadPool::worker_loop(int index) {
  uint32_t seen = 0;
  while (true) {
    seen = wait_for_change(generation_, seen);
    if (stopping_.load(std::memory_order_acquire)) return;
    try {
      (*task_)(index);
    } catch (...) {
      record_error(std::current_exception());
    }
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

void ThreadPool::run_on_all(FunctionRef<void(int)> fn) {
  if (n_threads_ == 1) {
    fn(0);
    return;
  }
  error_ = nullptr;
  task_ = &fn;
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  try {
    fn(0);
  } catch (...) {
    record_error(std::current_exception());
  }
  for (int left = pending_.load(std::memory_order_acquire); left != 0;
       left = pending_.load(std::memory_order_acquire)) {
    wait_for_change(pending_, left);
  }
  task_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

void ThreadPool::parallel_for(int64_t n, FunctionRef<void(int64_t, int64_t)> fn,
                              int64_t granularity, Chunks chunks) {
  if (n <= 0) return;
  const int64_t units = (n + granularity - 1) / granularity;
  if (units == 1 || n_threads_ == 1) {
    fn(0, n);
    return;
  }
  // Even chunks: the first units % threads chunks take one unit more.
  const int64_t per_thread = units / n_threads_;
  const int64_t longer = units % n_threads_;
  std::atomic<int64_t> next{0};
  run_on_all([&](int /*index*/) {
    for (int64_t chunk = next.fetch_add(1, std::memory_order_relaxed);;
         chunk = next.fetch_add(1, std::memory_order_relaxed)) {
      int64_t first = chunk;
      int64_t last = chunk + 1;
      if (chunks == Chunks::kEven) {
        if (chunk >= n_threads_) return;
        first = chunk * per_thread + std::min(chunk, longer);
        last = first + per_thread + (chunk < longer ? 1 : 0);
      }
      if (first >= units) return;
      if (first < last) fn(first * granularity, std::min(n, last * granularity));
    }
  });
}

}  // namespace eventkv::compute
