// The results database (SQLite): runs, the donor pairs they drew and every
// candidate's score under every condition. A pair is written with all its
// scores in one transaction, so an interrupted run loses at most the pair in
// flight and resumes where it stopped.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/sqlite.h"

namespace eventkv::store {

struct RunRecord {
  int64_t id = 0;
  std::string model_name;
  std::string model_path;
  std::string model_fingerprint;
  std::string scenario_name;
  std::string scenario_suite;
  std::string scenario_finding;
  std::string scenario_hash;
  std::string scenario_json;  // the scenario's canonical JSON ("" before schema 3)
  std::string chat_format;    // the history's rendering (tokenizer::ChatFormat), "" before schema 3
  std::string payload_type;
  std::string git_version;  // every version that computed its pairs, space-separated (resumes)
  std::string isa;          // kernels that computed its pairs (compute::kernels), " | "-separated
  std::string build;        // compiler and flags of those builds (compute::build_description), same
  std::string precision = "exact";  // exact or fast (kv::precision_name); "exact" before schema 4
  uint64_t seed = 0;
  int threads = 0;
  int64_t n_pairs = 0;
  int shard_index = 0;
  int shard_count = 1;
  std::string started_at;
  std::string finished_at;
  double wall_seconds = 0.0;
  std::string status;  // running | complete | interrupted | invalid | failed
};

struct SideRecord {
  std::vector<double> log_probs;  // per candidate
};

struct PairRecord {
  int64_t pair_index = 0;
  std::string construction;
  int distance = 0;
  int value_a = 0;
  int value_b = 1;
  std::vector<std::string> candidates;
  std::string texts_json;  // both sides' events, record and query
  std::string spans_json;  // each side's events' token ranges; "" before schema 3
  int64_t n_tokens = 0;    // of one side's events
  int rejected = 0;
  std::map<std::string, std::pair<SideRecord, SideRecord>> conditions;  // condition -> (A, B)
};

// A landing analysis of one scenario cell on one model.
struct LandingRunRecord {
  int64_t id = 0;
  std::string model_name;
  std::string model_fingerprint;
  std::string scenario_name;
  std::string scenario_hash;
  std::string construction;
  int distance = 0;
  uint64_t seed = 0;
  int64_t n_pairs = 0;
  std::string git_version;  // every version that computed its pairs, space-separated (resumes)
  std::string isa;          // as in RunRecord
  std::string build;
  std::string precision = "exact";  // as RunRecord::precision
  std::string events_json;          // [{id, role, is_source, pieces}] of the first pair
  std::string started_at;
  std::string finished_at;
  double wall_seconds = 0.0;
  std::string status;
};

struct LandingRow {
  int64_t pair_index = 0;
  int stage = 1;  // 1: full margin and events; 2: layers, tokens and edges of the roots
  std::string kind;
  std::string target;
  double value = 0.0;
  std::string outcome;
};

// A run or landing analysis opened for computing. `complete`: --resume found
// it already finished, so there is nothing to compute and nothing is changed.
struct OpenedRun {
  int64_t id = 0;
  bool complete = false;
};

// A run or landing analysis found in the database; id 0 when none.
struct StoredRun {
  int64_t id = 0;
  std::string status;
};

// The schema this eventkv writes. Older databases are read as they are and
// brought up to it when opened for writing; newer ones are refused.
inline constexpr int kSchemaVersion = 4;

class ResultsDb {
 public:
  // kReadWrite opens or creates the database (and its folder); kReadOnly
  // opens an existing one and never writes to it. Any other file is refused
  // untouched ("FILE: not an eventkv results database"), as is a database of
  // a newer schema than kSchemaVersion.
  explicit ResultsDb(const std::string& path, Access access = Access::kReadWrite);

  // With `resume`, the newest run of the same model, scenario, seed, pair
  // count and shard is reopened (its git_version gains this run's, when new),
  // or returned untouched when complete; otherwise a new run starts.
  OpenedRun open_run(RunRecord run, bool resume);
  void finish_run(int64_t run_id, const std::string& status, double wall_seconds);

  // (pair index, construction, distance) of every pair stored for a run.
  std::set<std::tuple<int64_t, std::string, int>> stored_pairs(int64_t run_id);
  void store_pair(int64_t run_id, const PairRecord& pair);

  std::vector<RunRecord> runs();
  std::vector<PairRecord> pairs(int64_t run_id);

  // Landing analyses: like runs, resumable per pair and stage.
  OpenedRun open_landing(LandingRunRecord run, bool resume);
  void finish_landing(int64_t landing_id, const std::string& status, double wall_seconds);
  std::set<int64_t> stored_landing_pairs(int64_t landing_id, int stage);
  void store_landing(int64_t landing_id, const std::vector<LandingRow>& rows);
  std::vector<LandingRunRecord> landing_runs();
  std::vector<LandingRow> landing_rows(int64_t landing_id);

  // Copies every run of `other` (with its pairs and scores) into this
  // database. A run or landing analysis already here (merged before) is not
  // copied again: it gains only the pairs it lacks, and the newer state.
  // Returns a warning for each run copied in whose kernels or build differ
  // from those of another shard of the same experiment already here: their
  // scores may differ in the last bits. Refused (Error, nothing written) when
  // a run of `other` has another precision than a run of the same experiment
  // here: exact and fast scores are never pooled.
  std::vector<std::string> merge_from(ResultsDb& other);

  Database& database() { return db_; }

 private:
  // Creates the tables a new database lacks and adds the columns an older
  // one lacks, in one transaction.
  void update_schema();
  // `column` of `table`, or '' where this (older, read-only) database lacks it.
  std::string column_or_blank(std::string_view table, std::string_view column);
  bool has_table(std::string_view table);
  // A description of another run of `run`'s experiment here computed with
  // other kernels or another build ("" when none).
  std::string other_build(const RunRecord& run);
  // The newest run of the same model, scenario, seed, pair count and shard
  // (the same cell, for a landing); with `same_start`, only one started at the
  // same second: a copy of the same run, from another database.
  StoredRun find_run(const RunRecord& run, bool same_start);
  // The precision of a run here of `run`'s experiment computed with another
  // one, or "".
  std::string other_precision(const RunRecord& run);
  StoredRun find_landing(const LandingRunRecord& landing, bool same_start);
  void update_copy_state(std::string_view table, int64_t id, const std::string& status,
                         const std::string& finished_at, double wall_seconds,
                         const std::string& git_version);
  Database db_;
  int schema_version_ = 0;
};

std::string now_iso8601();

// Seconds since the epoch of a now_iso8601() time; nullopt when `text` is not one.
std::optional<int64_t> iso8601_seconds(const std::string& text);

}  // namespace eventkv::store
