#include "probe/conditions.h"

#include <algorithm>
#include <optional>

#include "kv/event_batch.h"
#include "kv/event_kv.h"
#include "probe/outcome.h"
#include "util/error.h"
#include "util/stopwatch.h"

namespace eventkv::probe {
namespace {

using kv::EventKV;

// Ids of the retained events after the source.
std::vector<std::string> events_after_source(const EventKV& history, int64_t source_event) {
  std::vector<std::string> later;
  for (size_t e = static_cast<size_t>(source_event) + 1; e < history.events().size(); ++e) {
    if (history.events()[e].retained) later.push_back(history.events()[e].id);
  }
  return later;
}

}  // namespace

std::pair<EventKV, EventKV> compute_sides(const TokenizedPair& pair,
                                          const std::shared_ptr<kv::Engine>& engine,
                                          const std::shared_ptr<kv::KvArena>& arena,
                                          const kv::EdgeMask& mask) {
  const auto source = static_cast<std::ptrdiff_t>(pair.source_event);
  EventKV prefix(engine, arena);
  prefix.append(std::vector<kv::EventTokens>(pair.events_a.begin(), pair.events_a.begin() + source),
                mask);
  EventKV a = prefix.fork();
  EventKV b = prefix.fork();
  kv::EventBatch batch(*engine, *arena);
  batch.append(a, std::span(pair.events_a).subspan(static_cast<size_t>(source)), mask);
  batch.append(b, std::span(pair.events_b).subspan(static_cast<size_t>(source)), mask);
  batch.run();
  return {std::move(a), std::move(b)};
}

std::vector<std::vector<kv::CandidateScore>> score_all(std::span<EventKV* const> histories,
                                                       const events::QueryTokens& query) {
  if (histories.empty()) return {};
  kv::EventBatch batch(histories[0]->engine(), histories[0]->arena());
  for (EventKV* history : histories) batch.score(*history, query.prompt, query.candidates);
  batch.run();
  std::vector<std::vector<kv::CandidateScore>> scores;
  for (size_t h = 0; h < histories.size(); ++h) scores.push_back(batch.scores(h));
  return scores;
}

int predicted(const SideScores& side) {
  return answer_of(side.log_probs).candidate;
}

namespace {

// The rows a pair's conditions are served from, computed once: both sides
// with the source visible, the sparse-global sides (source evicted) and the
// sparse-local sides (later events recomputed without it). When the sides
// differ only in the source, their sparse-local rows are identical by
// construction and are computed (and scored) once, for A: local_b is empty.
struct ComputedSides {
  EventKV visible_a, visible_b, global_a, global_b, local_a;
  std::optional<EventKV> local_b;
};

ComputedSides compute_conditions(const TokenizedPair& pair,
                                 const std::shared_ptr<kv::Engine>& engine,
                                 const std::shared_ptr<kv::KvArena>& arena) {
  auto [a, b] = compute_sides(pair, engine, arena);
  EventKV visible_a = a.fork();
  EventKV visible_b = b.fork();
  const std::vector<std::string> source = {kSourceId};
  a.evict(source);
  b.evict(source);
  EventKV local_a = a.fork();
  std::optional<EventKV> local_b;
  if (event_differing_outside_source(pair) >= 0) local_b = b.fork();
  const std::vector<std::string> later = events_after_source(local_a, pair.source_event);
  if (!later.empty()) {
    kv::EventBatch batch(*engine, *arena);
    batch.recompute(local_a, later, {}, false);
    if (local_b) batch.recompute(*local_b, later, {}, false);
    batch.run();
  }
  return {std::move(visible_a), std::move(visible_b), std::move(a),
          std::move(b),         std::move(local_a),   std::move(local_b)};
}

// Serves `pair` from the first n_events events of `sides` (all of them, or
// a longer pair's whose first events are this pair's) and scores the query
// in one forward pass over the ten caches.
PairScores serve_conditions(const TokenizedPair& pair, const ComputedSides& sides,
                            ConditionTimes& t) {
  const auto n_events = static_cast<int64_t>(pair.events_a.size());
  EventKV visible_a = sides.visible_a.fork(n_events);
  EventKV visible_b = sides.visible_b.fork(n_events);
  EventKV a = sides.global_a.fork(n_events);
  EventKV b = sides.global_b.fork(n_events);
  EventKV record_a = a.fork();
  EventKV record_b = b.fork();
  Stopwatch prefill(t.prefill);
  kv::EventBatch records(a.engine(), a.arena());
  records.append(record_a, {&pair.record_a, 1});
  records.append(record_b, {&pair.record_b, 1});
  records.run();
  prefill.stop();
  EventKV local_a = sides.local_a.fork(n_events);
  std::optional<EventKV> local_b;
  if (sides.local_b) local_b = sides.local_b->fork(n_events);
  EventKV no_carrier_a = a.fork();
  EventKV no_carrier_b = b.fork();
  no_carrier_a.evict(pair.carriers);
  no_carrier_b.evict(pair.carriers);
  // In kConditions order; b null where B's rows are A's (sparse-local from
  // a shared recompute; no-carrier when no retained row after the source is
  // left, which holds only the shared rows before it): scored once.
  struct Served {
    EventKV* a;
    EventKV* b;
  };
  const bool no_carrier_shared = events_after_source(no_carrier_a, pair.source_event).empty();
  const Served served[] = {{&visible_a, &visible_b},
                           {&a, &b},
                           {&record_a, &record_b},
                           {&local_a, local_b ? &*local_b : nullptr},
                           {&no_carrier_a, no_carrier_shared ? nullptr : &no_carrier_b}};
  std::vector<EventKV*> caches;
  for (const Served& s : served) {
    caches.push_back(s.a);
    if (s.b != nullptr) caches.push_back(s.b);
  }
  Stopwatch scoring(t.scoring);
  const std::vector<std::vector<kv::CandidateScore>> scores = score_all(caches, pair.query);
  scoring.stop();
  const auto log_probs = [](const std::vector<kv::CandidateScore>& candidates) {
    SideScores side;
    for (const kv::CandidateScore& s : candidates) side.log_probs.push_back(s.log_prob);
    return side;
  };
  PairScores result;
  size_t next = 0;
  for (size_t c = 0; c < kConditions.size(); ++c) {
    ConditionScores condition{kConditions[c], log_probs(scores[next++]), {}};
    condition.b = served[c].b != nullptr ? log_probs(scores[next++]) : condition.a;
    result.conditions.push_back(std::move(condition));
  }
  result.local_identical = result.conditions[3].a.log_probs == result.conditions[3].b.log_probs;
  return result;
}

bool same_events(const std::vector<kv::EventTokens>& shorter,
                 const std::vector<kv::EventTokens>& longer) {
  return shorter.size() <= longer.size() &&
         std::equal(shorter.begin(), shorter.end(), longer.begin(),
                    [](const kv::EventTokens& x, const kv::EventTokens& y) {
                      return x.id == y.id && x.tokens == y.tokens;
                    });
}

}  // namespace

bool is_leading_part(const TokenizedPair& shorter, const TokenizedPair& longer) {
  return shorter.source_event == longer.source_event && shorter.carriers == longer.carriers &&
         same_events(shorter.events_a, longer.events_a) &&
         same_events(shorter.events_b, longer.events_b);
}

PairScores run_conditions(const TokenizedPair& pair, const std::shared_ptr<kv::Engine>& engine,
                          const std::shared_ptr<kv::KvArena>& arena, ConditionTimes* times) {
  return run_conditions_nested({pair}, engine, arena, times).front();
}

std::vector<PairScores> run_conditions_nested(const std::vector<TokenizedPair>& pairs,
                                              const std::shared_ptr<kv::Engine>& engine,
                                              const std::shared_ptr<kv::KvArena>& arena,
                                              ConditionTimes* times) {
  ConditionTimes local_times;
  ConditionTimes& t = times != nullptr ? *times : local_times;
  Stopwatch total(t.total);
  const TokenizedPair& longest = pairs.back();
  for (const TokenizedPair& pair : pairs) {
    if (!is_leading_part(pair, longest))
      fail("run_conditions_nested: pair ", pair.texts.index, " is not a leading part of the last");
  }
  Stopwatch prefill(t.prefill);
  const ComputedSides sides = compute_conditions(longest, engine, arena);
  prefill.stop();
  std::vector<PairScores> scores;
  scores.reserve(pairs.size());
  for (const TokenizedPair& pair : pairs) scores.push_back(serve_conditions(pair, sides, t));
  return scores;
}

}  // namespace eventkv::probe
