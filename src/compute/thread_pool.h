// A fixed set of worker threads that run one parallel loop at a time. The
// calling thread works too, so ThreadPool(1) runs everything inline. Loops
// hand out chunks from an atomic counter, so with small chunks a thread
// that finishes early takes more (causal attention gives later rows more
// keys), and take their body by reference: no allocation per loop.
// Workers spin briefly between loops (a forward pass issues hundreds of
// short loops per token, and a futex wake-up each time would cost more than
// the work), then sleep. Not re-entrant: parallel_for must not be called
// from inside a task, and one pool serves one caller at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace eventkv::compute {

// A non-owning reference to a callable, valid while the callable lives (for
// the duration of one call here). Unlike std::function it never allocates.
template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
           std::is_invocable_r_v<R, F&, Args...>)
      // NOLINTNEXTLINE(bugprone-forwarding-reference-overload): the constraint excludes FunctionRef
      FunctionRef(F&& f)  // implicit: call sites pass lambdas
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(args...);
        }) {}

  R operator()(Args... args) const { return call_(object_, args...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

class ThreadPool {
 public:
  // `n_threads` >= 1, including the caller; throws Error otherwise, and when
  // the system cannot start that many threads.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // How parallel_for cuts [0, n): kEven, one chunk per thread (work that
  // costs the same per element); kTaken, chunks of `granularity` taken in
  // order by whichever thread is free (uneven work, e.g. causal attention).
  enum class Chunks { kEven, kTaken };

  // Calls fn(begin, end) on disjoint chunks covering [0, n) and returns when
  // all are done. Chunk bounds are multiples of `granularity` (but the
  // last). An exception in fn is rethrown here.
  void parallel_for(int64_t n, FunctionRef<void(int64_t, int64_t)> fn, int64_t granularity = 1,
                    Chunks chunks = Chunks::kEven);

  // Calls fn(thread_index) once on every thread, thread_index in [0, size()).
  void run_on_all(FunctionRef<void(int)> fn);

 private:
  void worker_loop(int index);
  void stop_workers();  // wakes every worker to return, and joins it
  void record_error(std::exception_ptr error);

  int n_threads_;
  std::vector<std::thread> workers_;
  const FunctionRef<void(int)>* task_ = nullptr;  // published by generation_
  std::atomic<uint32_t> generation_{0};           // 32-bit: a futex word
  std::atomic<int> pending_{0};
  std::atomic<bool> stopping_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace eventkv::compute
