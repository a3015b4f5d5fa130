// What a report shows, already computed: the analysis fills this from the
// results database (analysis/summary.h), and the renderers (html.h,
// markdown.h) turn it into a page. Plain data, no behaviour.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace eventkv::report {

// A point estimate with its 95% interval.
struct Estimate {
  double value = 0.0;
  double low = 0.0;
  double high = 0.0;
};

// One condition of one experiment cell (SPEC section 2).
struct ConditionResult {
  std::string condition;  // visible | sparse-global | record | sparse-local | no-carrier
  int64_t pairs = 0;
  int64_t aligned = 0;
  int64_t anti = 0;
  int64_t unmoved = 0;
  int64_t other = 0;
  // A side leading by less than probe::kTieFloor nats: no answer.
  int64_t ties = 0;
  // Labelled pairs whose closer side leads by less than probe::kNearTieFloor.
  int64_t near_tie_floor = 0;
  Estimate recovery;         // aligned / pairs, Wilson interval
  double sign_test_p = 1.0;  // two-sided, aligned vs anti
  Estimate margin;           // mean paired logit margin, bootstrap interval
  // visible and record: share of sides answering their true value.
  std::optional<Estimate> accuracy;
};

// One cell of an experiment: a model, a scenario and one setting of what the
// scenario varies (a construction, a payload type, a distance).
struct CellResult {
  std::string model;     // display name
  std::string scenario;  // scenario name
  std::string finding;   // the paper finding the scenario tests (one line)
  std::string suite;     // carrier-table | construction-sweep | payload-types | distance | other
  std::string construction;  // carrier phrasing id ("" when not varied)
  std::string payload_type;  // binary | categorical | integer-1 | integer-2 | integer-3 | name
  int64_t distance = -1;     // filler events between carrier and query; -1 when not varied
  bool valid = true;         // false: sparse-local moved some pair (a bug, never a finding)
  // The experiment's pairs per cell: more than the conditions hold while its
  // run is unfinished (stopped, to be resumed); 0 when not known.
  int64_t planned_pairs = 0;
  std::vector<ConditionResult> conditions;
};

struct RunInfo {
  std::string model;
  std::string model_fingerprint;
  std::string scenario;
  std::string scenario_hash;
  std::string git_version;
  uint64_t seed = 0;
  int64_t pairs = 0;  // the experiment's; a shard computes its share
  int shard_index = 0;
  int shard_count = 1;
  int threads = 0;
  std::string started_at;   // ISO 8601
  std::string finished_at;  // empty while running
  double wall_seconds = 0.0;
  std::string status;               // complete | interrupted | running | invalid
  bool resumed = false;             // stopped and continued: started..finished spans the pause
  std::string precision = "exact";  // exact | fast (--precision)
};

// Landing analysis of one scenario on one model (SPEC sections 1 and 3.3).
struct LandingEvent {
  std::string id;
  std::string role;
  bool is_source = false;
  bool is_root = false;
  Estimate shift;  // share of the pairs' margin that swapping its rows moves toward the donor side
  int64_t aligned = 0;
  int64_t anti = 0;
};

struct LandingEdge {
  std::string from;  // the attending event
  std::string to;    // the attended event
  bool is_reference = false;
  Estimate effect;  // share of the pairs' margin lost when the edge is removed at compute time
};

struct LayerEffect {
  std::string label;  // "L7", "first 8", "last 4", ...
  Estimate effect;
};

struct TokenEffect {
  std::string piece;    // the token's text
  double effect = 0.0;  // share of the pairs' margin moved toward the donor by this token's window
};

struct LandingMap {
  std::string model;
  std::string scenario;
  int64_t pairs = 0;
  Estimate full_margin;  // mean full margin of the pairs (log-probability units); shares are of it
  std::vector<LandingEvent> events;  // in history order
  std::vector<LandingEdge> edges;
  std::vector<LayerEffect> layers;  // single layers, then cumulative ranges
  std::string heat_event;           // the root whose tokens the heat strip shows
  std::vector<TokenEffect> tokens;
};

struct ReportData {
  std::string title;
  std::string generated_at;  // ISO 8601
  std::string eventkv_version;
  std::vector<RunInfo> runs;
  std::vector<CellResult> cells;
  std::vector<LandingMap> landing;
};

}  // namespace eventkv::report
