#include "report/json.h"

namespace eventkv::report {
namespace {

using nlohmann::json;

json estimate_json(const Estimate& e) {
  return {{"value", e.value}, {"low", e.low}, {"high", e.high}};
}

json condition_json(const ConditionResult& c) {
  json row = {{"condition", c.condition},
              {"pairs", c.pairs},
              {"aligned", c.aligned},
              {"anti", c.anti},
              {"unmoved", c.unmoved},
              {"other", c.other},
              {"ties", c.ties},
              {"near_tie_floor", c.near_tie_floor},
              {"recovery", estimate_json(c.recovery)},
              {"sign_test_p", c.sign_test_p},
              {"margin", estimate_json(c.margin)}};
  if (c.accuracy) row["accuracy"] = estimate_json(*c.accuracy);
  return row;
}

}  // namespace

json cells_json(const std::vector<CellResult>& cells) {
  json out = json::array();
  for (const CellResult& cell : cells) {
    json conditions = json::array();
    for (const ConditionResult& c : cell.conditions) conditions.push_back(condition_json(c));
    out.push_back({{"model", cell.model},
                   {"scenario", cell.scenario},
                   {"suite", cell.suite},
                   {"construction", cell.construction},
                   {"payload_type", cell.payload_type},
                   {"distance", cell.distance},
                   {"valid", cell.valid},
                   {"conditions", conditions}});
  }
  return out;
}

json runs_json(const std::vector<RunInfo>& runs) {
  json out = json::array();
  for (const RunInfo& r : runs) {
    out.push_back({{"model", r.model},
                   {"model_fingerprint", r.model_fingerprint},
                   {"scenario", r.scenario},
                   {"scenario_hash", r.scenario_hash},
                   {"git_version", r.git_version},
                   {"seed", r.seed},
                   {"pairs", r.pairs},
                   {"shard_index", r.shard_index},
                   {"shard_count", r.shard_count},
                   {"threads", r.threads},
                   {"started_at", r.started_at},
                   {"finished_at", r.finished_at},
                   {"wall_seconds", r.wall_seconds},
                   {"status", r.status},
                   {"precision", r.precision}});
  }
  return out;
}

}  // namespace eventkv::report
