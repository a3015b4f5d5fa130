// Dot products of quantized weight rows with int8-rounded activations
// (compute/activation_q8.h), the decode path llama.cpp takes: each weight
// block's quants are multiplied with the activation quants in integers and
// the f32 scales are applied once per block, instead of converting every
// weight to f32. The result equals sum_i dequant(W)[r, i] * d q[i] up to f32
// rounding of the per-block scaling; it differs from the f32 path by the
// rounding of x to 8 bits, so it is opt-in (ActivationPrecision::kInt8).
#pragma once

#include <cstddef>
#include <cstdint>

#include "compute/activation_q8.h"
#include "gguf/types.h"

namespace eventkv::compute {

// The activation block length the integer kernel of `type` needs (its
// q8_block in compute/quant_types.h: 32 or 256), 0 for types without one
// (they keep the f32 path).
int64_t q8_block_elems(gguf::GgmlType type);

// out[t * out_stride + r] = sum_i W[r, i] * x_t[i] for n_rows consecutive
// rows (row_bytes apart) of `type` and every token t of x, quantized in
// blocks of q8_block_elems(type) (throws Error otherwise). Several tokens
// are multiplied side by side (x.tiles), each weight block unpacked once
// for all; a token's result has the same bits alone or batched.
void dot_rows_q8(gguf::GgmlType type, const uint8_t* row, size_t row_bytes, int64_t n_rows,
                 const Q8Batch& x, float* out, int64_t out_stride);

}  // namespace eventkv::compute
