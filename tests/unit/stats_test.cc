// Statistics against values computed independently (Python's math.comb and
// the closed-form Wilson interval; see the comments).
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "analysis/stats.h"
#include "analysis/summary.h"
#include "probe/outcome.h"
#include "util/error.h"

namespace eventkv::probe {
namespace {

using analysis::bootstrap_mean_interval;
using analysis::Interval;
using analysis::mean;
using analysis::sign_test_p;
using analysis::summarize_condition;
using analysis::wilson_interval;

TEST(Stats, ClassifiesPairs) {
  EXPECT_EQ(classify(0, 1, 0, 1), Outcome::kAligned);
  EXPECT_EQ(classify(1, 0, 0, 1), Outcome::kAnti);
  EXPECT_EQ(classify(0, 0, 0, 1), Outcome::kUnmoved);
  EXPECT_EQ(classify(1, 1, 0, 1), Outcome::kUnmoved);
  EXPECT_EQ(classify(2, 1, 0, 1), Outcome::kOther);
  EXPECT_EQ(classify(0, 2, 0, 1), Outcome::kOther);
}

TEST(Stats, AnswersWithinTheNoiseFloorAreTies) {
  const Answer close = answer_of({-1.0, -1.00005, -3.0});
  EXPECT_EQ(close.candidate, 0);
  EXPECT_NEAR(close.lead, 5e-5, 1e-12);
  const Answer clear = answer_of({-2.0, -1.0});
  EXPECT_EQ(clear.candidate, 1);
  EXPECT_DOUBLE_EQ(clear.lead, 1.0);
  EXPECT_EQ(answer_of({-1.0}).lead, std::numeric_limits<double>::infinity());
  EXPECT_EQ(answer_of({-1.0, -1.0}).lead, 0.0);
  EXPECT_THROW(answer_of({}), Error);
  // Either side below the floor: a tie, whatever the candidates.
  EXPECT_EQ(label(close, clear, 0, 1), Outcome::kTie);
  EXPECT_EQ(label(clear, close, 1, 0), Outcome::kTie);
  EXPECT_EQ(outcome_name(Outcome::kTie), "tie");
  // Just above it, the argmax labels as before.
  const Answer above = answer_of({-1.0, -1.0 - 1.5 * kTieFloor});
  EXPECT_EQ(label(above, clear, 0, 1), Outcome::kAligned);
  EXPECT_EQ(label(clear, above, 0, 1), Outcome::kAnti);
}

// A cell's counts: a pair whose side leads by 5e-5 nats was labelled aligned
// by its argmax; it is a tie, and a pair leading by 5e-4 is near the floor.
TEST(Stats, ConditionCountsTiesAndLabelsNearTheFloor) {
  const auto pair_with = [](std::vector<double> a, std::vector<double> b) {
    store::PairRecord pair;
    pair.value_a = 0;
    pair.value_b = 1;
    pair.conditions["sparse-global"] = {store::SideRecord{std::move(a)},
                                        store::SideRecord{std::move(b)}};
    return pair;
  };
  const std::vector<store::PairRecord> pairs = {
      pair_with({-1.0, -1.00005}, {-2.0, -1.0}),  // tie
      pair_with({-1.0, -1.0005}, {-2.0, -1.0}),   // aligned, near the floor
      pair_with({-1.0, -2.0}, {-2.0, -1.0}),      // aligned
      pair_with({-2.0, -1.0}, {-1.0, -2.0})};     // anti
  std::vector<const store::PairRecord*> pointers;
  for (const store::PairRecord& pair : pairs) pointers.push_back(&pair);
  const report::ConditionResult result = summarize_condition("sparse-global", pointers, 1);
  EXPECT_EQ(result.pairs, 4);
  EXPECT_EQ(result.aligned, 2);
  EXPECT_EQ(result.anti, 1);
  EXPECT_EQ(result.ties, 1);
  EXPECT_EQ(result.near_tie_floor, 1);
  EXPECT_DOUBLE_EQ(result.recovery.value, 0.5);
  EXPECT_DOUBLE_EQ(result.sign_test_p, sign_test_p(2, 3));
}

TEST(Stats, WilsonIntervalKnownValues) {
  // The paper's 99 of 100: [0.945514, 0.998233].
  const Interval a = wilson_interval(99, 100);
  EXPECT_NEAR(a.low, 0.9455138038, 1e-9);
  EXPECT_NEAR(a.high, 0.9982325679, 1e-9);
  const Interval b = wilson_interval(51, 100);
  EXPECT_NEAR(b.low, 0.4134801193, 1e-9);
  EXPECT_NEAR(b.high, 0.6057800107, 1e-9);
  const Interval c = wilson_interval(0, 20);
  EXPECT_EQ(c.low, 0.0);
  EXPECT_NEAR(c.high, 0.1611251581, 1e-9);
  const Interval d = wilson_interval(6, 100);
  EXPECT_NEAR(d.low, 0.0277861240, 1e-9);
  EXPECT_NEAR(d.high, 0.1247681545, 1e-9);
  EXPECT_THROW(wilson_interval(1, 0), Error);
  EXPECT_THROW(wilson_interval(5, 4), Error);
}

TEST(Stats, SignTestKnownValues) {
  EXPECT_NEAR(sign_test_p(99, 99) / 3.1554436208840472e-30, 1.0, 1e-9);  // 2 * 0.5^99
  EXPECT_NEAR(sign_test_p(9, 10), 0.021484375, 1e-12);                   // 2 * 11 / 1024
  EXPECT_NEAR(sign_test_p(1, 10), 0.021484375, 1e-12);                   // symmetric
  EXPECT_NEAR(sign_test_p(60, 100), 0.05688793364098079, 1e-12);
  EXPECT_EQ(sign_test_p(50, 100), 1.0);
  EXPECT_EQ(sign_test_p(0, 5), 0.0625);
  EXPECT_EQ(sign_test_p(0, 0), 1.0);
}

TEST(Stats, BootstrapIntervalIsSeededAndCoversTheMean) {
  std::vector<double> values;
  for (int i = 0; i < 200; ++i) values.push_back(static_cast<double>(i % 10));  // mean 4.5, sd 2.87
  const Interval a = bootstrap_mean_interval(values, 7);
  const Interval b = bootstrap_mean_interval(values, 7);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_LT(a.low, 4.5);
  EXPECT_GT(a.high, 4.5);
  // Width about 2 * 1.96 * 2.87 / sqrt(200) = 0.80.
  EXPECT_NEAR(a.high - a.low, 0.80, 0.12);
  const Interval constant = bootstrap_mean_interval(std::vector<double>(50, 3.0), 1);
  EXPECT_EQ(constant.low, 3.0);
  EXPECT_EQ(constant.high, 3.0);
  EXPECT_EQ(mean({1.0, 2.0, 6.0}), 3.0);
}

}  // namespace
}  // namespace eventkv::probe
