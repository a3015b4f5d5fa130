// The statistics of donor-pair experiments (SPEC section 2): outcome of a
// pair, Wilson interval, two-sided sign test and a seeded bootstrap interval.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace eventkv::probe {

enum class Outcome { kAligned, kAnti, kUnmoved, kOther };

std::string_view outcome_name(Outcome outcome);

// A-served predicted `predicted_a`, B-served `predicted_b`; A's true value is
// value_a and B's value_b (candidate indices).
Outcome classify(int predicted_a, int predicted_b, int value_a, int value_b);

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
