// Per-layer key and value rows of a KV cache, one row per cell; K is stored
// after RoPE, in f32 or f16. Each layer has its own row widths; a layer of
// width 0 (gemma4's kv-shared layers) stores nothing. Memory comes in pages of kPageCells cells
// that are allocated when a cell is first written and freed when every cell of the page is
// released, so evicting rows really returns memory. Cells carry no meaning here: callers decide
// which cell holds which token.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/config.h"

namespace eventkv::compute {

enum class KvType { kF32, kF16 };

class KvStorage {
 public:
  static constexpr int64_t kPageCells = 64;

  // Room for `capacity` cells with layer il's K and V rows k_dims[il] and
  // v_dims[il] wide; no memory is taken until cells are written.
  KvStorage(int64_t capacity, std::vector<int64_t> k_dims, std::vector<int64_t> v_dims,
            KvType type);
  // The rows `config`'s layers store: K and V of every layer that has them.
  static KvStorage for_model(const model::ModelConfig& config, int64_t capacity, KvType type);

  int64_t n_layer() const { return static_cast<int64_t>(k_dims_.size()); }
  int64_t capacity() const { return capacity_; }
  int64_t k_dim(int64_t layer) const { return k_dims_[static_cast<size_t>(layer)]; }
  int64_t v_dim(int64_t layer) const { return v_dims_[static_cast<size_t>(layer)]; }
  KvType type() const { return type_; }
  size_t bytes_per_cell() const;  // K and V rows of every layer
  size_t bytes_held() const;      // memory of the allocated pages
  bool is_live(int64_t cell) const { return live_[static_cast<size_t>(cell)]; }

  // Makes a cell live (allocating its page if needed). Not thread-safe: call
  // for every cell of a batch before writing rows from several threads.
  void activate(int64_t cell);

  // Writes one layer's row of a live cell; safe in parallel for distinct cells.
  void write_k(int64_t layer, int64_t cell, const float* values);
  void write_v(int64_t layer, int64_t cell, const float* values);
  // Reads values [first, first + n) of one layer's K or V row of a live cell
  // as f32 (one head's slice, or the whole row).
  void read_k(int64_t layer, int64_t cell, int64_t first, int64_t n, float* out) const;
  void read_v(int64_t layer, int64_t cell, int64_t first, int64_t n, float* out) const;

  // Marks a cell free; its page is freed once none of its cells is live.
  void release(int64_t cell);

  // Copies layers [layer_begin, layer_end) of K and V of `from_cell` in
  // `source` to `to_cell` here (which must be live); shapes must match.
  void copy_cell(const KvStorage& source, int64_t from_cell, int64_t to_cell, int64_t layer_begin,
                 int64_t layer_end);

  // Raw bytes of one layer's K or V row of a live cell (snapshots, comparisons).
  const uint8_t* k_bytes(int64_t layer, int64_t cell) const;
  const uint8_t* v_bytes(int64_t layer, int64_t cell) const;
  uint8_t* k_bytes_mut(int64_t layer, int64_t cell);
  uint8_t* v_bytes_mut(int64_t layer, int64_t cell);
  size_t k_row_bytes(int64_t layer) const {
    return static_cast<size_t>(k_dim(layer)) * element_bytes();
  }
  size_t v_row_bytes(int64_t layer) const {
    return static_cast<size_t>(v_dim(layer)) * element_bytes();
  }

 private:
  size_t element_bytes() const { return type_ == KvType::kF32 ? 4 : 2; }
  size_t page_bytes() const { return bytes_per_cell() * kPageCells; }
  uint8_t* cell_row(int64_t layer, int64_t cell, bool is_k) const;
  void write_row(uint8_t* dst, const float* src, int64_t dim) const;
  void read_row(const uint8_t* src, float* dst, int64_t n) const;

  int64_t capacity_;
  std::vector<int64_t> k_dims_, v_dims_;  // [n_layer]
  // Where layer il's K and V rows start in a page, in elements.
  std::vector<int64_t> k_offsets_, v_offsets_;
  int64_t values_per_cell_ = 0;
  KvType type_;
  // Page layout: per layer, K rows [kPageCells][k_dim(il)], then V rows
  // [kPageCells][v_dim(il)].
  std::vector<std::unique_ptr<uint8_t[]>> pages_;
  std::vector<int32_t> live_per_page_;
  std::vector<uint8_t> live_;
};

}  // namespace eventkv::compute
