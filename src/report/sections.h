// Which cells of a report go in which section, grouped and ordered (the
// experiments themselves are analysis/experiments.h's). Both renderers use
// these, so the HTML page and the markdown document always show the same
// results in the same order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/report_data.h"

namespace eventkv::report {

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
