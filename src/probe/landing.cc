#include "probe/landing.h"

#include <algorithm>
#include <map>

#include "kv/event_kv.h"
#include "probe/conditions.h"
#include "probe/outcome.h"

namespace eventkv::probe {
namespace {

using kv::EventKV;

constexpr size_t kHistoriesPerBatch = 24;

struct Swap {
  std::string kind;
  std::string target;
  std::string event;
  int64_t layer_begin;
  int64_t layer_end;
  int32_t token_begin;
  int32_t token_end;
};

double margin(const std::vector<kv::CandidateScore>& scores, const TokenizedPair& pair) {
  return scores[static_cast<size_t>(pair.texts.value_a)].log_prob -
         scores[static_cast<size_t>(pair.texts.value_b)].log_prob;
}

Answer answer_to(const std::vector<kv::CandidateScore>& scores) {
  std::vector<double> log_probs;
  log_probs.reserve(scores.size());
  for (const kv::CandidateScore& score : scores) log_probs.push_back(score.log_prob);
  return answer_of(log_probs);
}

std::string outcome_of(const std::vector<kv::CandidateScore>& to_a,
                       const std::vector<kv::CandidateScore>& to_b, const TokenizedPair& pair) {
  return std::string(outcome_name(
      label(answer_to(to_a), answer_to(to_b), pair.texts.value_a, pair.texts.value_b)));
}

// Both sides with the source evicted.
std::pair<EventKV, EventKV> sparse_sides(const TokenizedPair& pair,
                                         const std::shared_ptr<kv::Engine>& engine,
                                         const std::shared_ptr<kv::KvArena>& arena,
                                         const kv::EdgeMask& mask) {
  auto sides = compute_sides(pair, engine, arena, mask);
  const std::vector<std::string> source = {kSourceId};
  sides.first.evict(source);
  sides.second.evict(source);
  return sides;
}

// Measures every swap: B with the rows from A, and A with the rows from B,
// scored in batches against the unswapped sides' margins.
std::vector<LandingMeasure> measure_swaps(const TokenizedPair& pair, EventKV& a, EventKV& b,
                                          double margin_a, double margin_b,
                                          const std::vector<Swap>& swaps) {
  std::vector<LandingMeasure> measures;
  for (size_t first = 0; first < swaps.size(); first += kHistoriesPerBatch / 2) {
    const size_t last = std::min(swaps.size(), first + kHistoriesPerBatch / 2);
    std::vector<EventKV> forks;
    for (size_t i = first; i < last; ++i) {
      const Swap& s = swaps[i];
      forks.push_back(b.fork());
      forks.back().transplant(a, s.event, s.layer_begin, s.layer_end, s.token_begin, s.token_end);
      forks.push_back(a.fork());
      forks.back().transplant(b, s.event, s.layer_begin, s.layer_end, s.token_begin, s.token_end);
    }
    std::vector<EventKV*> served;
    served.reserve(forks.size());
    for (EventKV& f : forks) served.push_back(&f);
    const auto scores = score_all(served, pair.query);
    for (size_t i = first; i < last; ++i) {
      const auto& b_with_a = scores[2 * (i - first)];
      const auto& a_with_b = scores[2 * (i - first) + 1];
      const double shift =
          ((margin(b_with_a, pair) - margin_b) + (margin_a - margin(a_with_b, pair))) / 2.0;
      measures.push_back(
          {swaps[i].kind, swaps[i].target, shift, outcome_of(b_with_a, a_with_b, pair)});
    }
  }
  return measures;
}

struct Baseline {
  double margin_a;
  double margin_b;
  LandingMeasure full;
};

Baseline baseline(const TokenizedPair& pair, EventKV& a, EventKV& b) {
  EventKV* sides[] = {&a, &b};
  const auto scores = score_all(sides, pair.query);
  const double ma = margin(scores[0], pair);
  const double mb = margin(scores[1], pair);
  return {ma, mb, {"full", "", ma - mb, outcome_of(scores[0], scores[1], pair)}};
}

std::vector<Swap> layer_swaps(const std::string& root, int64_t n_layer) {
  std::vector<Swap> swaps;
  for (int64_t il = 0; il < n_layer; ++il)
    swaps.push_back({"layer", root + ":L" + std::to_string(il), root, il, il + 1, 0, -1});
  for (const int64_t k : {n_layer / 4, n_layer / 2, 3 * n_layer / 4}) {
    if (k == 0) continue;
    swaps.push_back({"layer", root + ":first " + std::to_string(k), root, 0, k, 0, -1});
    swaps.push_back(
        {"layer", root + ":last " + std::to_string(k), root, n_layer - k, n_layer, 0, -1});
  }
  return swaps;
}

std::vector<Swap> token_swaps(const std::string& root, int32_t n_tokens, int window,
                              int64_t n_layer) {
  std::vector<Swap> swaps;
  for (int32_t t = 0; t < n_tokens; t += window) {
    const int32_t end = std::min(n_tokens, t + window);
    swaps.push_back({"token", root + ":" + std::to_string(t) + "-" + std::to_string(end), root, 0,
                     n_layer, t, end});
  }
  return swaps;
}

// Edges X -> Y with source <= Y < X <= the last root, Y the source or an
// event between it and X: the paths the value could take to a root.
std::vector<std::pair<std::string, std::string>> candidate_edges(
    const TokenizedPair& pair, const std::vector<std::string>& roots, int limit) {
  int64_t last_root = -1;
  for (size_t e = 0; e < pair.events_a.size(); ++e) {
    if (std::find(roots.begin(), roots.end(), pair.events_a[e].id) != roots.end())
      last_root = static_cast<int64_t>(e);
  }
  std::vector<std::pair<std::string, std::string>> edges;
  for (int64_t y = pair.source_event; y < last_root; ++y) {
    for (int64_t x = y + 1; x <= last_root; ++x) {
      edges.emplace_back(pair.events_a[static_cast<size_t>(x)].id,
                         pair.events_a[static_cast<size_t>(y)].id);
    }
  }
  if (static_cast<int>(edges.size()) > limit) edges.resize(static_cast<size_t>(limit));
  return edges;
}

}  // namespace

std::vector<LandingMeasure> measure_events(const TokenizedPair& pair,
                                           const std::shared_ptr<kv::Engine>& engine,
                                           const std::shared_ptr<kv::KvArena>& arena,
                                           const LandingOptions& options) {
  auto [a, b] = sparse_sides(pair, engine, arena, options.base_mask);
  const Baseline base = baseline(pair, a, b);
  std::vector<Swap> swaps;
  const int64_t n_layer = engine->model().config().n_layer;
  for (const kv::EventState& e : a.events()) {
    if (e.retained) swaps.push_back({"event", e.id, e.id, 0, n_layer, 0, -1});
  }
  std::vector<LandingMeasure> measures = {base.full};
  for (LandingMeasure& m : measure_swaps(pair, a, b, base.margin_a, base.margin_b, swaps))
    measures.push_back(std::move(m));
  return measures;
}

std::vector<LandingMeasure> measure_roots(const TokenizedPair& pair,
                                          const std::shared_ptr<kv::Engine>& engine,
                                          const std::shared_ptr<kv::KvArena>& arena,
                                          const LandingOptions& options,
                                          const std::vector<std::string>& roots) {
  if (roots.empty()) return {};
  const int64_t n_layer = engine->model().config().n_layer;
  auto [a, b] = sparse_sides(pair, engine, arena, options.base_mask);
  const Baseline base = baseline(pair, a, b);
  std::vector<Swap> swaps;
  for (const std::string& root : roots) {
    for (Swap& s : layer_swaps(root, n_layer)) swaps.push_back(std::move(s));
    const auto n_tokens = static_cast<int32_t>(a.event(root).tokens.size());
    for (Swap& s : token_swaps(root, n_tokens, options.token_window, n_layer))
      swaps.push_back(std::move(s));
  }
  std::vector<LandingMeasure> measures =
      measure_swaps(pair, a, b, base.margin_a, base.margin_b, swaps);
  for (const auto& [from, to] : candidate_edges(pair, roots, options.max_edges)) {
    measures.push_back(measure_edge(pair, engine, arena, options, from, to, base.full.value));
  }
  return measures;
}

LandingMeasure measure_edge(const TokenizedPair& pair, const std::shared_ptr<kv::Engine>& engine,
                            const std::shared_ptr<kv::KvArena>& arena,
                            const LandingOptions& options, const std::string& from,
                            const std::string& to, double full) {
  kv::EdgeMask mask = options.base_mask;
  mask.remove(from, to);
  auto [a, b] = sparse_sides(pair, engine, arena, mask);
  const Baseline cut = baseline(pair, a, b);
  return {"edge", from + "->" + to, full - cut.full.value, cut.full.outcome};
}

std::vector<std::vector<LandingMeasure>> landing_measures_by_pair(
    const std::vector<store::LandingRow>& rows) {
  std::map<int64_t, std::vector<LandingMeasure>> by_pair;
  for (const store::LandingRow& row : rows)
    by_pair[row.pair_index].push_back({row.kind, row.target, row.value, row.outcome});
  std::vector<std::vector<LandingMeasure>> out;
  out.reserve(by_pair.size());
  for (auto& [index, measures] : by_pair) out.push_back(std::move(measures));
  return out;
}

}  // namespace eventkv::probe
