#include "kv/batch_runner.h"

#include <algorithm>

#include "compute/forward.h"
#include "util/error.h"

namespace eventkv::kv {

int32_t BatchRunner::add(int32_t token, int32_t position, int32_t cell,
                         const std::vector<VisibleCell>& visible) {
  tokens_.push_back(token);
  positions_.push_back(position);
  cells_.push_back(cell);
  visible_.push_back(visible);
  return size() - 1;
}

std::vector<float> BatchRunner::run(const std::vector<int32_t>& logit_rows) {
  if (tokens_.empty()) fail("BatchRunner: nothing to compute");
  compute::ForwardBatch batch;
  batch.tokens = tokens_;
  batch.positions = positions_;
  batch.cells = cells_;
  batch.logit_rows = logit_rows;
  // kv list: every cell any token reads, ordered by (position, cell) so that
  // the arithmetic depends on the layout of positions, not on which cells
  // happen to hold the rows.
  std::vector<int32_t> position_of(static_cast<size_t>(arena_.storage().capacity()), -1);
  for (const auto& list : visible_) {
    for (const VisibleCell& v : list) {
      if (position_of[static_cast<size_t>(v.cell)] < 0) batch.kv_cells.push_back(v.cell);
      position_of[static_cast<size_t>(v.cell)] = v.position;
    }
  }
  std::sort(batch.kv_cells.begin(), batch.kv_cells.end(), [&](int32_t a, int32_t b) {
    const int32_t pa = position_of[static_cast<size_t>(a)];
    const int32_t pb = position_of[static_cast<size_t>(b)];
    return pa != pb ? pa < pb : a < b;
  });
  std::vector<int32_t> kv_index(position_of.size(), -1);
  for (size_t j = 0; j < batch.kv_cells.size(); ++j) {
    kv_index[static_cast<size_t>(batch.kv_cells[j])] = static_cast<int32_t>(j);
    batch.kv_positions.push_back(position_of[static_cast<size_t>(batch.kv_cells[j])]);
  }
  batch.visible.resize(visible_.size());
  for (size_t t = 0; t < visible_.size(); ++t) {
    auto& list = batch.visible[t];
    list.reserve(visible_[t].size());
    for (const VisibleCell& v : visible_[t]) list.push_back(kv_index[static_cast<size_t>(v.cell)]);
    if (!std::is_sorted(list.begin(), list.end())) std::sort(list.begin(), list.end());
  }
  return compute::forward(engine_.model(), arena_.storage(), batch, engine_.pool());
}

}  // namespace eventkv::kv
