// A calibration profile: for one model, per carrier construction and payload
// type, how reliably a retained carrier materialized an evicted value
// (sparse-global donor pairs), measured on scenario families of different
// wording, and whether that is enough to serve the value without a textual
// record. The contract runtime (contract/contract.h) keeps a record unless
// the profile certifies the construction for the payload type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace eventkv::contract {

inline constexpr int kProfileVersion = 1;

// When a construction is certified for a payload type: on each of at least
// `min_families` scenario families of different wording, the lower bound of
// the 95% Wilson interval of sparse-global recovery is >= min_wilson_lower
// and at most `max_anti` pairs are anti-aligned.
struct CertificationRule {
  double min_wilson_lower = 0.95;
  int64_t max_anti = 0;
  int min_families = 2;

  std::string text() const;  // the rule in words, stored in the profile
};

// Sparse-global outcomes of one construction and payload type on the pairs
// of one scenario family (or of all families pooled).
struct FamilyStats {
  std::string family;                  // scenario wording family, e.g. "smart-home"
  std::vector<std::string> scenarios;  // "name@hash" of the scenarios pooled
  int64_t pairs = 0;
  int64_t aligned = 0;
  int64_t anti = 0;
  int64_t unmoved = 0;
  int64_t other = 0;
  double recovery = 0.0;      // aligned / pairs
  double recovery_low = 0.0;  // 95% Wilson interval
  double recovery_high = 0.0;
  double margin = 0.0;      // mean paired logit margin (nats)
  double margin_low = 0.0;  // 95% bootstrap interval
  double margin_high = 0.0;
  bool meets_rule = false;  // this family alone satisfies the rule's bounds
};

struct ProfileEntry {
  std::string construction;  // carrier construction id, as in the scenarios
  std::string payload_type;  // binary | categorical | integer-1 | integer-2 | integer-3 | name
  std::vector<FamilyStats> families;
  FamilyStats pooled;  // every family's pairs together (family "all")
  bool certified = false;
  std::string reason;  // why (not) certified, one line
};

struct Profile {
  int version = kProfileVersion;
  std::string model_name;
  std::string model_fingerprint;  // 16 hex digits, as in the results database
  std::string eventkv_version;    // git version of the build that wrote it
  CertificationRule rule;
  std::vector<ProfileEntry> entries;  // sorted by payload type, then construction

  // The entry of a construction and payload type, or nullptr.
  const ProfileEntry* find(std::string_view construction, std::string_view payload_type) const;
  bool certifies(std::string_view construction, std::string_view payload_type) const;
};

// Reads and validates a profile file; throws Error "PATH: problem" (a JSON
// pointer for a bad field, an unsupported version).
Profile load_profile(const std::string& path);

// The profile as JSON text (stable key order, so files diff cleanly).
std::string profile_json(const Profile& profile);

// Writes atomically (util/atomic_file.h): a failure leaves no partial file.
void save_profile(const Profile& profile, const std::string& path);

}  // namespace eventkv::contract
