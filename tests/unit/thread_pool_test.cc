#include "compute/thread_pool.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "util/error.h"

namespace eventkv::compute {
namespace {

// Caps the address space a little above what the process maps now, so that
// thread stacks (8 MiB each) run out after a few threads.
void limit_address_space() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  const rlim_t limit = pages * 4096 + (64u << 20);
  const rlimit cap{limit, limit};
  setrlimit(RLIMIT_AS, &cap);
}

// A pool that cannot start every thread joins the ones it started and throws
// Error; before, the started threads' destructors ended the process
// ("terminate called without an active exception", exit 134).
TEST(ThreadPool, FailedThreadStartThrowsInsteadOfAborting) {
  EXPECT_EXIT(
      {
        limit_address_space();
        try {
          ThreadPool pool(1000);
        } catch (const Error& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::exit(3);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(3), "cannot start thread [0-9]+ of 1000");
}

}  // namespace
}  // namespace eventkv::compute
