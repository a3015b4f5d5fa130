// The rows an event KV history serves, for tests that compare histories bit
// for bit (verified forgetting, restored server sessions).
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "kv/event_kv.h"

namespace eventkv::testing {

// Every K and V row of every retained slot, all layers, in slot order.
inline std::vector<float> served_rows(const kv::EventKV& h) {
  const compute::KvStorage& storage = h.arena().storage();
  std::vector<float> out;
  std::vector<float> row;
  for (int32_t s = 0; s < h.n_slots(); ++s) {
    if (h.cell_of(s) < 0) continue;
    for (int64_t il = 0; il < storage.n_layer(); ++il) {
      row.resize(static_cast<size_t>(std::max(storage.k_dim(il), storage.v_dim(il))));
      storage.read_k(il, h.cell_of(s), 0, storage.k_dim(il), row.data());
      out.insert(out.end(), row.begin(), row.begin() + storage.k_dim(il));
      storage.read_v(il, h.cell_of(s), 0, storage.v_dim(il), row.data());
      out.insert(out.end(), row.begin(), row.begin() + storage.v_dim(il));
    }
  }
  return out;
}

inline bool bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace eventkv::testing
