#include "probe/conditions.h"

#include <algorithm>

#include "kv/event_kv.h"
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
  EventKV* sides[] = {&a, &b};
  const std::vector<std::vector<kv::EventTokens>> suffixes = {
      std::vector<kv::EventTokens>(pair.events_a.begin() + source, pair.events_a.end()),
      std::vector<kv::EventTokens>(pair.events_b.begin() + source, pair.events_b.end())};
  EventKV::append_batched(sides, suffixes, mask);
  return {std::move(a), std::move(b)};
}

int predicted(const SideScores& side) {
  return static_cast<int>(std::max_element(side.log_probs.begin(), side.log_probs.end()) -
                          side.log_probs.begin());
}

PairScores run_conditions(const TokenizedPair& pair, const std::shared_ptr<kv::Engine>& engine,
                          const std::shared_ptr<kv::KvArena>& arena, ConditionTimes* times) {
  ConditionTimes local_times;
  ConditionTimes& t = times != nullptr ? *times : local_times;
  Stopwatch total(t.total);
  Stopwatch prefill(t.prefill, false);
  // Each condition is a pair of forks of the computed sides (rows shared,
  // copied only where a condition rewrites them); all ten are scored in one
  // forward pass at the end.
  prefill.start();
  auto [a, b] = compute_sides(pair, engine, arena);
  prefill.stop();
  EventKV visible_a = a.fork();
  EventKV visible_b = b.fork();
  const std::vector<std::string> source = {kSourceId};
  a.evict(source);
  b.evict(source);
  EventKV record_a = a.fork();
  EventKV record_b = b.fork();
  EventKV* record_sides[] = {&record_a, &record_b};
  const std::vector<std::vector<kv::EventTokens>> records = {{pair.record_a}, {pair.record_b}};
  prefill.start();
  EventKV::append_batched(record_sides, records);
  prefill.stop();
  EventKV local_a = a.fork();
  EventKV local_b = b.fork();
  const std::vector<std::string> later = events_after_source(local_a, pair.source_event);
  EventKV* local_sides[] = {&local_a, &local_b};
  prefill.start();
  if (!later.empty()) EventKV::recompute_batched(local_sides, later, {}, false);
  prefill.stop();
  EventKV no_carrier_a = a.fork();
  EventKV no_carrier_b = b.fork();
  no_carrier_a.evict(pair.carriers);
  no_carrier_b.evict(pair.carriers);
  EventKV* served[] = {&visible_a, &visible_b,    &a,           &b, &record_a, &record_b, &local_a,
                       &local_b,   &no_carrier_a, &no_carrier_b};
  Stopwatch scoring(t.scoring);
  const auto scores = EventKV::score_batched(served, pair.query.prompt, pair.query.candidates);
  scoring.stop();
  PairScores result;
  for (size_t c = 0; c < kConditions.size(); ++c) {
    ConditionScores condition{kConditions[c], {}, {}};
    for (const kv::CandidateScore& s : scores[2 * c]) condition.a.log_probs.push_back(s.log_prob);
    for (const kv::CandidateScore& s : scores[2 * c + 1])
      condition.b.log_probs.push_back(s.log_prob);
    result.conditions.push_back(std::move(condition));
  }
  result.local_identical = result.conditions[3].a.log_probs == result.conditions[3].b.log_probs;
  return result;
}

}  // namespace eventkv::probe
