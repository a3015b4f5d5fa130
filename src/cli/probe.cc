// eventkv probe SCENARIO.json -m MODEL [-m MODEL ...]: runs the scenario's
// donor pairs under every condition, stores every score in the results
// database and prints the statistics, side by side when several models run.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_options.h"
#include "probe/conditions.h"
#include "probe/pairs.h"
#include "probe/scenario.h"
#include "probe/summary.h"
#include "store/results_db.h"
#include "util/error.h"
#include "util/progress.h"

namespace eventkv::cli {
namespace {

using nlohmann::json;

std::atomic<bool> g_interrupted{false};

void on_interrupt(int) {
  g_interrupted = true;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C stops at once
}

struct ProbeOptions {
  std::string scenario;
  std::vector<std::string> models;
  ModelOptions model;  // threads and context; the model path comes from `models`
  int pairs = 0;       // 0: the scenario's count
  bool quick = false;
  std::vector<std::string> constructions;
  std::string db = "results/eventkv.db";
  bool resume = false;
  std::string shard = "0/1";
  bool as_json = false;
};

std::pair<int, int> parse_shard(const std::string& text) {
  int index = -1;
  int count = 0;
  char slash = 0;
  std::istringstream in(text);
  if (!(in >> index >> slash >> count) || slash != '/' || count < 1 || index < 0 || index >= count || !in.eof()) {
    fail("--shard must be K/N with 0 <= K < N, got '", text, "'");
  }
  return {index, count};
}

std::vector<probe::Cell> selected_cells(const probe::Scenario& scenario, const std::vector<std::string>& wanted) {
  std::vector<probe::Cell> cells;
  std::set<std::string> found;
  for (const probe::Cell& cell : probe::scenario_cells(scenario)) {
    if (wanted.empty() || std::find(wanted.begin(), wanted.end(), cell.construction) != wanted.end()) {
      cells.push_back(cell);
      found.insert(cell.construction);
    }
  }
  for (const std::string& id : wanted) {
    if (found.count(id) == 0) fail("--constructions: scenario '", scenario.name, "' has no construction '", id, "'");
  }
  return cells;
}

json pair_texts(const probe::TokenizedPair& pair) {
  const auto events = [](const std::vector<kv::Event>& list) {
    json out = json::array();
    for (const kv::Event& e : list) out.push_back({{"id", e.id}, {"role", e.role}, {"content", e.content}});
    return out;
  };
  return {{"a", events(pair.texts.events_a)},     {"b", events(pair.texts.events_b)},
          {"record_a", pair.texts.record_a},      {"record_b", pair.texts.record_b},
          {"question", pair.texts.question},      {"answer_prefix", pair.texts.answer_prefix}};
}

store::PairRecord pair_record(const probe::TokenizedPair& pair, const probe::Cell& cell,
                              const probe::PairScores& scores) {
  store::PairRecord record;
  record.pair_index = pair.texts.index;
  record.construction = cell.construction;
  record.distance = cell.distance;
  record.value_a = pair.texts.value_a;
  record.value_b = pair.texts.value_b;
  record.candidates = pair.texts.candidates;
  record.texts_json = pair_texts(pair).dump();
  for (const auto& e : pair.events_a) record.n_tokens += static_cast<int64_t>(e.tokens.size());
  record.rejected = pair.rejected;
  for (const probe::ConditionScores& c : scores.conditions) {
    record.conditions[std::string(c.condition)] = {{c.a.log_probs}, {c.b.log_probs}};
  }
  return record;
}

// Runs one model; returns the run's id and whether it finished.
int64_t run_model(const ProbeOptions& options, const std::string& model_path, const probe::Scenario& scenario,
                  store::ResultsDb& db) {
  ModelOptions model_options = options.model;
  model_options.model = model_path;
  const auto engine = load_engine(model_options);
  const tokenizer::ChatFormat format = tokenizer::ChatFormat::detect(engine->model().file());
  const std::vector<probe::Cell> cells = selected_cells(scenario, options.constructions);
  const int n_pairs = options.pairs > 0 ? options.pairs : (options.quick ? std::min(scenario.pairs, 20) : scenario.pairs);
  const auto [shard_index, shard_count] = parse_shard(options.shard);
  store::RunRecord run;
  run.model_name = engine->model().config().name.empty() ? model_path : engine->model().config().name;
  run.model_path = model_path;
  run.model_fingerprint = str_cat(std::hex, engine->model().fingerprint());
  run.scenario_name = scenario.name;
  run.scenario_suite = scenario.suite;
  run.scenario_finding = scenario.finding;
  run.scenario_hash = scenario.hash;
  run.scenario_json = "";
  run.payload_type = scenario.payload.label();
  run.git_version = EVENTKV_GIT_VERSION;
  run.seed = scenario.seed;
  run.threads = engine->pool().size();
  run.n_pairs = n_pairs;
  run.shard_index = shard_index;
  run.shard_count = shard_count;
  const int64_t run_id = db.open_run(run, options.resume);
  const auto stored = db.stored_pairs(run_id);
  auto arena = std::make_shared<kv::KvArena>(engine->model().config(), options.model.n_ctx, compute::KvType::kF32);
  int64_t total = 0;
  for (int i = shard_index; i < n_pairs; i += shard_count) total += static_cast<int64_t>(cells.size());
  Progress progress(scenario.name + " on " + run.model_name, total, "pairs");
  const auto start = std::chrono::steady_clock::now();
  int64_t done = 0;
  bool invalid = false;
  for (int index = shard_index; index < n_pairs && !g_interrupted; index += shard_count) {
    for (const probe::Cell& cell : cells) {
      if (g_interrupted) break;
      if (stored.count({index, cell.construction, cell.distance}) == 0) {
        const probe::TokenizedPair pair = probe::tokenize_pair(scenario, cell, index, format, engine->model().tokenizer());
        const probe::PairScores scores = probe::run_conditions(pair, engine, arena);
        if (!scores.local_identical) {
          invalid = true;
          std::fprintf(stderr, "\neventkv: error: pair %d: sparse-local served different scores to A and B\n", index);
        }
        db.store_pair(run_id, pair_record(pair, cell, scores));
      }
      progress.update(++done);
    }
  }
  progress.finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  db.finish_run(run_id, invalid ? "invalid" : g_interrupted ? "interrupted" : "complete", seconds);
  return run_id;
}

std::string percent(const report::Estimate& e) {
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), "%5.1f%% [%4.1f, %5.1f]", 100 * e.value, 100 * e.low, 100 * e.high);
  return buffer;
}

void print_cells(const std::vector<report::CellResult>& cells) {
  for (const report::CellResult& cell : cells) {
    std::printf("\n%s | %s | construction %s | distance %lld%s\n", cell.model.c_str(), cell.scenario.c_str(),
                cell.construction.empty() ? "-" : cell.construction.c_str(), static_cast<long long>(cell.distance),
                cell.valid ? "" : "  ** INVALID: sparse-local moved pairs **");
    std::printf("  %-14s %5s %17s  %-24s %9s  %s\n", "condition", "pairs", "aligned:anti:un:ot", "recovery [95% CI]",
                "sign p", "margin [95% CI]");
    for (const report::ConditionResult& c : cell.conditions) {
      char counts[48];
      std::snprintf(counts, sizeof(counts), "%lld:%lld:%lld:%lld", static_cast<long long>(c.aligned),
                    static_cast<long long>(c.anti), static_cast<long long>(c.unmoved), static_cast<long long>(c.other));
      std::printf("  %-14s %5lld %17s  %-24s %9.2g  %+.3f [%+.3f, %+.3f]\n", c.condition.c_str(),
                  static_cast<long long>(c.pairs), counts, percent(c.recovery).c_str(), c.sign_test_p, c.margin.value,
                  c.margin.low, c.margin.high);
    }
  }
}

json cells_json(const std::vector<report::CellResult>& cells) {
  json out = json::array();
  const auto estimate = [](const report::Estimate& e) { return json{{"value", e.value}, {"low", e.low}, {"high", e.high}}; };
  for (const report::CellResult& cell : cells) {
    json conditions = json::array();
    for (const report::ConditionResult& c : cell.conditions) {
      json row = {{"condition", c.condition}, {"pairs", c.pairs},   {"aligned", c.aligned},
                  {"anti", c.anti},           {"unmoved", c.unmoved}, {"other", c.other},
                  {"recovery", estimate(c.recovery)}, {"sign_test_p", c.sign_test_p}, {"margin", estimate(c.margin)}};
      if (c.accuracy) row["accuracy"] = estimate(*c.accuracy);
      conditions.push_back(row);
    }
    out.push_back({{"model", cell.model}, {"scenario", cell.scenario}, {"construction", cell.construction},
                   {"payload_type", cell.payload_type}, {"distance", cell.distance}, {"valid", cell.valid},
                   {"conditions", conditions}});
  }
  return out;
}

void run(const ProbeOptions& options) {
  const probe::Scenario scenario = probe::load_scenario(options.scenario);
  store::ResultsDb db(options.db);
  g_interrupted = false;
  std::signal(SIGINT, on_interrupt);
  std::vector<report::CellResult> cells;
  for (const std::string& model : options.models) {
    const int64_t run_id = run_model(options, model, scenario, db);
    for (const store::RunRecord& run : db.runs()) {
      if (run.id != run_id) continue;
      for (report::CellResult& cell : probe::summarize_run(run, db.pairs(run_id))) cells.push_back(std::move(cell));
    }
    if (g_interrupted) break;
  }
  std::signal(SIGINT, SIG_DFL);
  if (options.as_json) {
    std::cout << cells_json(cells).dump(2) << std::endl;
  } else {
    print_cells(cells);
  }
  if (g_interrupted) fail("interrupted; every finished pair is stored in ", options.db, " (continue with --resume)");
  for (const report::CellResult& cell : cells) {
    if (!cell.valid) fail("run invalid: the sparse-local control moved pairs (a bug, not a finding)");
  }
}

}  // namespace

void add_probe_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("probe", "Run a donor-pair scenario under every condition and report what was recovered");
  auto options = std::make_shared<ProbeOptions>();
  cmd->add_option("scenario", options->scenario, "scenario file (JSON)")->required();
  cmd->add_option("-m,--model", options->models, "GGUF model (repeat for side-by-side models)")->required();
  cmd->add_option("-t,--threads", options->model.threads, "threads (default: every core)");
  cmd->add_option("-c,--ctx", options->model.n_ctx, "KV cells for one pair's histories (default 4096)");
  cmd->add_option("--pairs", options->pairs, "pairs to run (default: the scenario's)")->check(CLI::PositiveNumber);
  cmd->add_flag("--quick", options->quick, "at most 20 pairs per cell");
  cmd->add_option("--constructions", options->constructions, "only these construction ids")->delimiter(',');
  cmd->add_option("--db", options->db, "results database (default results/eventkv.db)");
  cmd->add_flag("--resume", options->resume, "continue the newest unfinished run of this model and scenario");
  cmd->add_option("--shard", options->shard, "run only the pairs i with i mod N == K (K/N)");
  cmd->add_flag("--json", options->as_json, "print the statistics as JSON");
  cmd->callback([options] { run(*options); });
}

}  // namespace eventkv::cli
