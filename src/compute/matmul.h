// Weight-times-activation products with the weights in their GGUF type:
// rows are dequantized on the fly into small f32 tiles (never the whole
// matrix), so activations stay f32 end to end unless a caller opts in to
// int8 activations for decode.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compute/thread_pool.h"
#include "model/weights.h"

namespace eventkv::compute {

using model::WeightView;

// How the few-token products (decode: n_tokens < 3) treat the activations.
// kF32 is exact (logits match transformers float32); kInt8 rounds each
// token's x to 8 bits per block (compute/activation_q8.h) and multiplies in
// integers, as llama.cpp does: decode 1.2x (Q4_1) to 2.6x (Q4_K_M) faster
// on the real models, logits move by a few tenths.
// Larger batches use f32, but with kInt8 on a matrix that has int8 panels
// (model/weights.h), where they multiply int8 activations (per 32 values)
// in integers (compute/int8_gemm.h). Types without an integer kernel always
// use f32.
// The Rowwise variants keep the fused dots at every batch size: a row's bits
// then do not depend on which rows share its batch (the server's replies,
// decoded in steps shared by several sessions and replayed whole on
// restore, hold the same rows). Slower than the batched kernel for long
// batches.
// kInt8Panels is batch-independent too: the integer product on the int8
// panels at every batch size where a matrix has them (int8 dots where it
// has not). Several tokens multiply faster than with kInt8Rowwise's dots
// (SmolLM2, 8 tokens, AVX2: 1.3x); one token slower, as the panels hold 1.5
// bytes a weight. The server's decode steps of several sessions.
enum class ActivationPrecision { kF32, kInt8, kF32Rowwise, kInt8Rowwise, kInt8Panels };

// y[t, :] = W x[t, :] for t < n_tokens. x: [n_tokens, n_in], y: [n_tokens, n_out].
// Splits output rows across the pool's threads.
void matmul(const WeightView& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool,
            ActivationPrecision precision);

// Dequantizes one whole row (the embedding lookup).
void dequantize_weight_row(const WeightView& w, int64_t row, float* out);

}  // namespace eventkv::compute
