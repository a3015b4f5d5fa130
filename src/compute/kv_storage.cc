#include "compute/kv_storage.h"

#include <cstring>

#include "util/error.h"
#include "util/half.h"

namespace eventkv::compute {

KvStorage::KvStorage(int64_t n_layer, int64_t capacity, int64_t k_dim, int64_t v_dim, KvType type)
    : n_layer_(n_layer), capacity_(capacity), k_dim_(k_dim), v_dim_(v_dim), type_(type) {
  if (n_layer <= 0 || capacity <= 0 || k_dim <= 0 || v_dim <= 0) {
    fail("KV storage needs positive sizes (layers ", n_layer, ", capacity ", capacity, ")");
  }
  const int64_t n_pages = (capacity + kPageCells - 1) / kPageCells;
  pages_.resize(static_cast<size_t>(n_pages));
  live_per_page_.assign(static_cast<size_t>(n_pages), 0);
  live_.assign(static_cast<size_t>(capacity), 0);
}

size_t KvStorage::bytes_per_cell() const {
  return static_cast<size_t>(n_layer_ * (k_dim_ + v_dim_)) * element_bytes();
}

size_t KvStorage::bytes_held() const {
  size_t n_pages = 0;
  for (const auto& page : pages_) n_pages += page ? 1 : 0;
  return n_pages * page_bytes();
}

uint8_t* KvStorage::cell_row(int64_t layer, int64_t cell, bool is_k) const {
  if (cell < 0 || cell >= capacity_ || !live_[static_cast<size_t>(cell)])
    fail("KV cell ", cell, " is not live");
  uint8_t* page = pages_[static_cast<size_t>(cell / kPageCells)].get();
  const int64_t in_page = cell % kPageCells;
  if (is_k)
    return page + static_cast<size_t>((layer * kPageCells + in_page) * k_dim_) * element_bytes();
  const size_t v_base = static_cast<size_t>(n_layer_ * kPageCells * k_dim_) * element_bytes();
  return page + v_base +
         static_cast<size_t>((layer * kPageCells + in_page) * v_dim_) * element_bytes();
}

void KvStorage::activate(int64_t cell) {
  if (cell < 0 || cell >= capacity_) fail("KV cell ", cell, " is outside the capacity ", capacity_);
  const auto page = static_cast<size_t>(cell / kPageCells);
  if (!live_[static_cast<size_t>(cell)]) {
    if (!pages_[page]) pages_[page] = std::make_unique<uint8_t[]>(page_bytes());
    live_[static_cast<size_t>(cell)] = 1;
    ++live_per_page_[page];
  }
}

void KvStorage::release(int64_t cell) {
  if (cell < 0 || cell >= capacity_ || !live_[static_cast<size_t>(cell)]) return;
  live_[static_cast<size_t>(cell)] = 0;
  const auto page = static_cast<size_t>(cell / kPageCells);
  if (--live_per_page_[page] == 0) pages_[page].reset();
}

const uint8_t* KvStorage::k_bytes(int64_t layer, int64_t cell) const {
  return cell_row(layer, cell, true);
}
const uint8_t* KvStorage::v_bytes(int64_t layer, int64_t cell) const {
  return cell_row(layer, cell, false);
}
uint8_t* KvStorage::k_bytes_mut(int64_t layer, int64_t cell) {
  return cell_row(layer, cell, true);
}
uint8_t* KvStorage::v_bytes_mut(int64_t layer, int64_t cell) {
  return cell_row(layer, cell, false);
}

void KvStorage::write_row(uint8_t* dst, const float* src, int64_t dim) const {
  if (type_ == KvType::kF32) {
    std::memcpy(dst, src, static_cast<size_t>(dim) * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < dim; ++i) {
    const uint16_t h = fp32_to_fp16(src[i]);
    std::memcpy(dst + 2 * i, &h, sizeof(h));
  }
}

void KvStorage::read_row(const uint8_t* src, float* dst, int64_t n) const {
  if (type_ == KvType::kF32) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, src + 2 * i, sizeof(h));
    dst[i] = fp16_to_fp32(h);
  }
}

void KvStorage::write_k(int64_t layer, int64_t cell, const float* values) {
  write_row(cell_row(layer, cell, true), values, k_dim_);
}

void KvStorage::write_v(int64_t layer, int64_t cell, const float* values) {
  write_row(cell_row(layer, cell, false), values, v_dim_);
}

void KvStorage::read_k(int64_t layer, int64_t cell, int64_t first, int64_t n, float* out) const {
  read_row(k_bytes(layer, cell) + first * static_cast<int64_t>(element_bytes()), out, n);
}

void KvStorage::read_v(int64_t layer, int64_t cell, int64_t first, int64_t n, float* out) const {
  read_row(v_bytes(layer, cell) + first * static_cast<int64_t>(element_bytes()), out, n);
}

void KvStorage::copy_cell(const KvStorage& source, int64_t from_cell, int64_t to_cell,
                          int64_t layer_begin, int64_t layer_end) {
  if (source.n_layer_ != n_layer_ || source.k_dim_ != k_dim_ || source.v_dim_ != v_dim_ ||
      source.type_ != type_) {
    fail("copy_cell: KV storages of different shapes or types");
  }
  for (int64_t il = layer_begin; il < layer_end; ++il) {
    std::memcpy(k_bytes_mut(il, to_cell), source.k_bytes(il, from_cell), k_row_bytes());
    std::memcpy(v_bytes_mut(il, to_cell), source.v_bytes(il, from_cell), v_row_bytes());
  }
}

}  // namespace eventkv::compute
