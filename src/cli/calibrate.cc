// eventkv calibrate -m MODEL [--db RESULTS.db ...] [-o PROFILE.json]: the
// model's calibration profile (contract/profile.h) from the runs stored in
// results databases, or, without --db (or with --run), after running the
// construction and payload scenarios of every wording family on the model.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/model_options.h"
#include "contract/calibrate.h"
#include "contract/profile.h"
#include "git_version.h"
#include "model/model.h"
#include "probe/runner.h"
#include "store/results_db.h"
#include "util/error.h"

namespace eventkv::cli {
namespace {

// --quick: enough pairs to see a family fail, never enough to certify (24
// pairs, all aligned, give a Wilson lower bound of 0.86).
constexpr int kQuickCalibrationPairs = 24;

struct CalibrateOptions {
  ModelOptions model;
  std::string fingerprint;
  std::vector<std::string> dbs;
  std::vector<std::string> scenarios = {"scenarios/paper", "scenarios/families"};
  bool run = false;
  bool quick = false;
  bool resume = false;
  std::string output;
};

// A results database in the temporary folder, removed (with SQLite's side
// files) when the command ends.
class TemporaryDb {
 public:
  TemporaryDb()
      : path_((std::filesystem::temp_directory_path() /
               ("eventkv-calibrate-" + std::to_string(getpid()) + ".db"))
                  .string()) {}
  ~TemporaryDb() {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      std::filesystem::remove(path_ + suffix, ignored);
  }
  TemporaryDb(const TemporaryDb&) = delete;
  TemporaryDb& operator=(const TemporaryDb&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs every scenario of the catalog but the distance curves (they vary
// where the query is, not the carrier) on the model into `db_path`.
void measure(const CalibrateOptions& options, const contract::ScenarioCatalog& catalog,
             const std::string& db_path, bool temporary) {
  check_models({options.model.model}, options.model);
  const auto engine = load_engine(options.model);
  store::ResultsDb db(db_path);
  const InterruptGuard guard;
  probe::RunOptions run;
  run.pairs = options.quick ? kQuickCalibrationPairs : 0;
  run.resume = options.resume;
  run.kv_cells = kv_cells(options.model, engine->model());
  run.git_version = EVENTKV_GIT_VERSION;
  for (const probe::Scenario& scenario : catalog.scenarios()) {
    if (scenario.suite == "distance" || scenario.constructions.empty()) continue;
    const probe::RunOutcome outcome =
        probe::run_scenario(engine, options.model.model, scenario, db, run, interrupted());
    std::fprintf(stderr, "%s on %s: %s\n", scenario.name.c_str(), options.model.model.c_str(),
                 probe::outcome_summary(outcome).c_str());
    if (outcome.interrupted && temporary)
      fail("interrupted; measure with --run --db FILE to keep the finished pairs");
    if (outcome.interrupted)
      fail("interrupted; finished pairs are stored in ", db_path, " (continue with --resume)");
  }
}

void print_stats(const char* payload, const char* construction, const contract::FamilyStats& stats,
                 const std::string& verdict) {
  char counts[48];
  std::snprintf(counts, sizeof(counts), "%lld:%lld", static_cast<long long>(stats.aligned),
                static_cast<long long>(stats.anti));
  std::printf("%-12s %-16s %-22s %6lld %12s  %5.1f%% [%5.1f, %5.1f]  %+.3f [%+.3f, %+.3f]  %s\n",
              payload, construction, stats.family.c_str(), static_cast<long long>(stats.pairs),
              counts, 100 * stats.recovery, 100 * stats.recovery_low, 100 * stats.recovery_high,
              stats.margin, stats.margin_low, stats.margin_high, verdict.c_str());
}

void print_profile(const contract::Profile& profile) {
  int certified = 0;
  for (const contract::ProfileEntry& entry : profile.entries) certified += entry.certified ? 1 : 0;
  std::printf("%s (fingerprint %s): %d of %zu construction x payload type cells certified\n",
              profile.model_name.c_str(), profile.model_fingerprint.c_str(), certified,
              profile.entries.size());
  std::printf("rule: %s\n\n", profile.rule.text().c_str());
  std::printf("%-12s %-16s %-22s %6s %12s  %-22s  %-24s  %s\n", "payload", "construction", "family",
              "pairs", "aligned:anti", "sparse-global recovery", "margin [95% CI]", "verdict");
  for (const contract::ProfileEntry& entry : profile.entries) {
    bool first = true;
    for (const contract::FamilyStats& family : entry.families) {
      print_stats(first ? entry.payload_type.c_str() : "", first ? entry.construction.c_str() : "",
                  family, family.meets_rule ? "meets the rule" : "");
      first = false;
    }
    print_stats("", "", entry.pooled, entry.certified ? "CERTIFIED" : "not certified");
  }
}

void run(const CalibrateOptions& options) {
  const bool measuring = options.run || options.dbs.empty();
  if (options.model.model.empty() && options.fingerprint.empty())
    usage_error("--model", "give the model (or, with --db, its --fingerprint)");
  if (measuring && options.model.model.empty())
    usage_error("--fingerprint", "names a model to read from --db; running scenarios needs -m");
  if (measuring && options.dbs.size() > 1)
    usage_error("--db", "--run measures into one database; give one --db");
  if (!measuring && (options.quick || options.resume)) {
    usage_error(options.quick ? "--quick" : "--resume",
                "applies to measuring (no --db, or --run) only");
  }
  const contract::ScenarioCatalog catalog = contract::ScenarioCatalog::load(options.scenarios);
  contract::CalibrationInput input;
  input.model_fingerprint = options.fingerprint;
  if (!options.model.model.empty()) {
    input.model_fingerprint =
        str_cat(std::hex, model::Model::load(options.model.model)->fingerprint());
  }
  input.eventkv_version = EVENTKV_GIT_VERSION;
  const std::unique_ptr<TemporaryDb> temporary =
      measuring && options.dbs.empty() ? std::make_unique<TemporaryDb>() : nullptr;
  input.databases = temporary ? std::vector<std::string>{temporary->path()} : options.dbs;
  if (measuring) measure(options, catalog, input.databases.front(), temporary != nullptr);
  const contract::Profile profile = contract::calibrate(input, catalog);
  print_profile(profile);
  if (!options.output.empty()) {
    contract::save_profile(profile, options.output);
    std::fprintf(stderr, "wrote %s\n", options.output.c_str());
  }
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Write a model's calibration profile: which carrier constructions reliably carry which "
      "payload types, on at least two wording families");
  auto options = std::make_shared<CalibrateOptions>();
  cmd->add_option("-m,--model", options->model.model, "GGUF model");
  cmd->add_option("--fingerprint", options->fingerprint,
                  "the model's fingerprint as the databases store it, instead of -m (with --db)")
      ->excludes("--model");
  add_experiment_model_options(cmd, options->model);
  add_panel_option(cmd, options->model);
  cmd->add_option("--db", options->dbs,
                  "results database to read (repeat to pool several); none: measure first");
  cmd->add_option("--scenarios", options->scenarios,
                  "scenario folder that resolves runs to their family, and that --run runs "
                  "(repeat; default scenarios/paper and scenarios/families)");
  cmd->add_flag("--run", options->run,
                "measure first, into the one --db (or a temporary database without --db)");
  cmd->add_flag("--quick", options->quick, "when measuring, 24 pairs per cell");
  cmd->add_flag("--resume", options->resume, "when measuring into --db, continue unfinished runs");
  cmd->add_option("-o,--output", options->output, "write the profile (JSON) here");
  cmd->callback([options] { run(*options); });
}

}  // namespace eventkv::cli
