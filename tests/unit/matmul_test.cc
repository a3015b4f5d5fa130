// The many-token product sums each 256-column panel's products apart (one
// fused multiply-add per column, in column order) and then adds the panels
// in order. A scalar loop in that order must give the same outputs bit for
// bit, on a shape whose columns span two strips and end inside a panel, whose
// rows end inside a panel, and whose tokens leave a partial block; with the
// weights dequantized per call and packed into panels at load.
#include "compute/matmul.h"
#include "compute/kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string_view>
#include <vector>

namespace eventkv::compute {
namespace {

constexpr int64_t kIn = 2600;
constexpr int64_t kOut = 70;
constexpr int64_t kTokens = 13;

std::vector<float> random_values(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> out(static_cast<size_t>(n));
  for (float& v : out) v = value(rng);
  return out;
}

// The kernels' order of sums, with each product added in one FMA where the
// kernel variant has FMA (every one but the x86-64 baseline).
std::vector<float> panel_order_product(const std::vector<float>& w, const std::vector<float>& x,
                                       bool fused) {
  std::vector<float> y(static_cast<size_t>(kTokens * kOut));
  for (int64_t t = 0; t < kTokens; ++t) {
    for (int64_t r = 0; r < kOut; ++r) {
      float sum = 0.0f;
      for (int64_t k0 = 0; k0 < kIn; k0 += model::kPanelDepth) {
        float acc = 0.0f;
        for (int64_t k = k0; k < std::min(kIn, k0 + model::kPanelDepth); ++k)
          acc = fused ? std::fma(x[t * kIn + k], w[r * kIn + k], acc)
                      : acc + x[t * kIn + k] * w[r * kIn + k];
        sum += acc;
      }
      y[t * kOut + r] = sum;
    }
  }
  return y;
}

TEST(Matmul, ManyTokensSumPanelByPanelBitForBit) {
  const std::vector<float> w = random_values(kOut * kIn, 1);
  const std::vector<float> x = random_values(kTokens * kIn, 2);
  WeightView view;
  view.type = gguf::GgmlType::kF32;
  view.n_in = kIn;
  view.n_out = kOut;
  view.data = reinterpret_cast<const uint8_t*>(w.data());
  view.row_bytes = kIn * sizeof(float);
  const AlignedVector<float> panels = model::pack_panels(view);
  const std::vector<float> expected =
      panel_order_product(w, x, std::string_view(kernels().isa) != "x86_64");
  ThreadPool pool(2);
  for (const float* packed : {static_cast<const float*>(nullptr), panels.data()}) {
    view.panels = packed;
    std::vector<float> y(expected.size(), NAN);
    matmul(view, x.data(), kTokens, y.data(), pool, ActivationPrecision::kF32);
    EXPECT_EQ(0, std::memcmp(y.data(), expected.data(), y.size() * sizeof(float)))
        << (packed != nullptr ? "packed panels" : "dequantized per call");
  }
}

}  // namespace
}  // namespace eventkv::compute
