// 16-lane vectors for the kernels, one source for every instruction set:
// each is kParts native vectors (one zmm, two ymm or four xmm). GCC keeps a
// 64-byte vector extension type in memory where the target has no 64-byte
// registers (AVX2 prefill ran 50x slower), so wider types are never used
// directly. Files that include this are built with FP contraction on
// (CMakeLists), so a * b + c becomes one FMA where the target has FMA.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace eventkv::compute {

inline constexpr int kLanes = 16;

// Adding and subtracting 1.5 * 2^23 rounds an f32 of magnitude below 2^22 to
// the nearest integer (ties to even), with no conversion instruction.
inline constexpr float kRoundingShift = 12582912.0f;
#if defined(__AVX512F__)
inline constexpr int kParts = 1;
#elif defined(__AVX__)
inline constexpr int kParts = 2;
#else
inline constexpr int kParts = 4;
#endif
inline constexpr int kPartLanes = kLanes / kParts;

typedef float f32_part __attribute__((vector_size(4 * kPartLanes)));
typedef int32_t i32_part __attribute__((vector_size(4 * kPartLanes)));
typedef uint8_t u8_part __attribute__((vector_size(kPartLanes)));
typedef int8_t i8_part __attribute__((vector_size(kPartLanes)));
typedef uint8_t v16u8 __attribute__((vector_size(16)));
typedef int8_t v16i8 __attribute__((vector_size(16)));

template <typename Part, typename Scalar>
struct Vec16 {
  Part part[kParts];
  Scalar operator[](int lane) const { return part[lane / kPartLanes][lane % kPartLanes]; }
};
using v16f = Vec16<f32_part, float>;
using v16i = Vec16<i32_part, int32_t>;  // also the lane masks: -1 true, 0 false

// Lane-wise operators: vector op vector, vector op scalar, scalar op vector.
#define EVENTKV_LANEWISE(op, ...)                                                   \
  template <typename P, typename S>                                                 \
  inline __VA_ARGS__ operator op(const Vec16<P, S>& a, const Vec16<P, S>& b) {      \
    __VA_ARGS__ r;                                                                  \
    for (int i = 0; i < kParts; ++i) r.part[i] = a.part[i] op b.part[i];            \
    return r;                                                                       \
  }                                                                                 \
  template <typename P, typename S>                                                 \
  inline __VA_ARGS__ operator op(const Vec16<P, S>& a, std::type_identity_t<S> b) { \
    __VA_ARGS__ r;                                                                  \
    for (int i = 0; i < kParts; ++i) r.part[i] = a.part[i] op b;                    \
    return r;                                                                       \
  }                                                                                 \
  template <typename P, typename S>                                                 \
  inline __VA_ARGS__ operator op(std::type_identity_t<S> a, const Vec16<P, S>& b) { \
    __VA_ARGS__ r;                                                                  \
    for (int i = 0; i < kParts; ++i) r.part[i] = a op b.part[i];                    \
    return r;                                                                       \
  }
EVENTKV_LANEWISE(+, Vec16<P, S>)
EVENTKV_LANEWISE(-, Vec16<P, S>)
EVENTKV_LANEWISE(*, Vec16<P, S>)
EVENTKV_LANEWISE(/, Vec16<P, S>)
EVENTKV_LANEWISE(&, Vec16<P, S>)
EVENTKV_LANEWISE(<<, Vec16<P, S>)
EVENTKV_LANEWISE(>>, Vec16<P, S>)
EVENTKV_LANEWISE(<, v16i)
EVENTKV_LANEWISE(>, v16i)
#undef EVENTKV_LANEWISE

template <typename P, typename S>
inline Vec16<P, S> operator-(const Vec16<P, S>& a) {
  Vec16<P, S> r;
  for (int i = 0; i < kParts; ++i) r.part[i] = -a.part[i];
  return r;
}

template <typename P, typename S>
inline Vec16<P, S>& operator+=(Vec16<P, S>& a, const Vec16<P, S>& b) {
  return a = a + b;
}

template <typename P, typename S>
inline Vec16<P, S>& operator&=(Vec16<P, S>& a, const Vec16<P, S>& b) {
  return a = a & b;
}

// mask ? a : b, lane by lane.
template <typename P, typename S>
inline Vec16<P, S> select(const v16i& mask, const Vec16<P, S>& a, const Vec16<P, S>& b) {
  Vec16<P, S> r;
  for (int i = 0; i < kParts; ++i) r.part[i] = mask.part[i] ? a.part[i] : b.part[i];
  return r;
}

inline v16f splat16(float x) {
  return v16f{} + x;
}

inline v16i lane_index() {  // {0, 1, ..., 15}
  v16i r;
  for (int lane = 0; lane < kLanes; ++lane) r.part[lane / kPartLanes][lane % kPartLanes] = lane;
  return r;
}

inline v16f to_f32(const v16i& v) {
  v16f r;
  for (int i = 0; i < kParts; ++i) r.part[i] = __builtin_convertvector(v.part[i], f32_part);
  return r;
}

inline v16i to_i32(const v16f& v) {  // truncates toward zero
  v16i r;
  for (int i = 0; i < kParts; ++i) r.part[i] = __builtin_convertvector(v.part[i], i32_part);
  return r;
}

// Lanes within int8's range as bytes. x86 packs them (saturating, which
// changes nothing in range): GCC's conversion moved them one byte at a time
// through general registers.
inline v16i8 to_i8(const v16i& v) {
#if defined(__AVX512F__)
  return reinterpret_cast<v16i8>(_mm512_cvtsepi32_epi8(reinterpret_cast<__m512i>(v.part[0])));
#elif defined(__AVX2__)
  // packs works within 128-bit lanes: the 64-bit quarters come out as lanes
  // 0-3, 8-11, 4-7, 12-15, and the permutation puts them in order.
  const __m256i words =
      _mm256_permute4x64_epi64(_mm256_packs_epi32(reinterpret_cast<__m256i>(v.part[0]),
                                                  reinterpret_cast<__m256i>(v.part[1])),
                               0xD8);
  return reinterpret_cast<v16i8>(
      _mm_packs_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1)));
#elif defined(__SSE2__)
  const auto part = [&](int i) { return reinterpret_cast<__m128i>(v.part[i]); };
  return reinterpret_cast<v16i8>(
      _mm_packs_epi16(_mm_packs_epi32(part(0), part(1)), _mm_packs_epi32(part(2), part(3))));
#else
  v16i8 r;
  for (int i = 0; i < kParts; ++i) {
    const i8_part bytes = __builtin_convertvector(v.part[i], i8_part);
    std::memcpy(reinterpret_cast<int8_t*>(&r) + i * kPartLanes, &bytes, sizeof(bytes));
  }
  return r;
#endif
}

// Part by part: one 64-byte copy goes through the stack in 16-byte pieces
// and reloads them whole (a store-forwarding stall on every load).
inline v16f load16(const float* p) {
  v16f v;
  for (int i = 0; i < kParts; ++i) std::memcpy(&v.part[i], p + i * kPartLanes, sizeof(f32_part));
  return v;
}

inline void store16(float* p, const v16f& v) {
  for (int i = 0; i < kParts; ++i) std::memcpy(p + i * kPartLanes, &v.part[i], sizeof(f32_part));
}

inline v16u8 load16_u8(const uint8_t* p) {
  v16u8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Bytes to floats. GCC 12 scalarizes byte -> int32 vector conversions, so
// AVX2 and AVX-512 get the instructions spelled out; the x86-64 baseline
// (which lacks them) widens each part through int32.
#if defined(__AVX512F__)
inline v16f u8_to_f32(v16u8 v) {
  return {reinterpret_cast<f32_part>(
      _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(reinterpret_cast<__m128i>(v))))};
}
inline v16f load16_i8_as_f32(const uint8_t* p) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return {reinterpret_cast<f32_part>(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes)))};
}
#elif defined(__AVX2__)
inline v16f u8_to_f32(v16u8 v) {
  const __m128i bytes = reinterpret_cast<__m128i>(v);
  return {reinterpret_cast<f32_part>(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes))),
          reinterpret_cast<f32_part>(
              _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8))))};
}
inline v16f load16_i8_as_f32(const uint8_t* p) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return {reinterpret_cast<f32_part>(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes))),
          reinterpret_cast<f32_part>(
              _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(bytes, 8))))};
}
#else
template <typename BytePart>
inline v16f bytes_to_f32(const void* bytes) {
  v16f r;
  for (int i = 0; i < kParts; ++i) {
    BytePart b;
    std::memcpy(&b, static_cast<const uint8_t*>(bytes) + i * kPartLanes, sizeof(b));
    r.part[i] = __builtin_convertvector(__builtin_convertvector(b, i32_part), f32_part);
  }
  return r;
}
inline v16f u8_to_f32(v16u8 v) {
  return bytes_to_f32<u8_part>(&v);
}
inline v16f load16_i8_as_f32(const uint8_t* p) {
  return bytes_to_f32<i8_part>(p);
}
#endif

// The lanes' sum, added in lane order (the same on every instruction set).
inline float hsum(const v16f& v) {
  float lanes[kLanes];
  std::memcpy(lanes, &v, sizeof(v));
  float total = 0.0f;
  for (const float lane : lanes) total += lane;
  return total;
}

// The 16 lanes folded with `op` (applied alike to parts and to floats): the
// parts lane-wise, then a tree of shuffles, then the last 4 lanes in pairs.
template <typename Op>
inline float fold_lanes(const v16f& v, Op op) {
  f32_part m = v.part[0];
  for (int i = 1; i < kParts; ++i) m = op(m, v.part[i]);
#if defined(__AVX512F__)
  m = op(m, __builtin_shufflevector(m, m, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  m = op(m, __builtin_shufflevector(m, m, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11));
#elif defined(__AVX__)
  m = op(m, __builtin_shufflevector(m, m, 4, 5, 6, 7, 0, 1, 2, 3));
#endif
  float lanes[4];
  std::memcpy(lanes, &m, sizeof(lanes));
  return op(op(lanes[0], lanes[1]), op(lanes[2], lanes[3]));
}

// The sum of lanes that hold integers, exact in any order while it stays
// below 2^24: a tree, as a chain of 16 dependent additions in lane order
// held the activations' quantization up.
inline float hsum_integers(const v16f& v) {
  return fold_lanes(v, [](auto a, auto b) { return a + b; });
}

// The largest lane (exact in any order).
inline float hmax(const v16f& v) {
  return fold_lanes(v, [](auto a, auto b) { return a > b ? a : b; });
}

// e^x for every lane, within 2 ulp for x in [-87, 88]; larger x saturate.
inline v16f exp16(v16f x) {
  x = select(x < -87.3f, splat16(-87.3f), x);
  x = select(x > 88.7f, splat16(88.7f), x);
  // x = n ln2 + r with n = round(x / ln2) and |r| <= ln2 / 2; ln2 is split
  // in two parts so that n * ln2 is exact.
  const v16f t = x * 1.44269504088896341f + 0.5f;
  v16f n = to_f32(to_i32(t));
  n = n + to_f32(n > t);  // truncation rounded negatives up (mask -1): floor
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
  const v16i bits = (to_i32(n) + 127) << 23;
  v16f scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

}  // namespace eventkv::compute
