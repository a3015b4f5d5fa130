// The fused f32 dots (compute/quant_dot.h) of every type equal
// dequantize-then-dot up to f32 rounding: a double-precision dot of the
// dequantized row with x, within 1e-5 of sum |w x|, on the 4-row fused path
// and its 1-row tail.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "compute/quant_dot.h"
#include "compute/quant_types.h"
#include "gguf/random_tensor.h"
#include "util/rng.h"

namespace eventkv::compute {
namespace {

constexpr int64_t kDotElems = 512;  // two K-quant blocks, sixteen 32-blocks
constexpr int64_t kDotRows = 7;
constexpr double kDotTolerance = 1e-5;  // of sum |w x|

class QuantDot : public ::testing::TestWithParam<gguf::GgmlType> {};

TEST_P(QuantDot, MatchesDequantizeThenDot) {
  const gguf::GgmlType type = GetParam();
  const QuantType* q = find_quant_type(type);
  ASSERT_NE(q, nullptr);
  const auto row_bytes = static_cast<size_t>(kDotElems / q->block_elems * q->block_bytes);
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed);
    Rng rng(seed);
    const std::vector<uint8_t> weights =
        gguf::random_tensor_bytes(type, kDotElems, kDotRows, rng, 0.05f);
    std::vector<float> x(static_cast<size_t>(kDotElems));
    for (float& v : x) v = static_cast<float>(rng.normal());
    const std::vector<float> xsums = block_sums32(x.data(), kDotElems);
    float out[kDotRows];
    dot_rows(type, weights.data(), row_bytes, kDotRows, x.data(), xsums.data(), kDotElems, out);
    std::vector<float> w(static_cast<size_t>(kDotElems));
    for (int64_t r = 0; r < kDotRows; ++r) {
      dequantize_row(type, weights.data() + r * row_bytes, w.data(), kDotElems);
      double reference = 0.0;
      double magnitude = 0.0;
      for (int64_t i = 0; i < kDotElems; ++i) {
        reference += static_cast<double>(w[i]) * x[i];
        magnitude += std::abs(static_cast<double>(w[i]) * x[i]);
      }
      ASSERT_GT(magnitude, 0.0);
      EXPECT_NEAR(out[r], reference, kDotTolerance * magnitude) << "row " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(QuantTypes, QuantDot, ::testing::ValuesIn(gguf::kDequantizableTypes),
                         [](const auto& info) { return std::string(gguf::type_name(info.param)); });

TEST(QuantTypes, EveryTypeHasAFusedDot) {
  for (const gguf::GgmlType type : gguf::kDequantizableTypes) {
    EXPECT_NE(find_quant_type(type)->dot_f32, nullptr) << gguf::type_name(type);
  }
}

}  // namespace
}  // namespace eventkv::compute
