// The landing map of stored landing measures (probe/landing.h measures them).
// Over many pairs each target is reported as its share of the full margin,
// sum(shift) / sum(full), with a 95% bootstrap interval over the pairs. The
// rule (tested in landing_test.cc): an event is a ROOT and an edge a
// REFERENCE EDGE when its share's interval lies above zero and the share is
// at least 25%, the pairs' summed full margin being positive. The probe
// applies the same rule while measuring, to pick the roots it looks into.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "probe/landing.h"
#include "report/report_data.h"

namespace eventkv::analysis {

// Targets of `kind` ("event" or "edge") that pass the rule, over the pairs.
std::vector<std::string> passing_targets(
    const std::vector<std::vector<probe::LandingMeasure>>& pairs, const std::string& kind,
    uint64_t seed);

struct LandingEventInfo {
  std::string id;
  std::string role;
  bool is_source = false;
  std::vector<std::string> pieces;  // the text of each of its tokens
};

report::LandingMap summarize_landing(const std::string& model, const std::string& scenario,
                                     const std::vector<LandingEventInfo>& events,
                                     const std::vector<std::vector<probe::LandingMeasure>>& pairs,
                                     uint64_t seed);

}  // namespace eventkv::analysis
