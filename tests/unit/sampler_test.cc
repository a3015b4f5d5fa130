#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "sampling/generate.h"
#include "sampling/sampler.h"
#include "util/error.h"

namespace eventkv::sampling {
namespace {

const std::vector<float> kLogits = {1.0f, 3.0f, 2.0f, 0.5f, 2.9f};

std::map<int32_t, int> histogram(const SamplingParams& params, int draws) {
  Sampler sampler(params);
  std::map<int32_t, int> counts;
  for (int i = 0; i < draws; ++i) ++counts[sampler.sample(kLogits)];
  return counts;
}

TEST(Sampler, GreedyPicksTheLargestLogit) {
  Sampler sampler({});
  EXPECT_EQ(sampler.sample(kLogits), 1);
  EXPECT_EQ(argmax(std::vector<float>{2.0f, 2.0f}), 0);
}

TEST(Sampler, TopKOneIsGreedy) {
  const auto counts = histogram({.temperature = 1.0f, .top_k = 1, .seed = 5}, 200);
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts.begin()->first, 1);
}

TEST(Sampler, TopKTwoKeepsTheTwoBest) {
  const auto counts = histogram({.temperature = 1.0f, .top_k = 2, .seed = 5}, 2000);
  ASSERT_EQ(counts.size(), 2u);
  // p(1) / p(4) = e^0.1 = 1.105 under temperature 1.
  EXPECT_NEAR(static_cast<double>(counts.at(1)) / counts.at(4), 1.105, 0.12);
}

TEST(Sampler, TopPKeepsTheSmallestSufficientSet) {
  // Sorted probabilities: 0.402, 0.363, 0.148, 0.054, 0.033 (ids 1, 4, 2, 0, 3).
  const auto counts = histogram({.temperature = 1.0f, .top_p = 0.6f, .seed = 9}, 1000);
  EXPECT_EQ(counts.size(), 2u);
  EXPECT_TRUE(counts.count(1) && counts.count(4));
}

// The nucleus is found by sorting a growing prefix of the vocabulary (64,
// then 512, ...): one of 500 equally likely tokens must reach past the first.
TEST(Sampler, TopPNucleusLargerThanTheFirstSortedPrefix) {
  const std::vector<float> flat(1000, 0.25f);
  Sampler sampler({.temperature = 1.0f, .top_p = 0.5f, .seed = 4});
  int32_t highest = 0;
  for (int i = 0; i < 2000; ++i) highest = std::max(highest, sampler.sample(flat));
  EXPECT_GE(highest, 450);  // ties keep the lower ids: the nucleus is ids 0 .. ~500
  EXPECT_LE(highest, 501);
}

TEST(Sampler, MinPDropsUnlikelyTokens) {
  const auto counts = histogram({.temperature = 1.0f, .min_p = 0.3f, .seed = 3}, 1000);
  EXPECT_EQ(counts.size(), 3u);  // 0.148 / 0.402 >= 0.3; 0.054 / 0.402 < 0.3
  EXPECT_FALSE(counts.count(0) || counts.count(3));
}

TEST(Sampler, LowTemperatureSharpens) {
  const auto counts = histogram({.temperature = 0.05f, .seed = 1}, 500);
  EXPECT_GT(counts.at(1), 430);  // p(1) = 1 / (1 + e^-2 + ...) ~ 0.88
}

TEST(Sampler, SameSeedSameTokens) {
  Sampler a({.temperature = 1.0f, .seed = 42});
  Sampler b({.temperature = 1.0f, .seed = 42});
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.sample(kLogits), b.sample(kLogits));
}

TEST(Sampler, RefusesBadParameters) {
  EXPECT_THROW(Sampler({.top_k = -1}), Error);
  EXPECT_THROW(Sampler({.top_p = 1.5f}), Error);
  EXPECT_THROW(Sampler({.min_p = -0.1f}), Error);
  EXPECT_THROW(Sampler({.temperature = -1.0f}), Error);
  EXPECT_THROW(Sampler({.temperature = std::nanf("")}), Error);
  EXPECT_THROW(Sampler({.temperature = INFINITY}), Error);
}

// Generation that stops inside a character ends on U+FFFD, never on a
// broken UTF-8 sequence; whole text is kept as it is.
TEST(Generate, EndsOnWholeCharacters) {
  EXPECT_EQ("price 3\xE2\x82\xAC", with_whole_characters("price 3\xE2\x82\xAC"));
  EXPECT_EQ("price 3\xEF\xBF\xBD", with_whole_characters("price 3\xE2\x82"));
  EXPECT_EQ("\xEF\xBF\xBD", with_whole_characters("\xF0\x9F\x98"));
  EXPECT_EQ("ok", with_whole_characters("ok"));
}

}  // namespace
}  // namespace eventkv::sampling
