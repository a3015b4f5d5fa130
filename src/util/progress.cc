#include "util/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

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

}  // namespace

Progress::Progress(std::string label, int64_t total, std::string unit)
    : label_(std::move(label)),
      total_(total),
      unit_(std::move(unit)),
      enabled_(isatty(2) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void Progress::update(int64_t done) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (first_done_ < 0) {
    first_done_ = done;  // work resumed from a previous run does not count toward the rate
    start_ = now;
  }
  if (done < total_ && now - last_draw_ < std::chrono::milliseconds(250)) return;
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double rate = seconds > 0.0 ? static_cast<double>(done - first_done_) / seconds : 0.0;
  const std::string eta =
      rate > 0.0 ? duration_text(static_cast<double>(total_ - done) / rate) : "--";
  std::fprintf(stderr, "\r\033[K%s %lld/%lld %s  %.2f %s/s  ETA %s", label_.c_str(),
               static_cast<long long>(done), static_cast<long long>(total_), unit_.c_str(), rate,
               unit_.c_str(), eta.c_str());
  std::fflush(stderr);
}

void Progress::finish() {
  if (enabled_) std::fprintf(stderr, "\r\033[K");
}

}  // namespace eventkv
