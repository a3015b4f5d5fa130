#include "compute/attention_plan.h"

#include <algorithm>

#include "util/error.h"

namespace eventkv::compute {

KeyRange AttentionPlan::add_keys(std::span<const int32_t> cells,
                                 std::span<const int32_t> positions) {
  if (cells.size() != positions.size()) fail("attention plan: cells and positions differ");
  const auto begin = static_cast<int32_t>(key_cells.size());
  key_cells.insert(key_cells.end(), cells.begin(), cells.end());
  key_positions.insert(key_positions.end(), positions.begin(), positions.end());
  return {begin, static_cast<int32_t>(key_cells.size())};
}

void AttentionPlan::add_block(int32_t n_rows, std::span<const KeyRange> context, KeyRange own) {
  QueryBlock block;
  block.first_row = this->n_rows();
  block.n_rows = n_rows;
  block.ranges_begin = static_cast<int32_t>(ranges.size());
  for (const KeyRange& range : context) {
    if (range.size() == 0) continue;
    if (static_cast<int32_t>(ranges.size()) > block.ranges_begin &&
        ranges.back().end == range.begin) {
      ranges.back().end = range.end;
    } else {
      ranges.push_back(range);
    }
  }
  block.ranges_end = static_cast<int32_t>(ranges.size());
  block.causal_begin = own.begin;
  block.causal_end = own.begin + 1;
  blocks.push_back(block);
}

int32_t AttentionPlan::n_rows() const {
  return blocks.empty() ? 0 : blocks.back().first_row + blocks.back().n_rows;
}

std::vector<QueryBlock> AttentionPlan::slice(int32_t row_begin, int32_t row_end) const {
  std::vector<QueryBlock> part;
  for (const QueryBlock& block : blocks) {
    const int32_t first = std::max(block.first_row, row_begin);
    const int32_t end = std::min(block.first_row + block.n_rows, row_end);
    if (first >= end) continue;
    QueryBlock piece = block;
    piece.first_row = first - row_begin;
    piece.n_rows = end - first;
    piece.causal_end = block.causal_end + (first - block.first_row);
    part.push_back(piece);
  }
  return part;
}

void AttentionPlan::check_positions(const QueryBlock& block) const {
  int32_t previous = -1;
  const auto follow = [&](int32_t begin, int32_t end) {
    for (int32_t k = begin; k < end; ++k) {
      const int32_t position = key_positions[static_cast<size_t>(k)];
      if (position < previous)
        fail("attention plan: key positions descend (", previous, " then ", position, ")");
      previous = position;
    }
  };
  for (int32_t r = block.ranges_begin; r < block.ranges_end; ++r)
    follow(ranges[static_cast<size_t>(r)].begin, ranges[static_cast<size_t>(r)].end);
  follow(block.causal_begin, block.causal_end + block.n_rows - 1);
}

void AttentionPlan::check(std::span<const int32_t> row_cells, int64_t capacity) const {
  if (key_cells.size() != key_positions.size()) fail("attention plan: cells and positions differ");
  const auto n_keys = static_cast<int32_t>(key_cells.size());
  for (const int32_t cell : key_cells) {
    if (cell < 0 || cell >= capacity)
      fail("attention plan: key cell ", cell, " outside the KV capacity ", capacity);
  }
  for (const KeyRange& range : ranges) {
    if (range.begin < 0 || range.begin > range.end || range.end > n_keys)
      fail("attention plan: key range [", range.begin, ", ", range.end, ") out of bounds");
  }
  int32_t next_row = 0;
  for (const QueryBlock& block : blocks) {
    if (block.first_row != next_row || block.n_rows < 1)
      fail("attention plan: blocks must cover the rows in order");
    if (block.ranges_begin < 0 || block.ranges_begin > block.ranges_end ||
        block.ranges_end > static_cast<int32_t>(ranges.size())) {
      fail("attention plan: a block names ranges that do not exist");
    }
    const int32_t causal_last = block.causal_end + block.n_rows - 1;
    if (block.causal_begin < 0 || block.causal_begin >= block.causal_end || causal_last > n_keys)
      fail("attention plan: a causal run lies outside the key list");
    next_row += block.n_rows;
    if (static_cast<size_t>(next_row) > row_cells.size())
      fail("attention plan: more rows than the batch has");
    check_positions(block);
    for (int32_t i = 0; i < block.n_rows; ++i) {
      const int32_t own_key = block.causal_end - 1 + i;
      const int32_t row = block.first_row + i;
      if (key_cells[static_cast<size_t>(own_key)] != row_cells[static_cast<size_t>(row)])
        fail("attention plan: row ", row, " does not see its own cell last");
    }
  }
  if (static_cast<size_t>(next_row) != row_cells.size())
    fail("attention plan: ", next_row, " rows planned for a batch of ", row_cells.size());
}

}  // namespace eventkv::compute
