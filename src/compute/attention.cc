#include "compute/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <vector>

#include "compute/simd.h"
#include "util/aligned_vector.h"
#include "util/error.h"

namespace eventkv::compute {
namespace {

constexpr int32_t kTileKeys = kLanes;
constexpr int32_t kRowsPerTask = 64;
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
// come from head_dim vector FMAs), and each key's V row: read in place from
// an f32 cache, converted into `v` ([16][head_dim_v]) from the others (and
// their K rows into `k`, [16][head_dim], before the transposition).
struct Tile {
  void prepare(const AttentionShape& s) {
    kt.resize(static_cast<size_t>(s.head_dim * kTileKeys));
    v.resize(static_cast<size_t>(kTileKeys * s.head_dim_v));
    k.resize(static_cast<size_t>(kTileKeys * s.head_dim));
    zeros.assign(static_cast<size_t>(s.head_dim), 0.0f);
  }

  AlignedVector<float> kt;
  AlignedVector<float> v;
  const float* v_rows[kTileKeys] = {};
  std::vector<float> k;
  std::vector<float> zeros;  // the K row of a tile's missing keys
  int32_t positions[kTileKeys] = {};
  int32_t n = 0;
};

#if defined(__AVX__)
typedef float v8f __attribute__((vector_size(32)));

// Rows [8 j0, 8 j0 + 8) of `rows`, dims [d0, d0 + 8), into kt's columns:
// an 8 x 8 transposition in registers (a scalar copy stores 64 times).
void transpose_8x8(const float* const* rows, int64_t d0, float* kt) {
  v8f r[8];
  for (int i = 0; i < 8; ++i) std::memcpy(&r[i], rows[i] + d0, sizeof(v8f));
  v8f t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  v8f u[8];
  for (int i = 0; i < 8; i += 4) {
    for (int h = 0; h < 2; ++h) {
      u[i + 2 * h] = __builtin_shufflevector(t[i + h], t[i + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[i + 2 * h + 1] =
          __builtin_shufflevector(t[i + h], t[i + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  }
  for (int d = 0; d < 4; ++d) {
    const v8f low = __builtin_shufflevector(u[d], u[d + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    const v8f high = __builtin_shufflevector(u[d], u[d + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    std::memcpy(kt + (d0 + d) * kTileKeys, &low, sizeof(low));
    std::memcpy(kt + (d0 + d + 4) * kTileKeys, &high, sizeof(high));
  }
}
#endif

// kt[d * 16 + j] = rows[j][d] for the tile's 16 keys.
void transpose_keys(const float* const* rows, int64_t head_dim, float* kt) {
#if defined(__AVX__)
  if (head_dim % 8 == 0) {
    for (int j0 = 0; j0 < kTileKeys; j0 += 8) {
      for (int64_t d0 = 0; d0 < head_dim; d0 += 8) transpose_8x8(rows + j0, d0, kt + j0);
    }
    return;
  }
#endif
  for (int j = 0; j < kTileKeys; ++j) {
    for (int64_t d = 0; d < head_dim; ++d) kt[d * kTileKeys + j] = rows[j][d];
  }
}

void load_tile(const AttentionShape& s, const AttentionPlan& plan, const AttentionIo& io,
               int64_t kv_head, const int32_t* keys, int32_t n, Tile& tile) {
  tile.n = n;
  const bool f32 = io.kv->type() == KvType::kF32;
  const float* k_rows[kTileKeys];
  std::fill(std::begin(k_rows), std::end(k_rows), tile.zeros.data());
  for (int32_t j = 0; j < n; ++j) {
    const int32_t cell = plan.key_cells[static_cast<size_t>(keys[j])];
    tile.positions[j] = plan.key_positions[static_cast<size_t>(keys[j])];
    if (f32) {
      k_rows[j] =
          reinterpret_cast<const float*>(io.kv->k_bytes(io.layer, cell)) + kv_head * s.head_dim;
      tile.v_rows[j] =
          reinterpret_cast<const float*>(io.kv->v_bytes(io.layer, cell)) + kv_head * s.head_dim_v;
    } else {
      float* k = tile.k.data() + j * s.head_dim;
      io.kv->read_k(io.layer, cell, kv_head * s.head_dim, s.head_dim, k);
      k_rows[j] = k;
      tile.v_rows[j] = tile.v.data() + j * s.head_dim_v;
      io.kv->read_v(io.layer, cell, kv_head * s.head_dim_v, s.head_dim_v,
                    tile.v.data() + j * s.head_dim_v);
    }
  }
  transpose_keys(k_rows, s.head_dim, tile.kt.data());
}

// A softmax over some keys of one row and head, not yet normalized:
// acc[0, head_dim_v) = sum_j e^(s_j - max) v_j, and acc[head_dim_v, + 16)
// the same sum's weights lane by lane (rescaled and merged like a 16-wide
// value of ones, and added up once at the end). Until a key is added
// (max == kNoKey) acc holds nothing meaningful.
struct Partial {
  float max = kNoKey;
  float* acc = nullptr;  // [head_dim_v + 16]
};

int64_t partial_width(const AttentionShape& s) {
  return s.head_dim_v + kLanes;
}

void scale_acc(float* acc, float factor, int64_t n) {
  for (int64_t c = 0; c < n; c += kLanes) store16(acc + c, load16(acc + c) * factor);
}

// q . k of the tile's keys for kGroup consecutive query heads: each key
// vector loaded feeds every head. Each head's sum is split over kSplit
// interleaved dimensions, so that at least 8 chains of multiply-adds (in
// native vectors) hide their latency: one chain a head kept decode waiting
// on it (SmolLM2's 3 heads a kv head: 6 chains of 256-bit FMAs on AVX2).
template <int kGroup>
void tile_dots(const float* q, int64_t head_dim, const float* kt, v16f* dots) {
  constexpr int kSplit = std::max(1, 8 / (kGroup * kParts));
  v16f acc[kSplit][kGroup] = {};
  for (int64_t d = 0; d < head_dim; d += kSplit) {
#pragma GCC unroll 8
    for (int s = 0; s < kSplit; ++s) {
      const v16f keys = load16(kt + (d + s) * kTileKeys);
      for (int g = 0; g < kGroup; ++g) acc[s][g] = q[g * head_dim + d + s] * keys + acc[s][g];
    }
  }
  for (int g = 0; g < kGroup; ++g) {
    dots[g] = acc[0][g];
    for (int s = 1; s < kSplit; ++s) dots[g] = dots[g] + acc[s][g];
  }
}

// Lanes of the tile that a row sees: the first `visible`, within the window.
struct TileMask {
  bool all = false;
  v16i lanes = {};  // -1 where seen
};

TileMask tile_mask(const Tile& tile, int32_t visible, int32_t position, int64_t window) {
  TileMask mask;
  // Positions ascend along the tile, so its first key is the oldest.
  mask.all = visible >= kTileKeys && (window <= 0 || position - tile.positions[0] < window);
  if (mask.all) return mask;
  mask.lanes = lane_index() < visible;
  if (window > 0) {
    v16i positions;
    std::memcpy(&positions, tile.positions, sizeof(positions));
    mask.lanes &= (position - positions) < static_cast<int32_t>(window);
  }
  return mask;
}

// Updates one head's partial for the tile's keys that the row sees, given
// the head's q . k for the tile, up to the values: returns the weights of
// the tile's keys (zeros for unseen ones), whose values the caller adds.
v16f weigh_tile(const AttentionShape& s, v16f dots, const TileMask& mask, Partial& part,
                bool& fresh) {
  v16f scores = dots * s.scale;
  if (!mask.all) scores = select(mask.lanes, scores, splat16(kNoKey));
  const float tile_max = hmax(scores);
  fresh = part.max == kNoKey;
  if (tile_max == kNoKey) return v16f{};
  const float new_max = std::max(part.max, tile_max);
  if (!fresh && part.max != new_max)
    scale_acc(part.acc, std::exp(part.max - new_max), partial_width(s));
  part.max = new_max;
  v16f weights = exp16(scores - new_max);
  if (!mask.all) weights = select(mask.lanes, weights, v16f{});
  float* sums = part.acc + s.head_dim_v;
  store16(sums, fresh ? weights : load16(sums) + weights);
  return weights;
}

// acc_g += sum_j p_g[j] v_j for kGroup heads; each value vector loaded
// feeds every head. A fresh head's acc starts from zero.
template <int kGroup>
void add_values(const AttentionShape& s, const Tile& tile, const v16f* weights, const bool* fresh,
                Partial* parts) {
  float p[kGroup][kTileKeys];
  for (int g = 0; g < kGroup; ++g) store16(p[g], weights[g]);
  for (int64_t c = 0; c < s.head_dim_v; c += kLanes) {
    v16f acc[kGroup];
    for (int g = 0; g < kGroup; ++g) acc[g] = fresh[g] ? v16f{} : load16(parts[g].acc + c);
    for (int32_t j = 0; j < tile.n; ++j) {
      const v16f values = load16(tile.v_rows[j] + c);
      for (int g = 0; g < kGroup; ++g) acc[g] = p[g][j] * values + acc[g];
    }
    for (int g = 0; g < kGroup; ++g) store16(parts[g].acc + c, acc[g]);
  }
}

template <int kGroup>
void add_tile(const AttentionShape& s, const Tile& tile, const float* q, const TileMask& mask,
              Partial* parts) {
  v16f dots[kGroup];
  tile_dots<kGroup>(q, s.head_dim, tile.kt.data(), dots);
  v16f weights[kGroup];
  bool fresh[kGroup];
  for (int g = 0; g < kGroup; ++g) weights[g] = weigh_tile(s, dots[g], mask, parts[g], fresh[g]);
  add_values<kGroup>(s, tile, weights, fresh, parts);
}

// The tile's keys for every query head of one kv head, for one row.
void add_tile_to_row(const AttentionShape& s, const Tile& tile, const float* q, int64_t group,
                     const TileMask& mask, Partial* parts) {
  int64_t g = 0;
  for (; g + 4 <= group; g += 4) add_tile<4>(s, tile, q + g * s.head_dim, mask, parts + g);
  switch (group - g) {
    case 3:
      return add_tile<3>(s, tile, q + g * s.head_dim, mask, parts + g);
    case 2:
      return add_tile<2>(s, tile, q + g * s.head_dim, mask, parts + g);
    case 1:
      return add_tile<1>(s, tile, q + g * s.head_dim, mask, parts + g);
    default:
      return;
  }
}

// total = total (+) part: the softmax of the union of their keys.
void merge(Partial& total, const Partial& part, int64_t width) {
  if (part.max == kNoKey) return;
  if (total.max == kNoKey) {
    total.max = part.max;
    std::copy(part.acc, part.acc + width, total.acc);
    return;
  }
  const float max = std::max(total.max, part.max);
  const float a = std::exp(total.max - max);
  const float b = std::exp(part.max - max);
  for (int64_t c = 0; c < width; c += kLanes)
    store16(total.acc + c, load16(total.acc + c) * a + load16(part.acc + c) * b);
  total.max = max;
}

void normalize(const Partial& total, float* out, int64_t head_dim_v) {
  if (total.max == kNoKey) {
    std::fill(out, out + head_dim_v, 0.0f);
    return;
  }
  const float inverse = 1.0f / hsum(load16(total.acc + head_dim_v));
  for (int64_t c = 0; c < head_dim_v; ++c) out[c] = total.acc[c] * inverse;
}

// One unit of work: segments [seg_begin, seg_end) of rows [row_begin,
// row_end) of a block, for the query heads of one kv head.
struct Task {
  int32_t block = 0;
  int32_t kv_head = 0;
  int32_t row_begin = 0, row_end = 0;
  int32_t seg_begin = 0, seg_end = 0;
};

// Storage for the partial softmax of every row and head a task touches.
class Partials {
 public:
  void prepare(int64_t n, int64_t width) {
    acc_.resize(static_cast<size_t>(n * width));
    parts_.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) parts_[static_cast<size_t>(i)].acc = acc_.data() + i * width;
  }
  Partial& operator[](int64_t i) { return parts_[static_cast<size_t>(i)]; }
  void reset(int64_t n) {
    for (int64_t i = 0; i < n; ++i) parts_[static_cast<size_t>(i)].max = kNoKey;
  }

 private:
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
  AlignedVector<float> split_acc;     // [parts][partial_width]
  std::vector<float> split_max;
};

Partial split_partial(Layout& l, int64_t index) {
  return {l.split_max[static_cast<size_t>(index)],
          l.split_acc.data() + index * partial_width(l.shape)};
}

// Index of the stored partial of (row, head, segment) of a split block.
int64_t split_index(const Layout& l, const QueryBlock& block, const BlockKeys& keys, int32_t row,
                    int64_t head, int32_t segment) {
  return l.split_offset[static_cast<size_t>(&block - l.blocks.data())] +
         (row * l.shape.n_head + head) * keys.segments() + segment;
}

// Whether a key lies outside the sliding window of every row at `oldest_row`
// or later. Positions never descend along a block's keys (the plan checks
// it), so a tile whose last key does is skipped whole: it would add nothing,
// and local layers cost only their window however long the history.
bool behind_every_window(const Layout& l, int32_t key, int32_t oldest_row) {
  return l.io.window > 0 &&
         oldest_row - l.plan.key_positions[static_cast<size_t>(key)] >= l.io.window;
}

// A split block's task stores its segment's partials for merge_split.
void store_split(Layout& l, const Task& task, const BlockKeys& keys, int32_t seg, Partials& parts) {
  const QueryBlock& block = l.blocks[static_cast<size_t>(task.block)];
  const int64_t width = partial_width(l.shape);
  for (int64_t i = 0; i < (task.row_end - task.row_begin) * l.group; ++i) {
    const int32_t row = task.row_begin + static_cast<int32_t>(i / l.group);
    const int64_t head = task.kv_head * l.group + i % l.group;
    const int64_t index = split_index(l, block, keys, row, head, seg);
    l.split_max[static_cast<size_t>(index)] = parts[i].max;
    std::copy(parts[i].acc, parts[i].acc + width, l.split_acc.data() + index * width);
  }
}

void run_task(Layout& l, const Task& task, Tile& tile, Partials& totals, Partials& parts,
              std::vector<int32_t>& seg_keys) {
  const AttentionShape& s = l.shape;
  const QueryBlock& block = l.blocks[static_cast<size_t>(task.block)];
  const BlockKeys keys(l.plan, block);
  const bool split = l.split_offset[static_cast<size_t>(task.block)] >= 0;
  const int32_t n_rows = task.row_end - task.row_begin;
  const int64_t states = n_rows * l.group;
  int32_t oldest_row = l.io.positions[block.first_row + task.row_begin];
  for (int32_t row = task.row_begin; row < task.row_end; ++row)
    oldest_row = std::min(oldest_row, l.io.positions[block.first_row + row]);
  totals.reset(states);
  for (int32_t seg = task.seg_begin; seg < task.seg_end; ++seg) {
    const int32_t seg_first = seg * kSegmentKeys;
    const int32_t seg_n = std::min(kSegmentKeys, keys.longest() - seg_first);
    keys.fill(seg_first, seg_n, seg_keys.data());
    parts.reset(states);
    for (int32_t t = 0; t < seg_n; t += kTileKeys) {
      const int32_t first = seg_first + t;
      if (behind_every_window(l, seg_keys[static_cast<size_t>(std::min(seg_n, t + kTileKeys) - 1)],
                              oldest_row))
        continue;
      load_tile(s, l.plan, l.io, task.kv_head, seg_keys.data() + t, std::min(kTileKeys, seg_n - t),
                tile);
      for (int32_t i = 0; i < n_rows; ++i) {
        const int32_t row = task.row_begin + i;
        const int32_t visible = keys.seen_by(row) - first;
        if (visible <= 0) continue;
        const int32_t batch_row = block.first_row + row;
        const int32_t position = l.io.positions[batch_row];
        const TileMask mask = tile_mask(tile, visible, position, l.io.window);
        add_tile_to_row(s, tile,
                        l.io.q + (batch_row * s.n_head + task.kv_head * l.group) * s.head_dim,
                        l.group, mask, &parts[i * l.group]);
      }
    }
    if (split) {
      store_split(l, task, keys, seg, parts);
      continue;
    }
    for (int64_t i = 0; i < states; ++i) merge(totals[i], parts[i], partial_width(s));
  }
  if (split) return;
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
          tasks.push_back({static_cast<int32_t>(b), h, 0, block.n_rows, seg, seg + 1});
        continue;
      }
      for (int32_t r = 0; r < block.n_rows; r += kRowsPerTask) {
        tasks.push_back({static_cast<int32_t>(b), h, r, std::min(block.n_rows, r + kRowsPerTask), 0,
                         keys.segments()});
      }
    }
  }
  l.split_acc.resize(static_cast<size_t>(n_split * partial_width(l.shape)));
  l.split_max.assign(static_cast<size_t>(n_split), kNoKey);
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
    Partials total;
    total.prepare(1, partial_width(s));
    for (int64_t task = begin; task < end; ++task) {
      const auto& [b, r] = rows[static_cast<size_t>(task / s.n_head)];
      const int64_t head = task % s.n_head;
      const QueryBlock& block = l.blocks[static_cast<size_t>(b)];
      const BlockKeys keys(l.plan, block);
      total.reset(1);
      for (int32_t seg = 0; seg < keys.segments(); ++seg) {
        merge(total[0], split_partial(l, split_index(l, block, keys, r, head, seg)),
              partial_width(s));
      }
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
  Layout layout{shape, plan, blocks, io, shape.n_head / shape.n_head_kv, {}, {}, {}};
  const std::vector<Task> tasks = make_tasks(layout);
  pool.parallel_for(
      static_cast<int64_t>(tasks.size()),
      [&](int64_t begin, int64_t end) {
        // Per thread and reused across calls: a loop runs per layer.
        thread_local Tile tile;
        thread_local Partials totals;
        thread_local Partials parts;
        thread_local std::vector<int32_t> seg_keys(kSegmentKeys);
        tile.prepare(shape);
        totals.prepare(kRowsPerTask * layout.group, partial_width(shape));
        parts.prepare(kRowsPerTask * layout.group, partial_width(shape));
        for (int64_t t = begin; t < end; ++t)
          run_task(layout, tasks[static_cast<size_t>(t)], tile, totals, parts, seg_keys);
      },
      1, ThreadPool::Chunks::kTaken);
  merge_split(layout, pool);
}

}  // namespace eventkv::compute
