#include "probe/runner.h"

#include <gtest/gtest.h>

#include "model/test_model.h"
#include "probe/scenario.h"
#include "test_support.h"
#include "util/error.h"

namespace eventkv::probe {
namespace {

TEST(OutcomeSummary, CountsPairsAndSeconds) {
  RunOutcome outcome;
  outcome.pairs_computed = 12;
  outcome.seconds = 3.44;
  EXPECT_EQ(outcome_summary(outcome), "12 pairs in 3.4 s");
}

// "8 pairs" for --pairs 4 on two cells says why it is not 4.
TEST(OutcomeSummary, SaysThatPairsCountOncePerCell) {
  RunOutcome outcome;
  outcome.pairs_computed = 8;
  outcome.cells = 2;
  outcome.seconds = 1.0;
  EXPECT_EQ(outcome_summary(outcome),
            "8 pairs in 1.0 s (over 2 cells; --pairs counts pairs per cell)");
}

TEST(OutcomeSummary, SaysWhenNothingWasComputed) {
  RunOutcome outcome;
  outcome.already_complete = true;
  EXPECT_EQ(outcome_summary(outcome), "0 pairs in 0.0 s (already complete: nothing computed)");
}

TEST(OutcomeSummary, FlagsAnInvalidRunFirst) {
  RunOutcome outcome;
  outcome.pairs_computed = 5;
  outcome.seconds = 1.0;
  outcome.invalid = true;
  EXPECT_EQ(outcome_summary(outcome), "5 pairs in 1.0 s (INVALID: sparse-local moved pairs)");
}

// A run that stops on an error (here a KV arena too small for the tiny
// scenario's histories) is stored as failed, not left "running".
class FailedRunTest : public ::testing::Test {
 protected:
  // The model reads its tensors from bytes_, which must outlive it.
  std::shared_ptr<kv::Engine> engine() {
    return std::make_shared<kv::Engine>(model::Model::from_bytes(bytes_, "generated"), 1);
  }
  static Scenario scenario() {
    return load_scenario(testing::fixture_path("scenarios/tiny.json").string());
  }
  testing::TempDatabase database_{"runner-test"};
  std::vector<uint8_t> bytes_ = model::build_test_model({}).to_bytes();
  std::atomic<bool> interrupted_{false};
};

TEST_F(FailedRunTest, ProbeRunIsStoredAsFailed) {
  store::ResultsDb db(database_.path());
  RunOptions options;
  options.kv_cells = 40;
  EXPECT_THROW(run_scenario(engine(), "generated", scenario(), db, options, interrupted_),
               eventkv::Error);
  ASSERT_EQ(db.runs().size(), 1U);
  EXPECT_EQ(db.runs()[0].status, "failed");
  EXPECT_FALSE(db.runs()[0].finished_at.empty());
}

TEST_F(FailedRunTest, LandingAnalysisIsStoredAsFailed) {
  store::ResultsDb db(database_.path());
  LandingRunOptions options;
  options.kv_cells = 40;
  EXPECT_THROW(run_landing(engine(), scenario(), db, options, interrupted_), eventkv::Error);
  ASSERT_EQ(db.landing_runs().size(), 1U);
  EXPECT_EQ(db.landing_runs()[0].status, "failed");
  EXPECT_FALSE(db.landing_runs()[0].finished_at.empty());
}

}  // namespace
}  // namespace eventkv::probe
