#include "analysis/experiments.h"

#include <algorithm>
#include <tuple>

#include "probe/condition_names.h"

namespace eventkv::analysis {

namespace {

using report::CellResult;
using report::ReportData;

constexpr std::array<std::string_view, 6> kPayloadOrder = {"binary",    "categorical", "integer-1",
                                                           "integer-2", "integer-3",   "name"};

size_t payload_rank(std::string_view payload_type) {
  return static_cast<size_t>(std::find(kPayloadOrder.begin(), kPayloadOrder.end(), payload_type) -
                             kPayloadOrder.begin());
}

double sparse_global_recovery(const CellResult& cell) {
  const report::ConditionResult* result = find_condition(cell, probe::kSparseGlobal);
  return result != nullptr ? result->recovery.value : -1.0;
}

// The order of a sweep group's cells: constructions are ranked.
bool shown_before(const CellResult& a, const CellResult& b) {
  if (a.suite != kConstructionSweep) return setting_before(a, b);
  return std::tuple(-sparse_global_recovery(a), a.construction) <
         std::tuple(-sparse_global_recovery(b), b.construction);
}

template <typename Keep>
std::vector<CellGroup> group_by_model_and_scenario(const ReportData& data, Keep keep) {
  std::vector<CellGroup> groups;
  for (const CellResult& cell : data.cells) {
    if (!keep(cell)) continue;
    auto group = std::find_if(groups.begin(), groups.end(), [&](const CellGroup& g) {
      return g.model == cell.model && g.scenario == group_scenario(cell);
    });
    if (group == groups.end()) {
      groups.push_back(CellGroup{cell.model, group_scenario(cell), group_finding(cell), {}});
      group = groups.end() - 1;
    }
    group->cells.push_back(&cell);
  }
  return groups;
}

}  // namespace

bool is_sweep(std::string_view suite) {
  return std::find(kSweepSuites.begin(), kSweepSuites.end(), suite) != kSweepSuites.end();
}

const report::ConditionResult* find_condition(const CellResult& cell, std::string_view condition) {
  for (const report::ConditionResult& result : cell.conditions) {
    if (result.condition == condition) return &result;
  }
  return nullptr;
}

std::string group_scenario(const CellResult& cell) {
  return cell.suite == kPayloadTypes ? std::string(kPayloadTypes) : cell.scenario;
}

std::string group_finding(const CellResult& cell) {
  return cell.suite == kPayloadTypes
             ? "What kinds of value land (paper: binary states land, 3-digit numbers do not)."
             : cell.finding;
}

bool setting_before(const CellResult& a, const CellResult& b) {
  if (a.suite == kPayloadTypes) {
    return std::tuple(payload_rank(a.payload_type), a.payload_type) <
           std::tuple(payload_rank(b.payload_type), b.payload_type);
  }
  if (a.suite == kDistance) return a.distance < b.distance;
  return a.construction < b.construction;
}

std::vector<CellGroup> single_cell_groups(const ReportData& data) {
  return group_by_model_and_scenario(data,
                                     [](const CellResult& cell) { return !is_sweep(cell.suite); });
}

std::vector<CellGroup> sweep_groups(const ReportData& data, std::string_view suite) {
  std::vector<CellGroup> groups = group_by_model_and_scenario(
      data, [&](const CellResult& cell) { return cell.suite == suite; });
  for (CellGroup& group : groups) {
    std::stable_sort(group.cells.begin(), group.cells.end(),
                     [](const CellResult* a, const CellResult* b) { return shown_before(*a, *b); });
  }
  return groups;
}

std::vector<CellGroup> experiments(const ReportData& data) {
  std::vector<CellGroup> groups = single_cell_groups(data);
  for (const std::string_view suite : kSweepSuites) {
    const std::vector<CellGroup> sweeps = sweep_groups(data, suite);
    groups.insert(groups.end(), sweeps.begin(), sweeps.end());
  }
  return groups;
}

}  // namespace eventkv::analysis
