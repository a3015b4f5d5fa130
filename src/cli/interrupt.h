// Ctrl-C (SIGINT) or SIGTERM for long commands: the first one sets a flag
// that the work polls between units (so nothing finished is lost); a second
// one stops at once.
#pragma once

#include <atomic>

namespace eventkv::cli {

const std::atomic<bool>& interrupted();

// Installs the handler for its lifetime and clears the flag.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};

}  // namespace eventkv::cli
