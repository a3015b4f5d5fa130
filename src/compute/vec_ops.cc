#include "compute/vec_ops.h"

#include <cmath>

#include "compute/simd.h"

namespace eventkv::compute {

float dot(const float* a, const float* b, int64_t n) {
  v16f acc0{};
  v16f acc1{};
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    acc0 = load16(a + i) * load16(b + i) + acc0;
    acc1 = load16(a + i + kLanes) * load16(b + i + kLanes) + acc1;
  }
  for (; i + kLanes <= n; i += kLanes) acc0 = load16(a + i) * load16(b + i) + acc0;
  float total = hsum(acc0 + acc1);
  for (; i < n; ++i) total += a[i] * b[i];
  return total;
}

void rms_norm(const float* x, const float* weight, float eps, int64_t n, float* out) {
  double sum_sq = 0.0;
  for (int64_t i = 0; i < n; ++i) sum_sq += static_cast<double>(x[i]) * x[i];
  const auto scale = static_cast<float>(1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps));
  if (weight == nullptr) {
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] * scale;
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] * scale * weight[i];
  }
}

void add_in_place(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void scale_in_place(float* y, float factor, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] *= factor;
}

void axpy(float* y, float a, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store16(y + i, load16(x + i) * a + load16(y + i));
  for (; i < n; ++i) y[i] += a * x[i];
}

void silu_mul(float* gate, const float* up, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const v16f g = load16(gate + i);
    store16(gate + i, g / (1.0f + exp16(-g)) * load16(up + i));
  }
  for (; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void gelu_tanh_mul(float* gate, const float* up, int64_t n) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  constexpr float kCubic = 0.044715f;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const v16f g = load16(gate + i);
    // 0.5 g (1 + tanh(y)) = g * sigmoid(2y) = g / (1 + e^{-2y})
    const v16f y = kSqrt2OverPi * (g + kCubic * g * g * g);
    store16(gate + i, g / (1.0f + exp16(-2.0f * y)) * load16(up + i));
  }
  for (; i < n; ++i) {
    const float g = gate[i];
    const float y = kSqrt2OverPi * (g + kCubic * g * g * g);
    gate[i] = 0.5f * g * (1.0f + std::tanh(y)) * up[i];
  }
}

void softmax(float* x, int64_t n) {
  float max_value = x[0];
  for (int64_t i = 1; i < n; ++i) max_value = x[i] > max_value ? x[i] : max_value;
  v16f sum16{};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const v16f e = exp16(load16(x + i) - max_value);
    store16(x + i, e);
    sum16 += e;
  }
  float sum = hsum(sum16);
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - max_value);
    sum += x[i];
  }
  scale_in_place(x, 1.0f / sum, n);
}

}  // namespace eventkv::compute
