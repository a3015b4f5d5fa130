// IEEE binary16 and bfloat16 conversions, exact (every half value is an f32).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace eventkv {

inline float fp16_to_fp32(uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);  // one instruction, same exact result
#endif
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  uint32_t bits = 0;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // inf or nan
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa != 0) {
    // Subnormal half: normalize it into an f32 exponent.
    uint32_t shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    mantissa &= 0x3FFu;
    bits = sign | ((113u - shift) << 23) | (mantissa << 13);
  } else {
    bits = sign;
  }
  return std::bit_cast<float>(bits);
}

// Round to nearest even, as numpy's float32 -> float16 cast does.
inline uint16_t fp32_to_fp16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits >= 0x7F800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7C00u | (abs_bits > 0x7F800000u ? 0x200u : 0u));
  }
  if (abs_bits >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // overflow
  if (abs_bits < 0x38800000u) {                                               // subnormal or zero
    // Add 0.5 (as a float) so the FPU rounds the mantissa for us.
    const float magic = std::bit_cast<float>(abs_bits) + 0.5f;
    return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(magic) - 0x3F000000u));
  }
  const uint32_t odd = (abs_bits >> 13) & 1u;
  const uint32_t rounded = abs_bits + 0xC8000FFFu + odd;  // rebias exponent and round
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

// The f16 value stored (little-endian, unaligned) at p.
inline float fp16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof(h));
  return fp16_to_fp32(h);
}

inline float bf16_to_fp32(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

inline uint16_t fp32_to_bf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace eventkv
