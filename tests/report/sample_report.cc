#include "sample_report.h"

#include <algorithm>
#include <vector>

#include "analysis/stats.h"
#include "probe/condition_names.h"

namespace eventkv::testing {

namespace {

using report::CellResult;
using report::Estimate;

constexpr int64_t kPairs = 200;
const std::string kSmol = "SmolLM2-135M-Instruct";
const std::string kQwen = "Qwen2.5-0.5B-Instruct";

// A cell whose five conditions have these aligned counts (anti and unmoved follow from them).
CellResult sample_cell(const std::string& model, const std::string& scenario,
                       const std::string& suite, const std::vector<int64_t>& aligned) {
  CellResult cell;
  cell.model = model;
  cell.scenario = scenario;
  cell.suite = suite;
  cell.finding = "a carrier that never states the value still carries it (the paper's 99:0)";
  cell.planned_pairs = kPairs;
  for (size_t i = 0; i < probe::kConditions.size(); ++i) {
    const int64_t anti = aligned[i] / 50;
    const bool control =
        probe::kConditions[i] == probe::kSparseLocal;  // a valid control moves no pair
    const int64_t other = control ? 0 : (kPairs - aligned[i] - anti) / 4;
    const int64_t unmoved = kPairs - aligned[i] - anti - other;
    report::ConditionResult result =
        sample_condition(std::string(probe::kConditions[i]), kPairs, aligned[i], anti, unmoved,
                         static_cast<double>(aligned[i]) / 40.0);
    if (i == 0 || i == 2) result.accuracy = Estimate{0.97, 0.94, 0.99};
    cell.conditions.push_back(result);
  }
  return cell;
}

void add_carrier_table(report::ReportData& data) {
  const std::vector<std::string> kinds = {"acknowledgement", "confirmation", "action taken",
                                          "summary"};
  const std::vector<int64_t> smol = {30, 96, 12, 70};
  const std::vector<int64_t> qwen = {58, 140, 20, 9};
  for (const auto& [model, sparse_global] : {std::pair(kSmol, smol), std::pair(kQwen, qwen)}) {
    for (size_t k = 0; k < kinds.size(); ++k) {
      CellResult cell =
          sample_cell(model, "hallway-light", "carrier-table", {196, sparse_global[k], 190, 0, 11});
      cell.construction = kinds[k];
      data.cells.push_back(cell);
    }
  }
  // The sparse-local control moved two pairs here: a bug the report must flag.
  CellResult& broken = data.cells.back();
  broken.valid = false;
  broken.conditions[3] = sample_condition("sparse-local", kPairs, 1, 1, kPairs - 2, 0.01);
}

void add_construction_sweep(report::ReportData& data) {
  const std::vector<std::string> constructions = {"OK.",
                                                  "Done.",
                                                  "Got it, set as asked.",
                                                  "Noted the new state.",
                                                  "Confirmed: updated.",
                                                  "I'll remember it.",
                                                  "Before we go on: set as asked.",
                                                  "[log] changed by request",
                                                  "Summary without values",
                                                  "Will do!",
                                                  "Understood, switching now.",
                                                  "All set — nothing else changed."};
  const std::vector<int64_t> smol = {12, 18, 40, 102, 66, 58, 80, 30, 25, 15, 49, 71};
  const std::vector<int64_t> qwen = {20, 24, 31, 14, 88, 22, 19, 60, 11, 27, 35, 16};
  for (const auto& [model, sparse_global] : {std::pair(kSmol, smol), std::pair(kQwen, qwen)}) {
    for (size_t c = 0; c < constructions.size(); ++c) {
      CellResult cell = sample_cell(model, "hallway-light-constructions", "construction-sweep",
                                    {195, sparse_global[c], 188, 0, 12});
      cell.construction = constructions[c];
      cell.finding = "constructions move recovery from about 6% to 51%";
      data.cells.push_back(cell);
    }
  }
}

void add_payload_and_distance(report::ReportData& data) {
  const std::vector<std::string> payloads = {"name",        "integer-3", "binary",
                                             "categorical", "integer-1", "integer-2"};
  const std::vector<int64_t> recovered = {20, 4, 110, 64, 38, 12};
  for (size_t p = 0; p < payloads.size(); ++p) {
    CellResult cell =
        sample_cell(kSmol, "thermostat-payloads", "payload-types", {190, recovered[p], 180, 0, 8});
    cell.payload_type = payloads[p];
    cell.finding = "binary payloads land, 3-digit payloads do not";
    data.cells.push_back(cell);
  }
  const std::vector<int64_t> distances = {32, 0, 1, 2, 4, 8, 16};
  const std::vector<int64_t> by_distance = {30, 104, 98, 90, 77, 60, 41};
  for (size_t d = 0; d < distances.size(); ++d) {
    CellResult cell =
        sample_cell(kSmol, "hallway-light-distance", "distance", {192, by_distance[d], 185, 0, 10});
    cell.distance = distances[d];
    cell.finding = "recovery as the carrier recedes into the history";
    data.cells.push_back(cell);
  }
}

report::LandingMap sample_landing() {
  report::LandingMap map;
  map.model = kSmol;
  map.scenario = "hallway-light";
  const std::vector<std::pair<std::string, std::string>> events = {
      {"src", "user"},     {"carrier", "assistant"}, {"f1", "user"},
      {"f2", "assistant"}, {"f3", "user"},           {"f4", "tool"}};
  const std::vector<double> shifts = {0.0, 0.46, 0.03, 0.12, 0.01, -0.02};
  for (size_t i = 0; i < events.size(); ++i) {
    report::LandingEvent event;
    event.id = events[i].first;
    event.role = events[i].second;
    event.is_source = i == 0;
    event.is_root = i == 1 || i == 3;
    event.shift = {shifts[i], shifts[i] - 0.06, shifts[i] + 0.07};
    event.aligned = std::max<int64_t>(0, static_cast<int64_t>(shifts[i] * kPairs));
    event.anti = 2;
    map.events.push_back(event);
  }
  map.edges = {
      {"carrier", "src", true, {0.41, 0.33, 0.49}}, {"f1", "src", false, {0.02, -0.02, 0.06}},
      {"f2", "carrier", true, {0.11, 0.06, 0.17}},  {"f3", "carrier", false, {0.01, -0.03, 0.05}},
      {"f4", "src", false, {0.0, -0.02, 0.02}},     {"f2", "f1", false, {0.03, -0.01, 0.07}}};
  for (int layer = 0; layer < 30; ++layer) {
    const double effect = layer < 6    ? 0.01 * layer
                          : layer < 18 ? 0.08 + 0.02 * (layer - 6)
                                       : 0.05 - 0.01 * (layer - 18);
    std::string label = "L";
    label += std::to_string(layer);
    map.layers.push_back({label, {effect, effect - 0.05, effect + 0.05}});
  }
  map.layers.push_back({"first 8", {0.12, 0.06, 0.18}});
  map.layers.push_back({"first 16", {0.31, 0.24, 0.38}});
  map.layers.push_back({"last 8", {0.04, -0.01, 0.09}});
  map.layers.push_back({"last 16", {0.22, 0.15, 0.29}});
  map.heat_event = "carrier";
  const std::vector<std::pair<std::string, double>> tokens = {
      {"Done", 0.02},   {" —", 0.01},       {" I", 0.0},      {"'ve", 0.01}, {" noted", 0.14},
      {" the", 0.03},   {" hallway", 0.21}, {" light", 0.33}, {"'s", 0.05},  {" new", 0.09},
      {" state", 0.41}, {".", 0.12},        {"\n", -0.03}};
  for (const auto& [piece, effect] : tokens) map.tokens.push_back({piece, effect});
  return map;
}

void add_runs(report::ReportData& data) {
  const std::vector<std::string> scenarios = {"hallway-light", "hallway-light-constructions",
                                              "thermostat-payloads", "hallway-light-distance"};
  for (const std::string& scenario : scenarios) {
    report::RunInfo run;
    run.model = kSmol;
    run.model_fingerprint = "9f2c4e1ab07d55e3";
    run.scenario = scenario;
    run.scenario_hash = "c0ffee12";
    run.git_version = "0.1.0-42-g157934d";
    run.seed = 7;
    run.pairs = kPairs;
    run.threads = 2;
    run.started_at = "2026-12-02T16:00:00Z";
    run.finished_at = "2026-12-02T16:09:30Z";
    run.wall_seconds = 570.25;
    run.status = "complete";
    data.runs.push_back(run);
  }
  report::RunInfo interrupted = data.runs.front();
  interrupted.model = kQwen;
  interrupted.finished_at = "";
  interrupted.status = "interrupted";
  data.runs.push_back(interrupted);
}

}  // namespace

report::ConditionResult sample_condition(const std::string& condition, int64_t pairs,
                                         int64_t aligned, int64_t anti, int64_t unmoved,
                                         double margin) {
  report::ConditionResult result;
  result.condition = condition;
  result.pairs = pairs;
  result.aligned = aligned;
  result.anti = anti;
  result.unmoved = unmoved;
  result.other = pairs - aligned - anti - unmoved;
  const analysis::Interval interval = analysis::wilson_interval(aligned, pairs);
  result.recovery = {static_cast<double>(aligned) / static_cast<double>(pairs), interval.low,
                     interval.high};
  result.sign_test_p = analysis::sign_test_p(aligned, aligned + anti);
  result.margin = {margin, margin - 0.3, margin + 0.3};
  return result;
}

report::ReportData sample_report() {
  report::ReportData data;
  data.title = "eventkv results: sample report";
  data.generated_at = "2026-12-02T16:10:00Z";
  data.eventkv_version = "0.1.0-42-g157934d";
  add_carrier_table(data);
  add_construction_sweep(data);
  add_payload_and_distance(data);
  data.landing.push_back(sample_landing());
  add_runs(data);
  return data;
}

}  // namespace eventkv::testing
