// 16-lane float vectors through GCC/Clang vector extensions: one kernel
// source that compiles to AVX-512, 2 x AVX2 or SSE as the target allows.
// Files that include this are built with FP contraction on (CMakeLists), so
// a * b + c becomes one FMA.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace eventkv::compute {

inline constexpr int kLanes = 16;

typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef uint8_t v16u8 __attribute__((vector_size(16)));

inline v16f load16(const float* p) {
  v16f v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline void store16(float* p, v16f v) {
  std::memcpy(p, &v, sizeof(v));
}

inline v16f splat16(float x) {
  return v16f{} + x;
}

inline v16u8 load16_u8(const uint8_t* p) {
  v16u8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Bytes to floats. GCC 12 scalarizes some byte -> float vector conversions
// (notably of loaded signed bytes), so AVX-512 gets the instructions spelled
// out; elsewhere the conversions go through int32.
#if defined(__AVX512F__)
inline v16f u8_to_f32(v16u8 v) {
  return reinterpret_cast<v16f>(
      _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(reinterpret_cast<__m128i>(v))));
}
inline v16f load16_i8_as_f32(const uint8_t* p) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return reinterpret_cast<v16f>(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes)));
}
#else
inline v16f u8_to_f32(v16u8 v) {
  return __builtin_convertvector(__builtin_convertvector(v, v16i), v16f);
}
inline v16f load16_i8_as_f32(const uint8_t* p) {
  const v16i widened = __builtin_convertvector(load16_u8(p), v16i);
  return __builtin_convertvector((widened ^ 0x80) - 0x80, v16f);
}
#endif

inline float hsum(v16f v) {
  float lanes[kLanes];
  std::memcpy(lanes, &v, sizeof(v));
  float total = 0.0f;
  for (const float lane : lanes) total += lane;
  return total;
}

// The largest lane: a tree of vector maxima (exact in any order).
inline float hmax(v16f v) {
  v16f s = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
  v = v > s ? v : s;
  s = __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11);
  v = v > s ? v : s;
  s = __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
  v = v > s ? v : s;
  s = __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
  v = v > s ? v : s;
  return v[0];
}

// e^x for every lane, within 2 ulp for x in [-87, 88]; larger x saturate.
inline v16f exp16(v16f x) {
  x = x < -87.3f ? splat16(-87.3f) : x;
  x = x > 88.7f ? splat16(88.7f) : x;
  // x = n ln2 + r with n = round(x / ln2) and |r| <= ln2 / 2; ln2 is split
  // in two parts so that n * ln2 is exact.
  const v16f t = x * 1.44269504088896341f + 0.5f;
  v16f n = __builtin_convertvector(__builtin_convertvector(t, v16i), v16f);
  n = n + __builtin_convertvector(n > t, v16f);  // truncation rounded negatives up: floor
  v16f r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  // Cephes expf polynomial.
  v16f p = splat16(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const v16i bits = (__builtin_convertvector(n, v16i) + 127) << 23;
  v16f scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

}  // namespace eventkv::compute
