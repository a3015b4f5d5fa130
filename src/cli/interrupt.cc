#include "cli/interrupt.h"

#include <csignal>

namespace eventkv::cli {
namespace {

std::atomic<bool> g_interrupted{false};

// Ctrl-C, and SIGTERM: what timeout, Slurm and Kubernetes send to stop a job.
constexpr int kStopSignals[] = {SIGINT, SIGTERM};

void on_interrupt(int) {
  g_interrupted = true;
  for (const int signal : kStopSignals) std::signal(signal, SIG_DFL);
}

}  // namespace

const std::atomic<bool>& interrupted() {
  return g_interrupted;
}

InterruptGuard::InterruptGuard() {
  g_interrupted = false;
  for (const int signal : kStopSignals) std::signal(signal, on_interrupt);
}

InterruptGuard::~InterruptGuard() {
  for (const int signal : kStopSignals) std::signal(signal, SIG_DFL);
}

}  // namespace eventkv::cli
