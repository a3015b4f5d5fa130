#include "analysis/stats.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"
#include "util/rng.h"

namespace eventkv::analysis {

namespace {

// The 2.5th and 97.5th percentiles of the draws.
Interval percentile_interval(std::vector<double>& draws) {
  std::sort(draws.begin(), draws.end());
  const auto at = [&](double q) {
    return draws[static_cast<size_t>(std::floor(q * static_cast<double>(draws.size() - 1)))];
  };
  return {at(0.025), at(0.975)};
}

}  // namespace

Interval wilson_interval(int64_t k, int64_t n, double z) {
  if (n <= 0 || k < 0 || k > n)
    fail("wilson_interval: need 0 <= k <= n and n > 0, got k=", k, ", n=", n);
  const double nn = static_cast<double>(n);
  const double p = static_cast<double>(k) / nn;
  const double z2 = z * z;
  const double denominator = 1.0 + z2 / nn;
  const double center = (p + z2 / (2.0 * nn)) / denominator;
  const double half = z / denominator * std::sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn));
  return {std::max(0.0, center - half), std::min(1.0, center + half)};
}

double sign_test_p(int64_t k, int64_t n) {
  if (n == 0) return 1.0;
  if (k < 0 || k > n) fail("sign_test_p: need 0 <= k <= n, got k=", k, ", n=", n);
  // P(X <= min(k, n - k)) for X ~ Binomial(n, 1/2), summed in log space.
  const int64_t tail = std::min(k, n - k);
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  double total = 0.0;
  for (int64_t i = 0; i <= tail; ++i) {
    const double log_choose = std::lgamma(static_cast<double>(n) + 1.0) -
                              std::lgamma(static_cast<double>(i) + 1.0) -
                              std::lgamma(static_cast<double>(n - i) + 1.0);
    total += std::exp(log_choose + log_half_n);
  }
  return std::min(1.0, 2.0 * total);
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  double total = 0.0;
  for (const double v : values) total += v;
  return total / static_cast<double>(values.size());
}

Interval bootstrap_ratio_interval(const std::vector<double>& numerators,
                                  const std::vector<double>& denominators, uint64_t seed,
                                  int resamples) {
  if (numerators.size() != denominators.size()) {
    fail("bootstrap_ratio_interval: ", numerators.size(), " numerators, ", denominators.size(),
         " denominators");
  }
  if (numerators.empty()) return {0.0, 0.0};
  Rng rng(seed);
  std::vector<double> ratios(static_cast<size_t>(resamples));
  for (double& ratio : ratios) {
    double top = 0.0;
    double bottom = 0.0;
    for (size_t i = 0; i < numerators.size(); ++i) {
      const size_t pick = rng.below(numerators.size());
      top += numerators[pick];
      bottom += denominators[pick];
    }
    ratio = bottom == 0.0 ? 0.0 : top / bottom;
  }
  return percentile_interval(ratios);
}

Interval bootstrap_mean_interval(const std::vector<double>& values, uint64_t seed, int resamples) {
  if (values.empty()) return {0.0, 0.0};
  Rng rng(seed);
  std::vector<double> means(static_cast<size_t>(resamples));
  for (double& m : means) {
    double total = 0.0;
    for (size_t i = 0; i < values.size(); ++i) total += values[rng.below(values.size())];
    m = total / static_cast<double>(values.size());
  }
  return percentile_interval(means);
}

}  // namespace eventkv::analysis
