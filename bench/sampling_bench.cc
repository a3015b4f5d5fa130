// One sampled token from a vocabulary's logits, as every reply step with a
// temperature draws one: SmolLM2's 49,152 and Qwen2.5's 151,936 tokens.
// The logits are peaked like an instruct model's next-token distribution:
// N(0, 2.5), with 8 tokens raised by 15 (they hold most of the mass; the
// top-p 0.95 nucleus reaches into the rest, further in the larger vocabulary).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "sampling/sampler.h"
#include "util/rng.h"

namespace {

using eventkv::sampling::Sampler;

std::vector<float> peaked_logits(int64_t vocab) {
  eventkv::Rng rng(7);
  std::vector<float> logits(static_cast<size_t>(vocab));
  for (float& x : logits) x = static_cast<float>(2.5 * rng.normal());
  for (int i = 0; i < 8; ++i) logits[rng.below(static_cast<uint64_t>(vocab))] += 15.0f;
  return logits;
}

// range(1): 0 = temperature 1 alone, 1 = with top-p 0.95.
void BM_Sample(benchmark::State& state) {
  const std::vector<float> logits = peaked_logits(state.range(0));
  const float top_p = state.range(1) == 0 ? 1.0f : 0.95f;
  Sampler sampler({.temperature = 1.0f, .top_p = top_p, .seed = 1});
  for (auto _ : state) benchmark::DoNotOptimize(sampler.sample(logits));
}
BENCHMARK(BM_Sample)
    ->ArgsProduct({{49152, 151936}, {0, 1}})
    ->ArgNames({"vocab", "top_p"})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
