// Landing analysis (SPEC sections 1 and 3.3): where an evicted source's
// value sits in the retained rows of donor pairs.
//
// For one pair, both sides computed and the source evicted (sparse-global):
//   margin(X) = s_X(A) - s_X(B), the log-probability gap of an X-served answer;
//   full      = margin(A-served) - margin(B-served), the pair's margin.
// Root test of event e, its rows swapped between the sides:
//   shift(e)  = ([margin(B with e from A) - margin(B)] + [margin(A) - margin(A with e from B)]) /
//   2, the mean move toward the side the rows came from: 0 when e's rows are the same on both
//   sides, `full` when they are all that differs.
// Depth and token level: the same with only some layers, or one window of
// e's tokens, swapped.
// Reference edge X -> Y (tokens of X may not attend to Y while both sides
// are computed): drop = full - (full computed without the edge).
//
// Over many pairs each target's share of the full margin decides whether it
// is a root or a reference edge: the rule is analysis/landing_summary.h's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kv/arena.h"
#include "kv/edge_mask.h"
#include "kv/engine.h"
#include "probe/pairs.h"
#include "store/results_db.h"

namespace eventkv::probe {

struct LandingOptions {
  kv::EdgeMask base_mask;  // the attention graph both sides are computed with
  int max_edges = 8;       // reference-edge candidates per pair, nearest the source first
  int token_window = 4;    // tokens swapped together in the token-level test
};

// One measurement on one pair.
struct LandingMeasure {
  std::string kind;     // full | event | layer | token | edge
  std::string target;   // "", event id, "id:L3", "id:first 8", "id:4-8", "X->Y"
  double value = 0.0;   // margin, shift or drop
  std::string outcome;  // aligned | anti | unmoved | other (see outcome.h)
};

// The full margin and every retained event's shift.
std::vector<LandingMeasure> measure_events(const TokenizedPair& pair,
                                           const std::shared_ptr<kv::Engine>& engine,
                                           const std::shared_ptr<kv::KvArena>& arena,
                                           const LandingOptions& options);

// For the given roots: the layer profile, the token windows and the edges on
// paths from the source to them (at most options.max_edges).
std::vector<LandingMeasure> measure_roots(const TokenizedPair& pair,
                                          const std::shared_ptr<kv::Engine>& engine,
                                          const std::shared_ptr<kv::KvArena>& arena,
                                          const LandingOptions& options,
                                          const std::vector<std::string>& roots);

// The drop of one edge: both sides recomputed without it (on top of the base mask).
LandingMeasure measure_edge(const TokenizedPair& pair, const std::shared_ptr<kv::Engine>& engine,
                            const std::shared_ptr<kv::KvArena>& arena,
                            const LandingOptions& options, const std::string& from,
                            const std::string& to, double full);

// Stored landing rows grouped by pair, in pair order.
std::vector<std::vector<LandingMeasure>> landing_measures_by_pair(
    const std::vector<store::LandingRow>& rows);

}  // namespace eventkv::probe
