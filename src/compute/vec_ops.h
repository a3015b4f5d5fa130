// Elementwise and reduction kernels on float rows. All take plain pointers and
// lengths; none allocate.
#pragma once

#include <cstdint>

namespace eventkv::compute {

float dot(const float* a, const float* b, int64_t n);

// out = x / sqrt(mean(x^2) + eps) * weight (weight may be null: no scaling).
void rms_norm(const float* x, const float* weight, float eps, int64_t n, float* out);

void add_in_place(float* y, const float* x, int64_t n);  // y += x
void scale_in_place(float* y, float factor, int64_t n);  // y *= factor

// gate = silu(gate) * up, or gelu_tanh(gate) * up: the gated FFN activation.
void silu_mul(float* gate, const float* up, int64_t n);
void gelu_tanh_mul(float* gate, const float* up, int64_t n);

// In place: x = softmax(x); returns nothing. n >= 1.
void softmax(float* x, int64_t n);

// y += a * x
void axpy(float* y, float a, const float* x, int64_t n);

}  // namespace eventkv::compute
