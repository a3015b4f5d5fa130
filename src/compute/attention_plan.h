// What every query row of a forward batch attends to, stated at the level the
// caller decides it (events, causal order inside an event, masked edges) and
// shared by every layer: a key list of cells, ranges of that list, and
// blocks of consecutive rows that see the same ranges plus a causal run of
// their own rows. Memory is linear in keys + ranges + blocks, however long
// the batch; no per-row lists exist.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace eventkv::compute {

// Keys [begin, end) of AttentionPlan::key_cells.
struct KeyRange {
  int32_t begin = 0;
  int32_t end = 0;

  int32_t size() const { return end - begin; }
};

// Batch rows [first_row, first_row + n_rows): row i sees every key of
// plan.ranges[ranges_begin, ranges_end), in order, then the keys
// [causal_begin, causal_end + i). The last key a row sees is its own row,
// and positions never descend along a row's keys (sliding windows skip
// whole tiles of keys by position).
struct QueryBlock {
  int32_t first_row = 0;
  int32_t n_rows = 0;
  int32_t ranges_begin = 0;
  int32_t ranges_end = 0;
  int32_t causal_begin = 0;
  int32_t causal_end = 0;  // keys row 0 sees in the causal run, its own included
};

struct AttentionPlan {
  std::vector<int32_t> key_cells;      // KV cells, in the order a row sums them
  std::vector<int32_t> key_positions;  // their RoPE positions (sliding windows)
  std::vector<KeyRange> ranges;
  std::vector<QueryBlock> blocks;  // in row order, covering the batch

  // Appends keys; returns their range. A cell may appear more than once
  // (histories that share rows each list them).
  KeyRange add_keys(std::span<const int32_t> cells, std::span<const int32_t> positions);

  // Appends a block of `n_rows` rows after the last block: they see
  // `context` entirely (adjacent ranges are merged; the sum order is the
  // list order either way), then `own` causally, where own.begin holds the
  // block's first row.
  void add_block(int32_t n_rows, std::span<const KeyRange> context, KeyRange own);

  int32_t n_rows() const;

  // Throws Error unless the blocks cover rows [0, row_cells.size()) in
  // order, every range lies in the key list, cells are below `capacity`,
  // each row's last key is its own cell and positions never descend along
  // a block's keys.
  void check(std::span<const int32_t> row_cells, int64_t capacity) const;

  // The blocks of rows [row_begin, row_end), renumbered from row_begin.
  std::vector<QueryBlock> slice(int32_t row_begin, int32_t row_end) const;

 private:
  void check_positions(const QueryBlock& block) const;
};

}  // namespace eventkv::compute
