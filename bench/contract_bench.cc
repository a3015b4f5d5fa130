// Verified forgetting against recomputing the whole history, on the default
// model: histories of about 1k, 4k and 8k tokens (events of 80-120 tokens),
// one event forgotten early (10%), in the middle (50%) or late (90%) of the
// history. Forgetting recomputes only the events after it; the whole
// recompute is every retained event at its position. Each iteration works
// on a fork of one computed history, so only the forgetting is timed.
#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "contract/contract_cache.h"
#include "util/rng.h"

namespace {

using eventkv::contract::AgentEvent;
using eventkv::contract::ContractCache;

struct Loaded {
  std::shared_ptr<eventkv::kv::Engine> engine;
  std::optional<eventkv::tokenizer::ChatFormat> format;
};

Loaded default_model() {
  const auto path =
      std::filesystem::path(EVENTKV_SOURCE_DIR) / "models" / "smollm2-135m-instruct-q4_1.gguf";
  if (!std::filesystem::exists(path)) return {};
  static std::shared_ptr<const eventkv::model::Model> model =
      eventkv::model::Model::load(path.string());
  return {std::make_shared<eventkv::kv::Engine>(model, 2),
          eventkv::tokenizer::ChatFormat::detect(model->file())};
}

// Words drawn from a small vocabulary: about one token each.
std::vector<AgentEvent> history_events(int64_t tokens) {
  static const std::vector<std::string> kWords = {"north", "river",  "lamp",  "seven",
                                                  "quiet", "garden", "stone", "blue"};
  eventkv::Rng rng(7);
  std::vector<AgentEvent> events;
  for (int64_t total = 0; total < tokens;) {
    const int length = 80 + static_cast<int>(rng.below(41));
    std::string text;
    for (int w = 0; w < length; ++w) {
      if (w > 0) text += ' ';
      text += kWords[rng.below(kWords.size())];
    }
    // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive)
    // on "e" + std::to_string(n).
    std::string id = "e";
    id += std::to_string(events.size());
    AgentEvent e;
    e.event = {id, events.size() % 2 == 0 ? "user" : "assistant", text};
    e.policy = eventkv::contract::Policy::kForget;
    events.push_back(e);
    total += length + 5;
  }
  return events;
}

struct Computed {
  Loaded loaded;
  std::optional<ContractCache> cache;
  int64_t rows = 0;
};

// One computed history per size, kept for every benchmark of that size.
Computed& computed(int64_t tokens) {
  static std::map<int64_t, Computed> cache;
  Computed& c = cache[tokens];
  if (c.cache) return c;
  c.loaded = default_model();
  if (!c.loaded.engine) return c;
  auto arena = std::make_shared<eventkv::kv::KvArena>(
      c.loaded.engine->model().config(), 3 * tokens + 512, eventkv::compute::KvType::kF32);
  c.cache.emplace(c.loaded.engine, arena, *c.loaded.format, std::nullopt,
                  eventkv::contract::ContractOptions{.enforce = true, .verify = false});
  c.cache->append(history_events(tokens));
  c.rows = c.cache->kv().retained_rows();
  return c;
}

void BM_VerifiedForgetting(benchmark::State& state) {
  Computed& c = computed(state.range(0));
  if (!c.cache) return state.SkipWithError("default model not downloaded");
  const auto& events = c.cache->kv().events();
  const size_t target = 1 + (events.size() - 1) * static_cast<size_t>(state.range(1)) / 100;
  const std::vector<std::string> ids = {events[target].id};
  for (auto _ : state) {
    ContractCache fork = c.cache->fork();
    const auto start = std::chrono::steady_clock::now();
    fork.evict(ids);
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  state.counters["history_rows"] = static_cast<double>(c.rows);
  state.counters["event_at"] = static_cast<double>(events[target].begin);
}

void BM_WholeRecompute(benchmark::State& state) {
  Computed& c = computed(state.range(0));
  if (!c.cache) return state.SkipWithError("default model not downloaded");
  const auto& events = c.cache->kv().events();
  const std::vector<std::string> first = {events[0].id};
  for (auto _ : state) {
    ContractCache fork = c.cache->fork();
    const auto start = std::chrono::steady_clock::now();
    fork.kv().recompute(first, {}, /*with_descendants=*/true);
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  state.counters["history_rows"] = static_cast<double>(c.rows);
}

}  // namespace

BENCHMARK(BM_VerifiedForgetting)
    ->ArgsProduct({{1024, 4096, 8192}, {10, 50, 90}})
    ->ArgNames({"tokens", "at_pct"})
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WholeRecompute)
    ->Arg(1024)
    ->Arg(4096)
    ->Arg(8192)
    ->ArgNames({"tokens"})
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
