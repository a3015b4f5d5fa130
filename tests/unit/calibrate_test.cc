// Calibration from a results database: runs resolve to their scenario's
// family by hash, a family pools its runs and shards (each pair once), runs
// of other models are ignored, and an unresolved run does not count.
#include "contract/calibrate.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <unistd.h>

#include "store/results_db.h"
#include "test_support.h"
#include "util/error.h"

namespace eventkv::contract {
namespace {

// The tiny scenario as `name`, labelled `family`.
std::string tiny_scenario(const std::string& name, const std::string& family) {
  std::ifstream in(testing::fixture_path("scenarios/tiny.json"));
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::string from = "\"name\": \"tiny-binary\",";
  text.replace(text.find(from), from.size(),
               "\"name\": \"" + name + "\", \"family\": \"" + family + "\",");
  return text;
}

class CalibrateTest : public ::testing::Test {
 protected:
  CalibrateTest()
      : folder_(std::filesystem::temp_directory_path() /
                ("eventkv-calibrate-test-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(folder_);
    write("house.json", tiny_scenario("house-lights", "house"));
    write("office.json", tiny_scenario("office-doors", "office"));
  }
  ~CalibrateTest() override { std::filesystem::remove_all(folder_); }

  void write(const std::string& file, const std::string& text) const {
    std::ofstream(folder_ / file) << text;
  }

  ScenarioCatalog catalog() const { return ScenarioCatalog::load({folder_.string()}); }

  // A run of `scenario` on model `fingerprint` whose pairs `first`.. are
  // aligned (`aligned` of them), then anti-aligned (`anti`), in cell "ok".
  int64_t add_run(store::ResultsDb& db, const std::string& fingerprint, const std::string& name,
                  const std::string& hash, int64_t first, int aligned, int anti) const {
    store::RunRecord run;
    run.model_name = "model-" + fingerprint;
    run.model_fingerprint = fingerprint;
    run.scenario_name = name;
    run.scenario_hash = hash;
    run.payload_type = "binary";
    run.seed = 3;
    run.n_pairs = 100;
    const int64_t id = db.open_run(run, false).id;
    for (int i = 0; i < aligned + anti; ++i) {
      store::PairRecord pair;
      pair.pair_index = first + i;
      pair.construction = "ok";
      pair.distance = 1;
      pair.candidates = {"open", "shut"};
      const bool follows = i < aligned;
      pair.conditions["sparse-global"] = {{{follows ? 0.0 : -5.0, follows ? -5.0 : 0.0}},
                                          {{follows ? -5.0 : 0.0, follows ? 0.0 : -5.0}}};
      db.store_pair(id, pair);
    }
    db.finish_run(id, "complete", 1.0);
    return id;
  }

  std::filesystem::path folder_;
  testing::TempDatabase database_{"calibrate-test"};
};

TEST_F(CalibrateTest, PoolsAFamilysRunsAndCountsEachPairOnce) {
  const ScenarioCatalog known = catalog();
  ASSERT_EQ(known.scenarios().size(), 2u);
  const std::string house = known.scenarios()[0].hash;
  const std::string office = known.scenarios()[1].hash;
  {
    store::ResultsDb db(database_.path());
    add_run(db, "f1", "house-lights", house, 0, 5, 0);  // shard 0
    add_run(db, "f1", "house-lights", house, 5, 4, 1);  // shard 1
    add_run(db, "f1", "house-lights", house, 0, 5, 0);  // the same pairs again
    add_run(db, "f1", "office-doors", office, 0, 3, 0);
    add_run(db, "f1", "retired", "0badc0de", 0, 7, 0);  // its file is gone
    add_run(db, "f2", "house-lights", house, 0, 0, 9);  // another model
  }
  CalibrationInput input;
  input.model_fingerprint = "f1";
  input.databases = {database_.path()};
  const Profile profile = calibrate(input, known);
  EXPECT_EQ(profile.model_name, "model-f1");
  ASSERT_EQ(profile.entries.size(), 1u);
  const ProfileEntry& entry = profile.entries[0];
  EXPECT_EQ(entry.construction, "ok");
  EXPECT_EQ(entry.payload_type, "binary");
  ASSERT_EQ(entry.families.size(), 3u);
  EXPECT_EQ(entry.families[0].family, "house");
  EXPECT_EQ(entry.families[0].pairs, 10);
  EXPECT_EQ(entry.families[0].aligned, 9);
  EXPECT_EQ(entry.families[0].anti, 1);
  EXPECT_EQ(entry.families[0].scenarios, std::vector<std::string>{"house-lights@" + house});
  EXPECT_EQ(entry.families[1].family, "office");
  EXPECT_EQ(entry.families[1].pairs, 3);
  EXPECT_EQ(entry.families[2].family, "unresolved:retired");
  EXPECT_EQ(entry.pooled.pairs, 20);
  EXPECT_EQ(entry.pooled.aligned, 19);
  EXPECT_FALSE(entry.certified);
  EXPECT_NE(entry.reason.find("unresolved:retired: no scenario file has its hash"),
            std::string::npos);
}

TEST_F(CalibrateTest, AModelWithoutRunsIsAnError) {
  {
    store::ResultsDb db(database_.path());
    add_run(db, "f2", "house-lights", catalog().scenarios()[0].hash, 0, 1, 0);
  }
  CalibrationInput input;
  input.model_fingerprint = "f1";
  input.databases = {database_.path()};
  try {
    (void)calibrate(input, catalog());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), database_.path() +
                                         ": no runs of the model with fingerprint f1 (runs of: "
                                         "model-f2 (f2))");
  }
  input.databases = {database_.path() + ".missing"};
  EXPECT_THROW((void)calibrate(input, catalog()), Error);
  EXPECT_FALSE(std::filesystem::exists(database_.path() + ".missing"));
}

TEST_F(CalibrateTest, OneScenarioInTwoFamiliesIsAnError) {
  write("house-again.json", tiny_scenario("house-lights", "office"));
  try {
    (void)catalog();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("house.json: the same scenario as"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace eventkv::contract
