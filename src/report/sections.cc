#include "report/sections.h"

#include <algorithm>
#include <tuple>

#include "analysis/experiments.h"
#include "probe/condition_names.h"

namespace eventkv::report {

namespace {

using analysis::find_condition;
using analysis::group_finding;
using analysis::group_scenario;
using analysis::kConstructionSweep;
using analysis::kDistance;
using analysis::kPayloadTypes;
using analysis::kSweepSuites;
using analysis::setting_before;

// The first cell of each model among `cells`, models in first-seen order.
std::vector<const CellResult*> first_cell_per_model(const std::vector<const CellResult*>& cells) {
  std::vector<const CellResult*> firsts;
  for (const CellResult* cell : cells) {
    const bool seen = std::any_of(firsts.begin(), firsts.end(), [&](const CellResult* first) {
      return first->model == cell->model;
    });
    if (!seen) firsts.push_back(cell);
  }
  return firsts;
}

ModelComparison start_comparison(const std::vector<const CellResult*>& per_model,
                                 std::string scenario, std::string category_kind) {
  ModelComparison comparison;
  comparison.scenario = std::move(scenario);
  comparison.finding = group_finding(*per_model.front());
  comparison.category_kind = std::move(category_kind);
  for (const CellResult* cell : per_model) comparison.models.push_back(cell->model);
  return comparison;
}

// A single cell's conditions side by side on every model that ran it.
ModelComparison compare_conditions(const std::vector<const CellResult*>& per_model) {
  ModelComparison comparison =
      start_comparison(per_model, cell_label(*per_model.front()), "condition");
  comparison.categories = condition_names(per_model);
  for (const std::string& condition : comparison.categories) {
    std::vector<ComparedResult>& row = comparison.results.emplace_back();
    for (const CellResult* cell : per_model)
      row.push_back({cell, find_condition(*cell, condition)});
  }
  return comparison;
}

// A sweep's settings side by side on every model, on sparse-global recovery.
ModelComparison compare_settings(std::vector<const CellResult*> cells,
                                 std::string_view category_kind) {
  const std::vector<const CellResult*> per_model = first_cell_per_model(cells);
  ModelComparison comparison =
      start_comparison(per_model, group_scenario(*per_model.front()), std::string(category_kind));
  std::stable_sort(cells.begin(), cells.end(),
                   [](const CellResult* a, const CellResult* b) { return setting_before(*a, *b); });
  for (const CellResult* cell : cells) {
    const std::string setting = setting_label(*cell);
    if (std::find(comparison.categories.begin(), comparison.categories.end(), setting) !=
        comparison.categories.end()) {
      continue;
    }
    comparison.categories.push_back(setting);
    std::vector<ComparedResult>& row = comparison.results.emplace_back();
    for (const std::string& model : comparison.models) {
      const auto match = std::find_if(cells.begin(), cells.end(), [&](const CellResult* c) {
        return c->model == model && setting_label(*c) == setting;
      });
      if (match == cells.end()) {
        row.push_back({});
      } else {
        row.push_back({*match, find_condition(**match, probe::kSparseGlobal)});
      }
    }
  }
  return comparison;
}

// Cells grouped by a key, groups in first-seen order.
template <typename Key>
std::vector<std::vector<const CellResult*>> group_cells(const std::vector<const CellResult*>& cells,
                                                        Key key) {
  std::vector<std::vector<const CellResult*>> groups;
  for (const CellResult* cell : cells) {
    auto group = std::find_if(
        groups.begin(), groups.end(),
        [&](const std::vector<const CellResult*>& g) { return key(*g.front()) == key(*cell); });
    if (group == groups.end()) {
      groups.push_back({cell});
    } else {
      group->push_back(cell);
    }
  }
  return groups;
}

}  // namespace

std::vector<std::string> condition_names(const std::vector<const CellResult*>& cells) {
  std::vector<std::string> known;
  std::vector<std::string> others;
  for (const std::string_view condition : probe::kConditions) {
    const bool present = std::any_of(cells.begin(), cells.end(), [&](const CellResult* cell) {
      return find_condition(*cell, condition);
    });
    if (present) known.emplace_back(condition);
  }
  for (const CellResult* cell : cells) {
    for (const ConditionResult& result : cell->conditions) {
      const bool listed = std::find(probe::kConditions.begin(), probe::kConditions.end(),
                                    result.condition) != probe::kConditions.end() ||
                          std::find(others.begin(), others.end(), result.condition) != others.end();
      if (!listed) others.push_back(result.condition);
    }
  }
  known.insert(known.end(), others.begin(), others.end());
  return known;
}

std::string setting_label(const CellResult& cell) {
  std::string distance = cell.distance >= 0 ? "distance " + std::to_string(cell.distance) : "";
  if (cell.suite == kConstructionSweep) return cell.construction;
  if (cell.suite == kPayloadTypes) return cell.payload_type;
  if (cell.suite == kDistance) return distance;
  std::string label;
  const std::array<const std::string*, 3> parts = {&cell.construction, &cell.payload_type,
                                                   &distance};
  for (const std::string* part : parts) {
    if (part->empty()) continue;
    label += (label.empty() ? "" : ", ") + *part;
  }
  return label;
}

std::string setting_value(const CellResult& cell) {
  return cell.suite == kDistance ? std::to_string(cell.distance) : setting_label(cell);
}

std::string cell_label(const CellResult& cell) {
  const std::string setting = setting_label(cell);
  return setting.empty() ? cell.scenario : cell.scenario + " (" + setting + ")";
}

std::vector<ModelComparison> model_comparisons(const ReportData& data) {
  std::vector<const CellResult*> single;
  for (const CellResult& cell : data.cells) {
    if (!analysis::is_sweep(cell.suite)) single.push_back(&cell);
  }
  std::vector<ModelComparison> comparisons;
  const auto single_key = [](const CellResult& cell) {
    return std::tuple(cell.suite, cell_label(cell));
  };
  for (const auto& cells : group_cells(single, single_key)) {
    const std::vector<const CellResult*> per_model = first_cell_per_model(cells);
    if (per_model.size() >= 2) comparisons.push_back(compare_conditions(per_model));
  }
  constexpr std::array<std::string_view, 3> kSweepKinds = {"construction", "payload type",
                                                           "distance"};
  for (size_t i = 0; i < kSweepSuites.size(); ++i) {
    std::vector<const CellResult*> swept;
    for (const CellResult& cell : data.cells) {
      if (cell.suite == kSweepSuites[i]) swept.push_back(&cell);
    }
    const auto scenario_key = [](const CellResult& cell) { return group_scenario(cell); };
    for (const auto& cells : group_cells(swept, scenario_key)) {
      if (first_cell_per_model(cells).size() >= 2)
        comparisons.push_back(compare_settings(cells, kSweepKinds[i]));
    }
  }
  return comparisons;
}

std::vector<const CellResult*> invalid_cells(const ReportData& data) {
  std::vector<const CellResult*> invalid;
  for (const CellResult& cell : data.cells) {
    if (!cell.valid) invalid.push_back(&cell);
  }
  return invalid;
}

}  // namespace eventkv::report
