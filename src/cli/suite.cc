// eventkv suite -m MODEL [-m MODEL ...]: the bundled paper experiments
// (scenarios/paper) on every model, the landing analysis of the carrier
// table, then the report. --quick runs few pairs per cell: the main job.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/model_options.h"
#include "cli/report_writer.h"
#include "probe/runner.h"
#include "probe/scenario.h"
#include "util/error.h"

namespace eventkv::cli {
namespace {

constexpr int kQuickPairs = 8;
constexpr int kQuickLandingPairs = 8;
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

std::vector<std::string> scenario_files(const std::string& folder) {
  if (!std::filesystem::is_directory(folder)) fail(folder, ": no such scenario folder");
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  }
  if (files.empty()) fail(folder, ": holds no scenario (*.json)");
  std::sort(files.begin(), files.end());
  return files;
}

void run(const SuiteOptions& options) {
  std::vector<probe::Scenario> scenarios;
  for (const std::string& file : scenario_files(options.scenarios))
    scenarios.push_back(probe::load_scenario(file));
  store::ResultsDb db(options.db);
  const InterruptGuard guard;
  const auto started = std::chrono::steady_clock::now();
  for (const std::string& model_path : options.models) {
    ModelOptions model_options = options.model;
    model_options.model = model_path;
    const auto engine = load_engine(model_options);
    for (const probe::Scenario& scenario : scenarios) {
      probe::RunOptions run;
      run.pairs = options.pairs > 0 ? options.pairs : (options.quick ? kQuickPairs : 0);
      run.resume = options.resume;
      run.kv_cells = options.model.n_ctx > 0 ? options.model.n_ctx : 4096;
      run.git_version = EVENTKV_GIT_VERSION;
      const probe::RunOutcome outcome =
          probe::run_scenario(engine, model_path, scenario, db, run, interrupted());
      std::fprintf(stderr, "%s on %s: %lld pairs in %.1f s%s\n", scenario.name.c_str(),
                   model_path.c_str(), static_cast<long long>(outcome.pairs_computed),
                   outcome.seconds, outcome.invalid ? " (INVALID: sparse-local moved pairs)" : "");
      if (outcome.interrupted)
        fail("interrupted; finished pairs are stored in ", options.db, " (rerun with --resume)");
    }
    const auto carrier =
        std::find_if(scenarios.begin(), scenarios.end(),
                     [](const probe::Scenario& s) { return s.suite == "carrier-table"; });
    if (options.landing && carrier != scenarios.end()) {
      probe::LandingRunOptions landing;
      landing.pairs = options.quick ? kQuickLandingPairs : kLandingPairs;
      landing.resume = options.resume;
      landing.kv_cells = options.model.n_ctx > 0 ? options.model.n_ctx : 4096;
      landing.git_version = EVENTKV_GIT_VERSION;
      const probe::RunOutcome outcome =
          probe::run_landing(engine, *carrier, db, landing, interrupted());
      std::fprintf(stderr, "landing of %s on %s: %lld pairs in %.1f s\n", carrier->name.c_str(),
                   model_path.c_str(), static_cast<long long>(outcome.pairs_computed),
                   outcome.seconds);
      if (outcome.interrupted)
        fail("interrupted; finished pairs are stored in ", options.db, " (rerun with --resume)");
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::fprintf(stderr, "suite finished in %.1f s\n", seconds);
  write_reports(options.db, options.html, options.markdown);
}

}  // namespace

void add_suite_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "suite", "Run the bundled paper experiments and the landing analysis, then the report");
  auto options = std::make_shared<SuiteOptions>();
  cmd->add_option("-m,--model", options->models, "GGUF model (repeat to compare models)")
      ->required();
  cmd->add_option("-t,--threads", options->model.threads, "threads (default: every core)");
  cmd->add_option("-c,--ctx", options->model.n_ctx,
                  "KV cells for one pair's histories (default 4096)");
  cmd->add_option("--scenarios", options->scenarios,
                  "folder of scenario files (default scenarios/paper)");
  cmd->add_flag("--quick", options->quick, "8 pairs per cell and 8 landing pairs (the main job)");
  cmd->add_option("--pairs", options->pairs, "pairs per cell (default: each scenario's)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("!--no-landing", options->landing, "skip the landing analysis");
  cmd->add_flag("--resume", options->resume, "continue unfinished runs");
  cmd->add_option("--db", options->db, "results database (default results/eventkv.db)");
  cmd->add_option("-o,--report", options->html, "HTML report (default results/report.html)");
  cmd->add_option("--markdown", options->markdown, "also write the report as markdown");
  cmd->callback([options] { run(*options); });
}

}  // namespace eventkv::cli
