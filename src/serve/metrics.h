// The server's counters, read by /metrics as Prometheus text. Counters are
// atomics written from any thread; gauges about sessions are set by the
// engine thread after each job.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace eventkv::serve {

struct Metrics {
  std::atomic<int64_t> sessions{0};
  std::atomic<int64_t> kv_bytes_held{0};      // arena pages in use
  std::atomic<int64_t> kv_bytes_retained{0};  // rows sessions keep
  std::atomic<int64_t> kv_bytes_full{0};      // rows they would keep with no eviction
  std::atomic<int64_t> evictions{0};          // events evicted
  std::atomic<int64_t> records{0};            // record events the contract appended
  std::atomic<int64_t> forgets{0};            // events forgotten (verified forgetting)
  std::atomic<int64_t> prefill_tokens{0};
  std::atomic<int64_t> prefill_micros{0};
  std::atomic<int64_t> decode_tokens{0};
  std::atomic<int64_t> decode_micros{0};
  std::atomic<int64_t> decode_steps{0};
  std::atomic<int64_t> queue_depth{0};
  std::atomic<int64_t> generating{0};

  void count_response(int status);
  std::string prometheus_text() const;

 private:
  mutable std::mutex responses_mutex_;
  std::map<int, int64_t> responses_;
};

}  // namespace eventkv::serve
