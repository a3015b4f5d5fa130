#include "report/report_charts.h"

#include <algorithm>

#include "probe/condition_names.h"
#include "report/charts.h"
#include "report/format.h"
#include "report/svg.h"

namespace eventkv::report {

namespace {

using analysis::CellGroup;
using analysis::find_condition;

constexpr std::string_view kRecoveryAxis = "recovery: share of pairs donor-aligned";

std::string invalid_alert(const std::vector<const CellResult*>& cells) {
  const auto invalid = std::count_if(cells.begin(), cells.end(),
                                     [](const CellResult* cell) { return !cell->valid; });
  if (invalid == 0) return "";
  if (cells.size() == 1)
    return "INVALID: sparse-local moved pairs — a bug in the harness, not a finding";
  return "INVALID: sparse-local moved pairs in " + std::to_string(invalid) + " of " +
         std::to_string(cells.size()) + " cells (marked) — a bug in the harness, not a finding";
}

}  // namespace

std::string condition_chart(const CellResult& cell) {
  if (cell.conditions.empty()) return "";
  BarChart chart;
  chart.heading = {cell.model + " · " + cell_label(cell),
                   {"recovery [95% CI] and aligned:anti per condition"},
                   invalid_alert({&cell})};
  chart.axis_label = std::string(kRecoveryAxis) + " (95% Wilson interval)";
  for (const ConditionResult& result : cell.conditions) {
    chart.bars.push_back({result.condition, result.recovery,
                          std::string(condition_colour(result.condition)),
                          format_counts(result.aligned, result.anti),
                          !cell.valid && result.condition == probe::kSparseLocal});
  }
  return horizontal_bar_chart(chart);
}

std::string ranking_chart(const CellGroup& group) {
  BarChart chart;
  chart.heading = {"Construction ranking · " + group.model + " · " + group.scenario,
                   {"sparse-global recovery per carrier construction, best first; aligned:anti "
                    "after each value"},
                   invalid_alert(group.cells)};
  chart.axis_label = std::string(kRecoveryAxis) + " under sparse-global";
  int64_t no_carrier_aligned = 0;
  int64_t no_carrier_pairs = 0;
  for (const CellResult* cell : group.cells) {
    if (const ConditionResult* result = find_condition(*cell, probe::kSparseGlobal)) {
      chart.bars.push_back({cell->construction, result->recovery,
                            std::string(condition_colour(probe::kSparseGlobal)),
                            format_counts(result->aligned, result->anti), !cell->valid});
    }
    if (const ConditionResult* result = find_condition(*cell, probe::kNoCarrier)) {
      no_carrier_aligned += result->aligned;
      no_carrier_pairs += result->pairs;
    }
  }
  if (chart.bars.empty()) return "";
  if (no_carrier_pairs > 0) {
    chart.reference = ReferenceLine{
        static_cast<double>(no_carrier_aligned) / static_cast<double>(no_carrier_pairs),
        "no-carrier, all constructions pooled:"};
  }
  return horizontal_bar_chart(chart);
}

std::string curve_chart(const CellGroup& group) {
  const bool distance = group.cells.front()->suite == analysis::kDistance;
  SeriesChart chart;
  chart.heading = {
      (distance ? "Distance · " : "Payload types · ") + group.model + " · " + group.scenario,
      {"recovery per condition with 95% Wilson intervals"},
      invalid_alert(group.cells)};
  chart.x_label = distance ? "filler events between carrier and query" : "payload type";
  chart.axis_label = "recovery";
  for (const CellResult* cell : group.cells) chart.categories.push_back(setting_value(*cell));
  for (const std::string& condition : condition_names(group.cells)) {
    Series& series = chart.series.emplace_back();
    series.name = condition;
    series.colour = condition_colour(condition);
    for (const CellResult* cell : group.cells) {
      const ConditionResult* result = find_condition(*cell, condition);
      series.points.push_back(result != nullptr ? std::optional<Estimate>(result->recovery)
                                                : std::nullopt);
    }
  }
  return chart.series.empty() ? "" : line_chart(chart);
}

std::string comparison_chart(const ModelComparison& comparison) {
  if (comparison.categories.empty()) return "";
  std::vector<const CellResult*> cells;
  for (const auto& row : comparison.results) {
    for (const ComparedResult& compared : row) {
      if (compared.cell != nullptr) cells.push_back(compared.cell);
    }
  }
  std::sort(cells.begin(), cells.end());
  cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
  const bool conditions = comparison.category_kind == "condition";
  SeriesChart chart;
  chart.heading = {"Models compared · " + comparison.scenario,
                   {conditions ? "recovery per condition, one bar per model"
                               : "sparse-global recovery per " + comparison.category_kind +
                                     ", one bar per model"},
                   invalid_alert(cells)};
  chart.x_label = comparison.category_kind;
  chart.axis_label = conditions ? "recovery" : "sparse-global recovery";
  chart.categories = comparison.categories;
  for (size_t m = 0; m < comparison.models.size(); ++m) {
    Series& series = chart.series.emplace_back();
    series.name = comparison.models[m];
    series.colour = series_colour(m);
    for (const auto& row : comparison.results) {
      const ConditionResult* result = row[m].result;
      series.points.push_back(result != nullptr ? std::optional<Estimate>(result->recovery)
                                                : std::nullopt);
    }
  }
  return grouped_bar_chart(chart);
}

std::string layer_chart(const LandingMap& map) {
  if (map.layers.empty()) return "";
  SeriesChart chart;
  chart.heading = {"Layer profile · " + map.model + " · " + map.scenario,
                   {"roots' rows transplanted in these layers only: share of pairs moved toward A"},
                   ""};
  chart.x_label = "layers (single layers, then cumulative ranges)";
  chart.axis_label = "shift toward A";
  chart.fit_range = true;
  Series& series = chart.series.emplace_back();
  series.colour = kBlue;
  for (const LayerEffect& layer : map.layers) {
    chart.categories.push_back(layer.label);
    series.points.emplace_back(layer.effect);
  }
  return grouped_bar_chart(chart);
}

}  // namespace eventkv::report
