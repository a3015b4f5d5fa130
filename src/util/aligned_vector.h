// std::vector storage aligned to a cache line, so that 64-byte vector loads
// from the start of every 16-float block never straddle two lines.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace eventkv {

inline constexpr size_t kCacheLine = 64;

template <typename T>
struct CacheLineAllocator {
  using value_type = T;

  CacheLineAllocator() = default;
  template <typename U>
  explicit CacheLineAllocator(const CacheLineAllocator<U>& /*other*/) {}

  T* allocate(size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{kCacheLine}));
  }
  void deallocate(T* p, size_t /*n*/) { ::operator delete (p, std::align_val_t{kCacheLine}); }

  friend bool operator==(const CacheLineAllocator& /*a*/, const CacheLineAllocator& /*b*/) {
    return true;
  }
};

template <typename T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace eventkv
