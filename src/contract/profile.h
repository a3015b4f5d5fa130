// A calibration profile: for one model, per carrier construction and payload
// type, how reliably a retained carrier materialized an evicted value
// (sparse-global donor pairs), measured on scenario families of different
// wording, and whether that is enough to serve the value without a textual
// record. The contract runtime (contract/contract.h) keeps a record unless
// the profile certifies the construction for the payload type.
#pragma once

#include <cstdint>
#include <optional>
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
  int64_t ties = 0;           // probe::kTieFloor: no answer (absent before eventkv had ties)
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
  std::string model_fingerprint;  // hex, as the results database stores it (up to 16 digits)
  std::string eventkv_version;    // git version of the build that wrote it
  CertificationRule rule;
  // Seeds every margin interval (analysis::bootstrap_mean_interval, 2000
  // resamples), so a profile is reproducible from its databases.
  uint64_t bootstrap_seed = 1;
  std::vector<ProfileEntry> entries;  // sorted by payload type, then construction

  // The entry of a construction and payload type, or nullptr.
  const ProfileEntry* find(std::string_view construction, std::string_view payload_type) const;
  bool certifies(std::string_view construction, std::string_view payload_type) const;
};

// Whether a family's pairs count toward the rule's `min_families`: not the
// pairs of a run whose scenario file was not found ("unresolved:NAME") or
// has no "family" label ("unlabeled:NAME"), nor the pooled "all".
bool counts_toward_rule(std::string_view family);

// Sets meets_rule of each family (and of the pooled stats, which never count
// toward the rule), then the entry's certified flag and its reason.
void apply_rule(const CertificationRule& rule, ProfileEntry& entry);

// Reads and validates a profile file; throws Error "PATH: problem" (a JSON
// pointer for a bad field, an unsupported version). A recovery interval that
// is not the Wilson interval of its counts, or a certified or meets_rule flag
// that the stated rule does not give, is refused: certification follows
// from the counts alone, never from a hand-edited flag.
Profile load_profile(const std::string& path);

// The profile at `path` (none for ""), refused (Error naming both files)
// when it was calibrated on another model than the one with `fingerprint`
// loaded from `model_path`.
std::optional<Profile> load_profile_for(const std::string& path, uint64_t fingerprint,
                                        const std::string& model_path);

// The profile as JSON text (stable key order, so files diff cleanly).
std::string profile_json(const Profile& profile);

// Writes atomically (util/atomic_file.h): a failure leaves no partial file.
void save_profile(const Profile& profile, const std::string& path);

}  // namespace eventkv::contract
