#include "probe/runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "probe/conditions.h"
#include "probe/pairs.h"
#include "util/error.h"
#include "util/progress.h"

namespace eventkv::probe {
namespace {

using nlohmann::json;

std::vector<Cell> selected_cells(const Scenario& scenario, const std::vector<std::string>& wanted) {
  std::vector<Cell> cells;
  for (const Cell& cell : scenario_cells(scenario)) {
    if (wanted.empty() || std::find(wanted.begin(), wanted.end(), cell.construction) != wanted.end()) {
      cells.push_back(cell);
    }
  }
  for (const std::string& id : wanted) {
    if (std::none_of(cells.begin(), cells.end(), [&](const Cell& c) { return c.construction == id; })) {
      fail("scenario '", scenario.name, "' has no construction '", id, "'");
    }
  }
  return cells;
}

json events_json(const std::vector<kv::Event>& events) {
  json out = json::array();
  for (const kv::Event& e : events) out.push_back({{"id", e.id}, {"role", e.role}, {"content", e.content}});
  return out;
}

store::PairRecord pair_record(const TokenizedPair& pair, const Cell& cell, const PairScores& scores) {
  store::PairRecord record;
  record.pair_index = pair.texts.index;
  record.construction = cell.construction;
  record.distance = cell.distance;
  record.value_a = pair.texts.value_a;
  record.value_b = pair.texts.value_b;
  record.candidates = pair.texts.candidates;
  record.texts_json = json{{"a", events_json(pair.texts.events_a)}, {"b", events_json(pair.texts.events_b)},
                           {"record_a", pair.texts.record_a},        {"record_b", pair.texts.record_b},
                           {"question", pair.texts.question},        {"answer_prefix", pair.texts.answer_prefix}}
                          .dump();
  for (const auto& e : pair.events_a) record.n_tokens += static_cast<int64_t>(e.tokens.size());
  record.rejected = pair.rejected;
  for (const ConditionScores& c : scores.conditions) {
    record.conditions[std::string(c.condition)] = {{c.a.log_probs}, {c.b.log_probs}};
  }
  return record;
}

store::RunRecord run_record(const kv::Engine& engine, const std::string& model_path, const Scenario& scenario,
                            const RunOptions& options, int n_pairs) {
  store::RunRecord run;
  const std::string& name = engine.model().config().name;
  run.model_name = name.empty() ? model_path : name;
  run.model_path = model_path;
  run.model_fingerprint = str_cat(std::hex, engine.model().fingerprint());
  run.scenario_name = scenario.name;
  run.scenario_suite = scenario.suite;
  run.scenario_finding = scenario.finding;
  run.scenario_hash = scenario.hash;
  run.payload_type = scenario.payload.label();
  run.git_version = options.git_version;
  run.seed = scenario.seed;
  run.threads = engine.threads();
  run.n_pairs = n_pairs;
  run.shard_index = options.shard_index;
  run.shard_count = options.shard_count;
  return run;
}

}  // namespace

RunOutcome run_scenario(const std::shared_ptr<kv::Engine>& engine, const std::string& model_path,
                        const Scenario& scenario, store::ResultsDb& db, const RunOptions& options,
                        const std::atomic<bool>& interrupted) {
  if (options.shard_count < 1 || options.shard_index < 0 || options.shard_index >= options.shard_count) {
    fail("shard ", options.shard_index, "/", options.shard_count, " is not of the form K/N with 0 <= K < N");
  }
  const tokenizer::ChatFormat format = tokenizer::ChatFormat::detect(engine->model().file());
  const std::vector<Cell> cells = selected_cells(scenario, options.constructions);
  const int n_pairs = options.pairs > 0 ? options.pairs : scenario.pairs;
  RunOutcome outcome;
  const store::RunRecord record = run_record(*engine, model_path, scenario, options, n_pairs);
  outcome.run_id = db.open_run(record, options.resume);
  const auto stored = db.stored_pairs(outcome.run_id);
  auto arena = std::make_shared<kv::KvArena>(engine->model().config(), options.kv_cells, compute::KvType::kF32);
  int64_t total = 0;
  for (int i = options.shard_index; i < n_pairs; i += options.shard_count) total += static_cast<int64_t>(cells.size());
  Progress progress(scenario.name + " / " + record.model_name, total, "pairs");
  const auto start = std::chrono::steady_clock::now();
  int64_t done = 0;
  for (int index = options.shard_index; index < n_pairs && !interrupted; index += options.shard_count) {
    for (const Cell& cell : cells) {
      if (interrupted) break;
      if (stored.count({index, cell.construction, cell.distance}) == 0) {
        const TokenizedPair pair = tokenize_pair(scenario, cell, index, format, engine->model().tokenizer());
        const PairScores scores = run_conditions(pair, engine, arena);
        if (!scores.local_identical) {
          outcome.invalid = true;
          std::fprintf(stderr, "\neventkv: error: %s pair %d: sparse-local served different scores to A and B\n",
                       scenario.name.c_str(), index);
        }
        db.store_pair(outcome.run_id, pair_record(pair, cell, scores));
        ++outcome.pairs_computed;
      }
      progress.update(++done);
    }
  }
  progress.finish();
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  outcome.interrupted = interrupted;
  db.finish_run(outcome.run_id, outcome.invalid ? "invalid" : outcome.interrupted ? "interrupted" : "complete",
                outcome.seconds);
  return outcome;
}

}  // namespace eventkv::probe
