#include "serve/metrics.h"

#include <sstream>

namespace eventkv::serve {
namespace {

void metric(std::ostringstream& out, const char* name, const char* type, const char* help,
            double value) {
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n'
      << name << ' ' << value << '\n';
}

double per_second(int64_t count, int64_t micros) {
  return micros > 0 ? static_cast<double>(count) * 1e6 / static_cast<double>(micros) : 0.0;
}

}  // namespace

void Metrics::count_response(int status) {
  const std::lock_guard lock(responses_mutex_);
  ++responses_[status];
}

std::string Metrics::prometheus_text() const {
  std::ostringstream out;
  out.precision(10);
  metric(out, "eventkv_sessions", "gauge", "Sessions held.", static_cast<double>(sessions));
  metric(out, "eventkv_kv_bytes_held", "gauge", "KV memory the arena holds (pages in use).",
         static_cast<double>(kv_bytes_held));
  metric(out, "eventkv_kv_bytes_retained", "gauge", "KV bytes of the rows sessions retain.",
         static_cast<double>(kv_bytes_retained));
  metric(out, "eventkv_kv_bytes_full", "gauge",
         "KV bytes the sessions would hold had nothing been evicted.",
         static_cast<double>(kv_bytes_full));
  metric(out, "eventkv_evictions_total", "counter", "Events evicted.",
         static_cast<double>(evictions));
  metric(out, "eventkv_records_total", "counter", "Record events the memory contract appended.",
         static_cast<double>(records));
  metric(out, "eventkv_forgets_total", "counter", "Events forgotten by verified forgetting.",
         static_cast<double>(forgets));
  metric(out, "eventkv_prefill_tokens_total", "counter", "Tokens prefilled.",
         static_cast<double>(prefill_tokens));
  metric(out, "eventkv_decode_tokens_total", "counter", "Tokens decoded.",
         static_cast<double>(decode_tokens));
  metric(out, "eventkv_decode_steps_total", "counter",
         "Decode forward passes (each batches every reply being generated).",
         static_cast<double>(decode_steps));
  metric(out, "eventkv_prefill_seconds_total", "counter", "Time spent prefilling.",
         static_cast<double>(prefill_micros) * 1e-6);
  metric(out, "eventkv_decode_seconds_total", "counter",
         "Time spent in decode steps (each batches every reply being generated).",
         static_cast<double>(decode_micros) * 1e-6);
  metric(out, "eventkv_prefill_tokens_per_second", "gauge",
         "Prefill tokens per second of prefill time.", per_second(prefill_tokens, prefill_micros));
  metric(out, "eventkv_decode_tokens_per_second", "gauge",
         "Decode tokens per second of decode time (all sessions together).",
         per_second(decode_tokens, decode_micros));
  metric(out, "eventkv_queue_depth", "gauge", "Jobs waiting for the engine.",
         static_cast<double>(queue_depth));
  metric(out, "eventkv_generating", "gauge", "Replies being generated.",
         static_cast<double>(generating));
  out << "# HELP eventkv_requests_total HTTP responses by status code.\n"
      << "# TYPE eventkv_requests_total counter\n";
  const std::lock_guard lock(responses_mutex_);
  for (const auto& [status, count] : responses_)
    out << "eventkv_requests_total{code=\"" << status << "\"} " << count << '\n';
  return out.str();
}

}  // namespace eventkv::serve
