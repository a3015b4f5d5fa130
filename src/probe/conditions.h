// The five conditions of SPEC section 2, run side by side on one donor pair:
//   visible        source retained (the ceiling)
//   sparse-global  source evicted; retained rows as computed with it visible
//   record         source evicted; a textual record of its value appended
//   sparse-local   source evicted; later retained rows recomputed without it,
//                  so A and B serve identical rows: when the sides differ
//                  only in the source (as drawn pairs do), computed and
//                  scored once; otherwise both, and their scores compared
//   no-carrier     source and carriers evicted
// Both sides share the rows before the source and are computed in one
// forward pass; every condition forks the computed sides instead of
// recomputing them.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "kv/arena.h"
#include "kv/edge_mask.h"
#include "kv/engine.h"
#include "kv/event_kv.h"
#include "probe/condition_names.h"
#include "probe/pairs.h"

namespace eventkv::probe {

struct SideScores {
  std::vector<double> log_probs;  // per candidate
};

struct ConditionScores {
  std::string_view condition;
  SideScores a;
  SideScores b;
};

struct PairScores {
  std::vector<ConditionScores> conditions;  // in kConditions order
  bool local_identical = true;              // sparse-local: A and B scores bit-identical
};

// Both sides computed with `mask`'s edges removed: the events before the
// source once (shared), the rest of the two sides in one forward pass.
std::pair<kv::EventKV, kv::EventKV> compute_sides(const TokenizedPair& pair,
                                                  const std::shared_ptr<kv::Engine>& engine,
                                                  const std::shared_ptr<kv::KvArena>& arena,
                                                  const kv::EdgeMask& mask = {});

// The query's candidate scores on each history (one engine and arena), in
// one forward pass.
std::vector<std::vector<kv::CandidateScore>> score_all(std::span<kv::EventKV* const> histories,
                                                       const events::QueryTokens& query);

// Where run_conditions spends its time (seconds, accumulated).
struct ConditionTimes {
  double prefill = 0.0;  // both sides, the records and the local recompute
  double scoring = 0.0;  // the ten served caches' queries
  double total = 0.0;    // the rest is bookkeeping: forks, evictions, copies
};

// Runs every condition; the arena must have room for about three times the
// pair's tokens.
PairScores run_conditions(const TokenizedPair& pair, const std::shared_ptr<kv::Engine>& engine,
                          const std::shared_ptr<kv::KvArena>& arena,
                          ConditionTimes* times = nullptr);

// Whether `shorter`'s histories are the first events of `longer`'s (one pair
// drawn at two filler distances), with the same source and carriers.
bool is_leading_part(const TokenizedPair& shorter, const TokenizedPair& longer);

// run_conditions for pairs that are leading parts of the last one (throws
// Error otherwise): the last pair's sides are computed once and every pair is
// served from its first events, which are the rows a pair computed alone
// gets, since each row sees only earlier ones. Scores are those of
// run_conditions on each pair, bit for bit.
std::vector<PairScores> run_conditions_nested(const std::vector<TokenizedPair>& pairs,
                                              const std::shared_ptr<kv::Engine>& engine,
                                              const std::shared_ptr<kv::KvArena>& arena,
                                              ConditionTimes* times = nullptr);

// Index of the highest-scoring candidate (the first on ties).
int predicted(const SideScores& side);

}  // namespace eventkv::probe
