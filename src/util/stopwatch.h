// Adds elapsed wall time to a counter of seconds: from construction (or
// start()) to stop() or destruction.
#pragma once

#include <chrono>

namespace eventkv {

class Stopwatch {
 public:
  explicit Stopwatch(double& seconds, bool running = true) : seconds_(seconds) {
    if (running) start();
  }
  ~Stopwatch() { stop(); }
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;

  void start() {
    started_ = std::chrono::steady_clock::now();
    running_ = true;
  }
  void stop() {
    if (!running_) return;
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    running_ = false;
  }

 private:
  double& seconds_;
  std::chrono::steady_clock::time_point started_;
  bool running_ = false;
};

}  // namespace eventkv
