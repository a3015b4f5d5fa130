#include "compute/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "compute/simd.h"
#include "util/aligned_vector.h"
#include "util/error.h"

namespace eventkv::compute {
namespace {

constexpr int32_t kTileKeys = kLanes;
constexpr int32_t kRowsPerTask = 16;
// Blocks of at most this many rows (decode, query branches) spread their
// segments over tasks, so that every thread works on one long row.
constexpr int32_t kSplitRows = 4;
constexpr float kNoKey = -std::numeric_limits<float>::infinity();

// The keys of one block in the order its rows sum them: its ranges, then
// its causal run; row i sees the first seen_by(i) of them.
class BlockKeys {
 public:
  BlockKeys(const AttentionPlan& plan, const QueryBlock& block) : plan_(plan), block_(block) {
    for (int32_t r = block.ranges_begin; r < block.ranges_end; ++r)
      context_ += plan.ranges[static_cast<size_t>(r)].size();
  }

  int32_t seen_by(int32_t row) const {
    return context_ + block_.causal_end - block_.causal_begin + row;
  }
  int32_t longest() const { return seen_by(block_.n_rows - 1); }
  int32_t segments() const { return (longest() + kSegmentKeys - 1) / kSegmentKeys; }

  // Key indices of sequence entries [first, first + n).
  void fill(int32_t first, int32_t n, int32_t* out) const {
    int32_t start = 0;  // sequence index of the current range's first key
    for (int32_t r = block_.ranges_begin; r < block_.ranges_end && n > 0; ++r) {
      const KeyRange& range = plan_.ranges[static_cast<size_t>(r)];
      for (int32_t k = first - start; k < range.size() && n > 0; ++k, ++first, --n)
        *out++ = range.begin + k;
      start += range.size();
    }
    for (; n > 0; ++first, --n) *out++ = block_.causal_begin + (first - context_);
  }

 private:
  const AttentionPlan& plan_;
  const QueryBlock& block_;
  int32_t context_ = 0;
};

// Up to 16 keys of one kv head: K transposed ([head_dim][16], so 16 scores
// come from head_dim vector FMAs), V by key ([16][head_dim_v]).
struct Tile {
  Tile(const AttentionShape& s)
      : kt(static_cast<size_t>(s.head_dim * kTileKeys)),
        v(static_cast<size_t>(kTileKeys * s.head_dim_v)),
        row(static_cast<size_t>(s.head_dim)) {}

  AlignedVector<float> kt;
  AlignedVector<float> v;
  std::vector<float> row;
  int32_t positions[kTileKeys] = {};
  int32_t n = 0;
};

void load_tile(const AttentionShape& s, const AttentionPlan& plan, const AttentionIo& io,
               int64_t kv_head, const int32_t* keys, int32_t n, Tile& tile) {
  tile.n = n;
  std::fill(tile.kt.begin(), tile.kt.end(), 0.0f);
  for (int32_t j = 0; j < n; ++j) {
    const int32_t cell = plan.key_cells[static_cast<size_t>(keys[j])];
    tile.positions[j] = plan.key_positions[static_cast<size_t>(keys[j])];
    io.kv->read_k(io.layer, cell, kv_head * s.head_dim, s.head_dim, tile.row.data());
    for (int64_t d = 0; d < s.head_dim; ++d) tile.kt[d * kTileKeys + j] = tile.row[d];
    io.kv->read_v(io.layer, cell, kv_head * s.head_dim_v, s.head_dim_v,
                  tile.v.data() + j * s.head_dim_v);
  }
}

// A softmax over some keys of one row and head, not yet normalized:
// sum = sum_j e^(s_j - max), acc = sum_j e^(s_j - max) v_j.
struct Partial {
  float max = kNoKey;
  float sum = 0.0f;
  float* acc = nullptr;  // [head_dim_v]
};

void scale_acc(float* acc, float factor, int64_t n) {
  for (int64_t c = 0; c < n; c += kLanes) store16(acc + c, load16(acc + c) * factor);
}

// Adds the tile's keys that the row sees (the first `visible` of the tile,
// within the window) to one head's partial.
void add_tile(const AttentionShape& s, const Tile& tile, const float* q, int32_t visible,
              int32_t position, int64_t window, Partial& part) {
  v16f dots = {};
  for (int64_t d = 0; d < s.head_dim; ++d)
    dots = q[d] * load16(tile.kt.data() + d * kTileKeys) + dots;
  float scores[kTileKeys];
  store16(scores, dots * s.scale);
  float tile_max = kNoKey;
  for (int32_t j = 0; j < kTileKeys; ++j) {
    const bool seen = j < visible && (window <= 0 || position - tile.positions[j] < window);
    if (!seen) scores[j] = kNoKey;
    tile_max = std::max(tile_max, scores[j]);
  }
  if (tile_max == kNoKey) return;
  const float new_max = std::max(part.max, tile_max);
  if (part.max != kNoKey && part.max != new_max) {
    const float factor = std::exp(part.max - new_max);
    part.sum *= factor;
    scale_acc(part.acc, factor, s.head_dim_v);
  }
  part.max = new_max;
  float p[kTileKeys];
  store16(p, exp16(load16(scores) - new_max));
  for (int32_t j = 0; j < kTileKeys; ++j) {
    if (scores[j] == kNoKey) p[j] = 0.0f;
    part.sum += p[j];
  }
  for (int64_t c = 0; c < s.head_dim_v; c += kLanes) {
    v16f acc = load16(part.acc + c);
    for (int32_t j = 0; j < tile.n; ++j)
      acc = p[j] * load16(tile.v.data() + j * s.head_dim_v + c) + acc;
    store16(part.acc + c, acc);
  }
}

// total = total (+) part: the softmax of the union of their keys.
void merge(Partial& total, const Partial& part, int64_t n) {
  if (part.max == kNoKey) return;
  if (total.max == kNoKey) {
    total.max = part.max;
    total.sum = part.sum;
    std::copy(part.acc, part.acc + n, total.acc);
    return;
  }
  const float max = std::max(total.max, part.max);
  const float a = std::exp(total.max - max);
  const float b = std::exp(part.max - max);
  total.sum = total.sum * a + part.sum * b;
  for (int64_t c = 0; c < n; c += kLanes)
    store16(total.acc + c, load16(total.acc + c) * a + load16(part.acc + c) * b);
  total.max = max;
}

void normalize(const Partial& total, float* out, int64_t n) {
  if (total.sum == 0.0f) {
    std::fill(out, out + n, 0.0f);
    return;
  }
  const float inverse = 1.0f / total.sum;
  for (int64_t c = 0; c < n; ++c) out[c] = total.acc[c] * inverse;
}

// One unit of work: segments [seg_begin, seg_end) of rows [row_begin,
// row_end) of a block, for the query heads of one kv head.
struct Task {
  int32_t block = 0;
  int32_t kv_head = 0;
  int32_t row_begin = 0, row_end = 0;
  int32_t seg_begin = 0, seg_end = 0;
  bool split = false;  // writes its one segment's partials for a later merge
};

// Storage for the partial softmax of every row and head a task touches.
class Partials {
 public:
  Partials(int64_t n, int64_t head_dim_v) : head_dim_v_(head_dim_v) {
    acc_.resize(static_cast<size_t>(n * head_dim_v));
    parts_.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      parts_[static_cast<size_t>(i)].acc = acc_.data() + i * head_dim_v;
  }
  Partial& operator[](int64_t i) { return parts_[static_cast<size_t>(i)]; }
  void reset(int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      Partial& p = parts_[static_cast<size_t>(i)];
      p.max = kNoKey;
      p.sum = 0.0f;
      std::fill(p.acc, p.acc + head_dim_v_, 0.0f);
    }
  }

 private:
  int64_t head_dim_v_;
  AlignedVector<float> acc_;
  std::vector<Partial> parts_;
};

struct Layout {
  const AttentionShape& shape;
  const AttentionPlan& plan;
  std::span<const QueryBlock> blocks;
  const AttentionIo& io;
  int64_t group;                      // query heads per kv head
  std::vector<int64_t> split_offset;  // per block: first partial in `split`, or -1
  AlignedVector<float> split_acc;     // [parts][head_dim_v]
  std::vector<float> split_max, split_sum;
};

Partial split_partial(Layout& l, int64_t index) {
  return {l.split_max[static_cast<size_t>(index)], l.split_sum[static_cast<size_t>(index)],
          l.split_acc.data() + index * l.shape.head_dim_v};
}

// Index of the stored partial of (row, head, segment) of a split block.
int64_t split_index(const Layout& l, const QueryBlock& block, const BlockKeys& keys, int32_t row,
                    int64_t head, int32_t segment) {
  return l.split_offset[static_cast<size_t>(&block - l.blocks.data())] +
         (row * l.shape.n_head + head) * keys.segments() + segment;
}

void run_task(Layout& l, const Task& task, Tile& tile, Partials& totals, Partials& parts,
              std::vector<int32_t>& seg_keys) {
  const AttentionShape& s = l.shape;
  const QueryBlock& block = l.blocks[static_cast<size_t>(task.block)];
  const BlockKeys keys(l.plan, block);
  const int32_t n_rows = task.row_end - task.row_begin;
  const int64_t states = n_rows * l.group;
  totals.reset(states);
  for (int32_t seg = task.seg_begin; seg < task.seg_end; ++seg) {
    const int32_t seg_first = seg * kSegmentKeys;
    const int32_t seg_n = std::min(kSegmentKeys, keys.longest() - seg_first);
    keys.fill(seg_first, seg_n, seg_keys.data());
    parts.reset(states);
    for (int32_t t = 0; t < seg_n; t += kTileKeys) {
      const int32_t first = seg_first + t;
      load_tile(s, l.plan, l.io, task.kv_head, seg_keys.data() + t, std::min(kTileKeys, seg_n - t),
                tile);
      for (int32_t i = 0; i < n_rows; ++i) {
        const int32_t row = task.row_begin + i;
        const int32_t visible = keys.seen_by(row) - first;
        if (visible <= 0) continue;
        const int32_t batch_row = block.first_row + row;
        for (int64_t g = 0; g < l.group; ++g) {
          const int64_t head = task.kv_head * l.group + g;
          add_tile(s, tile, l.io.q + (batch_row * s.n_head + head) * s.head_dim, visible,
                   l.io.positions[batch_row], l.io.window, parts[i * l.group + g]);
        }
      }
    }
    for (int64_t i = 0; i < states; ++i) {
      if (!task.split) {
        merge(totals[i], parts[i], s.head_dim_v);
        continue;
      }
      const int32_t row = task.row_begin + static_cast<int32_t>(i / l.group);
      const int64_t head = task.kv_head * l.group + i % l.group;
      const int64_t index = split_index(l, block, keys, row, head, seg);
      l.split_max[static_cast<size_t>(index)] = parts[i].max;
      l.split_sum[static_cast<size_t>(index)] = parts[i].sum;
      std::copy(parts[i].acc, parts[i].acc + s.head_dim_v,
                l.split_acc.data() + index * s.head_dim_v);
    }
  }
  if (task.split) return;
  for (int64_t i = 0; i < states; ++i) {
    const int32_t batch_row = block.first_row + task.row_begin + static_cast<int32_t>(i / l.group);
    const int64_t head = task.kv_head * l.group + i % l.group;
    normalize(totals[i], l.io.out + (batch_row * s.n_head + head) * s.head_dim_v, s.head_dim_v);
  }
}

std::vector<Task> make_tasks(Layout& l) {
  std::vector<Task> tasks;
  int64_t n_split = 0;
  for (size_t b = 0; b < l.blocks.size(); ++b) {
    const QueryBlock& block = l.blocks[b];
    const BlockKeys keys(l.plan, block);
    const bool split = block.n_rows <= kSplitRows && keys.segments() > 1;
    l.split_offset.push_back(split ? n_split : -1);
    if (split) n_split += block.n_rows * l.shape.n_head * keys.segments();
    for (int32_t h = 0; h < l.shape.n_head_kv; ++h) {
      if (split) {
        for (int32_t seg = 0; seg < keys.segments(); ++seg)
          tasks.push_back({static_cast<int32_t>(b), h, 0, block.n_rows, seg, seg + 1, true});
        continue;
      }
      for (int32_t r = 0; r < block.n_rows; r += kRowsPerTask) {
        tasks.push_back({static_cast<int32_t>(b), h, r, std::min(block.n_rows, r + kRowsPerTask), 0,
                         keys.segments(), false});
      }
    }
  }
  l.split_acc.assign(static_cast<size_t>(n_split * l.shape.head_dim_v), 0.0f);
  l.split_max.assign(static_cast<size_t>(n_split), kNoKey);
  l.split_sum.assign(static_cast<size_t>(n_split), 0.0f);
  return tasks;
}

// Merges the stored segments of every split block's rows, in segment order.
void merge_split(Layout& l, ThreadPool& pool) {
  std::vector<std::pair<int32_t, int32_t>> rows;  // (block, row)
  for (size_t b = 0; b < l.blocks.size(); ++b) {
    if (l.split_offset[b] < 0) continue;
    for (int32_t r = 0; r < l.blocks[b].n_rows; ++r) rows.emplace_back(static_cast<int32_t>(b), r);
  }
  const AttentionShape& s = l.shape;
  pool.parallel_for(static_cast<int64_t>(rows.size()) * s.n_head, [&](int64_t begin, int64_t end) {
    Partials total(1, s.head_dim_v);
    for (int64_t task = begin; task < end; ++task) {
      const auto& [b, r] = rows[static_cast<size_t>(task / s.n_head)];
      const int64_t head = task % s.n_head;
      const QueryBlock& block = l.blocks[static_cast<size_t>(b)];
      const BlockKeys keys(l.plan, block);
      total.reset(1);
      for (int32_t seg = 0; seg < keys.segments(); ++seg)
        merge(total[0], split_partial(l, split_index(l, block, keys, r, head, seg)), s.head_dim_v);
      normalize(total[0], l.io.out + ((block.first_row + r) * s.n_head + head) * s.head_dim_v,
                s.head_dim_v);
    }
  });
}

}  // namespace

void attention(const AttentionShape& shape, const AttentionPlan& plan,
               std::span<const QueryBlock> blocks, const AttentionIo& io, ThreadPool& pool) {
  if (shape.head_dim % kLanes != 0 || shape.head_dim_v % kLanes != 0) {
    fail("attention: head sizes ", shape.head_dim, " and ", shape.head_dim_v,
         " must be multiples of ", kLanes);
  }
  Layout layout{shape, plan, blocks, io, shape.n_head / shape.n_head_kv, {}, {}, {}, {}};
  const std::vector<Task> tasks = make_tasks(layout);
  pool.parallel_for(static_cast<int64_t>(tasks.size()), [&](int64_t begin, int64_t end) {
    Tile tile(shape);
    Partials totals(kRowsPerTask * layout.group, shape.head_dim_v);
    Partials parts(kRowsPerTask * layout.group, shape.head_dim_v);
    std::vector<int32_t> seg_keys(kSegmentKeys);
    for (int64_t t = begin; t < end; ++t)
      run_task(layout, tasks[static_cast<size_t>(t)], tile, totals, parts, seg_keys);
  });
  merge_split(layout, pool);
}

}  // namespace eventkv::compute
