// An activation vector rounded to int8, the input of the integer decode
// kernels (compute/quant_dot_q8.h). The layout is llama.cpp's Q8_0 (blocks
// of 32) or Q8_K (blocks of 256, with sums of each 16): one f32 scale per
// block, d = max|x| / 127, and q = round(x / d), so |x - d q| <= d / 2.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace eventkv::compute {

struct Q8Activations {
  int64_t block = 0;          // 32 or 256 values per scale
  std::vector<int8_t> q;      // [n]
  std::vector<float> d;       // [n / block]
  std::vector<float> sums32;  // [n / 32] d times the sum of each 32 quants: weight offsets
                              // and mins multiply them instead of every value
};

// Quantizes x[0, n); n must be a multiple of `block` (32 or 256). Throws
// Error otherwise. Cost: O(n), no threads.
Q8Activations quantize_activations(const float* x, int64_t n, int64_t block);

// Up to kTokens tokens' activations side by side, what the batched integer
// kernels read: one 64-byte load holds quants 8 i .. 8 i + 7 of every token,
// so two weight words times it are a dot product step of each token at once.
// Lanes past n_tokens hold zeros.
struct Q8TokenLanes {
  static constexpr int64_t kTokens = 8;
  int64_t block = 0;
  int64_t n_tokens = 0;
  std::vector<int8_t> q;      // [n / 8][kTokens][8]
  std::vector<float> d;       // [n / block][kTokens]
  std::vector<float> sums32;  // [n / 32][kTokens]
};

// The activations of the tokens one matrix product multiplies: each token's
// and, for several tokens on AVX-512, the same side by side in tiles of kTokens.
struct Q8Batch {
  std::vector<Q8Activations> tokens;
  std::vector<Q8TokenLanes> tiles;  // empty for one token, and without AVX-512
};

// Quantizes the n_tokens rows of x ([n_tokens][n]) as quantize_activations
// does each, and with AVX-512 lays them side by side when there are several.
Q8Batch quantize_batch(const float* x, int64_t n_tokens, int64_t n, int64_t block);

}  // namespace eventkv::compute
