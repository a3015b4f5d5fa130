// Weight-times-activation products with the weights in their GGUF type:
// rows are dequantized on the fly into small f32 tiles (never the whole
// matrix), so activations stay f32 end to end.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compute/thread_pool.h"
#include "model/weights.h"

namespace eventkv::compute {

using model::WeightView;

// y[t, :] = W x[t, :] for t < n_tokens. x: [n_tokens, n_in], y: [n_tokens, n_out].
// Splits output rows across the pool's threads.
void matmul(const WeightView& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool);

// Dequantizes one whole row (the embedding lookup).
void dequantize_weight_row(const WeightView& w, int64_t row, float* out);

}  // namespace eventkv::compute
