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

#include "analysis/summary.h"
#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/model_options.h"
#include "git_version.h"
#include "model/model.h"
#include "probe/pairs.h"
#include "probe/runner.h"
#include "probe/scenario.h"
#include "report/json.h"
#include "store/results_db.h"
#include "tokenizer/chat_format.h"
#include "util/error.h"

namespace eventkv::cli {
namespace {

using nlohmann::json;

struct ProbeOptions {
  std::string scenario;
  std::vector<std::string> models;
  ModelOptions model;  // threads and context; the model path comes from `models`
  int pairs = 0;       // 0: the scenario's count
  bool quick = false;
  std::vector<std::string> constructions;
  std::vector<int> distances;
  std::string db = "results/eventkv.db";
  bool resume = false;
  std::string shard = "0/1";
  bool as_json = false;
  bool dry_run = false;
};

std::pair<int, int> parse_shard(const std::string& text) {
  int index = -1;
  int count = 0;
  char slash = 0;
  std::istringstream in(text);
  if (!(in >> index >> slash >> count) || slash != '/' || count < 1 || index < 0 ||
      index >= count || !in.eof()) {
    fail("--shard must be K/N with 0 <= K < N, got '", text, "'");
  }
  return {index, count};
}

std::string percent(const report::Estimate& e) {
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), "%5.1f%% [%4.1f, %5.1f]", 100 * e.value, 100 * e.low,
                100 * e.high);
  return buffer;
}

// The legend of print_cells' counts, printed once under the tables.
constexpr const char* kCountsLegend =
    "\npairs: donor pairs of the cell. aligned:anti:un:ot:ti: pairs where the served cache answers "
    "A's value on A and B's on B (aligned), the other way round (anti), the same on both sides "
    "(unmoved), or otherwise (other); ti: ties, a side whose top two candidates lie within "
    "1e-4 nats, no answer. recovery: aligned / pairs. sign p: two-sided sign test of "
    "aligned against anti. margin: the paired logit margin toward the donors' values.\n";

void print_cells(const std::vector<report::CellResult>& cells) {
  for (const report::CellResult& cell : cells) {
    std::printf("\n%s | %s | construction %s | distance %lld%s\n", cell.model.c_str(),
                cell.scenario.c_str(), cell.construction.empty() ? "-" : cell.construction.c_str(),
                static_cast<long long>(cell.distance),
                cell.valid ? "" : "  ** INVALID: sparse-local moved pairs **");
    std::printf("  %-14s %5s %20s  %-24s %9s  %s\n", "condition", "pairs", "aligned:anti:un:ot:ti",
                "recovery [95% CI]", "sign p", "margin [95% CI]");
    for (const report::ConditionResult& c : cell.conditions) {
      char counts[48];
      std::snprintf(counts, sizeof(counts), "%lld:%lld:%lld:%lld:%lld",
                    static_cast<long long>(c.aligned), static_cast<long long>(c.anti),
                    static_cast<long long>(c.unmoved), static_cast<long long>(c.other),
                    static_cast<long long>(c.ties));
      std::printf("  %-14s %5lld %20s  %-24s %9.2g  %+.3f [%+.3f, %+.3f]\n", c.condition.c_str(),
                  static_cast<long long>(c.pairs), counts, percent(c.recovery).c_str(),
                  c.sign_test_p, c.margin.value, c.margin.low, c.margin.high);
    }
  }
  if (!cells.empty()) std::printf("%s", kCountsLegend);
}

std::string as_json_string(const std::string& text) {
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

// Pair 0 of one cell as --dry-run shows it: each event of side A with its
// token count and text, the record, the query and the candidates.
void print_pair(const probe::Cell& cell, const probe::TokenizedPair& pair) {
  const probe::DonorPair& texts = pair.texts;
  int64_t side_tokens = 0;
  for (const kv::EventTokens& e : pair.events_a)
    side_tokens += static_cast<int64_t>(e.tokens.size());
  std::printf("\ncell: construction %s, distance %d; pair 0: A %s, B %s, %lld tokens per side",
              cell.construction.empty() ? "-" : cell.construction.c_str(), cell.distance,
              as_json_string(texts.candidates[static_cast<size_t>(texts.value_a)]).c_str(),
              as_json_string(texts.candidates[static_cast<size_t>(texts.value_b)]).c_str(),
              static_cast<long long>(side_tokens));
  if (pair.rejected > 0) std::printf(" (%d draws rejected)", pair.rejected);
  std::printf("\n  %-20s %-10s %6s  %s\n", "event", "role", "tokens", "text (side A)");
  for (const kv::EventTokens& e : pair.events_a) {
    std::string text;
    for (const events::Event& event : texts.events_a) {
      if (event.id == e.id) text = event.content;
    }
    std::printf("  %-20s %-10s %6zu  %s\n", e.id.c_str(), e.role.c_str(), e.tokens.size(),
                as_json_string(text).c_str());
  }
  std::printf("  %-20s %-10s %6zu  %s\n", "record (A)", pair.record_a.role.c_str(),
              pair.record_a.tokens.size(), as_json_string(texts.record_a).c_str());
  std::printf("  %-20s %-10s %6zu  %s %s\n", "query", "user", pair.query.prompt.size(),
              as_json_string(texts.question).c_str(), as_json_string(texts.answer_prefix).c_str());
  for (size_t i = 0; i < texts.candidates.size(); ++i) {
    std::printf("  %-20s %-10s %6zu  %s\n", "candidate", "", pair.query.candidates[i].size(),
                as_json_string(texts.candidates[i]).c_str());
  }
}

// Tokenizes pair 0 of every cell on every model before a database exists, so
// payload values of different token lengths fail here, naming them; with
// `print` (--dry-run), shows each pair.
void check_pairs(const probe::Scenario& scenario, const std::vector<probe::Cell>& cells,
                 const std::vector<std::string>& models, bool print) {
  for (const std::string& path : models) {
    const auto model = model::Model::load(path);
    const tokenizer::ChatFormat format = tokenizer::ChatFormat::detect(model->file());
    if (print) {
      std::printf("%s on %s (chat format %s)\n", scenario.name.c_str(), path.c_str(),
                  std::string(format.name()).c_str());
    }
    for (const probe::Cell& cell : cells) {
      const probe::TokenizedPair pair =
          probe::tokenize_pair(scenario, cell, 0, format, model->tokenizer());
      if (print) print_pair(cell, pair);
    }
  }
}

void run(const ProbeOptions& options) {
  const probe::Scenario scenario = probe::load_scenario(options.scenario);
  probe::RunOptions run_options;
  run_options.pairs =
      options.pairs > 0 ? options.pairs : (options.quick ? std::min(scenario.pairs, 20) : 0);
  run_options.constructions = options.constructions;
  run_options.distances = options.distances;
  std::tie(run_options.shard_index, run_options.shard_count) = parse_shard(options.shard);
  run_options.resume = options.resume;
  run_options.git_version = EVENTKV_GIT_VERSION;
  std::vector<probe::Cell> cells;
  try {
    cells = probe::selected_cells(scenario, run_options);
  } catch (const Error& e) {
    usage_error(options.scenario, e.what());
  }
  check_models(options.models, options.model);
  check_pairs(scenario, cells, options.models, options.dry_run);
  if (options.dry_run) return;
  store::ResultsDb db(options.db);
  const InterruptGuard guard;
  std::vector<report::CellResult> cells_done;
  bool invalid = false;
  for (const std::string& model : options.models) {
    ModelOptions model_options = options.model;
    model_options.model = model;
    const auto engine = load_engine(model_options);
    run_options.kv_cells = kv_cells(model_options, engine->model());
    const probe::RunOutcome outcome =
        probe::run_scenario(engine, model, scenario, db, run_options, interrupted());
    invalid = invalid || outcome.invalid;
    std::fprintf(stderr, "%s on %s: %s\n", scenario.name.c_str(), model.c_str(),
                 probe::outcome_summary(outcome).c_str());
    for (const store::RunRecord& run : db.runs()) {
      if (run.id != outcome.run_id) continue;
      for (report::CellResult& cell : analysis::summarize_run(run, db.pairs(run.id)))
        cells_done.push_back(std::move(cell));
    }
    if (outcome.interrupted) break;
  }
  if (options.as_json) {
    std::cout << report::cells_json(cells_done).dump(2) << std::endl;
  } else {
    print_cells(cells_done);
  }
  if (interrupted())
    fail("interrupted; every finished pair is stored in ", options.db, " (continue with --resume)");
  if (invalid) fail("run invalid: the sparse-local control moved pairs (a bug, not a finding)");
}

}  // namespace

void add_probe_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "probe", "Run a donor-pair scenario under every condition and report what was recovered");
  auto options = std::make_shared<ProbeOptions>();
  cmd->add_option("scenario", options->scenario, "scenario file (JSON)")->required();
  cmd->add_option("-m,--model", options->models, "GGUF model (repeat for side-by-side models)")
      ->required();
  add_experiment_model_options(cmd, options->model);
  add_panel_option(cmd, options->model);
  cmd->add_option("--pairs", options->pairs, "pairs per cell (default: the scenario's)")
      ->check(in_range(1, probe::kMaxPairs));
  cmd->add_flag("--quick", options->quick, "at most 20 pairs per cell");
  cmd->add_option("--constructions", options->constructions, "only these construction ids")
      ->delimiter(',');
  cmd->add_option("--distances", options->distances, "only these filler distances")->delimiter(',');
  cmd->add_option("--db", options->db, "results database (default results/eventkv.db)");
  cmd->add_flag("--resume", options->resume,
                "continue the newest unfinished run of this model and scenario");
  cmd->add_option("--shard", options->shard, "run only the pairs i with i mod N == K (K/N)");
  cmd->add_flag("--json", options->as_json, "print the statistics as JSON");
  cmd->add_flag("--dry-run", options->dry_run,
                "print pair 0 of each cell with its token counts; compute and write nothing");
  cmd->callback([options] { run(*options); });
}

}  // namespace eventkv::cli
