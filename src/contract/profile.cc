#include "contract/profile.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "analysis/stats.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/json_fields.h"

namespace eventkv::contract {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

const std::set<std::string> kPayloadTypes = {"binary",    "categorical", "integer-1",
                                             "integer-2", "integer-3",   "name"};

// Stored intervals must be those of their counts to this tolerance (the
// JSON round trip keeps doubles exact; this only forgives other writers).
constexpr double kTolerance = 1e-9;

std::string fixed3(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3f", value);
  return buffer;
}

bool meets_bounds(const CertificationRule& rule, const FamilyStats& stats) {
  return stats.pairs > 0 && stats.recovery_low >= rule.min_wilson_lower &&
         stats.anti <= rule.max_anti;
}

// How one family fares against the rule, for the entry's reason.
std::string family_verdict(const CertificationRule& rule, const FamilyStats& stats) {
  if (stats.family.rfind("unresolved:", 0) == 0)
    return stats.family + ": no scenario file has its hash, so it does not count";
  if (stats.family.rfind("unlabeled:", 0) == 0)
    return stats.family + ": its scenario file names no family, so it does not count";
  if (stats.pairs == 0) return stats.family + ": no pairs";
  const std::string pairs = std::to_string(stats.pairs) + " pairs";
  const std::string anti = std::to_string(stats.anti) + " anti";
  if (stats.meets_rule) {
    return stats.family + ": meets it (" + pairs + ", lower bound " + fixed3(stats.recovery_low) +
           ", " + anti + ")";
  }
  std::string verdict = stats.family + ": " + pairs + ", lower bound " +
                        fixed3(stats.recovery_low) +
                        (stats.recovery_low >= rule.min_wilson_lower ? " >= " : " < ") +
                        str_cat(rule.min_wilson_lower);
  // Few pairs cannot certify however they turn out: say so.
  const double best = analysis::wilson_interval(stats.pairs, stats.pairs).low;
  if (best < rule.min_wilson_lower)
    verdict += " (" + pairs + " reach at most " + fixed3(best) + ")";
  return verdict + ", " + anti +
         (stats.anti > rule.max_anti ? " > " + std::to_string(rule.max_anti) : "");
}

// A required true or false.
bool flag(const JsonFields& f, const char* key) {
  (void)f.at(key);
  return f.boolean(key, false);
}

ordered_json stats_json(const FamilyStats& s) {
  return {{"family", s.family},
          {"scenarios", s.scenarios},
          {"pairs", s.pairs},
          {"aligned", s.aligned},
          {"anti", s.anti},
          {"unmoved", s.unmoved},
          {"other", s.other},
          {"ties", s.ties},
          {"recovery", s.recovery},
          {"recovery_low", s.recovery_low},
          {"recovery_high", s.recovery_high},
          {"margin", s.margin},
          {"margin_low", s.margin_low},
          {"margin_high", s.margin_high},
          {"meets_rule", s.meets_rule}};
}

FamilyStats read_stats(const JsonFields& f) {
  f.allow_only({"family", "scenarios", "pairs", "aligned", "anti", "unmoved", "other", "ties",
                "recovery", "recovery_low", "recovery_high", "margin", "margin_low", "margin_high",
                "meets_rule"});
  FamilyStats s;
  s.family = f.text("family", "", true);
  s.scenarios = f.texts("scenarios", true);
  const auto count = [&f](const char* key) {
    (void)f.at(key);
    return f.integer(key, 0, 0, INT64_MAX);
  };
  s.pairs = count("pairs");
  s.aligned = count("aligned");
  s.anti = count("anti");
  s.unmoved = count("unmoved");
  s.other = count("other");
  s.ties = f.integer("ties", 0, 0, INT64_MAX);
  if (s.aligned + s.anti + s.unmoved + s.other + s.ties != s.pairs)
    f.problem("pairs", "must be aligned + anti + unmoved + other + ties");
  if (s.pairs == 0) f.problem("pairs", "must be at least 1");
  s.recovery = f.number("recovery", 0.0, 1.0);
  s.recovery_low = f.number("recovery_low", 0.0, 1.0);
  s.recovery_high = f.number("recovery_high", 0.0, 1.0);
  const analysis::Interval wilson = analysis::wilson_interval(s.aligned, s.pairs);
  const double share = static_cast<double>(s.aligned) / static_cast<double>(s.pairs);
  if (std::abs(s.recovery - share) > kTolerance) f.problem("recovery", "must be aligned / pairs");
  if (std::abs(s.recovery_low - wilson.low) > kTolerance ||
      std::abs(s.recovery_high - wilson.high) > kTolerance) {
    f.problem("recovery_low", "must be the 95% Wilson interval of aligned in pairs");
  }
  s.margin = f.number("margin", -HUGE_VAL, HUGE_VAL);
  s.margin_low = f.number("margin_low", -HUGE_VAL, HUGE_VAL);
  s.margin_high = f.number("margin_high", s.margin_low, HUGE_VAL);
  s.meets_rule = flag(f, "meets_rule");
  return s;
}

ProfileEntry read_entry(const JsonFields& f) {
  f.allow_only({"construction", "payload_type", "certified", "reason", "pooled", "families"});
  ProfileEntry entry;
  entry.construction = f.text("construction", "", true);
  entry.payload_type = f.text("payload_type", "", true);
  if (kPayloadTypes.count(entry.payload_type) == 0) {
    f.problem("payload_type",
              "must be binary, categorical, integer-1, integer-2, integer-3 or name");
  }
  entry.certified = flag(f, "certified");
  entry.reason = f.text("reason", "", true);
  entry.pooled = read_stats(JsonFields(f.at("pooled"), f.pointer("pooled"), f.file()));
  (void)f.at("families");
  if (f.list("families").empty()) f.problem("families", "must not be empty");
  std::set<std::string> names;
  for (size_t i = 0; i < f.list("families").size(); ++i) {
    entry.families.push_back(read_stats(f.item("families", i)));
    if (!names.insert(entry.families.back().family).second)
      f.item("families", i).problem("family", "is listed twice");
  }
  return entry;
}

// The flags must be what the stated rule gives for the counts.
void check_flags(const JsonFields& f, const CertificationRule& rule, const ProfileEntry& entry) {
  ProfileEntry recomputed = entry;
  apply_rule(rule, recomputed);
  for (size_t i = 0; i < entry.families.size(); ++i) {
    if (entry.families[i].meets_rule != recomputed.families[i].meets_rule)
      f.item("families", i).problem("meets_rule", "disagrees with the rule and the counts");
  }
  if (entry.pooled.meets_rule != recomputed.pooled.meets_rule) {
    JsonFields(f.at("pooled"), f.pointer("pooled"), f.file())
        .problem("meets_rule", "disagrees with the rule and the counts");
  }
  if (entry.certified != recomputed.certified)
    f.problem("certified", "disagrees with the rule and the counts");
}

CertificationRule read_rule(const JsonFields& f) {
  f.allow_only({"text", "min_wilson_lower", "max_anti", "min_families"});
  CertificationRule rule;
  rule.min_wilson_lower = f.number("min_wilson_lower", 0.0, 1.0);
  (void)f.at("max_anti");
  rule.max_anti = f.integer("max_anti", 0, 0, INT64_MAX);
  (void)f.at("min_families");
  rule.min_families = static_cast<int>(f.integer("min_families", 0, 1, 1000));
  if (f.text("text", "", true) != rule.text())
    f.problem("text", "must state the rule its fields give: \"" + rule.text() + "\"");
  return rule;
}

Profile read_profile(const json& doc, const std::string& path) {
  const JsonFields f(doc, "", path);
  (void)f.at("version");
  const int64_t version = f.integer("version", 0, INT64_MIN, INT64_MAX);
  if (version != kProfileVersion) {
    f.problem("version", "unsupported version " + std::to_string(version) +
                             " (this eventkv reads " + std::to_string(kProfileVersion) + ")");
  }
  f.allow_only({"version", "model_name", "model_fingerprint", "eventkv_version", "rule",
                "bootstrap_seed", "entries"});
  Profile profile;
  profile.model_name = f.text("model_name", "", true);
  profile.model_fingerprint = f.text("model_fingerprint", "", true);
  if (profile.model_fingerprint.empty() || profile.model_fingerprint.size() > 16 ||
      profile.model_fingerprint.find_first_not_of("0123456789abcdef") != std::string::npos) {
    f.problem("model_fingerprint", "must be 1 to 16 lowercase hex digits");
  }
  profile.eventkv_version = f.text("eventkv_version", "", true);
  profile.rule = read_rule(JsonFields(f.at("rule"), f.pointer("rule"), path));
  (void)f.at("bootstrap_seed");
  profile.bootstrap_seed = static_cast<uint64_t>(f.integer("bootstrap_seed", 0, 0, INT64_MAX));
  std::set<std::pair<std::string, std::string>> seen;
  (void)f.at("entries");
  for (size_t i = 0; i < f.list("entries").size(); ++i) {
    const JsonFields e = f.item("entries", i);
    profile.entries.push_back(read_entry(e));
    const ProfileEntry& entry = profile.entries.back();
    check_flags(e, profile.rule, entry);
    if (!seen.insert({entry.payload_type, entry.construction}).second)
      e.problem("construction", "is listed twice for payload type " + entry.payload_type);
  }
  return profile;
}

}  // namespace

std::string CertificationRule::text() const {
  return "certified when, on each of at least " + std::to_string(min_families) +
         " scenario families of different wording, the lower bound of the 95% Wilson interval "
         "of sparse-global recovery is >= " +
         str_cat(min_wilson_lower) + " and at most " + std::to_string(max_anti) +
         " pairs are anti-aligned";
}

const ProfileEntry* Profile::find(std::string_view construction,
                                  std::string_view payload_type) const {
  for (const ProfileEntry& entry : entries) {
    if (entry.construction == construction && entry.payload_type == payload_type) return &entry;
  }
  return nullptr;
}

bool Profile::certifies(std::string_view construction, std::string_view payload_type) const {
  const ProfileEntry* entry = find(construction, payload_type);
  return entry != nullptr && entry->certified;
}

bool counts_toward_rule(std::string_view family) {
  return !family.empty() && family != "all" && family.rfind("unresolved:", 0) != 0 &&
         family.rfind("unlabeled:", 0) != 0;
}

void apply_rule(const CertificationRule& rule, ProfileEntry& entry) {
  int meeting = 0;
  std::string verdicts;
  for (FamilyStats& family : entry.families) {
    family.meets_rule = meets_bounds(rule, family);
    if (family.meets_rule && counts_toward_rule(family.family)) ++meeting;
    verdicts += (verdicts.empty() ? "" : "; ") + family_verdict(rule, family);
  }
  entry.pooled.meets_rule = meets_bounds(rule, entry.pooled);
  entry.certified = meeting >= rule.min_families;
  entry.reason = (entry.certified ? "certified: " : "not certified: ") +
                 std::string("meets the rule on ") + std::to_string(meeting) + " of the " +
                 std::to_string(rule.min_families) + " families it needs (" + verdicts + ")";
}

Profile load_profile(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(path, ": cannot open profile");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return read_profile(parse_json_text(text, path), path);
}

std::string profile_json(const Profile& profile) {
  ordered_json entries = ordered_json::array();
  for (const ProfileEntry& entry : profile.entries) {
    ordered_json families = ordered_json::array();
    for (const FamilyStats& family : entry.families) families.push_back(stats_json(family));
    entries.push_back({{"construction", entry.construction},
                       {"payload_type", entry.payload_type},
                       {"certified", entry.certified},
                       {"reason", entry.reason},
                       {"pooled", stats_json(entry.pooled)},
                       {"families", families}});
  }
  const ordered_json doc = {{"version", profile.version},
                            {"model_name", profile.model_name},
                            {"model_fingerprint", profile.model_fingerprint},
                            {"eventkv_version", profile.eventkv_version},
                            {"rule",
                             {{"text", profile.rule.text()},
                              {"min_wilson_lower", profile.rule.min_wilson_lower},
                              {"max_anti", profile.rule.max_anti},
                              {"min_families", profile.rule.min_families}}},
                            {"bootstrap_seed", profile.bootstrap_seed},
                            {"entries", entries}};
  return doc.dump(2) + "\n";
}

void save_profile(const Profile& profile, const std::string& path) {
  const std::string text = profile_json(profile);
  write_file_atomic(path, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

std::optional<Profile> load_profile_for(const std::string& path, uint64_t fingerprint,
                                        const std::string& model_path) {
  if (path.empty()) return std::nullopt;
  Profile profile = load_profile(path);
  if (profile.model_fingerprint != str_cat(std::hex, fingerprint)) {
    fail(path, ": a profile of ", profile.model_name, " (", profile.model_fingerprint, "), not of ",
         model_path, " (", str_cat(std::hex, fingerprint), ")");
  }
  return profile;
}

}  // namespace eventkv::contract
