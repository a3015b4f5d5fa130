// An activation vector rounded to int8, the input of the integer decode
// kernels (compute/quant_dot_q8.h). The layout is llama.cpp's Q8_0 (blocks
// of 32) or Q8_K (blocks of 256, with sums of each 16): one f32 scale per
// block, d = max|x| / 127, and q = round(x / d), so |x - d q| <= d / 2.
#pragma once

#include <cstdint>
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

}  // namespace eventkv::compute
