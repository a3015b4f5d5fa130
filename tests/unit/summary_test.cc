#include "analysis/summary.h"

#include <gtest/gtest.h>

#include "store/results_db.h"

namespace eventkv::analysis {
namespace {

store::RunRecord timed_run(const std::string& started, const std::string& finished,
                           double wall_seconds) {
  store::RunRecord run;
  run.started_at = started;
  run.finished_at = finished;
  run.wall_seconds = wall_seconds;
  run.status = "complete";
  return run;
}

TEST(RunInfo, MarksARunWhoseSpanExceedsItsWallTime) {
  // Computed straight through: the span is the wall time and a little start-up.
  EXPECT_FALSE(run_info(timed_run("2026-12-03T19:00:34Z", "2026-12-03T19:38:40Z", 2285.9)).resumed);
  // Gemma's distance run: 88.9 min of computing between 14:08 and 16:33.
  EXPECT_TRUE(run_info(timed_run("2026-12-03T14:08:00Z", "2026-12-03T16:33:00Z", 5334.0)).resumed);
  // Still running: nothing to compare.
  EXPECT_FALSE(run_info(timed_run("2026-12-03T14:08:00Z", "", 10.0)).resumed);
}

}  // namespace
}  // namespace eventkv::analysis
