// What this machine offers: hardware threads and physical memory, for the
// defaults and limits of the CLI and the Python package alike.
#pragma once

#include <cstdint>

namespace eventkv {

// The machine's hardware threads (1 when unknown).
int hardware_threads();

int64_t physical_memory_bytes();

}  // namespace eventkv
