#include "analysis/summary.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include <nlohmann/json.hpp>

#include "analysis/landing_summary.h"
#include "analysis/stats.h"
#include "probe/condition_names.h"
#include "probe/landing.h"
#include "probe/outcome.h"
#include "store/results_db.h"

namespace eventkv::analysis {
namespace {

using probe::Answer;
using probe::Outcome;

// A run's wall time sums its stretches of computing; when its start-to-finish
// span is longer by more than a minute, it was stopped and resumed.
bool was_resumed(const store::RunRecord& run) {
  constexpr double kSlackSeconds = 60.0;
  const std::optional<int64_t> started = store::iso8601_seconds(run.started_at);
  const std::optional<int64_t> finished = store::iso8601_seconds(run.finished_at);
  return started && finished &&
         static_cast<double>(*finished - *started) > run.wall_seconds + kSlackSeconds;
}

}  // namespace

report::ConditionResult summarize_condition(std::string_view condition,
                                            const std::vector<const store::PairRecord*>& pairs,
                                            uint64_t seed) {
  report::ConditionResult result;
  result.condition = condition;
  std::vector<double> margins;
  int64_t correct_sides = 0;
  for (const store::PairRecord* pair : pairs) {
    const auto it = pair->conditions.find(std::string(condition));
    if (it == pair->conditions.end()) continue;
    const std::vector<double>& a = it->second.first.log_probs;
    const std::vector<double>& b = it->second.second.log_probs;
    ++result.pairs;
    const Answer answer_a = probe::answer_of(a);
    const Answer answer_b = probe::answer_of(b);
    const int pa = answer_a.candidate;
    const int pb = answer_b.candidate;
    const Outcome outcome = probe::label(answer_a, answer_b, pair->value_a, pair->value_b);
    if (outcome != Outcome::kTie && std::min(answer_a.lead, answer_b.lead) < probe::kNearTieFloor)
      ++result.near_tie_floor;
    switch (outcome) {
      case Outcome::kAligned:
        ++result.aligned;
        break;
      case Outcome::kAnti:
        ++result.anti;
        break;
      case Outcome::kUnmoved:
        ++result.unmoved;
        break;
      case Outcome::kOther:
        ++result.other;
        break;
      case Outcome::kTie:
        ++result.ties;
        break;
    }
    correct_sides += (pa == pair->value_a && answer_a.lead >= probe::kTieFloor ? 1 : 0) +
                     (pb == pair->value_b && answer_b.lead >= probe::kTieFloor ? 1 : 0);
    margins.push_back(probe::paired_margin(a, b, pair->value_a, pair->value_b));
  }
  if (result.pairs == 0) return result;
  const Interval recovery = wilson_interval(result.aligned, result.pairs);
  result.recovery = {static_cast<double>(result.aligned) / static_cast<double>(result.pairs),
                     recovery.low, recovery.high};
  result.sign_test_p = sign_test_p(result.aligned, result.aligned + result.anti);
  const Interval margin = bootstrap_mean_interval(margins, seed);
  result.margin = {mean(margins), margin.low, margin.high};
  if (condition == probe::kVisible || condition == probe::kRecord) {
    const Interval accuracy = wilson_interval(correct_sides, 2 * result.pairs);
    result.accuracy =
        report::Estimate{static_cast<double>(correct_sides) / static_cast<double>(2 * result.pairs),
                         accuracy.low, accuracy.high};
  }
  return result;
}

report::RunInfo run_info(const store::RunRecord& run) {
  report::RunInfo info = {
      run.model_name, run.model_fingerprint, run.scenario_name, run.scenario_hash, run.git_version,
      run.seed,       run.n_pairs,           run.shard_index,   run.shard_count,   run.threads,
      run.started_at, run.finished_at,       run.wall_seconds,  run.status};
  info.resumed = was_resumed(run);
  info.precision = run.precision;
  return info;
}

std::vector<report::CellResult> summarize_run(const store::RunRecord& run,
                                              const std::vector<store::PairRecord>& pairs) {
  std::map<std::pair<std::string, int>, std::vector<const store::PairRecord*>> by_cell;
  for (const store::PairRecord& pair : pairs)
    by_cell[{pair.construction, pair.distance}].push_back(&pair);
  std::vector<report::CellResult> cells;
  for (const auto& [key, cell_pairs] : by_cell) {
    report::CellResult cell;
    cell.model = run.model_name;
    cell.scenario = run.scenario_name;
    cell.finding = run.scenario_finding;
    cell.suite = run.scenario_suite;
    cell.construction = key.first;
    cell.payload_type = run.payload_type;
    cell.distance = key.second;
    cell.planned_pairs = run.n_pairs;
    for (const std::string_view condition : probe::kConditions) {
      cell.conditions.push_back(summarize_condition(condition, cell_pairs, run.seed));
      const report::ConditionResult& c = cell.conditions.back();
      if (condition == probe::kSparseLocal && (c.aligned > 0 || c.anti > 0)) cell.valid = false;
    }
    cells.push_back(std::move(cell));
  }
  return cells;
}

report::ReportData collect_report(store::ResultsDb& db) {
  report::ReportData data;
  data.title = "eventkv: what a sparse event KV cache remembers";
  data.generated_at = store::now_iso8601();
  // The newest run of each (model, scenario) picks the experiment (seed, pair
  // count and precision: exact and fast scores are never pooled); every run of that experiment (its
  // shards, a resumed or a repeated run) contributes pairs, the newer one winning a pair both hold.
  const std::vector<store::RunRecord> runs = db.runs();
  std::map<std::pair<std::string, std::string>, const store::RunRecord*> newest;
  for (const store::RunRecord& run : runs)
    newest[{run.model_fingerprint, run.scenario_hash}] = &run;
  for (const auto& [key, latest] : newest) {
    std::map<std::tuple<int64_t, std::string, int>, store::PairRecord> pairs;
    for (const store::RunRecord& run : runs) {
      if (run.model_fingerprint != latest->model_fingerprint ||
          run.scenario_hash != latest->scenario_hash || run.seed != latest->seed ||
          run.n_pairs != latest->n_pairs || run.precision != latest->precision) {
        continue;
      }
      data.runs.push_back(run_info(run));
      for (store::PairRecord& pair : db.pairs(run.id)) {
        pairs[{pair.pair_index, pair.construction, pair.distance}] = std::move(pair);
      }
    }
    std::vector<store::PairRecord> merged;
    merged.reserve(pairs.size());
    for (auto& [pair_key, pair] : pairs) merged.push_back(std::move(pair));
    if (merged.empty()) continue;
    for (report::CellResult& cell : summarize_run(*latest, merged))
      data.cells.push_back(std::move(cell));
  }
  // Landing maps: the newest complete analysis per (model, scenario, cell).
  std::map<std::tuple<std::string, std::string, std::string, int>, store::LandingRunRecord>
      landings;
  for (const store::LandingRunRecord& run : db.landing_runs()) {
    if (run.status == "complete")
      landings[{run.model_fingerprint, run.scenario_hash, run.construction, run.distance}] = run;
  }
  for (const auto& [key, run] : landings) {
    std::vector<LandingEventInfo> events;
    for (const auto& e : nlohmann::json::parse(run.events_json)) {
      events.push_back(
          {e["id"], e["role"], e["is_source"], e["pieces"].get<std::vector<std::string>>()});
    }
    data.landing.push_back(
        summarize_landing(run.model_name, run.scenario_name + " / " + run.construction, events,
                          probe::landing_measures_by_pair(db.landing_rows(run.id)), run.seed));
  }
  return data;
}

}  // namespace eventkv::analysis
