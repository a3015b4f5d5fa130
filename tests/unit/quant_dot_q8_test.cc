// The int8-activation decode kernels (compute/quant_dot_q8.h) and their
// activation quantizer (compute/activation_q8.h), type by type:
// - the kernel is exact: it equals a double-precision dot product of the
//   dequantized weights with the dequantized int8 activations, up to f32
//   rounding of the block scaling (1e-5 of sum |w x|);
// - the quantizer is bounded: the result differs from the f32 path by at
//   most sum_i |w_i| d_i / 2, the rounding of each x_i to its block's grid.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "compute/activation_q8.h"
#include "compute/quant_dot.h"
#include "compute/quant_dot_q8.h"
#include "compute/quant_types.h"
#include "gguf/random_tensor.h"
#include "util/error.h"
#include "util/rng.h"

namespace eventkv::compute {
namespace {

constexpr int64_t kElems = 512;            // two K-quant blocks, sixteen 32-blocks
constexpr int64_t kRows = 7;               // the kernel's 4-row fused path and its 1-row tail
constexpr double kKernelTolerance = 1e-5;  // of sum |w x|: f32 rounding of the block scaling

constexpr gguf::GgmlType kInt8Types[] = {
    gguf::GgmlType::kQ4_0, gguf::GgmlType::kQ4_1, gguf::GgmlType::kQ5_0, gguf::GgmlType::kQ5_1,
    gguf::GgmlType::kQ8_0, gguf::GgmlType::kQ4_K, gguf::GgmlType::kQ5_K, gguf::GgmlType::kQ6_K};

// Activations whose magnitude varies from block to block, with an outlier,
// as in a transformer's residual stream.
std::vector<float> random_activations(Rng& rng, int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double block_scale = 0.1 + static_cast<double>((i / 32) % 5);
    x[i] = static_cast<float>(rng.normal() * block_scale);
  }
  x[37] = 40.0f;
  return x;
}

size_t row_bytes_of(gguf::GgmlType type, int64_t n) {
  const gguf::TypeTraits traits = gguf::type_traits(type);
  return static_cast<size_t>(n / traits.block_elems * traits.block_bytes);
}

std::vector<float> dequantized(const Q8Activations& xq) {
  std::vector<float> values(xq.q.size());
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = xq.d[i / static_cast<size_t>(xq.block)] * static_cast<float>(xq.q[i]);
  return values;
}

TEST(ActivationQ8, RoundsEachBlockToItsGrid) {
  Rng rng(5);
  std::vector<float> x = random_activations(rng, kElems);
  std::fill(x.begin() + 64, x.begin() + 96, 0.0f);  // an all-zero 32-block
  for (const int64_t block : {32, 256}) {
    SCOPED_TRACE(block);
    const Q8Activations xq = quantize_activations(x.data(), kElems, block);
    ASSERT_EQ(xq.block, block);
    ASSERT_EQ(xq.q.size(), static_cast<size_t>(kElems));
    ASSERT_EQ(xq.d.size(), static_cast<size_t>(kElems / block));
    ASSERT_EQ(xq.sums32.size(), static_cast<size_t>(kElems / 32));
    for (int64_t b = 0; b < kElems / block; ++b) {
      float amax = 0.0f;
      int max_q = 0;
      for (int64_t i = b * block; i < (b + 1) * block; ++i) {
        amax = std::max(amax, std::abs(x[i]));
        max_q = std::max(max_q, std::abs(static_cast<int>(xq.q[i])));
        EXPECT_LE(std::abs(x[i] - xq.d[b] * xq.q[i]), xq.d[b] * 0.5f * (1 + 1e-5f)) << i;
      }
      EXPECT_FLOAT_EQ(xq.d[b], amax / 127.0f);
      EXPECT_EQ(max_q, amax > 0.0f ? 127 : 0);
    }
    for (int64_t g = 0; g < kElems / 32; ++g) {
      int sum = 0;
      for (int64_t i = 32 * g; i < 32 * g + 32; ++i) sum += xq.q[i];
      EXPECT_FLOAT_EQ(xq.sums32[g], xq.d[g * 32 / block] * static_cast<float>(sum)) << g;
    }
  }
  EXPECT_THROW(quantize_activations(x.data(), 100, 32), Error);
  EXPECT_THROW(quantize_activations(x.data(), kElems, 64), Error);
}

class Int8Kernel : public ::testing::TestWithParam<gguf::GgmlType> {};

TEST_P(Int8Kernel, IsExactOnTheQuantizedActivationsAndBoundedAgainstF32) {
  const gguf::GgmlType type = GetParam();
  const int64_t block = q8_block_elems(type);
  ASSERT_GT(block, 0);
  const size_t row_bytes = row_bytes_of(type, kElems);
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed);
    Rng rng(seed);
    const std::vector<uint8_t> weights = gguf::random_tensor_bytes(type, kElems, kRows, rng, 0.05f);
    const std::vector<float> x = random_activations(rng, kElems);
    const Q8Activations xq = quantize_activations(x.data(), kElems, block);
    const std::vector<float> xd = dequantized(xq);
    float int8[kRows];
    float f32[kRows];
    dot_rows_q8(type, weights.data(), row_bytes, kRows, Q8Batch{{xq}, {}}, int8, 0);
    const std::vector<float> xsums = block_sums32(x.data(), kElems);
    dot_rows(type, weights.data(), row_bytes, kRows, x.data(), xsums.data(), kElems, f32);
    std::vector<float> w(static_cast<size_t>(kElems));
    for (int64_t r = 0; r < kRows; ++r) {
      dequantize_row(type, weights.data() + r * row_bytes, w.data(), kElems);
      double reference = 0.0;
      double magnitude = 0.0;  // sum |w x|, the scale of the rounding errors
      double rounding = 0.0;   // sum |w| d / 2, the most rounding x can move the product
      for (int64_t i = 0; i < kElems; ++i) {
        reference += static_cast<double>(w[i]) * xd[i];
        magnitude += std::abs(static_cast<double>(w[i]) * xd[i]);
        rounding += std::abs(static_cast<double>(w[i])) * xq.d[i / block] / 2.0;
      }
      ASSERT_GT(magnitude, 0.0);
      EXPECT_NEAR(int8[r], reference, kKernelTolerance * magnitude) << "row " << r;
      EXPECT_NEAR(int8[r], f32[r], rounding + kKernelTolerance * magnitude) << "row " << r;
    }
  }
}

// Tokens multiplied together give each token the bits it gets alone, for
// every tile size and tail.
TEST_P(Int8Kernel, ManyTokensGiveEachTokenItsOwnBits) {
  constexpr int64_t kMaxTokens = 19;  // two tiles of 8 and a tail of 3
  const gguf::GgmlType type = GetParam();
  const size_t row_bytes = row_bytes_of(type, kElems);
  Rng rng(11);
  const std::vector<uint8_t> weights = gguf::random_tensor_bytes(type, kElems, kRows, rng, 0.05f);
  std::vector<float> x;
  for (int64_t t = 0; t < kMaxTokens; ++t) {
    const std::vector<float> token = random_activations(rng, kElems);
    x.insert(x.end(), token.begin(), token.end());
  }
  const int64_t block = q8_block_elems(type);
  std::vector<float> alone(static_cast<size_t>(kMaxTokens * kRows));
  for (int64_t t = 0; t < kMaxTokens; ++t) {
    const Q8Batch one = quantize_batch(x.data() + t * kElems, 1, kElems, block);
    ASSERT_TRUE(one.tiles.empty());
    dot_rows_q8(type, weights.data(), row_bytes, kRows, one, &alone[t * kRows], 0);
  }
  for (int64_t n = 2; n <= kMaxTokens; ++n) {
    SCOPED_TRACE(n);
    const Q8Batch batch = quantize_batch(x.data(), n, kElems, block);
    // Tiles with AVX-512; without, groups of up to 4 tokens.
    ASSERT_TRUE(batch.tiles.empty() || batch.tiles.size() == static_cast<size_t>((n + 7) / 8));
    std::vector<float> together(static_cast<size_t>(n * kRows));
    dot_rows_q8(type, weights.data(), row_bytes, kRows, batch, together.data(), kRows);
    for (int64_t i = 0; i < n * kRows; ++i)
      ASSERT_EQ(together[i], alone[i]) << "token " << i / kRows << " row " << i % kRows;
  }
}

INSTANTIATE_TEST_SUITE_P(Types, Int8Kernel, ::testing::ValuesIn(kInt8Types),
                         [](const auto& info) { return std::string(gguf::type_name(info.param)); });

TEST(Int8Kernel, OtherTypesHaveNoKernel) {
  for (const gguf::GgmlType type :
       {gguf::GgmlType::kF32, gguf::GgmlType::kF16, gguf::GgmlType::kBF16, gguf::GgmlType::kQ2_K,
        gguf::GgmlType::kQ3_K}) {
    EXPECT_EQ(q8_block_elems(type), 0) << gguf::type_name(type);
  }
  const std::vector<float> x(256, 1.0f);
  const Q8Batch xq = quantize_batch(x.data(), 1, 256, 256);
  const std::vector<uint8_t> row(row_bytes_of(gguf::GgmlType::kQ3_K, 256));
  float out = 0.0f;
  EXPECT_THROW(dot_rows_q8(gguf::GgmlType::kQ3_K, row.data(), row.size(), 1, xq, &out, 0), Error);
  // Activations in blocks of 256 do not fit a 32-block weight type.
  const std::vector<uint8_t> q8_row(row_bytes_of(gguf::GgmlType::kQ8_0, 256));
  EXPECT_THROW(dot_rows_q8(gguf::GgmlType::kQ8_0, q8_row.data(), q8_row.size(), 1, xq, &out, 0),
               Error);
}

}  // namespace
}  // namespace eventkv::compute
