// Attention alone, as a decode step runs it: rows of separate histories
// (one per session), each seeing its own `keys` cells, with SmolLM2's heads
// (9 query heads over 3 kv heads of 64) and an f32 cache. Counts keys read
// per second over every row and kv head.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include "compute/attention.h"
#include "util/rng.h"

namespace {

using eventkv::compute::AttentionPlan;
using eventkv::compute::AttentionShape;
using eventkv::compute::KeyRange;
using eventkv::compute::KvStorage;
using eventkv::compute::KvType;

constexpr AttentionShape kSmolLm2{9, 3, 64, 64, 0.125f};

void BM_AttentionDecode(benchmark::State& state) {
  const auto sessions = static_cast<int32_t>(state.range(0));
  const auto keys = static_cast<int32_t>(state.range(1));
  const int64_t cells = static_cast<int64_t>(sessions) * keys;
  const int64_t kv_dim = kSmolLm2.n_head_kv * kSmolLm2.head_dim;
  KvStorage kv(cells, {kv_dim}, {kv_dim}, KvType::kF32);
  eventkv::Rng rng(1);
  std::vector<float> row(static_cast<size_t>(kv_dim));
  for (int64_t cell = 0; cell < cells; ++cell) {
    for (float& x : row) x = static_cast<float>(rng.uniform(-1.0, 1.0));
    kv.activate(cell);
    kv.write_k(0, cell, row.data());
    kv.write_v(0, cell, row.data());
  }
  // Session s holds cells [s * keys, (s + 1) * keys) at positions 0 ..
  // keys - 1; its one row is the last of them.
  AttentionPlan plan;
  std::vector<int32_t> row_cells;
  std::vector<int32_t> positions;
  for (int32_t s = 0; s < sessions; ++s) {
    std::vector<int32_t> session_cells(static_cast<size_t>(keys));
    std::iota(session_cells.begin(), session_cells.end(), s * keys);
    std::vector<int32_t> session_positions(static_cast<size_t>(keys));
    std::iota(session_positions.begin(), session_positions.end(), 0);
    const KeyRange context = plan.add_keys(std::span(session_cells).first(keys - 1),
                                           std::span(session_positions).first(keys - 1));
    const KeyRange own =
        plan.add_keys(std::span(session_cells).last(1), std::span(session_positions).last(1));
    plan.add_block(1, {&context, 1}, own);
    row_cells.push_back(session_cells.back());
    positions.push_back(keys - 1);
  }
  plan.check(row_cells, cells);
  std::vector<float> q(static_cast<size_t>(sessions * kSmolLm2.n_head * kSmolLm2.head_dim));
  for (float& x : q) x = static_cast<float>(rng.uniform(-1.0, 1.0));
  std::vector<float> out(static_cast<size_t>(sessions * kSmolLm2.n_head * kSmolLm2.head_dim_v));
  const eventkv::compute::AttentionIo io{q.data(), positions.data(), &kv, 0, 0, out.data()};
  eventkv::compute::ThreadPool pool(1);
  for (auto _ : state) {
    eventkv::compute::attention(kSmolLm2, plan, plan.blocks, io, pool);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["keys_per_s"] = benchmark::Counter(static_cast<double>(cells * kSmolLm2.n_head_kv),
                                                    benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_AttentionDecode)
    ->ArgsProduct({{1, 8}, {256, 2048}})
    ->ArgNames({"sessions", "keys"})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
