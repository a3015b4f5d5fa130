// KV memory shared by the histories of one model: a KvStorage plus cell
// allocation with reference counts, so histories that share a prefix (the two
// sides of a donor pair) share its rows, and a cell is freed when the last
// history holding it lets go. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "compute/kv_storage.h"
#include "model/config.h"

namespace eventkv::kv {

class KvArena {
 public:
  // Room for `capacity` cells (a cell is one token's K and V rows in every
  // layer); memory is taken page by page as cells are used.
  KvArena(const model::ModelConfig& config, int64_t capacity, compute::KvType type);

  // A fresh cell with one reference; throws Error when the arena is full.
  int32_t allocate();
  void retain(int32_t cell);
  void release(int32_t cell);  // frees the cell with its last reference
  int32_t references(int32_t cell) const { return refs_[static_cast<size_t>(cell)]; }

  compute::KvStorage& storage() { return storage_; }
  const compute::KvStorage& storage() const { return storage_; }
  int64_t cells_in_use() const { return in_use_; }
  size_t bytes_held() const { return storage_.bytes_held(); }

 private:
  compute::KvStorage storage_;
  std::vector<int32_t> refs_;
  std::vector<int32_t> free_;  // a stack; lowest cells on top
  int64_t in_use_ = 0;
};

}  // namespace eventkv::kv
