#include "compute/kv_storage.h"

#include <cstring>
#include <utility>

#include "util/error.h"
#include "util/half.h"

namespace eventkv::compute {

KvStorage::KvStorage(int64_t capacity, std::vector<int64_t> k_dims, std::vector<int64_t> v_dims,
                     KvType type)
    : capacity_(capacity), k_dims_(std::move(k_dims)), v_dims_(std::move(v_dims)), type_(type) {
  const auto n_layer = static_cast<int64_t>(k_dims_.size());
  if (n_layer == 0 || v_dims_.size() != k_dims_.size() || capacity <= 0) {
    fail("KV storage needs layers and a positive capacity (layers ", n_layer, ", capacity ",
         capacity, ")");
  }
  for (int64_t il = 0; il < n_layer; ++il) {
    if (k_dim(il) < 0 || v_dim(il) < 0) fail("KV storage: negative row width in layer ", il);
    k_offsets_.push_back(values_per_cell_ * kPageCells);
    v_offsets_.push_back((values_per_cell_ + k_dim(il)) * kPageCells);
    values_per_cell_ += k_dim(il) + v_dim(il);
  }
  if (values_per_cell_ == 0) fail("KV storage: no layer stores rows");
  const int64_t n_pages = (capacity + kPageCells - 1) / kPageCells;
  pages_.resize(static_cast<size_t>(n_pages));
  live_per_page_.assign(static_cast<size_t>(n_pages), 0);
  live_.assign(static_cast<size_t>(capacity), 0);
}

KvStorage KvStorage::for_model(const model::ModelConfig& config, int64_t capacity, KvType type) {
  std::vector<int64_t> k_dims;
  std::vector<int64_t> v_dims;
  for (int64_t il = 0; il < config.n_layer; ++il) {
    k_dims.push_back(config.has_kv(il) ? config.kv_dim(il) : 0);
    v_dims.push_back(config.has_kv(il) ? config.v_dim(il) : 0);
  }
  return {capacity, std::move(k_dims), std::move(v_dims), type};
}

size_t KvStorage::bytes_per_cell() const {
  return static_cast<size_t>(values_per_cell_) * element_bytes();
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
  const auto il = static_cast<size_t>(layer);
  const int64_t element =
      is_k ? k_offsets_[il] + in_page * k_dims_[il] : v_offsets_[il] + in_page * v_dims_[il];
  return page + static_cast<size_t>(element) * element_bytes();
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
  write_row(cell_row(layer, cell, true), values, k_dim(layer));
}

void KvStorage::write_v(int64_t layer, int64_t cell, const float* values) {
  write_row(cell_row(layer, cell, false), values, v_dim(layer));
}

void KvStorage::read_k(int64_t layer, int64_t cell, int64_t first, int64_t n, float* out) const {
  read_row(k_bytes(layer, cell) + first * static_cast<int64_t>(element_bytes()), out, n);
}

void KvStorage::read_v(int64_t layer, int64_t cell, int64_t first, int64_t n, float* out) const {
  read_row(v_bytes(layer, cell) + first * static_cast<int64_t>(element_bytes()), out, n);
}

void KvStorage::copy_cell(const KvStorage& source, int64_t from_cell, int64_t to_cell,
                          int64_t layer_begin, int64_t layer_end) {
  if (source.k_dims_ != k_dims_ || source.v_dims_ != v_dims_ || source.type_ != type_) {
    fail("copy_cell: KV storages of different shapes or types");
  }
  for (int64_t il = layer_begin; il < layer_end; ++il) {
    std::memcpy(k_bytes_mut(il, to_cell), source.k_bytes(il, from_cell), k_row_bytes(il));
    std::memcpy(v_bytes_mut(il, to_cell), source.v_bytes(il, from_cell), v_row_bytes(il));
  }
}

}  // namespace eventkv::compute
