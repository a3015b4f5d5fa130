// Writes a whole file so that readers see either the old file or the new one,
// never a partial write: the bytes go to a temporary file in the same folder,
// which is flushed and then renamed over the target.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace eventkv {

void write_file_atomic(const std::string& path, std::span<const uint8_t> bytes);

}  // namespace eventkv
