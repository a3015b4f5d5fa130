// Recomputes one stored pair from the results database alone: the scenario
// and chat format its run stored, the pair's stored texts, on the model of
// the run's fingerprint; and compares every score with the stored one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kv/arena.h"
#include "kv/engine.h"
#include "probe/scenario.h"
#include "store/results_db.h"

namespace eventkv::probe {

// RUN:INDEX:CONSTRUCTION:DISTANCE, the run_id, pair_index, construction and
// distance columns of `eventkv export` ("3:17:ok:2"; "3:17::0" for a
// scenario without carriers). The construction may itself hold ':'.
struct PairId {
  int64_t run_id = 0;
  int64_t pair_index = 0;
  std::string construction;
  int distance = 0;
};

// Throws Error naming `text` when it is not of that form.
PairId parse_pair_id(const std::string& text);
std::string pair_id_text(const PairId& id);

struct StoredPair {
  store::RunRecord run;
  Scenario scenario;  // parsed from run.scenario_json
  store::PairRecord pair;
};

// Throws Error when `db` has no such run or pair (listing the run's cells and
// pair indices), when the run predates stored scenarios (schema 3), or when
// its stored scenario is not the one its hash names.
StoredPair find_stored_pair(store::ResultsDb& db, const PairId& id);

struct ScoreComparison {
  std::string condition;
  char side = 'A';
  size_t candidate = 0;
  double stored = 0.0;
  double recomputed = 0.0;
};

struct Recomputed {
  std::string chat_format;
  bool chat_format_stored = true;  // false: the run predates it, detected from the model
  int64_t n_tokens = 0;
  bool same_tokens = true;              // token count and event spans as stored (spans when stored)
  bool same_texts = true;               // the stored scenario draws the stored texts again
  std::vector<ScoreComparison> scores;  // every stored score: condition, side, candidate
  double max_abs_diff = 0.0;
};

// Throws Error when the engine's model is not the run's (by fingerprint).
Recomputed recompute_pair(const StoredPair& stored, const std::shared_ptr<kv::Engine>& engine,
                          const std::shared_ptr<kv::KvArena>& arena);

}  // namespace eventkv::probe
