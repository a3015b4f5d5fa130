// The statistics of donor-pair experiments (SPEC section 2): Wilson interval,
// two-sided sign test and seeded bootstrap intervals. Numbers only: the probe
// and the contract use them while measuring, the analysis when it summarizes.
#pragma once

#include <cstdint>
#include <vector>

namespace eventkv::analysis {

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

}  // namespace eventkv::analysis
