#include "probe/runner.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "analysis/landing_summary.h"
#include "compute/kernels.h"
#include "probe/conditions.h"
#include "probe/landing.h"
#include "probe/pairs.h"
#include "probe/stored_pair.h"
#include "report/format.h"
#include "util/error.h"
#include "util/progress.h"
#include "util/stopwatch.h"

namespace eventkv::probe {
namespace {

using nlohmann::json;

// The cells of one construction, by ascending distance: a pair drawn at a
// shorter distance is the leading part of the same pair at a longer one, so
// the chain is computed once (run_conditions_nested).
std::vector<std::vector<Cell>> distance_chains(const std::vector<Cell>& cells) {
  std::map<std::string, std::vector<Cell>> by_construction;
  std::vector<std::string> order;
  for (const Cell& cell : cells) {
    if (by_construction.count(cell.construction) == 0) order.push_back(cell.construction);
    by_construction[cell.construction].push_back(cell);
  }
  std::vector<std::vector<Cell>> chains;
  for (const std::string& construction : order) {
    std::vector<Cell> chain = by_construction[construction];
    std::sort(chain.begin(), chain.end(),
              [](const Cell& x, const Cell& y) { return x.distance < y.distance; });
    chains.push_back(std::move(chain));
  }
  return chains;
}

// Runs are shown by the model file's name ("smollm2-135m-instruct-q4_1"):
// general.name is often a training-run label.
std::string model_display_name(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

store::RunRecord run_record(const kv::Engine& engine, const std::string& model_path,
                            const Scenario& scenario, const tokenizer::ChatFormat& format,
                            const RunOptions& options, int n_pairs) {
  store::RunRecord run;
  run.model_name = model_display_name(model_path);
  run.model_path = model_path;
  run.model_fingerprint = model_fingerprint(engine.model());
  run.scenario_name = scenario.name;
  run.scenario_suite = scenario.suite;
  run.scenario_finding = scenario.finding;
  run.scenario_hash = scenario.hash;
  run.scenario_json = scenario.json;
  run.chat_format = format.name();
  run.payload_type = scenario.payload.label();
  run.git_version = options.git_version;
  run.isa = compute::kernels().isa;
  run.build = compute::build_description();
  run.precision = kv::precision_name(engine.products());
  run.seed = scenario.seed;
  run.threads = engine.threads();
  run.n_pairs = n_pairs;
  run.shard_index = options.shard_index;
  run.shard_count = options.shard_count;
  return run;
}

// --resume continues the newest run (or landing analysis) of the same model,
// scenario file, pair count and slot (shard, or cell). When there is none but
// an unfinished one of the same scenario name in the same slot differs in the
// file or the pair count, say what differs instead of silently starting a new
// one beside it. `what` names it in the message: "run" or "landing analysis";
// `pairs` says what --pairs counts.
template <typename Record, typename SameSlot>
void check_resumable(const std::vector<Record>& stored, const Record& record,
                     const SameSlot& same_slot, const std::string& what, const char* pairs) {
  const auto same_name = [&](const Record& run) {
    return run.model_fingerprint == record.model_fingerprint &&
           run.scenario_name == record.scenario_name && same_slot(run);
  };
  for (const Record& run : stored) {
    if (same_name(run) && run.scenario_hash == record.scenario_hash && run.seed == record.seed &&
        run.n_pairs == record.n_pairs && run.precision == record.precision)
      return;
  }
  // Newest first (std::views::reverse is beyond clang 14 with libstdc++ 12).
  for (size_t i = stored.size(); i-- > 0;) {
    const Record& run = stored[i];
    if (!same_name(run) || run.status == "complete") continue;
    const std::string which = str_cat("--resume: ", what, " ", run.id, " of '", run.scenario_name,
                                      "' on ", run.model_name, " (", run.status, ") ");
    if (run.scenario_hash != record.scenario_hash || run.seed != record.seed) {
      fail(which, "was started from another version of the scenario file; run without --resume ",
           "to start a new ", what);
    }
    if (run.precision != record.precision) {
      fail(which, "was computed with --precision ", run.precision, ", not ", record.precision,
           "; resume it with --precision ", run.precision, ", or run without --resume to start a ",
           "new ", what);
    }
    fail(which, "was started with ", run.n_pairs, " ", pairs, ", not ", record.n_pairs,
         "; resume it with --pairs ", run.n_pairs, ", or run without --resume to start a new ",
         what);
  }
}

void check_resumable(store::ResultsDb& db, const store::RunRecord& record) {
  check_resumable(
      db.runs(), record,
      [&](const store::RunRecord& run) {
        return run.shard_index == record.shard_index && run.shard_count == record.shard_count;
      },
      "run", "pairs per cell");
}

void check_resumable(store::ResultsDb& db, const store::LandingRunRecord& record) {
  check_resumable(
      db.landing_runs(), record,
      [&](const store::LandingRunRecord& run) {
        return run.construction == record.construction && run.distance == record.distance;
      },
      "landing analysis", "pairs");
}

}  // namespace

std::string model_fingerprint(const model::Model& model) {
  return str_cat(std::hex, model.fingerprint());
}

std::vector<Cell> selected_cells(const Scenario& scenario, const RunOptions& options) {
  const auto wanted = [](const auto& list, const auto& value) {
    return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
  };
  std::vector<Cell> cells;
  for (const Cell& cell : scenario_cells(scenario)) {
    if (wanted(options.constructions, cell.construction) &&
        wanted(options.distances, cell.distance))
      cells.push_back(cell);
  }
  for (const std::string& id : options.constructions) {
    if (std::none_of(cells.begin(), cells.end(),
                     [&](const Cell& c) { return c.construction == id; })) {
      fail("scenario '", scenario.name, "' has no construction '", id, "'");
    }
  }
  for (const int distance : options.distances) {
    if (std::none_of(cells.begin(), cells.end(),
                     [&](const Cell& c) { return c.distance == distance; })) {
      fail("scenario '", scenario.name, "' has no filler distance ", distance);
    }
  }
  return cells;
}

std::string outcome_summary(const RunOutcome& outcome) {
  std::string summary = std::to_string(outcome.pairs_computed) + " pairs in " +
                        report::format_fixed(outcome.seconds, 1) + " s";
  // "8 pairs" for --pairs 4 is not a miscount: a pair counts once per cell.
  if (outcome.cells > 1)
    summary += " (over " + std::to_string(outcome.cells) + " cells; --pairs counts pairs per cell)";
  if (outcome.invalid) return summary + " (INVALID: sparse-local moved pairs)";
  if (outcome.already_complete) return summary + " (already complete: nothing computed)";
  return summary;
}

RunOutcome run_scenario(const std::shared_ptr<kv::Engine>& engine, const std::string& model_path,
                        const Scenario& scenario, store::ResultsDb& db, const RunOptions& options,
                        const std::atomic<bool>& interrupted) {
  if (options.shard_count < 1 || options.shard_index < 0 ||
      options.shard_index >= options.shard_count) {
    fail("shard ", options.shard_index, "/", options.shard_count,
         " is not of the form K/N with 0 <= K < N");
  }
  const tokenizer::ChatFormat format = tokenizer::ChatFormat::detect(engine->model().file());
  const std::vector<Cell> cells = selected_cells(scenario, options);
  const int n_pairs = options.pairs > 0 ? options.pairs : scenario.pairs;
  RunOutcome outcome;
  const store::RunRecord record =
      run_record(*engine, model_path, scenario, format, options, n_pairs);
  if (options.resume) check_resumable(db, record);
  const store::OpenedRun opened = db.open_run(record, options.resume);
  outcome.run_id = opened.id;
  outcome.cells = static_cast<int64_t>(cells.size());
  outcome.already_complete = opened.complete;
  if (opened.complete) return outcome;
  const auto stored = db.stored_pairs(outcome.run_id);
  auto arena = std::make_shared<kv::KvArena>(engine->model().config(), options.kv_cells,
                                             compute::KvType::kF32);
  int64_t total = 0;
  for (int i = options.shard_index; i < n_pairs; i += options.shard_count)
    total += static_cast<int64_t>(cells.size());
  Progress progress(scenario.name + " / " + record.model_name, total, "pairs");
  Stopwatch timer(outcome.seconds);
  int64_t done = 0;
  // Two processes resuming one run compute the same pairs; the second to
  // store one stops, without marking the run that the first goes on with.
  bool another_process = false;
  const auto stored_by_another = [&](int64_t index, const Cell& cell) {
    another_process =
        db.stored_pairs(outcome.run_id).count({index, cell.construction, cell.distance}) > 0;
    return another_process;
  };
  const auto store = [&](const TokenizedPair& pair, const Cell& cell, const PairScores& scores) {
    if (!scores.local_identical) {
      outcome.invalid = true;
      std::fprintf(
          stderr,
          "\neventkv: error: %s pair %lld: sparse-local served different scores to A and B\n",
          scenario.name.c_str(), static_cast<long long>(pair.texts.index));
    }
    try {
      db.store_pair(outcome.run_id, pair_record(pair, cell, scores));
    } catch (const Error&) {
      if (stored_by_another(pair.texts.index, cell)) {
        fail("run ", outcome.run_id, " in ", db.database().path(), ": pair ", pair.texts.index,
             " of cell ", cell.construction.empty() ? "-" : cell.construction, "/", cell.distance,
             " was stored meanwhile by another process: another --resume of this run is ",
             "running; this one stops and leaves the run to it");
      }
      throw;
    }
    ++outcome.pairs_computed;
    progress.update(++done);
  };
  // The missing cells of one pair index along one chain, computed together.
  const auto compute_chain = [&](int index, const std::vector<Cell>& chain) {
    std::vector<Cell> missing;
    std::vector<TokenizedPair> pairs;
    for (const Cell& cell : chain) {
      if (stored.count({index, cell.construction, cell.distance}) > 0) {
        progress.update(++done);
        continue;
      }
      missing.push_back(cell);
      pairs.push_back(tokenize_pair(scenario, cell, index, format, engine->model().tokenizer()));
    }
    if (pairs.empty()) return;
    if (std::all_of(pairs.begin(), pairs.end(),
                    [&](const TokenizedPair& p) { return is_leading_part(p, pairs.back()); })) {
      const std::vector<PairScores> scores = run_conditions_nested(pairs, engine, arena);
      for (size_t i = 0; i < pairs.size(); ++i) store(pairs[i], missing[i], scores[i]);
    } else {
      for (size_t i = 0; i < pairs.size(); ++i)
        store(pairs[i], missing[i], run_conditions(pairs[i], engine, arena));
    }
  };
  const std::vector<std::vector<Cell>> chains = distance_chains(cells);
  // A run that stops on an error is stored as failed, not left running.
  try {
    for (int index = options.shard_index; index < n_pairs && !interrupted;
         index += options.shard_count) {
      for (const std::vector<Cell>& chain : chains) {
        if (interrupted) break;
        compute_chain(index, chain);
      }
    }
  } catch (const std::exception&) {
    timer.stop();
    if (!another_process) db.finish_run(outcome.run_id, "failed", outcome.seconds);
    throw;
  }
  progress.finish();
  timer.stop();
  outcome.interrupted = interrupted;
  db.finish_run(outcome.run_id,
                outcome.invalid       ? "invalid"
                : outcome.interrupted ? "interrupted"
                                      : "complete",
                outcome.seconds);
  return outcome;
}

namespace {

json landing_events(const TokenizedPair& pair, const tokenizer::Tokenizer& tok) {
  json out = json::array();
  for (const kv::EventTokens& e : pair.events_a) {
    json pieces = json::array();
    for (const int32_t token : e.tokens) pieces.push_back(tok.token_text(token));
    out.push_back(
        {{"id", e.id}, {"role", e.role}, {"is_source", e.id == kSourceId}, {"pieces", pieces}});
  }
  return out;
}

std::vector<store::LandingRow> landing_rows(int64_t pair_index, int stage,
                                            const std::vector<LandingMeasure>& measures) {
  std::vector<store::LandingRow> rows;
  rows.reserve(measures.size());
  for (const LandingMeasure& m : measures)
    rows.push_back({pair_index, stage, m.kind, m.target, m.value, m.outcome});
  return rows;
}

}  // namespace

Cell landing_cell(const Scenario& scenario, const LandingRunOptions& options) {
  RunOptions wanted;
  if (!options.construction.empty()) wanted.constructions = {options.construction};
  if (options.distance >= 0) wanted.distances = {options.distance};
  return selected_cells(scenario, wanted).front();
}

RunOutcome run_landing(const std::shared_ptr<kv::Engine>& engine, const Scenario& scenario,
                       store::ResultsDb& db, const LandingRunOptions& options,
                       const std::atomic<bool>& interrupted) {
  const tokenizer::ChatFormat format = tokenizer::ChatFormat::detect(engine->model().file());
  const tokenizer::Tokenizer& tok = engine->model().tokenizer();
  const Cell cell = landing_cell(scenario, options);
  store::LandingRunRecord record;
  record.model_name = model_display_name(engine->model().file().name());
  record.model_fingerprint = model_fingerprint(engine->model());
  record.scenario_name = scenario.name;
  record.scenario_hash = scenario.hash;
  record.construction = cell.construction;
  record.distance = cell.distance;
  record.seed = scenario.seed;
  record.n_pairs = options.pairs;
  record.git_version = options.git_version;
  record.isa = compute::kernels().isa;
  record.precision = kv::precision_name(engine->products());
  record.build = compute::build_description();
  record.events_json = landing_events(tokenize_pair(scenario, cell, 0, format, tok), tok).dump();
  RunOutcome outcome;
  if (options.resume) check_resumable(db, record);
  const store::OpenedRun opened = db.open_landing(record, options.resume);
  outcome.run_id = opened.id;
  outcome.already_complete = opened.complete;
  if (opened.complete) return outcome;
  auto arena = std::make_shared<kv::KvArena>(engine->model().config(), options.kv_cells,
                                             compute::KvType::kF32);
  LandingOptions landing;
  landing.max_edges = options.max_edges;
  landing.token_window = options.token_window;
  Stopwatch timer(outcome.seconds);
  std::set<int64_t> computed;  // a pair counts once, though both stages measure it
  // An analysis that stops on an error is stored as failed, not left running.
  try {
    for (const int stage : {1, 2}) {
      const std::set<int64_t> stored = db.stored_landing_pairs(outcome.run_id, stage);
      const std::vector<std::string> roots =
          stage == 1
              ? std::vector<std::string>{}
              : analysis::passing_targets(landing_measures_by_pair(db.landing_rows(outcome.run_id)),
                                          "event", scenario.seed);
      if (stage == 2 && roots.empty()) break;
      Progress progress(
          scenario.name + " landing " + (stage == 1 ? "roots" : "depth, tokens, edges"),
          options.pairs, "pairs");
      for (int index = 0; index < options.pairs && !interrupted; ++index) {
        if (stored.count(index) == 0) {
          const TokenizedPair pair = tokenize_pair(scenario, cell, index, format, tok);
          const std::vector<LandingMeasure> measures =
              stage == 1 ? measure_events(pair, engine, arena, landing)
                         : measure_roots(pair, engine, arena, landing, roots);
          db.store_landing(outcome.run_id, landing_rows(index, stage, measures));
          computed.insert(index);
        }
        progress.update(index + 1);
      }
      progress.finish();
    }
  } catch (const std::exception&) {
    timer.stop();
    db.finish_landing(outcome.run_id, "failed", outcome.seconds);
    throw;
  }
  outcome.pairs_computed = static_cast<int64_t>(computed.size());
  timer.stop();
  outcome.interrupted = interrupted;
  db.finish_landing(outcome.run_id, outcome.interrupted ? "interrupted" : "complete",
                    outcome.seconds);
  return outcome;
}

}  // namespace eventkv::probe
