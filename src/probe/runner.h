// Runs a scenario on one model into the results database: every pair of
// every selected cell, skipping pairs a resumed run already stored, one
// transaction per pair, stopping cleanly between pairs when asked to.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kv/engine.h"
#include "probe/pairs.h"
#include "probe/scenario.h"
#include "store/results_db.h"

namespace eventkv::probe {

// KV cells one pair's histories share, in probe, landing and suite alike. The
// landing analysis needs the most: both sides plus a batch of forks, each with
// its transplanted rows and its query. Memory is taken page by page as cells
// are written, so unused room costs next to nothing.
inline constexpr int64_t kDefaultKvCells = 8192;

struct RunOptions {
  int pairs = 0;                           // 0: the scenario's count
  std::vector<std::string> constructions;  // empty: every construction
  std::vector<int> distances;              // empty: every filler distance
  int shard_index = 0;
  int shard_count = 1;
  bool resume = false;
  int64_t kv_cells = kDefaultKvCells;
  std::string git_version = "unknown";
};

struct RunOutcome {
  int64_t run_id = 0;
  int64_t pairs_computed = 0;  // this time, once per cell (resumed pairs not counted)
  int64_t cells = 1;           // of the run: --pairs counts pairs per cell
  double seconds = 0.0;
  bool interrupted = false;
  bool invalid = false;           // sparse-local moved some pair: a bug
  bool already_complete = false;  // --resume found it finished: nothing computed or changed
};

// A model's fingerprint as runs store it (hexadecimal).
std::string model_fingerprint(const model::Model& model);

// The cells of `scenario` that options.constructions and options.distances
// select (empty: every one); throws Error naming one the scenario lacks.
std::vector<Cell> selected_cells(const Scenario& scenario, const RunOptions& options);

// The one-line summary the CLI prints: "12 pairs in 3.4 s", then " (over 4
// cells ...)" when the run has several, and " (already complete: nothing
// computed)" or " (INVALID: ...)" when so.
std::string outcome_summary(const RunOutcome& outcome);

// `interrupted` is polled between pairs. A progress line shows on a terminal.
// Resuming a complete run computes nothing and leaves its record as it was.
RunOutcome run_scenario(const std::shared_ptr<kv::Engine>& engine, const std::string& model_path,
                        const Scenario& scenario, store::ResultsDb& db, const RunOptions& options,
                        const std::atomic<bool>& interrupted);

struct LandingRunOptions {
  int pairs = 30;
  std::string construction;  // "" : the scenario's first
  int distance = -1;         // -1: the scenario's first
  int max_edges = 8;
  int token_window = 4;
  bool resume = false;
  int64_t kv_cells = kDefaultKvCells;
  std::string git_version = "unknown";
};

// The cell a landing analysis looks at; throws Error naming a construction or
// distance the scenario lacks.
Cell landing_cell(const Scenario& scenario, const LandingRunOptions& options);

// The landing analysis of one cell (probe/landing.h) into the results
// database: every pair's full margin and event shifts, then, for the roots
// those decide, every pair's layer profile, token windows and edges.
RunOutcome run_landing(const std::shared_ptr<kv::Engine>& engine, const Scenario& scenario,
                       store::ResultsDb& db, const LandingRunOptions& options,
                       const std::atomic<bool>& interrupted);

}  // namespace eventkv::probe
