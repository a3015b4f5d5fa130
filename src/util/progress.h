// A one-line progress report (done/total, rate, ETA) redrawn in place on a
// terminal at most a few times a second. When stderr is not a terminal (a
// cluster job's log), one line every 60 seconds ($EVENTKV_PROGRESS_SECONDS).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace eventkv {

class Progress {
 public:
  Progress(std::string label, int64_t total, std::string unit);
  void update(int64_t done);
  void finish();  // clears the line

 private:
  std::string label_;
  int64_t total_;
  std::string unit_;
  bool terminal_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  int64_t first_done_ = -1;
};

}  // namespace eventkv
