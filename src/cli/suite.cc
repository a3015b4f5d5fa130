// eventkv suite -m MODEL [-m MODEL ...]: the bundled paper experiments
// (scenarios/paper) on every model, the landing analysis of the carrier
// table, then the report and each experiment's verdict. --quick runs few
// pairs per cell: the main job.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "analysis/experiments.h"
#include "analysis/findings.h"
#include "analysis/summary.h"
#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/model_options.h"
#include "cli/report_writer.h"
#include "git_version.h"
#include "probe/condition_names.h"
#include "probe/runner.h"
#include "probe/scenario.h"
#include "store/results_db.h"
#include "util/error.h"

namespace eventkv::cli {
namespace {

// The quick suite (the main job) must stay well under 15 minutes on 2 cores.
constexpr int kQuickPairs = 6;
constexpr int kQuickLandingPairs = 6;
constexpr int kLandingPairs = 40;

struct SuiteOptions {
  std::vector<std::string> models;
  ModelOptions model;
  std::string scenarios = "scenarios/paper";
  bool quick = false;
  int pairs = 0;
  bool landing = true;
  bool resume = false;
  std::string db = "results/eventkv.db";
  std::string html = "results/report.html";
  std::string markdown;
};

// A quick run keeps the first, middle and last filler distance of a curve.
std::vector<int> quick_distances(const std::vector<int>& distances) {
  if (distances.size() <= 3) return {};
  return {distances.front(), distances[distances.size() / 2], distances.back()};
}

// The landing analysis looks where the value lands best: the construction
// of the sweep (or else the carrier table) with the largest sparse-global
// margin on this model.
std::pair<const probe::Scenario*, std::string> landing_target(
    const std::vector<probe::Scenario>& scenarios, store::ResultsDb& db,
    const std::string& model_path) {
  const probe::Scenario* chosen = nullptr;
  for (const char* suite : {"construction-sweep", "carrier-table"}) {
    for (const probe::Scenario& s : scenarios) {
      if (chosen == nullptr && s.suite == suite) chosen = &s;
    }
  }
  if (chosen == nullptr)
    fail("the suite has no carrier-table or construction-sweep scenario to analyse");
  std::string best = chosen->constructions.empty() ? "" : chosen->constructions.front().id;
  double best_margin = -1e300;
  for (const store::RunRecord& run : db.runs()) {
    if (run.scenario_hash != chosen->hash || run.model_path != model_path) continue;
    for (const report::CellResult& cell : analysis::summarize_run(run, db.pairs(run.id))) {
      for (const report::ConditionResult& c : cell.conditions) {
        if (c.condition == probe::kSparseGlobal && c.margin.value > best_margin) {
          best_margin = c.margin.value;
          best = cell.construction;
        }
      }
    }
  }
  return {chosen, best};
}

// One line per experiment of the report, with the verdict its findings table gives.
void print_verdicts(const report::ReportData& data) {
  for (const analysis::CellGroup& group : analysis::experiments(data)) {
    const analysis::Finding finding = analysis::assess(group);
    std::printf("verdict: %s on %s: %s (%zu of %zu cells carry the value%s)\n",
                group.scenario.c_str(), group.model.c_str(), finding.verdict.c_str(),
                finding.carrying, group.cells.size(),
                finding.incomplete == nullptr ? "" : "; incomplete, probe --resume continues it");
  }
}

void run(const SuiteOptions& options) {
  std::vector<probe::Scenario> scenarios;
  for (const std::string& file : probe::scenario_files(options.scenarios))
    scenarios.push_back(probe::load_scenario(file));
  check_models(options.models, options.model);
  store::ResultsDb db(options.db);
  const InterruptGuard guard;
  const auto started = std::chrono::steady_clock::now();
  for (const std::string& model_path : options.models) {
    ModelOptions model_options = options.model;
    model_options.model = model_path;
    const auto engine = load_engine(model_options);
    const int64_t cells = kv_cells(model_options, engine->model());
    for (const probe::Scenario& scenario : scenarios) {
      probe::RunOptions run;
      run.pairs = options.pairs > 0 ? options.pairs : (options.quick ? kQuickPairs : 0);
      if (options.quick) run.distances = quick_distances(scenario.distances);
      run.resume = options.resume;
      run.kv_cells = cells;
      run.git_version = EVENTKV_GIT_VERSION;
      const probe::RunOutcome outcome =
          probe::run_scenario(engine, model_path, scenario, db, run, interrupted());
      std::fprintf(stderr, "%s on %s: %s\n", scenario.name.c_str(), model_path.c_str(),
                   probe::outcome_summary(outcome).c_str());
      if (outcome.interrupted)
        fail("interrupted; finished pairs are stored in ", options.db, " (rerun with --resume)");
    }
    if (options.landing) {
      const auto [scenario, construction] = landing_target(scenarios, db, model_path);
      probe::LandingRunOptions landing;
      landing.pairs = options.quick ? kQuickLandingPairs : kLandingPairs;
      landing.construction = construction;
      landing.resume = options.resume;
      landing.kv_cells = cells;
      landing.git_version = EVENTKV_GIT_VERSION;
      const probe::RunOutcome outcome =
          probe::run_landing(engine, *scenario, db, landing, interrupted());
      std::fprintf(stderr, "landing of %s / %s on %s: %s\n", scenario->name.c_str(),
                   construction.c_str(), model_path.c_str(),
                   probe::outcome_summary(outcome).c_str());
      if (outcome.interrupted)
        fail("interrupted; finished pairs are stored in ", options.db, " (rerun with --resume)");
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::fprintf(stderr, "suite finished in %.1f s\n", seconds);
  print_verdicts(write_reports(options.db, options.html, options.markdown));
}

}  // namespace

void add_suite_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "suite", "Run the bundled paper experiments and the landing analysis, then the report");
  auto options = std::make_shared<SuiteOptions>();
  cmd->add_option("-m,--model", options->models, "GGUF model (repeat to compare models)")
      ->required();
  add_experiment_model_options(cmd, options->model);
  add_panel_option(cmd, options->model);
  cmd->add_option("--scenarios", options->scenarios,
                  "folder of scenario files (default scenarios/paper)");
  cmd->add_flag("--quick", options->quick,
                "6 pairs per cell, 3 distances per curve, 6 landing pairs (the main job)");
  cmd->add_option("--pairs", options->pairs, "pairs per cell (default: each scenario's)")
      ->check(in_range(1, probe::kMaxPairs));
  cmd->add_flag("!--no-landing", options->landing, "skip the landing analysis");
  cmd->add_flag("--resume", options->resume, "continue unfinished runs");
  cmd->add_option("--db", options->db, "results database (default results/eventkv.db)");
  cmd->add_option("-o,--report", options->html, "HTML report (default results/report.html)");
  cmd->add_option("--markdown", options->markdown, "also write the report as markdown");
  cmd->callback([options] { run(*options); });
}

}  // namespace eventkv::cli
