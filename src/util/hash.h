// FNV-1a, 64-bit: a fast, stable fingerprint for generated files and cache
// contents (not for adversarial input).
#pragma once

#include <cstdint>
#include <span>

namespace eventkv {

inline constexpr uint64_t kFnvOffset = 0xCBF29CE484222325ull;

inline uint64_t fnv1a64(std::span<const uint8_t> bytes, uint64_t hash = kFnvOffset) {
  for (const uint8_t byte : bytes) {
    hash ^= byte;
    hash *= 0x100000001B3ull;
  }
  return hash;
}

}  // namespace eventkv
