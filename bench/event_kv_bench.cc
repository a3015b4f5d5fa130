// The event KV cache on the default model: a 20-event history of about 1,500
// tokens computed globally, half its events evicted, a 4-candidate query
// scored; and donor pairs computed naively vs with a shared prefix and both
// sides batched in one forward pass.
#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "contract/contract_cache.h"
#include "kv/event_batch.h"
#include "kv/event_kv.h"
#include "util/error.h"
#include "util/rng.h"

namespace {

using eventkv::kv::EventKV;
using eventkv::kv::EventTokens;

constexpr int kEvents = 20;
constexpr int kSourceEvent = 10;  // the donor pair's source sits mid-history

constexpr const char* kDefaultModel = "smollm2-135m-instruct-q4_1.gguf";

// An engine on models/FILE (the last model loaded is kept for the next
// call), with int8 panels as `eventkv serve` loads it when `int8_panels`;
// null when the file has not been downloaded.
std::shared_ptr<eventkv::kv::Engine> default_engine(int threads,
                                                    const std::string& file = kDefaultModel,
                                                    bool int8_panels = false) {
  const auto path = std::filesystem::path(EVENTKV_SOURCE_DIR) / "models" / file;
  if (!std::filesystem::exists(path)) return nullptr;
  static std::string loaded;
  static std::shared_ptr<const eventkv::model::Model> model;
  const std::string key = file + (int8_panels ? " int8" : "");
  if (loaded != key) {
    model = nullptr;
    model = int8_panels ? eventkv::model::Model::load(path.string(), int64_t{8} << 30,
                                                      eventkv::model::Panels::kInt8)
                        : eventkv::model::Model::load(path.string());
    loaded = key;
  }
  return std::make_shared<eventkv::kv::Engine>(model, threads);
}

// 20 events of 60-90 tokens (~1,500 in all).
std::vector<EventTokens> history_events(uint64_t seed) {
  eventkv::Rng rng(seed);
  std::vector<EventTokens> events;
  for (int e = 0; e < kEvents; ++e) {
    EventTokens event{eventkv::str_cat("e", e), e % 2 == 0 ? "user" : "assistant", {}};
    const int length = 60 + static_cast<int>(rng.below(31));
    for (int i = 0; i < length; ++i)
      event.tokens.push_back(static_cast<int32_t>(100 + rng.below(30000)));
    events.push_back(event);
  }
  return events;
}

const std::vector<int32_t> kQuery = {504, 3060, 314, 260, 2365, 30, 198};
const std::vector<std::vector<int32_t>> kCandidates = {{335}, {1119}, {2365, 30}, {744, 339, 5}};

void BM_ComputeGlobally(benchmark::State& state) {
  auto engine = default_engine(static_cast<int>(state.range(0)));
  if (!engine) return state.SkipWithError("default model not downloaded");
  const auto events = history_events(1);
  size_t tokens = 0;
  for (const auto& e : events) tokens += e.tokens.size();
  for (auto _ : state) {
    auto arena = std::make_shared<eventkv::kv::KvArena>(engine->model().config(), 2048,
                                                        eventkv::compute::KvType::kF32);
    EventKV history(engine, arena);
    history.append(events);
  }
  state.counters["tokens"] = static_cast<double>(tokens);
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(tokens), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_EvictHalfAndScore(benchmark::State& state) {
  auto engine = default_engine(static_cast<int>(state.range(0)));
  if (!engine) return state.SkipWithError("default model not downloaded");
  const auto events = history_events(1);
  auto arena = std::make_shared<eventkv::kv::KvArena>(engine->model().config(), 2048,
                                                      eventkv::compute::KvType::kF32);
  EventKV computed(engine, arena);
  computed.append(events);
  std::vector<std::string> half;
  for (int e = 0; e < kEvents; e += 2) half.push_back(events[static_cast<size_t>(e)].id);
  double evict_seconds = 0.0;
  double score_seconds = 0.0;
  size_t held_before = 0;
  size_t held_after = 0;
  for (auto _ : state) {
    EventKV history = computed.fork();
    held_before = arena->bytes_held();
    auto t0 = std::chrono::steady_clock::now();
    history.evict(half);
    auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(history.score(kQuery, kCandidates));
    auto t2 = std::chrono::steady_clock::now();
    evict_seconds += std::chrono::duration<double>(t1 - t0).count();
    score_seconds += std::chrono::duration<double>(t2 - t1).count();
    held_after = history.bytes_retained();
  }
  state.counters["evict_ms"] = 1e3 * evict_seconds / static_cast<double>(state.iterations());
  state.counters["score_ms"] = 1e3 * score_seconds / static_cast<double>(state.iterations());
  state.counters["kv_full_MiB"] = static_cast<double>(computed.bytes_full()) / (1 << 20);
  state.counters["kv_served_MiB"] = static_cast<double>(held_after) / (1 << 20);
  state.counters["arena_MiB"] = static_cast<double>(held_before) / (1 << 20);
}

// One donor pair: both sides computed, the source evicted, the query scored.
void BM_DonorPair(benchmark::State& state) {
  const bool shared = state.range(1) != 0;
  auto engine = default_engine(static_cast<int>(state.range(0)));
  if (!engine) return state.SkipWithError("default model not downloaded");
  const auto events_a = history_events(2);
  auto events_b = events_a;
  for (int32_t& token : events_b[kSourceEvent].tokens) token = (token * 7 + 11) % 30000 + 100;
  const std::vector<std::string> source = {events_a[kSourceEvent].id};
  for (auto _ : state) {
    auto arena = std::make_shared<eventkv::kv::KvArena>(engine->model().config(), 4096,
                                                        eventkv::compute::KvType::kF32);
    EventKV a(engine, arena);
    EventKV b(engine, arena);
    if (shared) {
      EventKV prefix(engine, arena);
      prefix.append(std::vector<EventTokens>(events_a.begin(), events_a.begin() + kSourceEvent));
      a = prefix.fork();
      b = prefix.fork();
      eventkv::kv::EventBatch batch(*engine, *arena);
      batch.append(a, std::span(events_a).subspan(kSourceEvent));
      batch.append(b, std::span(events_b).subspan(kSourceEvent));
      batch.run();
    } else {
      a.append(events_a);
      b.append(events_b);
    }
    a.evict(source);
    b.evict(source);
    benchmark::DoNotOptimize(a.score(kQuery, kCandidates));
    benchmark::DoNotOptimize(b.score(kQuery, kCandidates));
  }
  state.counters["pairs_per_s"] =
      benchmark::Counter(1.0, benchmark::Counter::kIsIterationInvariantRate);
}

// Decode steps of `sessions` histories batched in one forward pass, as the
// server's scheduler runs them (its default: int8 panels at load, int8
// rowwise products, on the panels from kPanelStepReplies sessions): each
// history holds a 64-token event and grows by one token a step.
// tokens_per_s counts every session's tokens.
void BM_DecodeSessions(benchmark::State& state, const std::string& file) {
  constexpr int kSteps = 32;
  const auto sessions = static_cast<size_t>(state.range(0));
  auto engine = default_engine(static_cast<int>(state.range(1)), file, /*int8_panels=*/true);
  if (!engine) return state.SkipWithError("model not downloaded");
  const auto precision = sessions >= eventkv::contract::kPanelStepReplies
                             ? eventkv::compute::ActivationPrecision::kInt8Panels
                             : eventkv::compute::ActivationPrecision::kInt8Rowwise;
  auto arena = std::make_shared<eventkv::kv::KvArena>(engine->model().config(), 4096,
                                                      eventkv::compute::KvType::kF32);
  EventKV prompt(engine, arena);
  prompt.append(std::vector<EventTokens>{history_events(3)[0]});
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<EventKV> histories;
    histories.reserve(sessions);
    for (size_t i = 0; i < sessions; ++i) histories.push_back(prompt.fork());
    state.ResumeTiming();
    for (int step = 0; step < kSteps; ++step) {
      const int32_t token = 200 + step;
      eventkv::kv::EventBatch batch(*engine, *arena);
      for (EventKV& history : histories) batch.extend(history, {&token, 1});
      batch.run(precision);
      benchmark::DoNotOptimize(batch.logits(0).data());
    }
  }
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(kSteps * sessions), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_ComputeGlobally)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_EvictHalfAndScore)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
// SmolLM2's Q4_1 and Qwen2.5-Coder-1.5B's K-quants take different kernels.
BENCHMARK_CAPTURE(BM_DecodeSessions, smollm2, std::string(kDefaultModel))
    ->ArgsProduct({{1, 3, 8}, {1, 2}})
    ->ArgNames({"sessions", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_DecodeSessions, qwen15, std::string("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"))
    ->ArgsProduct({{1, 3, 8}, {1, 2}})
    ->ArgNames({"sessions", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_DonorPair)
    ->ArgNames({"threads", "shared"})
    ->Args({2, 0})
    ->Args({2, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
