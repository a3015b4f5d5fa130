#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "util/error.h"

namespace eventkv::sampling {
namespace {

struct Candidate {
  int32_t id;
  float logit;
  double p;
};

// Softmax of candidates' logits divided by `temperature`, into p.
void normalize(std::vector<Candidate>& candidates, float temperature) {
  const float max_logit = candidates.front().logit;
  double total = 0.0;
  for (Candidate& c : candidates) {
    c.p = std::exp(static_cast<double>(c.logit - max_logit) / temperature);
    total += c.p;
  }
  for (Candidate& c : candidates) c.p /= total;
}

}  // namespace

int32_t argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {
  if (!(std::isfinite(params.temperature) && params.temperature >= 0.0f))
    fail("temperature must be a finite number >= 0, got ", params.temperature);
  if (params.top_k < 0) fail("top-k must be >= 0, got ", params.top_k);
  if (!(params.top_p >= 0.0f && params.top_p <= 1.0f))
    fail("top-p must be in [0, 1], got ", params.top_p);
  if (!(params.min_p >= 0.0f && params.min_p <= 1.0f))
    fail("min-p must be in [0, 1], got ", params.min_p);
}

int32_t Sampler::sample(std::span<const float> logits) {
  if (logits.empty()) fail("sample: no logits");
  if (params_.temperature == 0.0f) return argmax(logits);
  std::vector<Candidate> candidates(logits.size());
  for (size_t i = 0; i < logits.size(); ++i)
    candidates[i] = {static_cast<int32_t>(i), logits[i], 0.0};
  const auto by_logit = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < candidates.size()) {
    std::partial_sort(candidates.begin(), candidates.begin() + params_.top_k, candidates.end(),
                      by_logit);
    candidates.resize(static_cast<size_t>(params_.top_k));
  } else {
    std::sort(candidates.begin(), candidates.end(), by_logit);
  }
  normalize(candidates, 1.0f);
  if (params_.top_p < 1.0f) {
    double cumulative = 0.0;
    size_t keep = 0;
    while (keep < candidates.size() && (keep == 0 || cumulative < params_.top_p))
      cumulative += candidates[keep++].p;
    candidates.resize(keep);
  }
  if (params_.min_p > 0.0f) {
    const double floor = params_.min_p * candidates.front().p;
    const auto first_below = std::find_if(candidates.begin() + 1, candidates.end(),
                                          [&](const Candidate& c) { return c.p < floor; });
    candidates.erase(first_below, candidates.end());
  }
  normalize(candidates, params_.temperature);
  double draw = rng_.uniform();
  for (const Candidate& c : candidates) {
    draw -= c.p;
    if (draw < 0.0) return c.id;
  }
  return candidates.back().id;
}

}  // namespace eventkv::sampling
