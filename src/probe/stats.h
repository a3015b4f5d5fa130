// The statistics of donor-pair experiments (SPEC section 2): outcome of a
// pair, Wilson interval, two-sided sign test and a seeded bootstrap interval.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace eventkv::probe {

enum class Outcome { kAligned, kAnti, kUnmoved, kOther, kTie };

std::string_view outcome_name(Outcome outcome);

// A-served predicted `predicted_a`, B-served `predicted_b`; A's true value is
// value_a and B's value_b (candidate indices).
Outcome classify(int predicted_a, int predicted_b, int value_a, int value_b);

// The noise floor of an answer, in nats. Two correct computations of one
// pair give scores up to 2.9e-5 nats apart (eventkv rerun of 27 stored
// SmolLM2 pairs under the AVX-512, AVX2 and x86-64 kernels against the
// archive's scores, 1,620 scores: sums in other orders), so the lead of a
// side's top candidate over the runner-up can move by up to 5.8e-5. The
// floor lies above that (and is rerun's tolerance across builds). A side
// leading by less gives no answer, and its pair is a tie: counted among
// the pairs, never aligned or anti.
inline constexpr double kTieFloor = 1e-4;
// Answers resting on a lead below this are near the floor (reported per
// cell, so a reader sees how many labels a tenfold noise would move).
inline constexpr double kNearTieFloor = 10 * kTieFloor;

// A side's answer: the top candidate and its lead over the runner-up
// (infinite with one candidate).
struct Answer {
  int candidate = 0;
  double lead = 0.0;
};

Answer answer_of(const std::vector<double>& log_probs);

// classify() of the two answers, or kTie when either leads by less than
// kTieFloor.
Outcome label(const Answer& a, const Answer& b, int value_a, int value_b);

// The paired logit margin toward the donors' values: how much more the
// A-served side prefers A's value over B's than the B-served side does.
double paired_margin(const std::vector<double>& a, const std::vector<double>& b, int value_a,
                     int value_b);

struct Interval {
  double low = 0.0;
  double high = 0.0;
};

// 95% Wilson score interval of k successes in n trials (n > 0).
Interval wilson_interval(int64_t k, int64_t n, double z = 1.959963984540054);

// Two-sided exact binomial test of k successes in n trials against p = 1/2;
// 1 when n = 0.
double sign_test_p(int64_t k, int64_t n);

// Percentile bootstrap interval of the mean (95%, `resamples` draws, seeded).
Interval bootstrap_mean_interval(const std::vector<double>& values, uint64_t seed,
                                 int resamples = 2000);

double mean(const std::vector<double>& values);

// Percentile bootstrap interval (95%, seeded) of sum(numerators) /
// sum(denominators) over paired values, resampling the pairs.
Interval bootstrap_ratio_interval(const std::vector<double>& numerators,
                                  const std::vector<double>& denominators, uint64_t seed,
                                  int resamples = 2000);

}  // namespace eventkv::probe
