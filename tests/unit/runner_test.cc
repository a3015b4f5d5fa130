#include <gtest/gtest.h>

#include "probe/runner.h"

namespace eventkv::probe {
namespace {

TEST(OutcomeSummary, CountsPairsAndSeconds) {
  RunOutcome outcome;
  outcome.pairs_computed = 12;
  outcome.seconds = 3.44;
  EXPECT_EQ(outcome_summary(outcome), "12 pairs in 3.4 s");
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

}  // namespace
}  // namespace eventkv::probe
