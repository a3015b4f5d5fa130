#include "compute/quant_dot_q8.h"

#include <algorithm>
#include <cstring>
#include <span>

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

// The 32 4-bit quants of a Q4/Q5 block: low nibbles are values 0..15, high
// nibbles values 16..31, each half shifted in 16 bytes and then joined (a
// variable shift of the joined register needs AVX-512BW; GCC scalarizes it
// elsewhere).
v32u8 nibbles32(const uint8_t* qs) {
  const v16u8 q = load16_u8(qs);
  const v16u8 low = q & 15;
  const v16u8 high = q >> 4;
  return __builtin_shufflevector(low, high, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
}

// 16 in every byte whose bit is set in a Q5 block's 32-bit qh: the fifth bits.
v32u8 fifth_bits32(const uint8_t* qh_bytes) {
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, sizeof(qh));
  return reinterpret_cast<v32u8>(_mm256_maskz_set1_epi8(qh, 16));
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

// The activations of kTokens tokens that a row multiplies: each token's
// quants, block scales and sums of 32 (compute/activation_q8.h).
template <int kTokens>
struct TokenTile {
  const int8_t* q[kTokens];
  const float* d[kTokens];
  const float* sums32[kTokens];
};

// BlockDot<Block>::add<kTokens> adds weight block b of a row times block b of
// every token of the tile: the block is unpacked once, then for each token the
// integer products, scaled by the block's d times the token's dx, go into a
// vector accumulator, and a per-block offset or min (which multiplies the sums
// of the activation quants) into a scalar one. Each token's operations are the
// same, in the same order, whatever the tile size: its result has the same bits
// alone or batched.
template <typename Block>
struct BlockDot;

template <>
struct BlockDot<BlockQ4_0> {
  template <int kTokens>
  static void add(const uint8_t* block, const TokenTile<kTokens>& x, int64_t b, v8f* acc,
                  float* offset) {
    const float d = fp16_at(block);
    const v32u8 q = nibbles32(block + BlockQ4_0::kQs);
    for (int t = 0; t < kTokens; ++t) {
      acc[t] =
          __builtin_convertvector(dot_u6(q, load32_i8(x.q[t] + 32 * b)), v8f) * (d * x.d[t][b]) +
          acc[t];
      offset[t] -= 8.0f * d * x.sums32[t][b];
    }
  }
};

// Q5_0 (kHasMin false: q - 16 times d) and Q5_1 (q times d plus a min).
template <bool kHasMin>
struct BlockDot<BlockQ5<kHasMin>> {
  template <int kTokens>
  static void add(const uint8_t* block, const TokenTile<kTokens>& x, int64_t b, v8f* acc,
                  float* offset) {
    using Block = BlockQ5<kHasMin>;
    const float d = fp16_at(block);
    const v32u8 q = nibbles32(block + Block::kQs) | fifth_bits32(block + Block::kQh);
    const float m = kHasMin ? fp16_at(block + Block::kM) : -16.0f * d;
    for (int t = 0; t < kTokens; ++t) {
      acc[t] =
          __builtin_convertvector(dot_u6(q, load32_i8(x.q[t] + 32 * b)), v8f) * (d * x.d[t][b]) +
          acc[t];
      offset[t] += m * x.sums32[t][b];
    }
  }
};

template <>
struct BlockDot<BlockQ4_1> {
  template <int kTokens>
  static void add(const uint8_t* block, const TokenTile<kTokens>& x, int64_t b, v8f* acc,
                  float* offset) {
    const float d = fp16_at(block);
    const float m = fp16_at(block + BlockQ4_1::kM);
    const v32u8 q = nibbles32(block + BlockQ4_1::kQs);
    for (int t = 0; t < kTokens; ++t) {
      acc[t] =
          __builtin_convertvector(dot_u6(q, load32_i8(x.q[t] + 32 * b)), v8f) * (d * x.d[t][b]) +
          acc[t];
      offset[t] += m * x.sums32[t][b];
    }
  }
};

template <>
struct BlockDot<BlockQ8_0> {
  template <int kTokens>
  static void add(const uint8_t* block, const TokenTile<kTokens>& x, int64_t b, v8f* acc, float*) {
    const float d = fp16_at(block);
    const v32i8 q = load32_i8(reinterpret_cast<const int8_t*>(block + BlockQ8_0::kQs));
    for (int t = 0; t < kTokens; ++t) {
      acc[t] =
          __builtin_convertvector(dot_i8(q, load32_i8(x.q[t] + 32 * b)), v8f) * (d * x.d[t][b]) +
          acc[t];
    }
  }
};

// Q4_K and Q5_K (layout in compute/quant_blocks.h): the 6-bit sub-block
// scales multiply in integers, so d applies once a block; the mins times the
// activation sums go into the same accumulator, times -dmin.
template <bool kFifthBit>
struct BlockDot<BlockQ45_K<kFifthBit>> {
  template <int kTokens>
  static void add(const uint8_t* block, const TokenTile<kTokens>& x, int64_t b, v8f* acc, float*) {
    using Block = BlockQ45_K<kFifthBit>;
    uint8_t scales_mins[16];
    unpack_k4_scales(block + Block::kScales, scales_mins);
    const uint8_t* qs = block + Block::kQs;
    const v32u8 qh = kFifthBit ? load32_u8(block + Block::kQh) : v32u8{};
    v8i products[kTokens] = {};
    for (int c = 0; c < 4; ++c) {
      const v32u8 q = load32_u8(qs + 32 * c);
      const v32u8 low = (q & 15) | (((qh >> (2 * c)) & 1) << 4);
      const v32u8 high = (q >> 4) | (((qh >> (2 * c + 1)) & 1) << 4);
      const v16i16 low_scale = v16i16{} + scales_mins[2 * c];
      const v16i16 high_scale = v16i16{} + scales_mins[2 * c + 1];
      for (int t = 0; t < kTokens; ++t) {
        const int8_t* xc = x.q[t] + kQK_K * b + 64 * c;
        products[t] += scaled_dot_u6(low, load32_i8(xc), low_scale) +
                       scaled_dot_u6(high, load32_i8(xc + 32), high_scale);
      }
    }
    v8u8 mins;
    std::memcpy(&mins, scales_mins + 8, sizeof(mins));
    const v8f min_lanes = __builtin_convertvector(mins, v8f);
    const float d = fp16_at(block);
    const float dmin = fp16_at(block + Block::kDmin);
    for (int t = 0; t < kTokens; ++t) {
      v8f sums;
      std::memcpy(&sums, x.sums32[t] + 8 * b, sizeof(sums));
      acc[t] = __builtin_convertvector(products[t], v8f) * (d * x.d[t][b]) + acc[t];
      acc[t] = min_lanes * sums * -dmin + acc[t];
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
// the rest.
template <>
struct BlockDot<BlockQ6_K> {
  template <int kTokens>
  static void add(const uint8_t* block, const TokenTile<kTokens>& x, int64_t b, v8f* acc, float*) {
    v16i8 packed;
    std::memcpy(&packed, block + BlockQ6_K::kScales, sizeof(packed));
    const auto scales = __builtin_convertvector(packed, v16i16);
    v8i products[kTokens] = {};
    for (int half = 0; half < 2; ++half) {
      const v32u8 low0 = load32_u8(block + 64 * half);
      const v32u8 low1 = load32_u8(block + 64 * half + 32);
      const v32u8 high = load32_u8(block + BlockQ6_K::kQh + 32 * half);
      const v32u8 nibbles[4] = {low0 & 15, low1 & 15, low0 >> 4, low1 >> 4};
      for (int run = 0; run < 4; ++run) {
        const int k = 8 * half + 2 * run;
        const v16i16 scale = {scales[k],     scales[k],     scales[k],     scales[k],
                              scales[k],     scales[k],     scales[k],     scales[k],
                              scales[k + 1], scales[k + 1], scales[k + 1], scales[k + 1],
                              scales[k + 1], scales[k + 1], scales[k + 1], scales[k + 1]};
        const v32i8 q = reinterpret_cast<v32i8>(nibbles[run] | q6_high_bits(high, run)) - 32;
        for (int t = 0; t < kTokens; ++t) {
          products[t] +=
              scaled_dot_i8(q, load32_i8(x.q[t] + kQK_K * b + 128 * half + 32 * run), scale);
        }
      }
    }
    const float d = fp16_at(block + BlockQ6_K::kD);
    for (int t = 0; t < kTokens; ++t)
      acc[t] = __builtin_convertvector(products[t], v8f) * (d * x.d[t][b]) + acc[t];
  }
};

// Tokens per pass over a row: as many as keep their accumulators and the
// unpacked weights in vector registers (32 with AVX-512, 16 below).
#if defined(__AVX512F__)
constexpr int kTileTokens = 8;
#else
constexpr int kTileTokens = 4;
#endif

// Rows [0, n_rows) times the kTokens tokens of xs.
template <typename Block, int kTokens>
void dot_rows_tile(const uint8_t* row, size_t row_bytes, int64_t n_rows, const Q8Activations* xs,
                   float* out, int64_t out_stride) {
  TokenTile<kTokens> x{};
  for (int t = 0; t < kTokens; ++t) {
    x.q[t] = xs[t].q.data();
    x.d[t] = xs[t].d.data();
    x.sums32[t] = xs[t].sums32.data();
  }
  const auto n_blocks = static_cast<int64_t>(xs[0].d.size());
  for (int64_t r = 0; r < n_rows; ++r, row += row_bytes) {
    v8f acc[kTokens] = {};
    float offset[kTokens] = {};
    for (int64_t b = 0; b < n_blocks; ++b)
      BlockDot<Block>::template add<kTokens>(row + b * Block::kBytes, x, b, acc, offset);
    for (int t = 0; t < kTokens; ++t) out[t * out_stride + r] = hsum8(acc[t]) + offset[t];
  }
}

// A tile of 1 .. kTileTokens tokens, as a compile-time count.
template <typename Block, int kTokens = kTileTokens>
void dot_rows_tail(int tokens, const uint8_t* row, size_t row_bytes, int64_t n_rows,
                   const Q8Activations* xs, float* out, int64_t out_stride) {
  if constexpr (kTokens > 1) {
    if (tokens < kTokens) {
      return dot_rows_tail<Block, kTokens - 1>(tokens, row, row_bytes, n_rows, xs, out, out_stride);
    }
  }
  dot_rows_tile<Block, kTokens>(row, row_bytes, n_rows, xs, out, out_stride);
}

}  // namespace

// One row at a time per tile of tokens: unlike the f32 kernels, fusing rows
// to share the activation loads measured slower (2 rows 20%, 4 rows 40% on
// Q4_K), as the accumulators no longer fit in registers and the rows' loads
// interleave. Sharing the unpacked weights between tokens is what pays.
template <typename Block>
void dot_rows_int8(const uint8_t* row, size_t row_bytes, int64_t n_rows,
                   std::span<const Q8Activations> xs, float* out, int64_t out_stride) {
  for (const Q8Activations& x : xs) {
    if (x.block != Block::kElems) {
      fail("dot_rows_q8: activations in blocks of ", x.block, ", the weights need ", Block::kElems);
    }
    if (x.q.size() != xs[0].q.size()) {
      fail("dot_rows_q8: tokens of ", x.q.size(), " and ", xs[0].q.size(), " activations");
    }
  }
  for (size_t t = 0; t < xs.size(); t += kTileTokens) {
    const auto tokens = static_cast<int>(std::min<size_t>(kTileTokens, xs.size() - t));
    dot_rows_tail<Block>(tokens, row, row_bytes, n_rows, xs.data() + t,
                         out + static_cast<int64_t>(t) * out_stride, out_stride);
  }
}

#define EVENTKV_DOT_ROWS_INT8(Block)                                  \
  template void dot_rows_int8<Block>(const uint8_t*, size_t, int64_t, \
                                     std::span<const Q8Activations>, float*, int64_t)
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
