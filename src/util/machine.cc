#include "util/machine.h"

#include <algorithm>
#include <thread>

#include <unistd.h>

namespace eventkv {

int hardware_threads() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int64_t physical_memory_bytes() {
  return static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
}

}  // namespace eventkv
