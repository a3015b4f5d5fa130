// The results database's run bookkeeping: a resumed run is the same run, and
// it lists every version of eventkv that computed its pairs.
#include "store/results_db.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

namespace eventkv::store {
namespace {

class ResultsDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("eventkv-results-db-test-" + std::to_string(::getpid()) + ".db"))
                .string();
    std::filesystem::remove(path_);
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix);
  }
  std::string path_;
};

TEST_F(ResultsDbTest, ResumedRunListsEveryVersionOnce) {
  ResultsDb db(path_);
  RunRecord run;
  run.model_fingerprint = "f";
  run.scenario_hash = "h";
  run.n_pairs = 4;
  run.shard_count = 1;
  run.git_version = "aaa1111";
  const int64_t id = db.open_run(run, false);
  db.finish_run(id, "interrupted", 1.0);
  run.git_version = "bbb2222";
  EXPECT_EQ(db.open_run(run, true), id);
  db.finish_run(id, "interrupted", 2.0);
  EXPECT_EQ(db.open_run(run, true), id);
  db.finish_run(id, "complete", 3.0);
  ASSERT_EQ(db.runs().size(), 1u);
  EXPECT_EQ(db.runs()[0].git_version, "aaa1111 bbb2222");
  EXPECT_DOUBLE_EQ(db.runs()[0].wall_seconds, 6.0);
  EXPECT_NE(db.open_run(run, true), id);  // a complete run is never reopened
}

TEST_F(ResultsDbTest, ResumedLandingListsEveryVersionOnce) {
  ResultsDb db(path_);
  LandingRunRecord run;
  run.model_fingerprint = "f";
  run.scenario_hash = "h";
  run.construction = "ok";
  run.n_pairs = 2;
  run.git_version = "aaa1111";
  const int64_t id = db.open_landing(run, false);
  run.git_version = "bbb2222";
  EXPECT_EQ(db.open_landing(run, true), id);
  EXPECT_EQ(db.open_landing(run, true), id);
  ASSERT_EQ(db.landing_runs().size(), 1u);
  EXPECT_EQ(db.landing_runs()[0].git_version, "aaa1111 bbb2222");
}

}  // namespace
}  // namespace eventkv::store
