#include "cli/interrupt.h"

#include <csignal>

namespace eventkv::cli {
namespace {

std::atomic<bool> g_interrupted{false};

void on_interrupt(int) {
  g_interrupted = true;
  std::signal(SIGINT, SIG_DFL);
}

}  // namespace

const std::atomic<bool>& interrupted() {
  return g_interrupted;
}

InterruptGuard::InterruptGuard() {
  g_interrupted = false;
  std::signal(SIGINT, on_interrupt);
}

InterruptGuard::~InterruptGuard() {
  std::signal(SIGINT, SIG_DFL);
}

}  // namespace eventkv::cli
