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

bool by_logit(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// Softmax of candidates' logits divided by `temperature`, into p; the
// candidates in any order.
void normalize(std::vector<Candidate>& candidates, float temperature) {
  const float max_logit = std::max_element(candidates.begin(), candidates.end(), by_logit)->logit;
  double total = 0.0;
  for (Candidate& c : candidates) {
    c.p = std::exp(static_cast<double>(c.logit - max_logit) / temperature);
    total += c.p;
  }
  for (Candidate& c : candidates) c.p /= total;
}

// Keeps the most likely candidates whose probabilities reach `top_p` (at
// least one), most likely first. The nucleus is usually a few dozen of a
// vocabulary's 50k-150k tokens, so it sorts a growing prefix instead of the
// whole vocabulary: 64, then 8 times more until the sum reaches top_p.
void keep_nucleus(std::vector<Candidate>& candidates, double top_p) {
  size_t sorted = 0;
  double cumulative = 0.0;
  for (size_t prefix = 64;; prefix *= 8) {
    const size_t end = std::min(prefix, candidates.size());
    std::partial_sort(candidates.begin() + static_cast<std::ptrdiff_t>(sorted),
                      candidates.begin() + static_cast<std::ptrdiff_t>(end), candidates.end(),
                      by_logit);
    for (; sorted < end; ++sorted) {
      if (sorted > 0 && cumulative >= top_p) {
        candidates.resize(sorted);
        return;
      }
      cumulative += candidates[sorted].p;
    }
    if (end == candidates.size()) return;
  }
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
  if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < candidates.size()) {
    std::partial_sort(candidates.begin(), candidates.begin() + params_.top_k, candidates.end(),
                      by_logit);
    candidates.resize(static_cast<size_t>(params_.top_k));
  }
  if (params_.top_p < 1.0f || params_.min_p > 0.0f) normalize(candidates, 1.0f);
  if (params_.top_p < 1.0f) keep_nucleus(candidates, params_.top_p);
  if (params_.min_p > 0.0f) {
    double top = 0.0;
    for (const Candidate& c : candidates) top = std::max(top, c.p);
    const double floor = params_.min_p * top;
    std::erase_if(candidates, [&](const Candidate& c) { return c.p < floor; });
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
