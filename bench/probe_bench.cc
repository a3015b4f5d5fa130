// Donor pairs per second on the default model for the carrier-table scenario
// (one construction, all five conditions), with the share of time in
// prefill, query scoring and bookkeeping (tokenizing, forks, the database);
// with the weights in their GGUF types (panels:0) and dequantized once into
// f32 panels at load (panels:1, the experiment commands' default).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>

#include "probe/conditions.h"
#include "probe/pairs.h"
#include "probe/runner.h"
#include "probe/scenario.h"
#include "probe/stored_pair.h"
#include "store/results_db.h"
#include "util/stopwatch.h"

namespace {

void BM_DonorPairsAllConditions(benchmark::State& state) {
  const auto root = std::filesystem::path(EVENTKV_SOURCE_DIR);
  const auto model_path = root / "models" / "smollm2-135m-instruct-q4_1.gguf";
  if (!std::filesystem::exists(model_path))
    return state.SkipWithError("default model not downloaded");
  const int64_t panel_budget = state.range(1) != 0 ? int64_t{16} << 30 : 0;
  const auto model = eventkv::model::Model::load(model_path.string(), panel_budget);
  auto engine = std::make_shared<eventkv::kv::Engine>(model, static_cast<int>(state.range(0)));
  auto arena =
      std::make_shared<eventkv::kv::KvArena>(model->config(), 4096, eventkv::compute::KvType::kF32);
  const eventkv::probe::Scenario scenario =
      eventkv::probe::load_scenario((root / "scenarios" / "paper" / "carrier_table.json").string());
  const eventkv::probe::Cell cell{"acknowledgement", 2};
  const auto format = eventkv::tokenizer::ChatFormat::detect(model->file());
  const std::string db_path =
      (std::filesystem::temp_directory_path() / "eventkv-probe-bench.db").string();
  std::filesystem::remove(db_path);
  eventkv::store::ResultsDb db(db_path);
  const int64_t run_id = db.open_run({}, false).id;
  eventkv::probe::ConditionTimes times;
  double tokenizing = 0.0;
  double storing = 0.0;
  double wall = 0.0;
  int64_t index = 0;
  for (auto _ : state) {
    eventkv::Stopwatch pair_time(wall);
    eventkv::Stopwatch tokenize_time(tokenizing);
    const auto pair =
        eventkv::probe::tokenize_pair(scenario, cell, index++, format, model->tokenizer());
    tokenize_time.stop();
    const auto scores = eventkv::probe::run_conditions(pair, engine, arena, &times);
    eventkv::Stopwatch store_time(storing);
    db.store_pair(run_id, eventkv::probe::pair_record(pair, cell, scores));
    benchmark::DoNotOptimize(scores);
  }
  state.counters["pairs_per_s"] =
      benchmark::Counter(1.0, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["prefill_share"] = times.prefill / wall;
  state.counters["scoring_share"] = times.scoring / wall;
  state.counters["bookkeeping_share"] = (wall - times.prefill - times.scoring) / wall;
  state.counters["db_and_tokenizer_ms"] =
      1e3 * (tokenizing + storing) / static_cast<double>(state.iterations());
  std::filesystem::remove(db_path);
}

// The same pairs the naive way: every condition's served caches computed
// from scratch for each side (no shared prefix, no forks, one query each).
void BM_DonorPairsNaive(benchmark::State& state) {
  const auto root = std::filesystem::path(EVENTKV_SOURCE_DIR);
  const auto model_path = root / "models" / "smollm2-135m-instruct-q4_1.gguf";
  if (!std::filesystem::exists(model_path))
    return state.SkipWithError("default model not downloaded");
  const auto model = eventkv::model::Model::load(model_path.string());
  auto engine = std::make_shared<eventkv::kv::Engine>(model, static_cast<int>(state.range(0)));
  auto arena =
      std::make_shared<eventkv::kv::KvArena>(model->config(), 4096, eventkv::compute::KvType::kF32);
  const eventkv::probe::Scenario scenario =
      eventkv::probe::load_scenario((root / "scenarios" / "paper" / "carrier_table.json").string());
  const eventkv::probe::Cell cell{"acknowledgement", 2};
  const auto format = eventkv::tokenizer::ChatFormat::detect(model->file());
  int64_t index = 0;
  for (auto _ : state) {
    const auto pair =
        eventkv::probe::tokenize_pair(scenario, cell, index++, format, model->tokenizer());
    const std::vector<std::string> source = {eventkv::probe::kSourceId};
    for (const auto* events : {&pair.events_a, &pair.events_b}) {
      const auto fresh = [&](bool with_source) {
        eventkv::kv::EventKV h(engine, arena);
        std::vector<eventkv::kv::EventTokens> kept = *events;
        if (!with_source) kept.erase(kept.begin() + pair.source_event);
        h.append(kept);
        return h;
      };
      const auto score = [&](eventkv::kv::EventKV& h) {
        benchmark::DoNotOptimize(h.score(pair.query.prompt, pair.query.candidates));
      };
      eventkv::kv::EventKV visible = fresh(true);
      score(visible);
      eventkv::kv::EventKV sparse = fresh(true);
      sparse.evict(source);
      score(sparse);
      eventkv::kv::EventKV record = fresh(true);
      record.evict(source);
      record.append(std::vector<eventkv::kv::EventTokens>{
          events == &pair.events_a ? pair.record_a : pair.record_b});
      score(record);
      eventkv::kv::EventKV local = fresh(false);  // computed without the source: the local rows
      score(local);
      eventkv::kv::EventKV no_carrier = fresh(true);
      no_carrier.evict(source);
      no_carrier.evict(pair.carriers);
      score(no_carrier);
    }
  }
  state.counters["pairs_per_s"] =
      benchmark::Counter(1.0, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_DonorPairsNaive)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(20.0);
BENCHMARK(BM_DonorPairsAllConditions)
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->ArgNames({"threads", "panels"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(20.0);

}  // namespace
