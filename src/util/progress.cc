#include "util/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace eventkv {
namespace {

std::string duration_text(double seconds) {
  char buffer[32];
  const auto total = static_cast<int64_t>(std::llround(seconds));
  if (total >= 3600) {
    std::snprintf(buffer, sizeof(buffer), "%lldh%02lldm", static_cast<long long>(total / 3600),
                  static_cast<long long>(total % 3600 / 60));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%lldm%02llds", static_cast<long long>(total / 60),
                  static_cast<long long>(total % 60));
  }
  return buffer;
}

// Seconds between progress lines in a log: $EVENTKV_PROGRESS_SECONDS, or 60.
std::chrono::milliseconds log_interval() {
  const char* text = std::getenv("EVENTKV_PROGRESS_SECONDS");
  const double seconds = text != nullptr ? std::atof(text) : 60.0;
  return std::chrono::milliseconds(std::llround(1000 * std::max(seconds, 0.0)));
}

}  // namespace

Progress::Progress(std::string label, int64_t total, std::string unit)
    : label_(std::move(label)),
      total_(total),
      unit_(std::move(unit)),
      terminal_(isatty(2) != 0),
      interval_(terminal_ ? std::chrono::milliseconds(250) : log_interval()),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void Progress::update(int64_t done) {
  const auto now = std::chrono::steady_clock::now();
  if (first_done_ < 0) {
    first_done_ = done;  // work resumed from a previous run does not count toward the rate
    start_ = now;
  }
  // A terminal also shows the last step; a log gets the command's summary.
  const bool last = terminal_ && done >= total_;
  if (!last && now - last_draw_ < interval_) return;
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double rate = seconds > 0.0 ? static_cast<double>(done - first_done_) / seconds : 0.0;
  const std::string eta =
      rate > 0.0 ? duration_text(static_cast<double>(total_ - done) / rate) : "--";
  std::fprintf(stderr, "%s%s %lld/%lld %s  %.2f %s/s  ETA %s%s", terminal_ ? "\r\033[K" : "",
               label_.c_str(), static_cast<long long>(done), static_cast<long long>(total_),
               unit_.c_str(), rate, unit_.c_str(), eta.c_str(), terminal_ ? "" : "\n");
  std::fflush(stderr);
}

void Progress::finish() {
  if (terminal_) std::fprintf(stderr, "\r\033[K");
}

}  // namespace eventkv
