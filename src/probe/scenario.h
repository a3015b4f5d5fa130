// A donor-pair experiment as a JSON file: the events of a history built from
// templates, the source event that carries a payload, the carrier events and
// their phrasings (constructions), fillers, the query with its candidate
// answers, and how many pairs to draw with which seed. See
// scenarios/README.md for the format; parse_scenario validates everything
// and names the field (a JSON pointer) or line of any problem.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace eventkv::probe {

// The most donor pairs a scenario (or --pairs) may ask for.
inline constexpr int kMaxPairs = 1000000;

enum class PayloadType { kBinary, kCategorical, kInteger, kName };

struct Payload {
  PayloadType type = PayloadType::kBinary;
  std::vector<std::string> values;  // binary, categorical, name
  int digits = 0;                   // integer
  int distractors = 2;              // integer and name: wrong candidates besides A and B

  // "binary", "categorical", "integer-3", "name".
  std::string label() const;
};

struct Construction {
  std::string id;
  std::vector<std::string> templates;  // one is drawn per pair
};

struct FillerTurn {
  std::string user;
  std::string assistant;
};

struct Scenario {
  std::string name;
  std::string finding;  // the paper finding it tests
  std::string suite;    // carrier-table | construction-sweep | payload-types | distance | ...
  // The wording family (e.g. "smart-home"): scenarios of one family share
  // their phrasing, so calibration asks a construction to hold on several.
  // Not part of the hash: labelling a scenario does not change its runs.
  std::string family;
  std::vector<std::string> system;  // templates; empty: no system event
  std::map<std::string, std::vector<std::string>> variables;
  Payload payload;
  std::string source_role = "user";
  std::vector<std::string> source;         // templates with {value}
  std::vector<std::string> carrier_roles;  // one carrier event per role, in order
  std::vector<Construction> constructions;
  std::vector<FillerTurn> fillers;         // pool; each pair draws filler turns from it
  std::vector<int> distances;              // filler turns between carrier and query, one cell each
  std::vector<std::string> record;         // templates with {value}: the textual record
  std::vector<std::string> question;       // templates
  std::vector<std::string> answer_prefix;  // templates
  std::string answer_format = " {value}";
  int pairs = 200;
  uint64_t seed = 1;
  // Canonical (compact, keys sorted), without "family": the scenario as run.
  std::string json;
  std::string hash;  // of `json`, for run identity
};

// Parses and validates; throws Error "FILE: /pointer: problem" or
// "FILE:LINE:COLUMN: problem" for malformed JSON.
Scenario parse_scenario(const std::string& text, const std::string& name_for_errors);
Scenario load_scenario(const std::string& path);

// The scenario files (*.json) of a folder, sorted; throws Error when the
// folder does not exist or holds none.
std::vector<std::string> scenario_files(const std::string& folder);

// Replaces {name} placeholders from `values`; throws Error on an unknown one.
std::string fill_template(const std::string& text,
                          const std::map<std::string, std::string>& values);

}  // namespace eventkv::probe
