// The many-token product with int8 activations on int8 panels
// (model/weights.h Int8Panels): each 4 columns of 16 rows times one token's
// 4 activation bytes is one vpdpbusd (AVX-512 VNNI; two vpmaddubsw on AVX2,
// whose int16 pairs widen once per 8 columns), integer sums per scale
// (32 or 16 columns), scaled in f32. Used by compute::matmul for kInt8 precision when a
// matrix has int8 panels. Every token's sums run in the same order whatever
// the other tokens, so a token's row does not depend on its batch.
#pragma once

#include <cstdint>
#include <vector>

#include "compute/thread_pool.h"
#include "model/weights.h"

namespace eventkv::compute {

// Activations quantized per 32 values: x ~= d * q, with the offsets' sums
// dsum16 = d * sum(q) per 16 values and dsum32 per 32. Tokens come in tiles
// of `tile_tokens` (the last padded with zeros; with AVX-512 4, 8 or 12
// as the token count asks), laid out so that a tile's 4
// quants of column k are adjacent:
// q[((tile * n / 4 + k / 4) * tile_tokens + t) * 4 + k % 4], and
// d[(tile * n / 32 + k / 32) * tile_tokens + t], dsum16 and dsum32 likewise.
struct Int8Rows {
  int64_t n_tokens = 0;
  int64_t n = 0;
  int64_t tile_tokens = 0;
  std::vector<int8_t> q;
  std::vector<float> d;
  std::vector<float> dsum16;
  std::vector<float> dsum32;
};

// n a multiple of 32. Tokens are quantized in parallel on `pool`.
Int8Rows quantize_rows(const float* x, int64_t n_tokens, int64_t n, ThreadPool& pool);

// y[t * w.n_out + row] for every token and the rows of groups
// [group_begin, group_end).
void int8_gemm(const model::Int8Panels& w, const Int8Rows& x, float* y, int64_t group_begin,
               int64_t group_end);

}  // namespace eventkv::compute
