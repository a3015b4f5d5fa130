#include "contract/calibrate.h"

#include <filesystem>
#include <set>
#include <tuple>
#include <utility>

#include "analysis/summary.h"
#include "probe/condition_names.h"
#include "util/error.h"

namespace eventkv::contract {
namespace {

// A pair is drawn from (scenario, seed, pair index) alone (probe/pairs.h), so
// runs that repeat or resume an experiment, or shard it, hold it once here.
using PairKey = std::tuple<std::string, uint64_t, int64_t, std::string, int>;

struct FamilyPairs {
  std::set<std::string> scenarios;  // "name@hash"
  std::map<PairKey, store::PairRecord> pairs;
};

// (payload type, construction) -> family -> its pairs.
using Gathered = std::map<std::pair<std::string, std::string>, std::map<std::string, FamilyPairs>>;

FamilyStats family_stats(const std::string& family, const std::set<std::string>& scenarios,
                         const std::vector<const store::PairRecord*>& pairs, uint64_t seed) {
  const report::ConditionResult c =
      analysis::summarize_condition(probe::kSparseGlobal, pairs, seed);
  FamilyStats stats;
  stats.family = family;
  stats.scenarios.assign(scenarios.begin(), scenarios.end());
  stats.pairs = c.pairs;
  stats.aligned = c.aligned;
  stats.anti = c.anti;
  stats.unmoved = c.unmoved;
  stats.ties = c.ties;
  stats.other = c.other;
  stats.recovery = c.recovery.value;
  stats.recovery_low = c.recovery.low;
  stats.recovery_high = c.recovery.high;
  stats.margin = c.margin.value;
  stats.margin_low = c.margin.low;
  stats.margin_high = c.margin.high;
  return stats;
}

// Adds the model's pairs of one database; returns the number of its runs
// that were the model's, and names the other models' runs in `others`.
int64_t gather(const std::string& path, const CalibrationInput& input,
               const ScenarioCatalog& catalog, Gathered& gathered, std::string& model_name,
               std::set<std::string>& others) {
  if (!std::filesystem::is_regular_file(path)) fail(path, ": no such results database");
  store::ResultsDb db(path, store::Access::kReadOnly);
  int64_t runs = 0;
  for (const store::RunRecord& run : db.runs()) {
    if (run.model_fingerprint != input.model_fingerprint) {
      others.insert(run.model_name + " (" + run.model_fingerprint + ")");
      continue;
    }
    ++runs;
    if (model_name.empty()) model_name = run.model_name;
    if (run.status == "invalid") continue;
    const std::string family = catalog.family_of(run);
    for (store::PairRecord& pair : db.pairs(run.id)) {
      if (pair.construction.empty() ||
          pair.conditions.count(std::string(probe::kSparseGlobal)) == 0) {
        continue;
      }
      FamilyPairs& target = gathered[{run.payload_type, pair.construction}][family];
      target.scenarios.insert(run.scenario_name + "@" + run.scenario_hash);
      pair.texts_json.clear();  // not needed; a database holds thousands
      PairKey key{run.scenario_hash, run.seed, pair.pair_index, pair.construction, pair.distance};
      target.pairs[std::move(key)] = std::move(pair);
    }
  }
  return runs;
}

std::string joined(const std::set<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

ScenarioCatalog ScenarioCatalog::load(const std::vector<std::string>& folders) {
  ScenarioCatalog catalog;
  std::vector<std::string> paths;
  for (const std::string& folder : folders) {
    for (std::string& file : probe::scenario_files(folder)) {
      catalog.scenarios_.push_back(probe::load_scenario(file));
      paths.push_back(std::move(file));
    }
  }
  for (size_t i = 0; i < catalog.scenarios_.size(); ++i) {
    const probe::Scenario& s = catalog.scenarios_[i];
    const auto [it, inserted] = catalog.by_hash_.emplace(s.hash, i);
    if (!inserted && catalog.scenarios_[it->second].family != s.family) {
      fail(paths[i], ": the same scenario as ", paths[it->second], " but family '", s.family,
           "', not '", catalog.scenarios_[it->second].family, "'");
    }
  }
  return catalog;
}

std::string ScenarioCatalog::family_of(const store::RunRecord& run) const {
  const auto it = by_hash_.find(run.scenario_hash);
  if (it == by_hash_.end()) return "unresolved:" + run.scenario_name;
  const std::string& family = scenarios_[it->second].family;
  return family.empty() ? "unlabeled:" + run.scenario_name : family;
}

Profile calibrate(const CalibrationInput& input, const ScenarioCatalog& catalog) {
  Profile profile;
  profile.model_fingerprint = input.model_fingerprint;
  profile.eventkv_version = input.eventkv_version;
  profile.rule = input.rule;
  profile.bootstrap_seed = input.bootstrap_seed;
  Gathered gathered;
  std::set<std::string> others;
  int64_t runs = 0;
  for (const std::string& path : input.databases)
    runs += gather(path, input, catalog, gathered, profile.model_name, others);
  const std::string where = input.databases.size() == 1 ? input.databases.front() : "the databases";
  if (runs == 0) {
    fail(where, ": no runs of the model with fingerprint ", input.model_fingerprint,
         others.empty() ? std::string(" (no runs at all)") : " (runs of: " + joined(others) + ")");
  }
  if (gathered.empty())
    fail(where, ": no valid pair of model ", profile.model_name, " with a carrier construction");
  for (const auto& [cell, families] : gathered) {
    ProfileEntry entry;
    entry.payload_type = cell.first;
    entry.construction = cell.second;
    std::set<std::string> all_scenarios;
    std::vector<const store::PairRecord*> all_pairs;
    for (const auto& [family, family_pairs] : families) {
      std::vector<const store::PairRecord*> pairs;
      for (const auto& [key, pair] : family_pairs.pairs) pairs.push_back(&pair);
      entry.families.push_back(
          family_stats(family, family_pairs.scenarios, pairs, input.bootstrap_seed));
      all_scenarios.insert(family_pairs.scenarios.begin(), family_pairs.scenarios.end());
      all_pairs.insert(all_pairs.end(), pairs.begin(), pairs.end());
    }
    entry.pooled = family_stats("all", all_scenarios, all_pairs, input.bootstrap_seed);
    apply_rule(input.rule, entry);
    profile.entries.push_back(std::move(entry));
  }
  return profile;
}

}  // namespace eventkv::contract
