// Calibration profiles: a saved profile loads back the same; a malformed or
// hand-edited one is refused with one line naming the file and the field;
// the certification rule needs every one of its families.
#include "contract/profile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

#include "analysis/stats.h"
#include "test_support.h"
#include "util/error.h"

namespace eventkv::contract {
namespace {

// Sparse-global outcomes of `pairs` pairs, `aligned` of them aligned and
// `anti` anti-aligned, the rest unmoved, with the Wilson interval they give.
FamilyStats stats(const std::string& family, int64_t pairs, int64_t aligned, int64_t anti) {
  FamilyStats s;
  s.family = family;
  s.scenarios = {family + "-scenario@0123456789abcdef"};
  s.pairs = pairs;
  s.aligned = aligned;
  s.anti = anti;
  s.unmoved = pairs - aligned - anti;
  s.recovery = static_cast<double>(aligned) / static_cast<double>(pairs);
  const analysis::Interval wilson = analysis::wilson_interval(aligned, pairs);
  s.recovery_low = wilson.low;
  s.recovery_high = wilson.high;
  s.margin = 0.25;
  s.margin_low = 0.125;
  s.margin_high = 0.375;
  return s;
}

ProfileEntry entry(const std::string& construction, std::vector<FamilyStats> families) {
  ProfileEntry e;
  e.construction = construction;
  e.payload_type = "binary";
  e.families = std::move(families);
  int64_t pairs = 0;
  int64_t aligned = 0;
  int64_t anti = 0;
  for (const FamilyStats& f : e.families) {
    pairs += f.pairs;
    aligned += f.aligned;
    anti += f.anti;
  }
  e.pooled = stats("all", pairs, aligned, anti);
  apply_rule(CertificationRule{}, e);
  return e;
}

Profile sample_profile() {
  Profile p;
  p.model_name = "tiny-model";
  p.model_fingerprint = "0123456789abcdef";
  p.eventkv_version = "abc1234";
  p.entries = {
      entry("confirmation", {stats("door-locks", 100, 100, 0), stats("smart-home", 200, 199, 0)}),
      entry("noted-state", {stats("door-locks", 24, 3, 1), stats("smart-home", 200, 70, 0)})};
  return p;
}

class ProfileFile : public ::testing::Test {
 protected:
  ProfileFile()
      : path_((std::filesystem::temp_directory_path() /
               ("eventkv-profile-test-" + std::to_string(::getpid()) + ".json"))
                  .string()) {}
  ~ProfileFile() override { std::filesystem::remove(path_); }

  // The sample profile's JSON with `from` replaced by `to` (which must occur).
  void write_edited(const std::string& from, const std::string& to) const {
    std::string text = profile_json(sample_profile());
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    std::ofstream(path_) << text.replace(at, from.size(), to);
  }

  std::string load_error() const {
    try {
      (void)load_profile(path_);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  std::string path_;
};

TEST(CertificationRule, OneFamilyNeverCertifies) {
  const ProfileEntry one = entry("confirmation", {stats("smart-home", 1000, 1000, 0)});
  EXPECT_TRUE(one.families[0].meets_rule);
  EXPECT_FALSE(one.certified);
  EXPECT_NE(one.reason.find("meets the rule on 1 of the 2 families"), std::string::npos)
      << one.reason;
}

TEST(CertificationRule, AnAntiAlignedPairBlocks) {
  // 199 of 200 aligned has a Wilson lower bound of 0.972, but one pair went the other way.
  const ProfileEntry e =
      entry("confirmation", {stats("door-locks", 200, 200, 0), stats("smart-home", 200, 199, 1)});
  EXPECT_GE(e.families[1].recovery_low, 0.95);
  EXPECT_FALSE(e.families[1].meets_rule);
  EXPECT_FALSE(e.certified);
  EXPECT_NE(e.reason.find("smart-home: 200 pairs, lower bound 0.972 >= 0.95, 1 anti > 0"),
            std::string::npos)
      << e.reason;
}

TEST(CertificationRule, BothFamiliesPassingCertifies) {
  const ProfileEntry e =
      entry("confirmation", {stats("door-locks", 100, 100, 0), stats("smart-home", 200, 199, 0)});
  EXPECT_TRUE(e.certified);
  EXPECT_EQ(e.reason.rfind("certified: meets the rule on 2 of the 2 families", 0), 0u) << e.reason;
  Profile p;
  p.entries = {e};
  EXPECT_TRUE(p.certifies("confirmation", "binary"));
  EXPECT_FALSE(p.certifies("confirmation", "integer-3"));
  EXPECT_FALSE(p.certifies("summary", "binary"));
}

TEST(CertificationRule, FewPairsOrAnUnresolvedScenarioDoNotCount) {
  // 24 of 24 aligned: a lower bound of 0.862, short of 0.95 however they turn out.
  const ProfileEntry few =
      entry("confirmation", {stats("door-locks", 24, 24, 0), stats("smart-home", 200, 200, 0)});
  EXPECT_FALSE(few.certified);
  EXPECT_NE(few.reason.find("(24 pairs reach at most 0.862)"), std::string::npos) << few.reason;
  const ProfileEntry unresolved = entry(
      "confirmation", {stats("smart-home", 200, 200, 0), stats("unresolved:old", 200, 200, 0)});
  EXPECT_TRUE(unresolved.families[1].meets_rule);
  EXPECT_FALSE(unresolved.certified);
  EXPECT_NE(unresolved.reason.find("unresolved:old: no scenario file has its hash"),
            std::string::npos);
}

TEST_F(ProfileFile, RoundTrips) {
  const Profile saved = sample_profile();
  save_profile(saved, path_);
  const Profile loaded = load_profile(path_);
  EXPECT_EQ(profile_json(loaded), profile_json(saved));
  EXPECT_EQ(loaded.model_fingerprint, "0123456789abcdef");
  ASSERT_EQ(loaded.entries.size(), 2u);
  EXPECT_TRUE(loaded.certifies("confirmation", "binary"));
  EXPECT_FALSE(loaded.certifies("noted-state", "binary"));
  EXPECT_EQ(loaded.find("noted-state", "binary")->families[0].anti, 1);
}

TEST_F(ProfileFile, MalformedProfilesGetOneLineNamingTheField) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"\"version\": 1", "\"version\": 2",
       ": /version: unsupported version 2 (this eventkv reads 1)"},
      {"\"version\": 1", "\"version\": \"1\"", ": /version: must be an integer"},
      {"\"model_name\": \"tiny-model\",", "", ": /model_name: is required"},
      {"\"model_fingerprint\": \"0123456789abcdef\"", "\"model_fingerprint\": \"xyz\"",
       ": /model_fingerprint: must be 1 to 16 lowercase hex digits"},
      {"\"pairs\": 300", "\"pairs\": \"300\"", ": /entries/0/pooled/pairs: must be an integer"},
      {"\"max_anti\": 0", "\"max_anti\": 1", ": /rule/text: must state the rule its fields give"},
      {"\"certified\": true", "\"certified\": 1", ": /entries/0/certified: must be true or false"},
      {"\"certified\": false", "\"certified\": true",
       ": /entries/1/certified: disagrees with the rule and the counts"},
      {"\"aligned\": 3", "\"aligned\": 23",
       ": /entries/1/families/0/pairs: must be aligned + anti"},
      {"\"payload_type\": \"binary\"", "\"payload_type\": \"colour\"",
       ": /entries/0/payload_type: must be binary, categorical"},
      {"\"entries\": [", "\"colour\": 1, \"entries\": [", ": /colour: is not a known field"},
      {"{\n  \"version\"", "{\n  oops", ":2:3: invalid JSON"},
  };
  for (const auto& [from, to, expected] : cases) {
    write_edited(from, to);
    const std::string error = load_error();
    EXPECT_EQ(error.rfind(path_ + expected, 0), 0u) << to << "\n" << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

TEST_F(ProfileFile, AnIntervalThatIsNotItsCountsIsRefused) {
  write_edited("\"recovery_low\": 0.", "\"recovery_low\": 0.9");
  EXPECT_NE(load_error().find(": /entries/0/pooled/recovery_low: must be the 95% Wilson interval"),
            std::string::npos)
      << load_error();
}

TEST_F(ProfileFile, AMissingFileIsNamed) {
  EXPECT_EQ(load_error(), path_ + ": cannot open profile");
}

// The committed profiles (profiles/, written by scripts/profiles) are what
// the contract runtime reads: each must load.
TEST(Profiles, CommittedProfilesLoad) {
  int profiles = 0;
  for (const auto& file : std::filesystem::directory_iterator(testing::source_dir() / "profiles")) {
    const Profile profile = load_profile(file.path().string());
    EXPECT_FALSE(profile.entries.empty()) << file.path();
    ++profiles;
  }
  EXPECT_EQ(profiles, 4);
}

}  // namespace
}  // namespace eventkv::contract
