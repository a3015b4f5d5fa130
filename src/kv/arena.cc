#include "kv/arena.h"

#include "util/error.h"

namespace eventkv::kv {

KvArena::KvArena(const model::ModelConfig& config, int64_t capacity, compute::KvType type)
    : storage_(compute::KvStorage::for_model(config, capacity, type)),
      refs_(static_cast<size_t>(capacity), 0) {
  free_.reserve(static_cast<size_t>(capacity));
  for (int64_t cell = capacity - 1; cell >= 0; --cell) free_.push_back(static_cast<int32_t>(cell));
}

int32_t KvArena::allocate() {
  if (free_.empty()) fail("KV arena is full: all ", storage_.capacity(), " cells are in use");
  const int32_t cell = free_.back();
  free_.pop_back();
  refs_[static_cast<size_t>(cell)] = 1;
  storage_.activate(cell);
  ++in_use_;
  return cell;
}

void KvArena::retain(int32_t cell) {
  if (refs_[static_cast<size_t>(cell)] <= 0) fail("retain of free KV cell ", cell);
  ++refs_[static_cast<size_t>(cell)];
}

void KvArena::release(int32_t cell) {
  int32_t& refs = refs_[static_cast<size_t>(cell)];
  if (refs <= 0) fail("release of free KV cell ", cell);
  if (--refs > 0) return;
  storage_.release(cell);
  free_.push_back(cell);
  --in_use_;
}

}  // namespace eventkv::kv
