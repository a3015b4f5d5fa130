// compute::attention against a double-precision reference, on plans of every
// shape the kv layer produces: causal runs of one sequence, two histories
// sharing a prefix (the same cells listed twice), holes (removed edges),
// rows long enough for several softmax segments, sliding windows, f16 rows.
// A row's result must not depend on the rest of its batch, on how its block
// is split into micro-batches, or on the thread count, bit for bit.
#include "compute/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace eventkv::compute {
namespace {

constexpr AttentionShape kShape{6, 2, 32, 16, 0.2f};
constexpr int64_t kCells = 700;  // cell i holds position i

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(n);
  for (float& x : values) x = dist(rng);
  return values;
}

KvStorage random_storage(KvType type, uint32_t seed) {
  KvStorage kv(kCells, {kShape.n_head_kv * kShape.head_dim}, {kShape.n_head_kv * kShape.head_dim_v},
               type);
  const std::vector<float> k = random_values(static_cast<size_t>(kCells * kv.k_dim(0)), seed);
  const std::vector<float> v = random_values(static_cast<size_t>(kCells * kv.v_dim(0)), seed + 1);
  for (int64_t cell = 0; cell < kCells; ++cell) {
    kv.activate(cell);
    kv.write_k(0, cell, k.data() + cell * kv.k_dim(0));
    kv.write_v(0, cell, v.data() + cell * kv.v_dim(0));
  }
  return kv;
}

std::vector<int32_t> iota(int32_t begin, int32_t end) {
  std::vector<int32_t> cells(static_cast<size_t>(end - begin));
  std::iota(cells.begin(), cells.end(), begin);
  return cells;
}

KeyRange add_cells(AttentionPlan& plan, int32_t begin, int32_t end) {
  const std::vector<int32_t> cells = iota(begin, end);
  return plan.add_keys(cells, cells);
}

// Rows of several shapes: a causal sequence after a prefix; two histories
// that share the prefix's cells, each with its own suffix; a block with
// holes; a lone row that sees one key; a long causal run over several
// segments; a short block after 600 keys (its segments spread over tasks).
AttentionPlan every_shape() {
  AttentionPlan plan;
  const KeyRange prefix = add_cells(plan, 0, 10);
  plan.add_block(5, std::vector{prefix}, add_cells(plan, 10, 15));
  for (const int32_t side : {0, 1}) {
    const KeyRange shared = add_cells(plan, 0, 10);
    const int32_t first = 20 + 10 * side;
    plan.add_block(6, std::vector{shared}, add_cells(plan, first, first + 6));
  }
  const std::vector<KeyRange> holes = {add_cells(plan, 0, 3), add_cells(plan, 7, 9),
                                       add_cells(plan, 40, 41)};
  plan.add_block(2, holes, add_cells(plan, 50, 52));
  plan.add_block(1, {}, add_cells(plan, 60, 61));
  plan.add_block(300, {}, add_cells(plan, 100, 400));
  const KeyRange long_context = add_cells(plan, 0, 600);
  plan.add_block(3, std::vector{long_context}, add_cells(plan, 600, 603));
  return plan;
}

// The keys row `row` sees, as cells, in order.
std::vector<int32_t> seen_cells(const AttentionPlan& plan, int32_t row) {
  for (const QueryBlock& block : plan.blocks) {
    if (row < block.first_row || row >= block.first_row + block.n_rows) continue;
    std::vector<int32_t> cells;
    for (int32_t r = block.ranges_begin; r < block.ranges_end; ++r) {
      const KeyRange& range = plan.ranges[static_cast<size_t>(r)];
      for (int32_t k = range.begin; k < range.end; ++k)
        cells.push_back(plan.key_cells[static_cast<size_t>(k)]);
    }
    for (int32_t k = block.causal_begin; k < block.causal_end + row - block.first_row; ++k)
      cells.push_back(plan.key_cells[static_cast<size_t>(k)]);
    return cells;
  }
  return {};
}

// out[h * head_dim_v + c] for one row, in double.
std::vector<double> reference(const float* q, const KvStorage& kv,
                              const std::vector<int32_t>& cells, int32_t position, int64_t window) {
  const AttentionShape& s = kShape;
  std::vector<double> out(static_cast<size_t>(s.n_head * s.head_dim_v), 0.0);
  std::vector<float> k(static_cast<size_t>(kv.k_dim(0)));
  std::vector<float> v(static_cast<size_t>(kv.v_dim(0)));
  for (int64_t h = 0; h < s.n_head; ++h) {
    const int64_t kv_head = h / (s.n_head / s.n_head_kv);
    std::vector<double> p;
    std::vector<int32_t> used;
    for (const int32_t cell : cells) {
      if (window > 0 && position - cell >= window) continue;  // cell i holds position i
      kv.read_k(0, cell, 0, kv.k_dim(0), k.data());
      double dot = 0.0;
      for (int64_t d = 0; d < s.head_dim; ++d)
        dot += static_cast<double>(q[h * s.head_dim + d]) * k[kv_head * s.head_dim + d];
      p.push_back(dot * s.scale);
      used.push_back(cell);
    }
    double max_p = p[0];
    for (const double x : p) max_p = std::max(max_p, x);
    double sum = 0.0;
    for (double& x : p) sum += (x = std::exp(x - max_p));
    for (size_t i = 0; i < used.size(); ++i) {
      kv.read_v(0, used[i], 0, kv.v_dim(0), v.data());
      for (int64_t c = 0; c < s.head_dim_v; ++c)
        out[static_cast<size_t>(h * s.head_dim_v + c)] +=
            p[i] / sum * v[kv_head * s.head_dim_v + c];
    }
  }
  return out;
}

std::vector<int32_t> row_positions(const AttentionPlan& plan) {
  std::vector<int32_t> positions;
  for (const QueryBlock& block : plan.blocks) {
    for (int32_t i = 0; i < block.n_rows; ++i)
      positions.push_back(plan.key_positions[static_cast<size_t>(block.causal_end - 1 + i)]);
  }
  return positions;
}

std::vector<float> run(const AttentionPlan& plan, const std::vector<QueryBlock>& blocks,
                       const float* q, const int32_t* positions, const KvStorage& kv,
                       int64_t window, ThreadPool& pool) {
  int32_t n_rows = 0;
  for (const QueryBlock& block : blocks) n_rows += block.n_rows;
  std::vector<float> out(static_cast<size_t>(n_rows * kShape.n_head * kShape.head_dim_v));
  const AttentionIo io{q, positions, &kv, 0, window, out.data()};
  attention(kShape, plan, blocks, io, pool);
  return out;
}

void expect_matches_reference(KvType type, int64_t window) {
  const KvStorage kv = random_storage(type, 2);
  const AttentionPlan plan = every_shape();
  const int32_t n = plan.n_rows();
  const std::vector<float> q = random_values(n * kShape.n_head * kShape.head_dim, 1);
  const std::vector<int32_t> positions = row_positions(plan);
  ThreadPool pool(2);
  const std::vector<float> out =
      run(plan, plan.blocks, q.data(), positions.data(), kv, window, pool);
  const int64_t width = kShape.n_head * kShape.head_dim_v;
  for (int32_t t = 0; t < n; ++t) {
    const std::vector<double> expected =
        reference(q.data() + t * kShape.n_head * kShape.head_dim, kv, seen_cells(plan, t),
                  positions[static_cast<size_t>(t)], window);
    for (int64_t i = 0; i < width; ++i)
      ASSERT_NEAR(out[t * width + i], expected[i], 1e-5) << "row " << t << " output " << i;
  }
}

TEST(Attention, MatchesReferenceOnEveryPlanShape) {
  expect_matches_reference(KvType::kF32, 0);
}

TEST(Attention, MatchesReferenceWithF16RowsAndASlidingWindow) {
  expect_matches_reference(KvType::kF16, 0);
  expect_matches_reference(KvType::kF32, 37);
}

TEST(Attention, RowResultDoesNotDependOnBatchSplitOrThreads) {
  const KvStorage kv = random_storage(KvType::kF32, 5);
  const AttentionPlan plan = every_shape();
  const int32_t n = plan.n_rows();
  const int64_t q_width = kShape.n_head * kShape.head_dim;
  const int64_t width = kShape.n_head * kShape.head_dim_v;
  const std::vector<float> q = random_values(n * q_width, 4);
  const std::vector<int32_t> positions = row_positions(plan);
  ThreadPool two(2);
  ThreadPool one(1);
  const std::vector<float> batched = run(plan, plan.blocks, q.data(), positions.data(), kv, 0, two);
  EXPECT_EQ(batched, run(plan, plan.blocks, q.data(), positions.data(), kv, 0, one));
  for (int32_t t = 0; t < n; ++t) {  // each row alone, as a slice of its block
    const std::vector<float> alone =
        run(plan, plan.slice(t, t + 1), q.data() + t * q_width, positions.data() + t, kv, 0, two);
    EXPECT_EQ(0,
              std::memcmp(alone.data(), batched.data() + t * width, alone.size() * sizeof(float)))
        << "row " << t;
  }
}

TEST(AttentionPlan, CheckRejectsRowsThatDoNotSeeThemselvesLast) {
  AttentionPlan plan = every_shape();
  std::vector<int32_t> cells;
  for (const QueryBlock& block : plan.blocks) {
    for (int32_t i = 0; i < block.n_rows; ++i)
      cells.push_back(plan.key_cells[static_cast<size_t>(block.causal_end - 1 + i)]);
  }
  EXPECT_NO_THROW(plan.check(cells, kCells));
  cells[3] += 1;
  EXPECT_THROW(plan.check(cells, kCells), std::exception);
  cells[3] -= 1;
  EXPECT_THROW(plan.check(cells, 100), std::exception);  // keys beyond the capacity
  plan.blocks.back().n_rows += 1;
  EXPECT_THROW(plan.check(cells, kCells), std::exception);
  AttentionPlan descending;  // sliding windows skip keys by position
  const std::vector<int32_t> two_cells = {0, 1};
  const std::vector<int32_t> positions = {5, 3};
  descending.add_keys(two_cells, positions);
  descending.add_block(1, std::vector{KeyRange{0, 1}}, {1, 2});
  EXPECT_THROW(descending.check(std::vector{1}, kCells), std::exception);
}

}  // namespace
}  // namespace eventkv::compute
