// Int8 panels (model/weights.h) and the many-token integer product that
// reads them (compute/int8_gemm.h), for every type that packs:
// - the panels hold the dequantized values: scale * q - offset equals
//   dequantize_row up to one f32 rounding;
// - matmul with kInt8 on them equals a double-precision product of the
//   dequantized weights with x, within what rounding x to 8 bits per 32
//   values can move it (half a step per value);
// - a token's row has the same bits whatever tokens share its batch, and
//   with kInt8Panels however few tokens the batch holds;
// - every instruction set this CPU runs computes the same integer sums (or,
//   for Q8_0 on AVX2, those of the signed quants), so their products differ
//   by f32 rounding at most (fused multiply-adds or not), with Q8_0's quants
//   and the activations at their limits too.
// The row count (40) leaves the last group of 16 padded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compute/kernels.h"
#include "compute/matmul.h"
#include "compute/quant_types.h"
#include "gguf/random_tensor.h"
#include "model/weights.h"
#include "util/rng.h"

namespace eventkv::compute {
namespace {

constexpr int64_t kGemmIn = 512;
constexpr int64_t kGemmOut = 40;
constexpr int64_t kGemmTokens = 19;

const gguf::GgmlType kPackable[] = {
    gguf::GgmlType::kQ4_0, gguf::GgmlType::kQ4_1, gguf::GgmlType::kQ5_0, gguf::GgmlType::kQ5_1,
    gguf::GgmlType::kQ8_0, gguf::GgmlType::kQ4_K, gguf::GgmlType::kQ5_K, gguf::GgmlType::kQ6_K};

// The bits of the type's quants in the panels.
int64_t quant_bits(gguf::GgmlType type) {
  switch (type) {
    case gguf::GgmlType::kQ5_0:
    case gguf::GgmlType::kQ5_1:
    case gguf::GgmlType::kQ5_K:
      return 5;
    case gguf::GgmlType::kQ6_K:
      return 6;
    case gguf::GgmlType::kQ8_0:
      return 8;
    default:
      return 4;
  }
}

class Int8Gemm : public ::testing::TestWithParam<gguf::GgmlType> {
 protected:
  void SetUp() override {
    Rng rng(7);
    bytes_ = gguf::random_tensor_bytes(GetParam(), kGemmIn, kGemmOut, rng, 0.05f);
    w_.type = GetParam();
    w_.n_in = kGemmIn;
    w_.n_out = kGemmOut;
    w_.data = bytes_.data();
    w_.row_bytes = bytes_.size() / kGemmOut;
    ASSERT_TRUE(model::int8_packable(w_));
    panels_ = model::pack_int8_panels(w_);
    w_.int8 = &panels_;
    x_.resize(static_cast<size_t>(kGemmTokens * kGemmIn));
    for (float& v : x_) v = static_cast<float>(rng.normal());
  }

  std::vector<float> dequantized_row(int64_t r) const {
    std::vector<float> row(static_cast<size_t>(kGemmIn));
    dequantize_row(w_.type, w_.data + r * w_.row_bytes, row.data(), kGemmIn);
    return row;
  }

  std::vector<float> product(const float* x, int64_t n_tokens) {
    std::vector<float> y(static_cast<size_t>(n_tokens * kGemmOut));
    matmul(w_, x, n_tokens, y.data(), pool_, ActivationPrecision::kInt8);
    return y;
  }

  std::vector<uint8_t> bytes_;
  model::WeightView w_;
  model::Int8Panels panels_;
  std::vector<float> x_;
  ThreadPool pool_{2};
};

TEST_P(Int8Gemm, PanelsHoldTheDequantizedValues) {
  const size_t values = static_cast<size_t>(panels_.groups() * model::kInt8GroupRows * kGemmIn);
  EXPECT_EQ(panels_.q.size(), panels_.nibbles ? values / 2 : values);
  EXPECT_LE(panels_.q.size() + (panels_.scale.size() + panels_.offset.size()) * sizeof(float),
            static_cast<size_t>(w_.int8_panel_bytes()));
  const int64_t columns = panels_.scale_columns;
  EXPECT_EQ(columns, GetParam() == gguf::GgmlType::kQ6_K ? 16 : 32);
  const int64_t scale_groups = kGemmIn / columns;
  for (int64_t r = 0; r < kGemmOut; ++r) {
    const std::vector<float> row = dequantized_row(r);
    const float largest = std::abs(*std::max_element(
        row.begin(), row.end(), [](float a, float b) { return std::abs(a) < std::abs(b); }));
    const int64_t g = r / model::kInt8GroupRows;
    const int64_t lane = r % model::kInt8GroupRows;
    for (int64_t k = 0; k < kGemmIn; ++k) {
      const size_t at = static_cast<size_t>((g * scale_groups + k / columns) * 16 + lane);
      const uint8_t q = panels_.quant(r, k);
      ASSERT_LT(q, 1 << quant_bits(GetParam()));
      const float value = panels_.scale[at] * static_cast<float>(q) - panels_.offset[at];
      ASSERT_NEAR(value, row[k], 2e-7 * largest) << "row " << r << ", column " << k;
    }
  }
}

TEST_P(Int8Gemm, EqualsTheProductWithinTheActivationRounding) {
  const std::vector<float> y = product(x_.data(), kGemmTokens);
  for (int64_t r = 0; r < kGemmOut; ++r) {
    const std::vector<float> w = dequantized_row(r);
    for (int64_t t = 0; t < kGemmTokens; ++t) {
      const float* x = x_.data() + t * kGemmIn;
      double reference = 0.0;
      double bound = 0.0;
      for (int64_t c = 0; c < kGemmIn; c += 32) {
        double step = 0.0;
        for (int64_t k = c; k < c + 32; ++k) step = std::max(step, std::abs(double{x[k]}) / 127.0);
        for (int64_t k = c; k < c + 32; ++k) {
          reference += double{w[k]} * x[k];
          bound += std::abs(double{w[k]}) * (step / 2 + 1e-6 * std::abs(double{x[k]}));
        }
      }
      EXPECT_NEAR(y[t * kGemmOut + r], reference, bound) << "row " << r << ", token " << t;
    }
  }
}

TEST_P(Int8Gemm, ATokensRowDoesNotDependOnItsBatch) {
  const std::vector<float> all = product(x_.data(), kGemmTokens);
  for (int64_t t0 = 0; t0 + 3 <= kGemmTokens; t0 += 4) {
    const std::vector<float> three = product(x_.data() + t0 * kGemmIn, 3);
    for (int64_t i = 0; i < 3 * kGemmOut; ++i) {
      ASSERT_EQ(std::memcmp(&three[i], &all[t0 * kGemmOut + i], sizeof(float)), 0)
          << "token " << t0 + i / kGemmOut << ", row " << i % kGemmOut;
    }
  }
}

// Panels know their quants' bits (4-bit ones packed as nibbles), and their
// product (on AVX2 widened every 32 columns for 4 bits, 16 for 5) has the
// bits of the product on bytes widened every 8 columns, here too with
// every activation at +-127 and every quant at its largest, the int16
// sums' worst case.
TEST_P(Int8Gemm, NarrowQuantsGiveTheBitsOfTheWideningEvery8Columns) {
  const int64_t bits = quant_bits(GetParam());
  ASSERT_EQ(panels_.quant_bits, bits);
  ASSERT_EQ(panels_.nibbles, bits == 4);
  if (bits == 8) GTEST_SKIP() << "8-bit quants take their own tile (Int8GemmEightBit)";
  model::Int8Panels bytes = model::pack_int8_panels(w_, /*nibbles=*/false);
  ASSERT_FALSE(bytes.nibbles);
  ASSERT_EQ(bytes.q.size(), panels_.q.size() * (bits == 4 ? 2 : 1));
  bytes.quant_bits = 6;
  std::vector<float> x = x_;
  for (int64_t i = 0; i < kGemmTokens * kGemmIn; ++i) x[i] = (i / kGemmIn) % 2 == 0 ? 1.0f : -1.0f;
  for (const std::vector<float>* input : {&x_, &x}) {
    if (input == &x) {
      std::fill(panels_.q.begin(), panels_.q.end(), uint8_t(bits == 4 ? 0xFF : (1 << bits) - 1));
      std::fill(bytes.q.begin(), bytes.q.end(), uint8_t((1 << bits) - 1));
    }
    const std::vector<float> narrow = product(input->data(), kGemmTokens);
    w_.int8 = &bytes;
    const std::vector<float> every8 = product(input->data(), kGemmTokens);
    w_.int8 = &panels_;
    ASSERT_EQ(std::memcmp(narrow.data(), every8.data(), narrow.size() * sizeof(float)), 0)
        << (input == &x ? "largest quants and activations" : "random");
  }
}

// kInt8Panels multiplies on the panels at every batch size: one or two
// tokens alone (kInt8 would take the fused dots) give their rows in kInt8's
// many-token product, bit for bit.
TEST_P(Int8Gemm, PanelsPrecisionGivesTheManyTokenRowsToFewTokens) {
  const std::vector<float> all = product(x_.data(), kGemmTokens);
  for (const int64_t n : {1, 2}) {
    std::vector<float> few(static_cast<size_t>(n * kGemmOut));
    matmul(w_, x_.data() + 5 * kGemmIn, n, few.data(), pool_, ActivationPrecision::kInt8Panels);
    for (int64_t i = 0; i < n * kGemmOut; ++i) {
      ASSERT_EQ(std::memcmp(&few[i], &all[5 * kGemmOut + i], sizeof(float)), 0)
          << n << " tokens: token " << 5 + i / kGemmOut << ", row " << i % kGemmOut;
    }
  }
}

// Every instruction set's product on x against the first's.
void expect_variants_agree(const model::WeightView& w, const std::vector<float>& x,
                           ThreadPool& pool) {
  const std::vector<const Kernels*> variants = supported_kernels();
  std::vector<std::vector<float>> products;
  for (const Kernels* variant : variants) {
    products.emplace_back(static_cast<size_t>(kGemmTokens * kGemmOut));
    variant->matmul(w, x.data(), kGemmTokens, products.back().data(), pool,
                    ActivationPrecision::kInt8);
  }
  for (size_t v = 1; v < variants.size(); ++v) {
    for (size_t i = 0; i < products[0].size(); ++i) {
      ASSERT_NEAR(products[v][i], products[0][i], 1e-5f * (1.0f + std::abs(products[0][i])))
          << variants[v]->isa << " against " << variants[0]->isa << ", value " << i;
    }
  }
}

TEST_P(Int8Gemm, EveryInstructionSetAgreesToF32Rounding) {
  expect_variants_agree(w_, x_, pool_);
}

INSTANTIATE_TEST_SUITE_P(Types, Int8Gemm, ::testing::ValuesIn(kPackable),
                         [](const auto& info) { return std::string(gguf::type_name(info.param)); });

// Q8_0's quants at -128 and 127 with activations at +-127: AVX2's signed
// products are the int16 pairs' worst case there, and must still give the
// other instruction sets' sums.
class Int8GemmEightBit : public Int8Gemm {};

TEST_P(Int8GemmEightBit, QuantsAtTheirLimitsAgreeAcrossInstructionSets) {
  ASSERT_EQ(panels_.quant_bits, 8);
  for (size_t i = 0; i < panels_.q.size(); ++i) panels_.q[i] = (i / 4) % 3 == 0 ? 0 : 255;
  std::vector<float> x = x_;
  for (int64_t i = 0; i < kGemmTokens * kGemmIn; ++i) x[i] = (i / kGemmIn) % 2 == 0 ? 1.0f : -1.0f;
  expect_variants_agree(w_, x, pool_);
}

INSTANTIATE_TEST_SUITE_P(Types, Int8GemmEightBit, ::testing::Values(gguf::GgmlType::kQ8_0),
                         [](const auto& info) { return std::string(gguf::type_name(info.param)); });

TEST(Int8Panels, TypesWithoutIntegerQuantsToUnpackDoNotPack) {
  for (const gguf::GgmlType type :
       {gguf::GgmlType::kF32, gguf::GgmlType::kF16, gguf::GgmlType::kQ2_K, gguf::GgmlType::kBF16}) {
    model::WeightView w;
    w.type = type;
    w.n_in = 256;
    EXPECT_FALSE(model::int8_packable(w)) << gguf::type_name(type);
  }
}

}  // namespace
}  // namespace eventkv::compute
