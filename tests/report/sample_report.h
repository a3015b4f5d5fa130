// A hand-built ReportData with every section filled: two models, a carrier
// table with one invalid cell, a construction sweep on both models, payload
// and distance sweeps, a landing map and runs. The unit tests and the
// Chromium check render it.
#pragma once

#include <cstdint>
#include <string>

#include "report/report_data.h"

namespace eventkv::testing {

// One condition from its counts: recovery and sign test computed as the
// harness does; the margin is given.
report::ConditionResult sample_condition(const std::string& condition, int64_t pairs,
                                         int64_t aligned, int64_t anti, int64_t unmoved,
                                         double margin);

report::ReportData sample_report();

}  // namespace eventkv::testing
