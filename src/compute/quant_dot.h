// Dot products of one quantized weight row with an f32 vector, without
// materializing the dequantized row: each block's integer quants are
// converted and multiplied in registers and scaled once per (sub-)block.
// This is the decode path (one token: every weight is used once).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gguf/types.h"

namespace eventkv::compute {

// Sums of x over consecutive 32-element blocks ([n / 32]); quantized types
// with an offset or a min use them to apply it once per block.
std::vector<float> block_sums32(const float* x, int64_t n);

// out[r] = sum_i W[r, i] * x[i] for n_rows consecutive rows (row_bytes apart)
// of `n` elements of `type`; xsum32 from block_sums32(x, n). Types without a
// fused kernel (compute/quant_types.h) dequantize 256 values at a time.
void dot_rows(gguf::GgmlType type, const uint8_t* row, size_t row_bytes, int64_t n_rows,
              const float* x, const float* xsum32, int64_t n, float* out);

}  // namespace eventkv::compute
