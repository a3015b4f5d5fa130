#include "compute/activation_q8.h"

#include <algorithm>
#include <cstring>

#include "compute/simd.h"
#include "util/error.h"

namespace eventkv::compute {

Q8Activations quantize_activations(const float* x, int64_t n, int64_t block) {
  if ((block != 32 && block != 256) || n % block != 0)
    fail("quantize_activations: ", n, " values do not split into blocks of ", block);
  Q8Activations out;
  out.block = block;
  out.q.resize(static_cast<size_t>(n));
  out.d.resize(static_cast<size_t>(n / block));
  out.sums32.resize(static_cast<size_t>(n / 32));
  for (int64_t b = 0; b < n / block; ++b) {
    const float* xb = x + b * block;
    v16f amax{};
    for (int64_t i = 0; i < block; i += kLanes) {
      const v16f v = load16(xb + i);
      const v16f magnitude = select(v < 0.0f, -v, v);
      amax = select(magnitude > amax, magnitude, amax);
    }
    const float d = hmax(amax) / 127.0f;
    const float inverse = d > 0.0f ? 1.0f / d : 0.0f;
    out.d[b] = d;
    for (int64_t i = 0; i < block; i += 2 * kLanes) {
      // |x| * inverse <= 127 up to rounding, which the rounding absorbs.
      const v16f low = (load16(xb + i) * inverse + kRoundingShift) - kRoundingShift;
      const v16f high = (load16(xb + i + kLanes) * inverse + kRoundingShift) - kRoundingShift;
      const v16i8 q_low = to_i8(to_i32(low));
      const v16i8 q_high = to_i8(to_i32(high));
      std::memcpy(out.q.data() + b * block + i, &q_low, sizeof(q_low));
      std::memcpy(out.q.data() + b * block + i + kLanes, &q_high, sizeof(q_high));
      out.sums32[(b * block + i) / 32] = d * hsum_integers(low + high);
    }
  }
  return out;
}

namespace {

Q8TokenLanes token_lanes(std::span<const Q8Activations> xs) {
  constexpr int64_t kT = Q8TokenLanes::kTokens;
  Q8TokenLanes lanes;
  lanes.block = xs[0].block;
  lanes.n_tokens = static_cast<int64_t>(xs.size());
  const auto n = static_cast<int64_t>(xs[0].q.size());
  lanes.q.assign(static_cast<size_t>(n * kT), 0);
  lanes.d.assign(static_cast<size_t>(n / lanes.block * kT), 0.0f);
  lanes.sums32.assign(static_cast<size_t>(n / 32 * kT), 0.0f);
  for (int64_t t = 0; t < lanes.n_tokens; ++t) {
    const Q8Activations& x = xs[static_cast<size_t>(t)];
    for (int64_t i = 0; i < n / 8; ++i)
      std::memcpy(lanes.q.data() + (i * kT + t) * 8, x.q.data() + i * 8, 8);
    for (size_t b = 0; b < x.d.size(); ++b) lanes.d[b * kT + t] = x.d[b];
    for (size_t g = 0; g < x.sums32.size(); ++g) lanes.sums32[g * kT + t] = x.sums32[g];
  }
  return lanes;
}

}  // namespace

Q8Batch quantize_batch(const float* x, int64_t n_tokens, int64_t n, int64_t block) {
  Q8Batch batch;
  batch.tokens.reserve(static_cast<size_t>(n_tokens));
  for (int64_t t = 0; t < n_tokens; ++t) {
    batch.tokens.push_back(quantize_activations(x + t * n, n, block));
  }
  // Tiles only where AVX-512 holds their 64-byte lanes in registers: with
  // AVX2 they spill to the stack, and 8 tokens of Q4_1 ran 6x slower in a
  // tile than one by one (dot_rows_int8 then takes the tokens in groups).
#if defined(__AVX512BW__)
  constexpr bool kTiles = true;
#else
  constexpr bool kTiles = false;
#endif
  if (!kTiles || n_tokens < 2) return batch;
  for (int64_t t = 0; t < n_tokens; t += Q8TokenLanes::kTokens) {
    const int64_t count = std::min(Q8TokenLanes::kTokens, n_tokens - t);
    batch.tiles.push_back(token_lanes({batch.tokens.data() + t, static_cast<size_t>(count)}));
  }
  return batch;
}

}  // namespace eventkv::compute
