// Calibration: a model's profile (contract/profile.h) from the donor pairs
// that results databases hold for it. Each run's scenario is found by its
// hash among scenario files, which name its wording family; per carrier
// construction and payload type, the sparse-global outcomes of each family
// (every run, shard and filler distance of the family pooled, each pair
// once) and of all families together are summarized with analysis/summary.h,
// and the rule decides what is certified.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "contract/profile.h"
#include "probe/scenario.h"
#include "store/results_db.h"

namespace eventkv::contract {

// The scenario files calibration knows, by hash (probe::Scenario::hash).
class ScenarioCatalog {
 public:
  // Every scenario file (*.json) of the folders; throws Error naming a file
  // that does not parse, or two files of one hash that name different
  // families.
  static ScenarioCatalog load(const std::vector<std::string>& folders);

  // The family of a run's scenario: its file's "family", "unlabeled:NAME"
  // when the file names none, "unresolved:NAME" when no file has the hash.
  std::string family_of(const store::RunRecord& run) const;

  // The scenarios, in folder order, then file name order.
  const std::vector<probe::Scenario>& scenarios() const { return scenarios_; }

 private:
  std::vector<probe::Scenario> scenarios_;
  std::map<std::string, size_t> by_hash_;  // index in scenarios_
};

struct CalibrationInput {
  std::string model_fingerprint;       // as the databases store it (hex)
  std::vector<std::string> databases;  // results databases, each of which must exist
  CertificationRule rule;
  uint64_t bootstrap_seed = 1;
  std::string eventkv_version;
};

// The profile of the model's runs in the databases (runs of other models
// are ignored; invalid runs, whose sparse-local control moved, are left
// out). Throws Error when a database is missing or holds no pair of the
// model with a carrier construction.
Profile calibrate(const CalibrationInput& input, const ScenarioCatalog& catalog);

}  // namespace eventkv::contract
