// eventkv rerun --db FILE --pair RUN:INDEX:CONSTRUCTION:DISTANCE [-m MODEL]:
// recomputes one stored pair from the database alone (probe/rerun.h) and
// prints every score stored and recomputed; fails when they differ by more
// than the tolerance.
#include <cstdio>
#include <filesystem>
#include <string>

#include "cli/commands.h"
#include "cli/model_options.h"
#include "compute/kernels.h"
#include "probe/rerun.h"
#include "store/results_db.h"
#include "util/error.h"

namespace eventkv::cli {
namespace {

// Other kernels, another build or another version of eventkv sum the same
// floats in another order: measured on smollm2-135m, up to 8e-6 nats between
// this build's avx512 and x86-64 kernels (avx2 gave the same bits as
// avx512), and up to 1.5e-5 between the archived runs of docs/data (eventkv
// 9df8b5d) and this build. The same kernels and build give the same bits
// (whatever the thread count), so any difference there is a finding.
constexpr double kOtherBuildTolerance = 1e-4;

struct RerunOptions {
  std::string db;
  std::string pair;
  ModelOptions model;       // "" model: the path the run stored
  double tolerance = -1.0;  // < 0: 0 on the run's kernels and build, else kOtherBuildTolerance
};

void print_scores(const probe::StoredPair& stored, const probe::Recomputed& again) {
  std::printf("  %-14s %4s  %-16s %22s %22s %10s\n", "condition", "side", "candidate", "stored",
              "recomputed", "diff");
  for (const probe::ScoreComparison& s : again.scores) {
    std::printf("  %-14s %4c  %-16s %22.17g %22.17g %10.3g\n", s.condition.c_str(), s.side,
                stored.pair.candidates[s.candidate].c_str(), s.stored, s.recomputed,
                s.recomputed - s.stored);
  }
}

void run(const RerunOptions& options) {
  const probe::PairId id = [&] {
    try {
      return probe::parse_pair_id(options.pair);
    } catch (const Error& e) {
      usage_error("--pair", e.what());
    }
  }();
  store::ResultsDb db(options.db, store::Access::kReadOnly);
  const probe::StoredPair stored = probe::find_stored_pair(db, id);
  const store::RunRecord& run = stored.run;
  ModelOptions model_options = options.model;
  if (model_options.model.empty()) model_options.model = run.model_path;
  if (!std::filesystem::exists(model_options.model)) {
    fail(model_options.model, ": no such file (the model of run ", run.id,
         "); name it with -m MODEL");
  }
  const auto engine = load_engine(model_options);
  const auto arena = std::make_shared<kv::KvArena>(
      engine->model().config(), kv_cells(model_options, engine->model()), compute::KvType::kF32);
  const probe::Recomputed again = probe::recompute_pair(stored, engine, arena);
  const bool same_build =
      run.isa == compute::kernels().isa && run.build == compute::build_description();
  const double tolerance = options.tolerance >= 0 ? options.tolerance
                           : same_build           ? 0.0
                                                  : kOtherBuildTolerance;
  std::printf("run %lld (%s on %s), pair %s: %lld tokens per side, chat format %s%s\n",
              static_cast<long long>(run.id), run.scenario_name.c_str(), run.model_name.c_str(),
              probe::pair_id_text(id).c_str(), static_cast<long long>(again.n_tokens),
              again.chat_format.c_str(),
              again.chat_format_stored ? "" : " (detected: the run predates stored formats)");
  print_scores(stored, again);
  const std::string basis =
      options.tolerance >= 0 ? "--tolerance"
      : same_build           ? "the run's kernels and build are this one's"
      : run.isa.empty()
          ? str_cat("the run predates stored kernels; these are ", compute::kernels().isa)
          : str_cat("the run used kernels ", run.isa, "; these are ", compute::kernels().isa);
  std::printf("max |diff| %.3g nats%s; tolerance %.3g (%s)\n", again.max_abs_diff,
              again.max_abs_diff == 0.0 ? " (bit-identical)" : "", tolerance, basis.c_str());
  const std::string what = str_cat("run ", run.id, " pair ", probe::pair_id_text(id));
  if (!again.same_texts)
    fail(what, ": the stored scenario no longer draws the stored texts of this pair");
  if (!again.same_tokens)
    fail(what, ": the stored texts tokenize to other lengths or event spans than stored");
  if (again.max_abs_diff > tolerance) {
    fail(what, ": recomputed scores differ from the stored ones by up to ", again.max_abs_diff,
         " nats, beyond the tolerance of ", tolerance);
  }
}

}  // namespace

void add_rerun_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "rerun", "Recompute one stored pair from the results database and compare its scores");
  auto options = std::make_shared<RerunOptions>();
  cmd->add_option("--db", options->db, "results database")->required();
  cmd->add_option("--pair", options->pair,
                  "RUN:INDEX:CONSTRUCTION:DISTANCE, as the columns run_id, pair_index, "
                  "construction, distance of export (e.g. 1:0:ok:2)")
      ->required();
  cmd->add_option("-m,--model", options->model.model,
                  "GGUF model (default: the path the run stored); its fingerprint must be the "
                  "run's");
  add_experiment_model_options(cmd, options->model);
  add_panel_option(cmd, options->model);
  cmd->add_option("--tolerance", options->tolerance,
                  "largest |stored - recomputed| in nats accepted (default: 0 on the run's "
                  "kernels and build, else 1e-4)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([options] { run(*options); });
}

}  // namespace eventkv::cli
