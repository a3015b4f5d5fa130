// The charts of each report section: each function describes one section's
// results as a chart (charts.h) and draws it, or returns "" when there is
// nothing to draw.
#pragma once

#include <string>

#include "analysis/experiments.h"
#include "report/report_data.h"
#include "report/sections.h"

namespace eventkv::report {

// Recovery of each condition of one cell, as horizontal bars.
std::string condition_chart(const CellResult& cell);

// A construction sweep's sparse-global recovery, best first, with the pooled
// no-carrier recovery as a reference line.
std::string ranking_chart(const analysis::CellGroup& group);

// A payload or distance sweep: recovery of each condition over the settings.
std::string curve_chart(const analysis::CellGroup& group);

// The same scenario on several models, one bar per model.
std::string comparison_chart(const ModelComparison& comparison);

// Transplant shift per layer and layer range.
std::string layer_chart(const LandingMap& map);

}  // namespace eventkv::report
