#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>

#include "util/half.h"

namespace eventkv {
namespace {

TEST(Half, EveryNonNanHalfRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits < 0x10000u; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    const float f = fp16_to_fp32(h);
    if (std::isnan(f)) continue;
    ASSERT_EQ(fp32_to_fp16(f), h) << "half bits " << bits;
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(fp16_to_fp32(0x3C00), 1.0f);
  EXPECT_EQ(fp16_to_fp32(0xC000), -2.0f);
  EXPECT_EQ(fp16_to_fp32(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_TRUE(std::isinf(fp16_to_fp32(0x7C00)));
  EXPECT_TRUE(std::isnan(fp16_to_fp32(0x7E00)));
}

TEST(Half, RoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and the next half; ties go to even (1).
  EXPECT_EQ(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3 * 2^-11 lies halfway between odd 0x3C01 and even 0x3C02.
  EXPECT_EQ(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7C00);  // rounds up to infinity
  EXPECT_EQ(fp32_to_fp16(1e-8f), 0x0000);
}

TEST(Half, Bfloat16) {
  EXPECT_EQ(bf16_to_fp32(0x3F80), 1.0f);
  EXPECT_EQ(fp32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(fp32_to_bf16(std::bit_cast<float>(0x3F808000u)), 0x3F80);  // tie to even
  EXPECT_EQ(fp32_to_bf16(std::bit_cast<float>(0x3F818000u)), 0x3F82);
}

}  // namespace
}  // namespace eventkv
