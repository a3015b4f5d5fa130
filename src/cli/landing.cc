// eventkv landing SCENARIO.json -m MODEL: where the evicted source's value
// lands in one cell of the scenario (roots, depth, tokens, reference edges).
#include <cstdio>
#include <string>

#include "analysis/summary.h"
#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/model_options.h"
#include "git_version.h"
#include "probe/landing.h"
#include "probe/runner.h"
#include "probe/scenario.h"
#include "store/results_db.h"
#include "util/error.h"

namespace eventkv::cli {
namespace {

struct LandingCliOptions {
  std::string scenario;
  ModelOptions model;
  probe::LandingRunOptions run;
  std::string db = "results/eventkv.db";
};

void print_map(const report::LandingMap& map) {
  std::printf("\nlanding of %s on %s (shares of the pairs' margin, 95%% intervals)\n",
              map.scenario.c_str(), map.model.c_str());
  for (const report::LandingEvent& e : map.events) {
    std::printf("  %-22s %-10s %s%s%+7.1f%% [%+.1f, %+.1f]  %lld:%lld\n", e.id.c_str(),
                e.role.c_str(), e.is_source ? "source " : "", e.is_root ? "ROOT " : "",
                100 * e.shift.value, 100 * e.shift.low, 100 * e.shift.high,
                static_cast<long long>(e.aligned), static_cast<long long>(e.anti));
  }
  for (const report::LandingEdge& e : map.edges) {
    std::printf("  edge %s -> %s%s %+7.1f%% [%+.1f, %+.1f]\n", e.from.c_str(), e.to.c_str(),
                e.is_reference ? " REFERENCE" : "", 100 * e.effect.value, 100 * e.effect.low,
                100 * e.effect.high);
  }
  for (const report::LayerEffect& l : map.layers) {
    std::printf("  %s %-10s %+7.1f%% [%+.1f, %+.1f]\n", map.heat_event.c_str(), l.label.c_str(),
                100 * l.effect.value, 100 * l.effect.low, 100 * l.effect.high);
  }
}

void run(const LandingCliOptions& options) {
  const probe::Scenario scenario = probe::load_scenario(options.scenario);
  try {
    probe::landing_cell(scenario, options.run);
  } catch (const Error& e) {
    usage_error(options.scenario, e.what());
  }
  check_models({options.model.model}, options.model);
  const std::shared_ptr<kv::Engine> engine = load_engine(options.model);
  probe::LandingRunOptions run_options = options.run;
  run_options.git_version = EVENTKV_GIT_VERSION;
  run_options.kv_cells = kv_cells(options.model, engine->model());
  store::ResultsDb db(options.db);
  const InterruptGuard guard;
  const probe::RunOutcome outcome =
      probe::run_landing(engine, scenario, db, run_options, interrupted());
  if (outcome.interrupted)
    fail("interrupted; the finished pairs are stored in ", options.db, " (continue with --resume)");
  for (const report::LandingMap& map : analysis::collect_report(db).landing) {
    if (map.scenario.rfind(scenario.name + " / ", 0) == 0) print_map(map);
  }
  std::printf("\nanalysed %s\n", probe::outcome_summary(outcome).c_str());
}

}  // namespace

void add_landing_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "landing", "Find where an evicted source lands: roots, layers, tokens, reference edges");
  auto options = std::make_shared<LandingCliOptions>();
  cmd->add_option("scenario", options->scenario, "scenario file (JSON)")->required();
  cmd->add_option("-m,--model", options->model.model, "GGUF model file")->required();
  add_experiment_model_options(cmd, options->model);
  add_panel_option(cmd, options->model);
  cmd->add_option("--pairs", options->run.pairs, "donor pairs to analyse")
      ->check(in_range(1, probe::kMaxPairs));
  cmd->add_option("--construction", options->run.construction,
                  "construction id (default: the scenario's first)");
  cmd->add_option("--distance", options->run.distance,
                  "filler distance (default: the scenario's first)");
  cmd->add_option("--max-edges", options->run.max_edges, "reference-edge candidates per pair")
      ->check(at_least(0));
  cmd->add_option("--token-window", options->run.token_window, "tokens swapped together")
      ->check(at_least(1));
  cmd->add_option("--db", options->db, "results database (default results/eventkv.db)");
  cmd->add_flag("--resume", options->run.resume,
                "continue the newest unfinished analysis of this cell");
  cmd->callback([options] { run(*options); });
}

}  // namespace eventkv::cli
