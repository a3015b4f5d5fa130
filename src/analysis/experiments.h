// Experiments: the cells of one model and one scenario, grouped and ordered.
// The report shows its sections in these groups and the findings (findings.h)
// judge them, so a verdict and the cells shown beside it are the same cells.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "report/report_data.h"

namespace eventkv::analysis {

// Suites that sweep one setting of a scenario; every other suite is shown cell by cell.
inline constexpr std::string_view kConstructionSweep = "construction-sweep";
inline constexpr std::string_view kPayloadTypes = "payload-types";
inline constexpr std::string_view kDistance = "distance";
inline constexpr std::array<std::string_view, 3> kSweepSuites = {kConstructionSweep, kPayloadTypes,
                                                                 kDistance};

bool is_sweep(std::string_view suite);

// The cell's result for a condition, or nullptr.
const report::ConditionResult* find_condition(const report::CellResult& cell,
                                              std::string_view condition);

// The scenario of the cell's experiment: the payload types are one scenario
// file each but one curve, grouped under the suite's name.
std::string group_scenario(const report::CellResult& cell);

// The paper finding the cell's experiment tests.
std::string group_finding(const report::CellResult& cell);

// The order of a sweep's settings on an axis; constructions by name.
bool setting_before(const report::CellResult& a, const report::CellResult& b);

// Cells of one model and one scenario, in the order their section shows them.
struct CellGroup {
  std::string model;
  std::string scenario;
  std::string finding;
  std::vector<const report::CellResult*> cells;
};

// Cells of the suites that sweep nothing, grouped by (model, scenario) in the
// order they first appear.
std::vector<CellGroup> single_cell_groups(const report::ReportData& data);

// Cells of a sweep suite grouped by (model, scenario): constructions ranked by
// sparse-global recovery (best first), payload types in SPEC order, distances
// ascending.
std::vector<CellGroup> sweep_groups(const report::ReportData& data, std::string_view suite);

// Every experiment: the single-cell groups, then each sweep suite's.
std::vector<CellGroup> experiments(const report::ReportData& data);

}  // namespace eventkv::analysis
