#include "analysis/landing_summary.h"

#include <algorithm>

#include "analysis/stats.h"
#include "util/error.h"

namespace eventkv::analysis {
namespace {

using probe::LandingMeasure;

constexpr double kRuleShare = 0.25;

// One target's measures and the full margins of the same pairs.
struct Series {
  std::string target;
  std::vector<double> values;
  std::vector<double> fulls;
};

// Series of every target of `kind`, in first-seen order.
std::vector<Series> series_of(const std::vector<std::vector<LandingMeasure>>& pairs,
                              const std::string& kind) {
  std::vector<Series> out;
  for (const auto& measures : pairs) {
    const auto full = std::find_if(measures.begin(), measures.end(),
                                   [](const auto& m) { return m.kind == "full"; });
    if (full == measures.end()) fail("landing: a pair's measures lack its full margin");
    for (const LandingMeasure& m : measures) {
      if (m.kind != kind) continue;
      auto it = std::find_if(out.begin(), out.end(),
                             [&](const Series& s) { return s.target == m.target; });
      if (it == out.end()) it = out.insert(out.end(), Series{m.target, {}, {}});
      it->values.push_back(m.value);
      it->fulls.push_back(full->value);
    }
  }
  return out;
}

// The target's share of the pairs' full margin, sum(values) / sum(fulls),
// with a bootstrap interval over the pairs.
report::Estimate share(const Series& s, uint64_t seed) {
  double top = 0.0;
  double bottom = 0.0;
  for (size_t i = 0; i < s.values.size(); ++i) {
    top += s.values[i];
    bottom += s.fulls[i];
  }
  const Interval interval = bootstrap_ratio_interval(s.values, s.fulls, seed);
  return {bottom == 0.0 ? 0.0 : top / bottom, interval.low, interval.high};
}

double total_full(const std::vector<std::vector<LandingMeasure>>& pairs) {
  double total = 0.0;
  for (const auto& measures : pairs) {
    for (const LandingMeasure& m : measures) total += m.kind == "full" ? m.value : 0.0;
  }
  return total;
}

bool passes(const report::Estimate& effect, double full) {
  return full > 0.0 && effect.low > 0.0 && effect.value >= kRuleShare;
}

int64_t count_outcome(const std::vector<std::vector<LandingMeasure>>& pairs,
                      const std::string& kind, const std::string& target,
                      const std::string& outcome) {
  int64_t n = 0;
  for (const auto& measures : pairs) {
    for (const LandingMeasure& m : measures)
      n += m.kind == kind && m.target == target && m.outcome == outcome ? 1 : 0;
  }
  return n;
}

}  // namespace

std::vector<std::string> passing_targets(const std::vector<std::vector<LandingMeasure>>& pairs,
                                         const std::string& kind, uint64_t seed) {
  const double full = total_full(pairs);
  std::vector<std::string> out;
  for (const Series& s : series_of(pairs, kind)) {
    if (passes(share(s, seed), full)) out.push_back(s.target);
  }
  return out;
}

report::LandingMap summarize_landing(const std::string& model, const std::string& scenario,
                                     const std::vector<LandingEventInfo>& events,
                                     const std::vector<std::vector<LandingMeasure>>& pairs,
                                     uint64_t seed) {
  report::LandingMap map;
  map.model = model;
  map.scenario = scenario;
  map.pairs = static_cast<int64_t>(pairs.size());
  const double full = total_full(pairs);
  std::vector<double> fulls;
  for (const Series& s : series_of(pairs, "full")) fulls = s.values;
  const Interval full_interval = bootstrap_mean_interval(fulls, seed);
  map.full_margin = {mean(fulls), full_interval.low, full_interval.high};
  const std::vector<Series> shifts = series_of(pairs, "event");
  std::string strongest;
  double strongest_share = 0.0;
  for (const LandingEventInfo& info : events) {
    report::LandingEvent event{info.id, info.role, info.is_source, false, {}, 0, 0};
    const auto it = std::find_if(shifts.begin(), shifts.end(),
                                 [&](const Series& s) { return s.target == info.id; });
    if (it != shifts.end()) {
      event.shift = share(*it, seed);
      event.is_root = passes(event.shift, full);
      event.aligned = count_outcome(pairs, "event", info.id, "aligned");
      event.anti = count_outcome(pairs, "event", info.id, "anti");
      if (event.is_root && event.shift.value > strongest_share) {
        strongest = info.id;
        strongest_share = event.shift.value;
      }
    }
    map.events.push_back(event);
  }
  for (const Series& s : series_of(pairs, "edge")) {
    const size_t arrow = s.target.find("->");
    const report::Estimate effect = share(s, seed);
    map.edges.push_back(
        {s.target.substr(0, arrow), s.target.substr(arrow + 2), passes(effect, full), effect});
  }
  if (strongest.empty()) return map;
  map.heat_event = strongest;
  const std::string prefix = strongest + ":";
  for (const Series& s : series_of(pairs, "layer")) {
    if (s.target.rfind(prefix, 0) == 0)
      map.layers.push_back({s.target.substr(prefix.size()), share(s, seed)});
  }
  const auto info =
      std::find_if(events.begin(), events.end(), [&](const auto& e) { return e.id == strongest; });
  std::vector<double> per_token(info->pieces.size(), 0.0);
  for (const Series& s : series_of(pairs, "token")) {
    if (s.target.rfind(prefix, 0) != 0) continue;
    const std::string range = s.target.substr(prefix.size());
    const size_t dash = range.find('-');
    const size_t begin = std::stoul(range.substr(0, dash));
    const size_t end =
        std::min(per_token.size(), static_cast<size_t>(std::stoul(range.substr(dash + 1))));
    for (size_t t = begin; t < end; ++t) per_token[t] = share(s, seed).value;
  }
  for (size_t t = 0; t < per_token.size(); ++t)
    map.tokens.push_back({info->pieces[t], per_token[t]});
  return map;
}

}  // namespace eventkv::analysis
