// Which cells of a report go in which section, grouped and ordered. Both
// renderers use these, so the HTML page and the markdown document always show
// the same results in the same order.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "report/report_data.h"

namespace eventkv::report {

// Suites that sweep one setting of a scenario; every other suite is shown cell by cell.
inline constexpr std::string_view kConstructionSweep = "construction-sweep";
inline constexpr std::string_view kPayloadTypes = "payload-types";
inline constexpr std::string_view kDistance = "distance";
inline constexpr std::array<std::string_view, 3> kSweepSuites = {kConstructionSweep, kPayloadTypes,
                                                                 kDistance};

// The cell's result for a condition, or nullptr.
const ConditionResult* find_condition(const CellResult& cell, std::string_view condition);

// The conditions these cells report: the five in SPEC order, then any other
// in first-seen order.
std::vector<std::string> condition_names(const std::vector<const CellResult*>& cells);

// The setting a cell varies, as text: its construction, payload type or
// "distance N"; for a sweep suite only the swept setting. "" when none.
std::string setting_label(const CellResult& cell);

// The swept setting alone, for an axis or a table column: distances as bare numbers.
std::string setting_value(const CellResult& cell);

// "scenario (setting)" or "scenario".
std::string cell_label(const CellResult& cell);

// Cells of one model and one scenario, in the order their section shows them.
struct CellGroup {
  std::string model;
  std::string scenario;
  std::string finding;
  std::vector<const CellResult*> cells;
};

// Cells of the suites that sweep nothing, grouped by (model, scenario) in the
// order they first appear.
std::vector<CellGroup> single_cell_groups(const ReportData& data);

// Cells of a sweep suite grouped by (model, scenario): constructions ranked by
// sparse-global recovery (best first), payload types in SPEC order, distances
// ascending.
std::vector<CellGroup> sweep_groups(const ReportData& data, std::string_view suite);

// One model's result in a comparison; both null where the model has no such cell.
struct ComparedResult {
  const CellResult* cell = nullptr;
  const ConditionResult* result = nullptr;
};

// The same scenario on two or more models. For a single cell the categories
// are its conditions; for a sweep they are the settings, compared on
// sparse-global recovery.
struct ModelComparison {
  std::string scenario;  // with its setting for a single cell
  std::string finding;
  std::string category_kind;  // "condition", "construction", "payload type" or "distance"
  std::vector<std::string> models;
  std::vector<std::string> categories;
  std::vector<std::vector<ComparedResult>> results;  // [category][model]
};

std::vector<ModelComparison> model_comparisons(const ReportData& data);

// Cells whose sparse-local control moved a pair.
std::vector<const CellResult*> invalid_cells(const ReportData& data);

}  // namespace eventkv::report
