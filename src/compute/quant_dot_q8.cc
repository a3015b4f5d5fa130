#include "compute/quant_dot_q8.h"

#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "compute/quant_blocks.h"
#include "compute/simd.h"
#include "util/error.h"
#include "util/half.h"

namespace eventkv::compute {
namespace {

// One 256-bit register: 32 quants, 16 int16 or 8 int32 / f32 lanes.
typedef uint8_t v32u8 __attribute__((vector_size(32)));
typedef int8_t v32i8 __attribute__((vector_size(32)));
typedef int16_t v16i16 __attribute__((vector_size(32)));
typedef uint16_t v16u16 __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef float v8f __attribute__((vector_size(32)));
typedef uint8_t v8u8 __attribute__((vector_size(8)));
typedef uint8_t v4u8 __attribute__((vector_size(4)));
// Twice as wide: two weight words of 8 tokens (Q8TokenLanes), a word per
// 32-bit lane.
typedef uint8_t v64u8 __attribute__((vector_size(64)));
typedef int8_t v64i8 __attribute__((vector_size(64)));
typedef uint64_t v8u64 __attribute__((vector_size(64)));
typedef int32_t v16i32 __attribute__((vector_size(64)));
typedef float v16f32 __attribute__((vector_size(64)));

v32u8 load32_u8(const uint8_t* p) {
  v32u8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

v32i8 load32_i8(const int8_t* p) {
  v32i8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

float hsum8(v8f v) {
  float lanes[8];
  std::memcpy(lanes, &v, sizeof(v));
  float total = 0.0f;
  for (const float lane : lanes) total += lane;
  return total;
}

// Lane k of `scales` in every lane, by one shuffle (vpermw on AVX-512):
// extracting it as a scalar and broadcasting it back cost more than the
// products it scales.
template <int k>
v16i16 broadcast_lane(v16i16 scales) {
  return __builtin_shufflevector(scales, scales, k, k, k, k, k, k, k, k, k, k, k, k, k, k, k, k);
}

// The integer products of 32 weights with 32 activation quants, as 8 int32
// lanes whose total is the dot product. Weights are unsigned and below 64
// (dot_u6) or signed (dot_i8: |w| times x carrying w's sign), so the 16-bit
// pair sums of vpmaddubsw stay below 2 * 128 * 127 < 2^15 and every product
// is exact. scaled_dot_u6 multiplies each pair sum by its int16 scale on the
// way to int32 (scale lanes 0..7 cover weights 0..15, lanes 8..15 weights
// 16..31): the sub-block scales of the K-quants at no extra cost.
#if defined(__AVX2__)
__m256i as_m256i(v32u8 v) {
  return reinterpret_cast<__m256i>(v);
}
__m256i as_m256i(v32i8 v) {
  return reinterpret_cast<__m256i>(v);
}

v8i scaled_dot_u6(v32u8 w, v32i8 x, v16i16 scale) {
  return reinterpret_cast<v8i>(_mm256_madd_epi16(_mm256_maddubs_epi16(as_m256i(w), as_m256i(x)),
                                                 reinterpret_cast<__m256i>(scale)));
}

v8i scaled_dot_i8(v32i8 w, v32i8 x, v16i16 scale) {
  const __m256i wi = as_m256i(w);
  return scaled_dot_u6(reinterpret_cast<v32u8>(_mm256_abs_epi8(wi)),
                       reinterpret_cast<v32i8>(_mm256_sign_epi8(as_m256i(x), wi)), scale);
}

// VNNI does the unscaled dot in one instruction.
v8i dot_u6(v32u8 w, v32i8 x) {
#if defined(__AVXVNNI__)
  return reinterpret_cast<v8i>(
      _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), as_m256i(w), as_m256i(x)));
#elif defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return reinterpret_cast<v8i>(
      _mm256_dpbusd_epi32(_mm256_setzero_si256(), as_m256i(w), as_m256i(x)));
#else
  return scaled_dot_u6(w, x, v16i16{} + 1);
#endif
}

v8i dot_i8(v32i8 w, v32i8 x) {
  const __m256i wi = as_m256i(w);
  return dot_u6(reinterpret_cast<v32u8>(_mm256_abs_epi8(wi)),
                reinterpret_cast<v32i8>(_mm256_sign_epi8(as_m256i(x), wi)));
}
#else
template <typename Weights>
v8i scaled_dot_lanes(Weights w, v32i8 x, v16i16 scale) {
  v8i lanes{};
  for (int i = 0; i < 32; ++i) lanes[i / 4] += scale[i / 2] * static_cast<int32_t>(w[i]) * x[i];
  return lanes;
}
v8i scaled_dot_u6(v32u8 w, v32i8 x, v16i16 scale) {
  return scaled_dot_lanes(w, x, scale);
}
v8i scaled_dot_i8(v32i8 w, v32i8 x, v16i16 scale) {
  return scaled_dot_lanes(w, x, scale);
}
v8i dot_u6(v32u8 w, v32i8 x) {
  return scaled_dot_lanes(w, x, v16i16{} + 1);
}
v8i dot_i8(v32i8 w, v32i8 x) {
  return scaled_dot_lanes(w, x, v16i16{} + 1);
}
#endif

// The avx2_halves kernels (CMakeLists.txt defines EVENTKV_QUANT_HALVES for
// them) keep a block's quants in two 128-bit halves (Quants32 below) and
// need neither of the next two.
#if !defined(EVENTKV_QUANT_HALVES)
#define EVENTKV_QUANT_HALVES 0
#elif !defined(__AVX2__) || defined(__AVX512F__)
#error "EVENTKV_QUANT_HALVES is for AVX2 builds without AVX-512"
#endif

#if !EVENTKV_QUANT_HALVES
// The 32 4-bit quants of a Q4/Q5 block: low nibbles are values 0..15, high
// nibbles values 16..31. With AVX2 the 16 bytes are loaded into both halves
// of a register and a blend takes the high half from a shifted copy: joining
// two halves would take a shuffle, on the one port that the decode loop's
// other shuffles (broadcasts, half conversions) wait for. Elsewhere each
// half is shifted in 16 bytes and then joined.
v32u8 nibbles32(const uint8_t* qs) {
#if defined(__AVX2__)
  const __m256i both =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
  const __m256i high_shifted = _mm256_blend_epi32(both, _mm256_srli_epi16(both, 4), 0xF0);
  return reinterpret_cast<v32u8>(_mm256_and_si256(high_shifted, _mm256_set1_epi8(15)));
#else
  const v16u8 q = load16_u8(qs);
  const v16u8 low = q & 15;
  const v16u8 high = q >> 4;
  return __builtin_shufflevector(low, high, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
#endif
}

#endif  // !EVENTKV_QUANT_HALVES

// The two f16 values at p (a block's d and m; without m, d and two bytes
// that go unused), as one 4-byte load and one conversion: loading and
// converting a half alone takes two shuffle-port µops.
struct HalfPair {
  float first;
  float second;
};
HalfPair fp16_pair_at(const uint8_t* p) {
#if defined(__F16C__)
  int32_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  const __m128 both = _mm_cvtph_ps(_mm_cvtsi32_si128(bits));
  return {_mm_cvtss_f32(both), _mm_cvtss_f32(_mm_movehdup_ps(both))};
#else
  return {fp16_at(p), fp16_at(p + 2)};
#endif
}

#if !EVENTKV_QUANT_HALVES
// 16 in every byte whose bit is set in a Q5 block's 32-bit qh: the fifth bits.
v32u8 fifth_bits32(const uint8_t* qh_bytes) {
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, sizeof(qh));
  return reinterpret_cast<v32u8>(_mm256_maskz_set1_epi8(qh, 16));
#elif defined(__AVX2__)
  // As below, in registers: a v4u8 copied into a wider vector went through
  // the stack, a 4-byte store the 32-byte load could not forward (6x slower).
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, sizeof(qh));
  const __m256i spread =
      _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int32_t>(qh)),
                          _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2,
                                           2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x(0x8040201008040201);
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
  return reinterpret_cast<v32u8>(_mm256_and_si256(set, _mm256_set1_epi8(16)));
#else
  // Byte i holds qh's byte i / 8, then keeps bit i % 8.
  v4u8 qh;
  std::memcpy(&qh, qh_bytes, sizeof(qh));
  const v32u8 spread = __builtin_shufflevector(qh, qh, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1,
                                               1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  const v32u8 bit = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128,
                     1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  return reinterpret_cast<v32u8>((spread & bit) == bit) & 16;
#endif
}
#endif  // !EVENTKV_QUANT_HALVES

// Two words of 4 weights in every 64-bit lane, from memory: a broadcast
// load runs on a load port, while spreading words held in a register takes
// a shuffle, on the one port that the unpacking's shuffles need too.
v64u8 broadcast_pair(const uint8_t* p) {
  uint64_t pair;
  std::memcpy(&pair, p, sizeof(pair));
  return reinterpret_cast<v64u8>(v8u64{} + pair);
}

// Words 2 i and 2 i + 1 (i < 4) of the 32 4-bit weights of 16 packed bytes:
// low nibbles are weights 0..15, high nibbles 16..31 (as nibbles32).
v64u8 nibble_pair(const uint8_t* qs, int i) {
  const v64u8 pair = broadcast_pair(qs + 8 * (i % 2));
  return i < 2 ? pair & 15 : reinterpret_cast<v64u8>(reinterpret_cast<v8u64>(pair) >> 4) & 15;
}

// The 32 quants of a Q4_0, Q4_1, Q5_0, Q5_1 or Q8_0 block (and each
// sub-block of Q4_K and Q5_K) as the single-token and grouped kernels take
// them. In the avx2_halves kernels they stay in two 16-byte halves (weights
// 0..15 and 16..31) multiplied in 128-bit registers, and the halves' sums
// add before the float part: four int32 lanes, lane j the products of words
// j and j + 4, so a block costs one conversion and one multiply-add of 4
// lanes instead of 8. First-generation Zen runs every 256-bit operation as
// two 128-bit ones, and this took the Q4_1 kernel from 57.5 to 41.4 us on a
// matrix in L2; on Zen 3, which runs them whole, the same kernels were
// 1.12-1.59x slower than one 32-byte register a block, which the other
// variants keep (and the 8-token tiles of AVX-512 need).
#if EVENTKV_QUANT_HALVES
struct Quants32 {
  __m128i low;
  __m128i high;
};

Quants32 nibble_halves(const uint8_t* qs) {
  const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i mask = _mm_set1_epi8(15);
  return {_mm_and_si128(q, mask), _mm_and_si128(_mm_srli_epi16(q, 4), mask)};
}

// 16 in the bytes of each half whose bit of qh is set: the fifth bits.
Quants32 with_fifth_bits(Quants32 q, const uint8_t* qh_bytes) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, sizeof(qh));
  const __m128i all = _mm_set1_epi32(static_cast<int32_t>(qh));
  const __m128i bit = _mm_set1_epi64x(0x8040201008040201);
  const __m128i sixteen = _mm_set1_epi8(16);
  const auto half = [&](__m128i bytes_of_qh) {
    const __m128i spread = _mm_shuffle_epi8(all, bytes_of_qh);
    return _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(spread, bit), bit), sixteen);
  };
  return {
      _mm_or_si128(q.low, half(_mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1))),
      _mm_or_si128(q.high, half(_mm_setr_epi8(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3)))};
}

Quants32 byte_halves(const uint8_t* qs) {
  return {_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)),
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs + 16))};
}

// acc (lanes 0..3; 4..7 stay 0) += products * scale.
void add_scaled_lanes(__m128i products, float scale, v8f& acc) {
  const __m128 sum =
      _mm_fmadd_ps(_mm_cvtepi32_ps(products), _mm_set1_ps(scale), _mm256_castps256_ps128(acc));
  acc = reinterpret_cast<v8f>(_mm256_zextps128_ps256(sum));
}

// The products of 32 unsigned quants with x, times an int16 scale: 4 int32
// lanes (lane j: words j and j + 4). Quants below 32 and |x| <= 127 keep
// each int16 sum of four products within 4 * 31 * 127 < 2^15, and scales
// below 64 each int32 lane within 2^21, so the integer part is exact.
__m128i scaled_halves_dot(Quants32 q, const int8_t* x, __m128i scale) {
  const Quants32 xs = byte_halves(reinterpret_cast<const uint8_t*>(x));
  const __m128i pairs =
      _mm_add_epi16(_mm_maddubs_epi16(q.low, xs.low), _mm_maddubs_epi16(q.high, xs.high));
  return _mm_madd_epi16(pairs, scale);
}

void add_products(Quants32 q, const int8_t* x, float scale, v8f& acc) {
  add_scaled_lanes(scaled_halves_dot(q, x, _mm_set1_epi16(1)), scale, acc);
}

// As add_products for signed quants (Q8_0): |w| times x with w's sign. Pair
// sums reach 2 * 128 * 127, so each half widens before they add.
void add_signed_products(Quants32 q, const int8_t* x, float scale, v8f& acc) {
  const Quants32 xs = byte_halves(reinterpret_cast<const uint8_t*>(x));
  const auto half = [](__m128i w, __m128i xh) {
    return _mm_madd_epi16(_mm_maddubs_epi16(_mm_abs_epi8(w), _mm_sign_epi8(xh, w)),
                          _mm_set1_epi16(1));
  };
  add_scaled_lanes(_mm_add_epi32(half(q.low, xs.low), half(q.high, xs.high)), scale, acc);
}

v32u8 bytes(Quants32 q) {
  return reinterpret_cast<v32u8>(_mm256_set_m128i(q.high, q.low));
}
#else
using Quants32 = v32u8;

Quants32 nibble_halves(const uint8_t* qs) {
  return nibbles32(qs);
}

Quants32 with_fifth_bits(Quants32 q, const uint8_t* qh_bytes) {
  return q | fifth_bits32(qh_bytes);
}

Quants32 byte_halves(const uint8_t* qs) {
  return load32_u8(qs);
}

void add_products(Quants32 q, const int8_t* x, float scale, v8f& acc) {
  acc = __builtin_convertvector(dot_u6(q, load32_i8(x)), v8f) * scale + acc;
}

void add_signed_products(Quants32 q, const int8_t* x, float scale, v8f& acc) {
  acc =
      __builtin_convertvector(dot_i8(reinterpret_cast<v32i8>(q), load32_i8(x)), v8f) * scale + acc;
}

v32u8 bytes(Quants32 q) {
  return q;
}
#endif

v16f32 interleave(v8f even, v8f odd) {
  return __builtin_shufflevector(even, odd, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
}

v8f even_lanes(v16f32 v) {
  return __builtin_shufflevector(v, v, 0, 2, 4, 6, 8, 10, 12, 14);
}

v8f odd_lanes(v16f32 v) {
  return __builtin_shufflevector(v, v, 1, 3, 5, 7, 9, 11, 13, 15);
}

// A tile's products of one block, scaled (d times each token's dx), added to
// the lane-j accumulators: what every layout's finish() starts with.
void add_scaled(const v16i32* p, v16f32 scale, v16f32* acc) {
  for (int k = 0; k < 4; ++k) acc[k] = __builtin_convertvector(p[k], v16f32) * scale + acc[k];
}

// Weights<Block> holds what the kernels know of a layout, two ways:
// - add() multiplies one block with one token's activation block: the
//   integer products, scaled by the block's d times the activations' dx,
//   into a vector accumulator whose lane j sums the products of every block's
//   word j (weights 4 j .. 4 j + 3 of each 32), and a per-block offset or min
//   (times the sums of the activation quants) into `offset` or the lanes;
//   quants() and add_quants() split it, so that several tokens share one
//   unpacking (dot_rows_group);
// - pair() or unpack(), and finish(), do the same for a tile of 8 tokens
//   side by side (compute/activation_q8.h: Q8TokenLanes; AVX-512 builds
//   only, as its 64-byte lanes need AVX-512's registers): pair() gives two
//   words of weights broadcast, unpack() writes the block's weights as bytes
//   and an integer scale per pair of words; the tile kernel multiplies each
//   pair with all tokens at once into p[pair % 4], whose lane 2 t + k is
//   token t's word j = 2 (pair % 4) + k; finish() applies the float terms
//   to accumulators laid out alike, each lane the lane j of add() for its
//   token, with the same operations in the same order. So a token's result
//   has the same bits alone or in a tile.
template <typename Block>
struct Weights;

template <>
struct Weights<BlockQ4_0> {
  static constexpr bool kSigned = false;
  static Quants32 quants(const uint8_t* block) { return nibble_halves(block + BlockQ4_0::kQs); }
  static v64u8 pair(const uint8_t* block, int i) { return nibble_pair(block + BlockQ4_0::kQs, i); }
  static void add(const uint8_t* block, const int8_t* x, float dx, const float* sums32, v8f& acc,
                  float& offset) {
    add_quants(block, quants(block), x, dx, sums32, acc, offset);
  }
  static void add_quants(const uint8_t* block, Quants32 q, const int8_t* x, float dx,
                         const float* sums32, v8f& acc, float& offset) {
    const float d = fp16_pair_at(block).first;
    add_products(q, x, d * dx, acc);
    offset -= 8.0f * d * sums32[0];
  }
  static void finish(const uint8_t* block, const v16i32* p, v16f32 dx, const v8f* sums, v16f32* acc,
                     v8f& offset) {
    const float d = fp16_pair_at(block).first;
    add_scaled(p, d * dx, acc);
    offset -= 8.0f * d * sums[0];
  }
};

// Q5_0 (kHasMin false: q - 16 times d) and Q5_1 (q times d plus a min).
template <bool kHasMin>
struct Weights<BlockQ5<kHasMin>> {
  using Block = BlockQ5<kHasMin>;
  static constexpr bool kSigned = false;
  static Quants32 quants(const uint8_t* block) {
    return with_fifth_bits(nibble_halves(block + Block::kQs), block + Block::kQh);
  }
  static float min_of(HalfPair dm) {
    static_assert(Block::kM == 2);
    return kHasMin ? dm.second : -16.0f * dm.first;
  }
  static void add(const uint8_t* block, const int8_t* x, float dx, const float* sums32, v8f& acc,
                  float& offset) {
    add_quants(block, quants(block), x, dx, sums32, acc, offset);
  }
  static void add_quants(const uint8_t* block, Quants32 q, const int8_t* x, float dx,
                         const float* sums32, v8f& acc, float& offset) {
    const HalfPair dm = fp16_pair_at(block);
    add_products(q, x, dm.first * dx, acc);
    offset += min_of(dm) * sums32[0];
  }
  static void finish(const uint8_t* block, const v16i32* p, v16f32 dx, const v8f* sums, v16f32* acc,
                     v8f& offset) {
    const HalfPair dm = fp16_pair_at(block);
    add_scaled(p, dm.first * dx, acc);
    offset += min_of(dm) * sums[0];
  }
};

template <>
struct Weights<BlockQ4_1> {
  static_assert(BlockQ4_1::kM == 2);  // d and m: one fp16_pair_at
  static constexpr bool kSigned = false;
  static Quants32 quants(const uint8_t* block) { return nibble_halves(block + BlockQ4_1::kQs); }
  static v64u8 pair(const uint8_t* block, int i) { return nibble_pair(block + BlockQ4_1::kQs, i); }
  static void add(const uint8_t* block, const int8_t* x, float dx, const float* sums32, v8f& acc,
                  float& offset) {
    add_quants(block, quants(block), x, dx, sums32, acc, offset);
  }
  static void add_quants(const uint8_t* block, Quants32 q, const int8_t* x, float dx,
                         const float* sums32, v8f& acc, float& offset) {
    const HalfPair dm = fp16_pair_at(block);
    add_products(q, x, dm.first * dx, acc);
    offset += dm.second * sums32[0];
  }
  static void finish(const uint8_t* block, const v16i32* p, v16f32 dx, const v8f* sums, v16f32* acc,
                     v8f& offset) {
    const HalfPair dm = fp16_pair_at(block);
    add_scaled(p, dm.first * dx, acc);
    offset += dm.second * sums[0];
  }
};

template <>
struct Weights<BlockQ8_0> {
  static constexpr bool kSigned = true;
  static Quants32 quants(const uint8_t* block) { return byte_halves(block + BlockQ8_0::kQs); }
  static v64u8 pair(const uint8_t* block, int i) {
    return broadcast_pair(block + BlockQ8_0::kQs + 8 * i);
  }
  static void add(const uint8_t* block, const int8_t* x, float dx, const float* sums32, v8f& acc,
                  float& offset) {
    add_quants(block, quants(block), x, dx, sums32, acc, offset);
  }
  static void add_quants(const uint8_t* block, Quants32 q, const int8_t* x, float dx, const float*,
                         v8f& acc, float&) {
    add_signed_products(q, x, fp16_pair_at(block).first * dx, acc);
  }
  static void finish(const uint8_t* block, const v16i32* p, v16f32 dx, const v8f*, v16f32* acc,
                     v8f&) {
    const float d = fp16_pair_at(block).first;
    add_scaled(p, d * dx, acc);
  }
};

// Q4_K and Q5_K (layout in compute/quant_blocks.h): the 6-bit sub-block
// scales multiply in integers, so d applies once a block; the mins times the
// activation sums go into the same accumulator, times -dmin.
template <bool kFifthBit>
struct Weights<BlockQ45_K<kFifthBit>> {
  using Block = BlockQ45_K<kFifthBit>;
  static constexpr bool kSigned = false;

  // Weights 64 c .. 64 c + 31 (low, sub-block 2 c) and the next 32 (high).
  static void chunk(const uint8_t* block, int c, v32u8& low, v32u8& high) {
    const v32u8 qh = kFifthBit ? load32_u8(block + Block::kQh) : v32u8{};
    const v32u8 q = load32_u8(block + Block::kQs + 32 * c);
    low = (q & 15) | (((qh >> (2 * c)) & 1) << 4);
    high = (q >> 4) | (((qh >> (2 * c + 1)) & 1) << 4);
  }

  // Sub-blocks 2 c and 2 c + 1 times their scales.
  template <int c>
  static v8i chunk_products(const uint8_t* block, const int8_t* x, v16i16 scales) {
    v32u8 low, high;
    chunk(block, c, low, high);
    return scaled_dot_u6(low, load32_i8(x + 64 * c), broadcast_lane<2 * c>(scales)) +
           scaled_dot_u6(high, load32_i8(x + 64 * c + 32), broadcast_lane<2 * c + 1>(scales));
  }

#if EVENTKV_QUANT_HALVES
  // As chunk(), in the halves of Quants32: weights 0..15 and 16..31 of
  // sub-blocks 2 c (low) and 2 c + 1 (high).
  static void chunk_halves(const uint8_t* block, int c, Quants32& low, Quants32& high) {
    const v16u8 qh[2] = {kFifthBit ? load16_u8(block + Block::kQh) : v16u8{},
                         kFifthBit ? load16_u8(block + Block::kQh + 16) : v16u8 {}};
    v16u8 lows[2];
    v16u8 highs[2];
    for (int h = 0; h < 2; ++h) {
      const v16u8 q = load16_u8(block + Block::kQs + 32 * c + 16 * h);
      lows[h] = (q & 15) | (((qh[h] >> (2 * c)) & 1) << 4);
      highs[h] = (q >> 4) | (((qh[h] >> (2 * c + 1)) & 1) << 4);
    }
    low = {reinterpret_cast<__m128i>(lows[0]), reinterpret_cast<__m128i>(lows[1])};
    high = {reinterpret_cast<__m128i>(highs[0]), reinterpret_cast<__m128i>(highs[1])};
  }

  // Sub-block s's scale (lane s of the low half of scales) in every lane.
  static __m128i scale_of(v16i16 scales, int s) {
    const __m128i low = _mm256_castsi256_si128(reinterpret_cast<__m256i>(scales));
    return _mm_shuffle_epi8(low, _mm_set1_epi16(static_cast<int16_t>(((2 * s + 1) << 8) | 2 * s)));
  }

  // The 4 int32 lanes in the low half of 8; the others 0, so they add
  // nothing in add_products.
  static v8i widened(__m128i lanes) {
    return reinterpret_cast<v8i>(_mm256_zextsi128_si256(lanes));
  }

  static v8i products_of(const uint8_t* block, const int8_t* x, v16i16 scales) {
    __m128i products = _mm_setzero_si128();
    for (int c = 0; c < 4; ++c) {
      Quants32 low, high;
      chunk_halves(block, c, low, high);
      products =
          _mm_add_epi32(products, scaled_halves_dot(low, x + 64 * c, scale_of(scales, 2 * c)));
      products = _mm_add_epi32(
          products, scaled_halves_dot(high, x + 64 * c + 32, scale_of(scales, 2 * c + 1)));
    }
    return widened(products);
  }
#else
  static v8i products_of(const uint8_t* block, const int8_t* x, v16i16 scales) {
    return chunk_products<0>(block, x, scales) + chunk_products<1>(block, x, scales) +
           chunk_products<2>(block, x, scales) + chunk_products<3>(block, x, scales);
  }
#endif

  static void add(const uint8_t* block, const int8_t* x, float dx, const float* sums32, v8f& acc,
                  float&) {
    uint8_t scales_mins[16];
    unpack_k4_scales(block + Block::kScales, scales_mins);
    v16u8 packed;
    std::memcpy(&packed, scales_mins, sizeof(packed));
    const v16i16 scales = __builtin_convertvector(packed, v16i16);
    add_products(block, products_of(block, x, scales), mins_of(scales_mins), dx, sums32, acc);
  }

  // The float terms of add(): the products times d, the mins times -dmin.
  static void add_products(const uint8_t* block, v8i products, v8f mins, float dx,
                           const float* sums32, v8f& acc) {
    v8f sums;
    std::memcpy(&sums, sums32, sizeof(sums));
    acc = __builtin_convertvector(products, v8f) * (fp16_at(block) * dx) + acc;
    acc = mins * sums * -fp16_at(block + Block::kDmin) + acc;
  }

  // A block unpacked once for a group of tokens: its weights as bytes
  // (sub-block s at 32 s), each sub-block's scale in every lane, its mins.
  struct Quants {
    alignas(32) uint8_t q[256];
    v16i16 scale[8];
    v8f mins;
  };

  static Quants quants(const uint8_t* block) {
    Quants u;
    uint8_t scales_mins[16];
    unpack_k4_scales(block + Block::kScales, scales_mins);
    v16u8 packed;
    std::memcpy(&packed, scales_mins, sizeof(packed));
    const v16i16 scales = __builtin_convertvector(packed, v16i16);
    u.scale[0] = broadcast_lane<0>(scales);
    u.scale[1] = broadcast_lane<1>(scales);
    u.scale[2] = broadcast_lane<2>(scales);
    u.scale[3] = broadcast_lane<3>(scales);
    u.scale[4] = broadcast_lane<4>(scales);
    u.scale[5] = broadcast_lane<5>(scales);
    u.scale[6] = broadcast_lane<6>(scales);
    u.scale[7] = broadcast_lane<7>(scales);
    u.mins = mins_of(scales_mins);
    for (int c = 0; c < 4; ++c) {
      v32u8 low, high;
      chunk(block, c, low, high);
      std::memcpy(u.q + 64 * c, &low, sizeof(low));
      std::memcpy(u.q + 64 * c + 32, &high, sizeof(high));
    }
    return u;
  }

  // Integer sums are exact, so this order gives add()'s products.
  static void add_quants(const uint8_t* block, const Quants& u, const int8_t* x, float dx,
                         const float* sums32, v8f& acc, float&) {
#if EVENTKV_QUANT_HALVES
    __m128i lanes = _mm_setzero_si128();
    for (int s = 0; s < 8; ++s) {
      const __m128i scale = _mm256_castsi256_si128(reinterpret_cast<__m256i>(u.scale[s]));
      lanes = _mm_add_epi32(lanes, scaled_halves_dot(byte_halves(u.q + 32 * s), x + 32 * s, scale));
    }
    const v8i products = widened(lanes);
#else
    v8i products{};
    for (int s = 0; s < 8; ++s)
      products += scaled_dot_u6(load32_u8(u.q + 32 * s), load32_i8(x + 32 * s), u.scale[s]);
#endif
    add_products(block, products, u.mins, dx, sums32, acc);
  }

  static void unpack(const uint8_t* block, uint8_t* q, int16_t* pair_scales) {
    uint8_t scales_mins[16];
    unpack_k4_scales(block + Block::kScales, scales_mins);
    for (int c = 0; c < 4; ++c) {
      v32u8 low, high;
      chunk(block, c, low, high);
      std::memcpy(q + 64 * c, &low, sizeof(low));
      std::memcpy(q + 64 * c + 32, &high, sizeof(high));
    }
    v16u8 packed;
    std::memcpy(&packed, scales_mins, sizeof(packed));
    const v16i16 wide = __builtin_convertvector(packed, v16i16);
    // Pair i (weights 8 i .. 8 i + 7) is in sub-block i / 4.
    const v16i16 first =
        __builtin_shufflevector(wide, wide, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    const v16i16 second =
        __builtin_shufflevector(wide, wide, 4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7);
    std::memcpy(pair_scales, &first, sizeof(first));
    std::memcpy(pair_scales + 16, &second, sizeof(second));
  }

  // The eight mins as floats, converted as one vector (GCC converts bytes
  // to float one lane at a time).
  static v8f mins_of(const uint8_t* scales_mins) {
    v16u8 packed;
    std::memcpy(&packed, scales_mins, sizeof(packed));
    const v16i16 wide = __builtin_convertvector(packed, v16i16);
    return __builtin_convertvector(
        __builtin_convertvector(__builtin_shufflevector(wide, wide, 8, 9, 10, 11, 12, 13, 14, 15),
                                v8i),
        v8f);
  }

  static void finish(const uint8_t* block, const v16i32* p, v16f32 dx, const v8f* sums, v16f32* acc,
                     v8f&) {
    uint8_t scales_mins[16];
    unpack_k4_scales(block + Block::kScales, scales_mins);
    const float d = fp16_at(block);
    const float dmin = fp16_at(block + Block::kDmin);
    add_scaled(p, d * dx, acc);
    const v8f all_mins = mins_of(scales_mins);
    for (int k = 0; k < 4; ++k) {
      const v16f32 mins = interleave(v8f{} + all_mins[2 * k], v8f{} + all_mins[2 * k + 1]);
      acc[k] = mins * interleave(sums[2 * k], sums[2 * k + 1]) * -dmin + acc[k];
    }
  }
};

// Bits 2 run and 2 run + 1 of every byte of a Q6_K qh moved to bits 4 and 5,
// by 16-bit shifts and a mask: x86 has no byte shifts, and GCC spells a byte
// shift by 4 as four additions.
v32u8 q6_high_bits(v32u8 qh, int run) {
  const auto words = reinterpret_cast<v16u16>(qh);
  const v16u16 moved = run < 2 ? words << (4 - 2 * run) : words >> (2 * run - 4);
  return reinterpret_cast<v32u8>(moved) & 0x30;
}

// Q6_K: per half of 128, four runs of 32; run r takes the low (r < 2) or high
// nibbles of ql[32 (r % 2) ..] and bits 2r of qh, minus 32; one int8 scale per
// 16 weights, scales[8 half + 2 r] for the first 16 of run r, the next one for
// the rest (scale g covers weights 16 g .. 16 g + 15).
template <>
struct Weights<BlockQ6_K> {
  static constexpr bool kSigned = true;

  static v32i8 run_weights(const uint8_t* block, int half, int run) {
    const v32u8 low = load32_u8(block + 64 * half + 32 * (run % 2));
    const v32u8 nibbles = run < 2 ? low & 15 : low >> 4;
    const v32u8 high = load32_u8(block + BlockQ6_K::kQh + 32 * half);
    return reinterpret_cast<v32i8>(nibbles | q6_high_bits(high, run)) - 32;
  }

  // The 16 int8 scales, one per 16 weights.
  static v16i16 scales16(const uint8_t* block) {
    v16i8 packed;
    std::memcpy(&packed, block + BlockQ6_K::kScales, sizeof(packed));
    return __builtin_convertvector(packed, v16i16);
  }

  // Scales k and k + 1 over the two halves of a run of 32.
  static v16i16 run_scale(v16i16 scales, int k) {
    return v16i16{scales[k],     scales[k],     scales[k],     scales[k],
                  scales[k],     scales[k],     scales[k],     scales[k],
                  scales[k + 1], scales[k + 1], scales[k + 1], scales[k + 1],
                  scales[k + 1], scales[k + 1], scales[k + 1], scales[k + 1]};
  }

  static void add(const uint8_t* block, const int8_t* x, float dx, const float*, v8f& acc, float&) {
    const v16i16 scales = scales16(block);
    v8i products{};
    for (int half = 0; half < 2; ++half) {
      for (int run = 0; run < 4; ++run) {
        products +=
            scaled_dot_i8(run_weights(block, half, run), load32_i8(x + 128 * half + 32 * run),
                          run_scale(scales, 8 * half + 2 * run));
      }
    }
    acc = __builtin_convertvector(products, v8f) * (fp16_at(block + BlockQ6_K::kD) * dx) + acc;
  }

  // A block unpacked once for a group of tokens: the weights of run i
  // (half i / 4) at 32 i, and their scales.
  struct Quants {
    alignas(32) int8_t q[256];
    v16i16 scale[8];
  };

  static Quants quants(const uint8_t* block) {
    Quants u;
    const v16i16 scales = scales16(block);
    for (int i = 0; i < 8; ++i) {
      const v32i8 weights = run_weights(block, i / 4, i % 4);
      std::memcpy(u.q + 32 * i, &weights, sizeof(weights));
      u.scale[i] = run_scale(scales, 2 * i);
    }
    return u;
  }

  static void add_quants(const uint8_t* block, const Quants& u, const int8_t* x, float dx,
                         const float*, v8f& acc, float&) {
    v8i products{};
    for (int i = 0; i < 8; ++i)
      products += scaled_dot_i8(load32_i8(u.q + 32 * i), load32_i8(x + 32 * i), u.scale[i]);
    acc = __builtin_convertvector(products, v8f) * (fp16_at(block + BlockQ6_K::kD) * dx) + acc;
  }

  static void unpack(const uint8_t* block, uint8_t* q, int16_t* pair_scales) {
    for (int half = 0; half < 2; ++half) {
      for (int run = 0; run < 4; ++run) {
        const v32i8 weights = run_weights(block, half, run);
        std::memcpy(q + 128 * half + 32 * run, &weights, sizeof(weights));
      }
    }
    const v16i16 scales = scales16(block);
    // Pair i (weights 8 i .. 8 i + 7) has scale i / 2.
    const v16i16 first =
        __builtin_shufflevector(scales, scales, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
    const v16i16 second = __builtin_shufflevector(scales, scales, 8, 8, 9, 9, 10, 10, 11, 11, 12,
                                                  12, 13, 13, 14, 14, 15, 15);
    std::memcpy(pair_scales, &first, sizeof(first));
    std::memcpy(pair_scales + 16, &second, sizeof(second));
  }

  static void finish(const uint8_t* block, const v16i32* p, v16f32 dx, const v8f*, v16f32* acc,
                     v8f&) {
    const float d = fp16_at(block + BlockQ6_K::kD);
    add_scaled(p, d * dx, acc);
  }
};

// The halves of a 64-byte vector, and back.
template <typename Half, typename Whole>
Half half_of(Whole v, int h) {
  Half half;
  std::memcpy(&half, reinterpret_cast<const char*>(&v) + h * sizeof(Half), sizeof(Half));
  return half;
}

// (Unused where AVX-512 does the pairs in one register.)
[[maybe_unused]] v16i32 join(v8i low, v8i high) {
  v16i32 whole;
  std::memcpy(&whole, &low, sizeof(low));
  std::memcpy(reinterpret_cast<char*>(&whole) + sizeof(low), &high, sizeof(high));
  return whole;
}

#if defined(__AVX512BW__)
// Signed weights as dot_i8 takes them: |w|, and x negated where w < 0.
void make_unsigned(__m512i& w, __m512i& x) {
  x = _mm512_mask_sub_epi8(x, _mm512_movepi8_mask(w), _mm512_setzero_si512(), x);
  w = _mm512_abs_epi8(w);
}
#endif

// A pair of weight words (broadcast) times 4 quants of each of 8 tokens per
// word: lane 2 t + k is token t's products with word k, as dot_u6 / dot_i8
// give them for one token (scaled: times the pair's integer scale, as
// scaled_dot_u6 / scaled_dot_i8).
template <bool kSigned>
v16i32 pair_dots(v64u8 pair, v64i8 x) {
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  auto w = reinterpret_cast<__m512i>(pair);
  auto xi = reinterpret_cast<__m512i>(x);
  if constexpr (kSigned) make_unsigned(w, xi);
  return reinterpret_cast<v16i32>(_mm512_dpbusd_epi32(_mm512_setzero_si512(), w, xi));
#else
  v8i halves[2];
  for (int h = 0; h < 2; ++h) {
    const auto w = half_of<v32u8>(pair, h);
    const auto xh = half_of<v32i8>(x, h);
    halves[h] = kSigned ? dot_i8(reinterpret_cast<v32i8>(w), xh) : dot_u6(w, xh);
  }
  return join(halves[0], halves[1]);
#endif
}

template <bool kSigned>
v16i32 scaled_pair_dots(v64u8 pair, v64i8 x, int16_t scale) {
#if defined(__AVX512BW__)
  auto w = reinterpret_cast<__m512i>(pair);
  auto xi = reinterpret_cast<__m512i>(x);
  if constexpr (kSigned) make_unsigned(w, xi);
  return reinterpret_cast<v16i32>(
      _mm512_madd_epi16(_mm512_maddubs_epi16(w, xi), _mm512_set1_epi16(scale)));
#else
  v8i halves[2];
  for (int h = 0; h < 2; ++h) {
    const auto w = half_of<v32u8>(pair, h);
    const auto xh = half_of<v32i8>(x, h);
    halves[h] = kSigned ? scaled_dot_i8(reinterpret_cast<v32i8>(w), xh, v16i16{} + scale)
                        : scaled_dot_u6(w, xh, v16i16{} + scale);
  }
  return join(halves[0], halves[1]);
#endif
}

v64i8 load64_i8(const int8_t* p) {
  v64i8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

}  // namespace

// One token, one row at a time: unlike the f32 kernels, fusing rows to
// share the activation loads measured slower (2 rows 20%, 4 rows 40% on
// Q4_K), as the accumulators no longer fit in registers and the rows' loads
// interleave.
template <typename Block>
void dot_rows_token(const uint8_t* row, size_t row_bytes, int64_t n_rows, const Q8Activations& x,
                    float* out) {
  const auto n_blocks = static_cast<int64_t>(x.d.size());
  for (int64_t r = 0; r < n_rows; ++r, row += row_bytes) {
    v8f acc{};
    float offset = 0.0f;
    for (int64_t b = 0; b < n_blocks; ++b) {
      Weights<Block>::add(row + b * Block::kBytes, x.q.data() + b * Block::kElems, x.d[b],
                          x.sums32.data() + b * (Block::kElems / 32), acc, offset);
    }
    out[r] = hsum8(acc) + offset;
  }
}

// kGroup tokens at once: each block's weights are
// unpacked once for all of them, each token adding exactly as alone.
template <typename Block, int kGroup>
void dot_rows_group(const uint8_t* row, size_t row_bytes, int64_t n_rows, const Q8Activations* xs,
                    float* out, int64_t out_stride) {
  using W = Weights<Block>;
  const auto n_blocks = static_cast<int64_t>(xs[0].d.size());
  for (int64_t r = 0; r < n_rows; ++r, row += row_bytes) {
    v8f acc[kGroup] = {};
    float offset[kGroup] = {};
    for (int64_t b = 0; b < n_blocks; ++b) {
      const uint8_t* block = row + b * Block::kBytes;
      const auto q = W::quants(block);
      for (int t = 0; t < kGroup; ++t) {
        W::add_quants(block, q, xs[t].q.data() + b * Block::kElems, xs[t].d[b],
                      xs[t].sums32.data() + b * (Block::kElems / 32), acc[t], offset[t]);
      }
    }
    for (int t = 0; t < kGroup; ++t) out[t * out_stride + r] = hsum8(acc[t]) + offset[t];
  }
}

// Tokens [first, first + count) of x, in groups of up to 4.
template <typename Block>
void dot_rows_tokens(const uint8_t* row, size_t row_bytes, int64_t n_rows, const Q8Batch& x,
                     size_t first, size_t count, float* out, int64_t out_stride) {
  const Q8Activations* xs = x.tokens.data() + first;
  switch (count) {
    case 4:
      return dot_rows_group<Block, 4>(row, row_bytes, n_rows, xs, out, out_stride);
    case 3:
      return dot_rows_group<Block, 3>(row, row_bytes, n_rows, xs, out, out_stride);
    case 2:
      return dot_rows_group<Block, 2>(row, row_bytes, n_rows, xs, out, out_stride);
    default:
      return dot_rows_token<Block>(row, row_bytes, n_rows, xs[0], out);
  }
}

// A tile of up to 8 tokens side by side: each weight block is unpacked once,
// and each pair of its words, broadcast, multiplies every token.
template <typename Block>
void dot_rows_tile(const uint8_t* row, size_t row_bytes, int64_t n_rows, const Q8TokenLanes& x,
                   float* out, int64_t out_stride) {
  using W = Weights<Block>;
  constexpr int64_t kT = Q8TokenLanes::kTokens;
  constexpr int kPairs = Block::kElems / 8;
  constexpr int kSums = Block::kElems / 32;
  const auto n_blocks = static_cast<int64_t>(x.d.size()) / kT;
  alignas(64) uint8_t q[Block::kElems];
  int16_t pair_scales[kPairs];
  for (int64_t r = 0; r < n_rows; ++r, row += row_bytes) {
    v16f32 acc[4] = {};
    v8f offset{};
    for (int64_t b = 0; b < n_blocks; ++b) {
      const uint8_t* block = row + b * Block::kBytes;
      const int8_t* xb = x.q.data() + b * Block::kElems * kT;
      v16i32 p[4] = {};
      if constexpr (requires { W::pair(block, 0); }) {
        for (int i = 0; i < kPairs; ++i)
          p[i] = pair_dots<W::kSigned>(W::pair(block, i), load64_i8(xb + 64 * i));
      } else if constexpr (Block::kElems == 32) {
        const v32u8 quants = bytes(W::quants(block));
        std::memcpy(q, &quants, sizeof(quants));
        // Keeps GCC from forwarding the stored register to the broadcasts.
        asm volatile("" ::: "memory");
        for (int i = 0; i < kPairs; ++i)
          p[i] = pair_dots<W::kSigned>(broadcast_pair(q + 8 * i), load64_i8(xb + 64 * i));
      } else {
        W::unpack(block, q, pair_scales);
        asm volatile("" ::: "memory");
        // Unrolled, the four accumulators stay in registers; rolled, GCC kept
        // them on the stack, and each addition waited for the last store.
#pragma GCC unroll 32
        for (int i = 0; i < kPairs; ++i) {
          p[i % 4] += scaled_pair_dots<W::kSigned>(broadcast_pair(q + 8 * i),
                                                   load64_i8(xb + 64 * i), pair_scales[i]);
        }
      }
      v8f dx;
      std::memcpy(&dx, x.d.data() + b * kT, sizeof(dx));
      v8f sums[kSums];
      std::memcpy(sums, x.sums32.data() + b * kSums * kT, sizeof(sums));
      W::finish(block, p, interleave(dx, dx), sums, acc, offset);
    }
    v8f total{};
    for (const v16f32& pair : acc) {
      total += even_lanes(pair);
      total += odd_lanes(pair);
    }
    float lanes[kT];
    const v8f result = total + offset;
    std::memcpy(lanes, &result, sizeof(lanes));
    for (int64_t t = 0; t < x.n_tokens; ++t) out[t * out_stride + r] = lanes[t];
  }
}

template <typename Block>
void dot_rows_int8(const uint8_t* row, size_t row_bytes, int64_t n_rows, const Q8Batch& x,
                   float* out, int64_t out_stride) {
  for (const Q8Activations& token : x.tokens) {
    if (token.block != Block::kElems) {
      fail("dot_rows_q8: activations in blocks of ", token.block, ", the weights need ",
           Block::kElems);
    }
  }
  if (!x.tiles.empty()) {
    for (size_t i = 0; i < x.tiles.size(); ++i) {
      dot_rows_tile<Block>(row, row_bytes, n_rows, x.tiles[i],
                           out + static_cast<int64_t>(i) * Q8TokenLanes::kTokens * out_stride,
                           out_stride);
    }
    return;
  }
  // Groups of tokens over runs of rows small enough to stay in L1 for the
  // next group.
  constexpr int64_t kRowRun = 16;
  constexpr size_t kGroup = 4;
  for (int64_t r0 = 0; r0 < n_rows; r0 += kRowRun) {
    const int64_t rows = std::min(kRowRun, n_rows - r0);
    for (size_t t = 0; t < x.tokens.size(); t += kGroup) {
      dot_rows_tokens<Block>(row + r0 * static_cast<int64_t>(row_bytes), row_bytes, rows, x, t,
                             std::min(kGroup, x.tokens.size() - t),
                             out + static_cast<int64_t>(t) * out_stride + r0, out_stride);
    }
  }
}

#define EVENTKV_DOT_ROWS_INT8(Block)                                                          \
  template void dot_rows_int8<Block>(const uint8_t*, size_t, int64_t, const Q8Batch&, float*, \
                                     int64_t)
EVENTKV_DOT_ROWS_INT8(BlockQ4_0);
EVENTKV_DOT_ROWS_INT8(BlockQ4_1);
EVENTKV_DOT_ROWS_INT8(BlockQ5_0);
EVENTKV_DOT_ROWS_INT8(BlockQ5_1);
EVENTKV_DOT_ROWS_INT8(BlockQ8_0);
EVENTKV_DOT_ROWS_INT8(BlockQ4_K);
EVENTKV_DOT_ROWS_INT8(BlockQ5_K);
EVENTKV_DOT_ROWS_INT8(BlockQ6_K);
#undef EVENTKV_DOT_ROWS_INT8

}  // namespace eventkv::compute
