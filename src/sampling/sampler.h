// Picks the next token from logits: greedy, or top-k, top-p and min-p
// filtering (on the untempered distribution, as llama.cpp does) followed by
// temperature and a seeded draw. Same seed, same logits: same tokens.
#pragma once

#include <cstdint>
#include <span>

#include "util/rng.h"

namespace eventkv::sampling {

struct SamplingParams {
  float temperature = 0.0f;  // 0: greedy
  int32_t top_k = 0;         // 0: off
  float top_p = 1.0f;        // 1: off
  float min_p = 0.0f;        // 0: off
  uint64_t seed = 0;
};

class Sampler {
 public:
  // Throws Error for a temperature that is negative or not finite, a
  // negative top_k or top_p / min_p outside [0, 1].
  explicit Sampler(const SamplingParams& params);

  int32_t sample(std::span<const float> logits);

 private:
  SamplingParams params_;
  Rng rng_;
};

// Index of the largest logit (the first on ties).
int32_t argmax(std::span<const float> logits);

}  // namespace eventkv::sampling
