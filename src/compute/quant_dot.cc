#include "compute/quant_dot.h"

#include <cstring>
#include <type_traits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "compute/quant_blocks.h"
#include "compute/simd.h"
#include "compute/vec_ops.h"
#include "util/half.h"

namespace eventkv::compute {
namespace {

// sum_j q[j] x[j] for 32 4-bit quants: low nibbles pair with x[0..15], high
// nibbles with x[16..31] (the Q4_0/Q4_1/Q5 layout); `high_*` add fifth bits.
[[gnu::always_inline]] inline v16f nibbles_times_x(const uint8_t* qs, const float* x, v16f high_lo,
                                                   v16f high_hi) {
  const v16u8 q = load16_u8(qs);
  return (u8_to_f32(q & 15) + high_lo) * load16(x) + (u8_to_f32(q >> 4) + high_hi) * load16(x + 16);
}

// BlockDot<Block>::add adds one block's dot product to a vector accumulator
// (its scaled quant products) and a scalar one (offsets and mins, which
// multiply the block sums of x).
template <typename Block>
struct BlockDot;

template <>
struct BlockDot<BlockQ4_0> {
  static void add(const uint8_t* block, const float* x, const float* xsum, v16f& acc,
                  float& offset) {
    const float d = fp16_at(block);
    acc = nibbles_times_x(block + BlockQ4_0::kQs, x, v16f{}, v16f{}) * d + acc;
    offset -= 8.0f * d * xsum[0];
  }
};

template <>
struct BlockDot<BlockQ4_1> {
  static void add(const uint8_t* block, const float* x, const float* xsum, v16f& acc,
                  float& offset) {
    acc = nibbles_times_x(block + BlockQ4_1::kQs, x, v16f{}, v16f{}) * fp16_at(block) + acc;
    offset += fp16_at(block + BlockQ4_1::kM) * xsum[0];
  }
};

// The fifth bits of a Q5 block as 0/16 per lane, for lanes 0..15 and 16..31.
[[gnu::always_inline]] inline void fifth_bits(const uint8_t* qh_bytes, v16f* lo, v16f* hi) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, sizeof(qh));
  const v16i lanes = lane_index();
  const v16i bits = v16i{} + static_cast<int32_t>(qh);
  *lo = to_f32(((bits >> lanes) & 1) << 4);
  *hi = to_f32(((bits >> (lanes + 16)) & 1) << 4);
}

template <bool kHasMin>
struct BlockDot<BlockQ5<kHasMin>> {
  static void add(const uint8_t* block, const float* x, const float* xsum, v16f& acc,
                  float& offset) {
    using Block = BlockQ5<kHasMin>;
    const float d = fp16_at(block);
    v16f high_lo;
    v16f high_hi;
    fifth_bits(block + Block::kQh, &high_lo, &high_hi);
    acc = nibbles_times_x(block + Block::kQs, x, high_lo, high_hi) * d + acc;
    offset += (kHasMin ? fp16_at(block + Block::kM) : -16.0f * d) * xsum[0];
  }
};

template <>
struct BlockDot<BlockQ8_0> {
  static void add(const uint8_t* block, const float* x, const float*, v16f& acc, float&) {
    acc = (load16_i8_as_f32(block + BlockQ8_0::kQs) * load16(x) +
           load16_i8_as_f32(block + BlockQ8_0::kQs + 16) * load16(x + 16)) *
              fp16_at(block) +
          acc;
  }
};

// 16 in each byte of qh whose bit `bit` is set, else 0: Q5_K's fifth bits,
// by a compare, as x86 has no byte shifts.
[[gnu::always_inline]] inline v16u8 fifth_bit16(v16u8 qh, int bit) {
  const v16u8 mask = v16u8{} + static_cast<uint8_t>(1 << bit);
  return reinterpret_cast<v16u8>((qh & mask) == mask) & 16;
}

// Q4_K and Q5_K (layout in compute/quant_blocks.h): the sub-block scales
// and mins times d and dmin, one multiply per 32 weights.
template <bool kFifthBit>
struct BlockDot<BlockQ45_K<kFifthBit>> {
  static void add(const uint8_t* block, const float* x, const float* xsum, v16f& acc,
                  float& offset) {
    using Block = BlockQ45_K<kFifthBit>;
    uint8_t scales_mins[16];
    unpack_k4_scales(block + Block::kScales, scales_mins);
    // Converted in one vector: byte-by-byte conversions made Q4_K 28% slower.
    const v16f d_dmin =
        select(lane_index() < 8, splat16(fp16_at(block)), splat16(fp16_at(block + Block::kDmin)));
    float scaled[16];
    store16(scaled, u8_to_f32(load16_u8(scales_mins)) * d_dmin);
    const float* ds = scaled;
    const float* dm = scaled + 8;
    const uint8_t* qs = block + Block::kQs;
    for (int c = 0; c < 4; ++c) {
      const v16u8 q0 = load16_u8(qs + 32 * c);
      const v16u8 q1 = load16_u8(qs + 32 * c + 16);
      v16u8 low0 = q0 & 15;
      v16u8 low1 = q1 & 15;
      v16u8 high0 = q0 >> 4;
      v16u8 high1 = q1 >> 4;
      if constexpr (kFifthBit) {
        const v16u8 qh0 = load16_u8(block + Block::kQh);
        const v16u8 qh1 = load16_u8(block + Block::kQh + 16);
        low0 |= fifth_bit16(qh0, 2 * c);
        low1 |= fifth_bit16(qh1, 2 * c);
        high0 |= fifth_bit16(qh0, 2 * c + 1);
        high1 |= fifth_bit16(qh1, 2 * c + 1);
      }
      const float* xc = x + 64 * c;
      acc = (u8_to_f32(low0) * load16(xc) + u8_to_f32(low1) * load16(xc + 16)) * ds[2 * c] + acc;
      acc = (u8_to_f32(high0) * load16(xc + 32) + u8_to_f32(high1) * load16(xc + 48)) *
                ds[2 * c + 1] +
            acc;
    }
    float mins = 0.0f;
    for (int k = 0; k < 8; ++k) mins += dm[k] * xsum[k];
    offset -= mins;
  }
};

// Each byte shifted right by `shift` and masked, by a 16-bit shift: x86
// has no byte shift, and GCC spells one lane by lane.
[[gnu::always_inline]] inline v16u8 bits_of(v16u8 bytes, int shift, uint8_t mask) {
  typedef uint16_t v8u16 __attribute__((vector_size(16)));
  return reinterpret_cast<v16u8>(reinterpret_cast<v8u16>(bytes) >> shift) & mask;
}

// Q2_K and Q3_K: sixteen groups of 16 values, in the order dequantize.cc
// writes them; group g's 2-bit quants are bits `shift` of q[16 part ..].
// Each group is dequantized in registers and multiplied in place.
template <>
struct BlockDot<BlockQ2_K> {
  static void add(const uint8_t* block, const float* x, const float*, v16f& acc, float&) {
    const float d = fp16_at(block + BlockQ2_K::kD);
    const float dmin = fp16_at(block + BlockQ2_K::kDmin);
    int group = 0;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* q = block + BlockQ2_K::kQs + 32 * half;
      for (int shift = 0; shift < 8; shift += 2) {
        for (int part = 0; part < 2; ++part, ++group) {
          const uint8_t sc = block[group];
          const v16u8 bits = bits_of(load16_u8(q + 16 * part), shift, 3);
          const v16f w = u8_to_f32(bits) * (d * static_cast<float>(sc & 0xF)) -
                         dmin * static_cast<float>(sc >> 4);
          acc = w * load16(x + 16 * group) + acc;
        }
      }
    }
  }
};

// Q3_K: a value is its 2 low bits, plus 4 when its hmask bit is set, minus 4.
template <>
struct BlockDot<BlockQ3_K> {
  static void add(const uint8_t* block, const float* x, const float*, v16f& acc, float&) {
    const float d = fp16_at(block + BlockQ3_K::kD);
    int8_t scales[16];
    unpack_q3_k_scales(block + BlockQ3_K::kScales, scales);
    int group = 0;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* q = block + BlockQ3_K::kQs + 32 * half;
      for (int shift = 0; shift < 8; shift += 2) {
        const int bit = 4 * half + shift / 2;
        for (int part = 0; part < 2; ++part, ++group) {
          const v16u8 low = bits_of(load16_u8(q + 16 * part), shift, 3);
          const v16u8 high = bits_of(load16_u8(block + 16 * part), bit, 1) << 2;
          const v16f w = (u8_to_f32(low | high) - 4.0f) * (d * static_cast<float>(scales[group]));
          acc = w * load16(x + 16 * group) + acc;
        }
      }
    }
  }
};

// Q6_K: per half of 128, four runs of 32; run r takes the low (r < 2) or high
// nibbles of ql[32 (r % 2) ..] and bits 2r of qh; one int8 scale per 16.
template <>
struct BlockDot<BlockQ6_K> {
  static void add(const uint8_t* block, const float* x, const float*, v16f& acc, float&) {
    const float d = fp16_at(block + BlockQ6_K::kD);
    const auto* scales = reinterpret_cast<const int8_t*>(block + BlockQ6_K::kScales);
    float ds[16];
    for (int i = 0; i < 16; ++i) ds[i] = d * static_cast<float>(scales[i]);
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = block + 64 * half;
      const uint8_t* qh = block + BlockQ6_K::kQh + 32 * half;
      for (int part = 0; part < 2; ++part) {
        const v16u8 low0 = load16_u8(ql + 16 * part);
        const v16u8 low1 = load16_u8(ql + 32 + 16 * part);
        const v16u8 high = load16_u8(qh + 16 * part);
        const float* xp = x + 128 * half + 16 * part;
        const v16u8 nibbles[4] = {low0 & 15, low1 & 15, low0 >> 4, low1 >> 4};
        for (int run = 0; run < 4; ++run) {
          const v16u8 two_bits = (high >> static_cast<uint8_t>(2 * run)) & 3;
          const v16f q = u8_to_f32(nibbles[run] | (two_bits << 4)) - 32.0f;
          acc = q * load16(xp + 32 * run) * ds[8 * half + 2 * run + part] + acc;
        }
      }
    }
  }
};

// kRows rows at once: x is loaded once per block for all of them, and the
// rows' accumulation chains run independently. Forced inline: GCC leaves the
// 4-row form out of line in dot_rows_f32 otherwise (Q4_1 5% slower).
template <typename Block, int kRows>
[[gnu::always_inline]] inline void dot_rows_fused(const uint8_t* row, size_t row_bytes,
                                                  const float* x, const float* xsum, int64_t n,
                                                  float* out) {
  v16f acc[kRows] = {};
  float offset[kRows] = {};
  for (int64_t b = 0; b < n / Block::kElems; ++b) {
    for (int r = 0; r < kRows; ++r) {
      BlockDot<Block>::add(row + r * row_bytes + b * Block::kBytes, x + b * Block::kElems,
                           xsum + b * (Block::kElems / 32), acc[r], offset[r]);
    }
  }
  for (int r = 0; r < kRows; ++r) out[r] = hsum(acc[r]) + offset[r];
}

// 16 consecutive f16 or bf16 values as floats.
v16f load16_values(BlockF16, const uint8_t* p) {
#if defined(__AVX512F__)
  return {reinterpret_cast<f32_part>(
      _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))))};
#elif defined(__F16C__)
  return {reinterpret_cast<f32_part>(
              _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))),
          reinterpret_cast<f32_part>(
              _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16))))};
#else
  float values[kLanes];
  for (int i = 0; i < kLanes; ++i) values[i] = fp16_at(p + 2 * i);
  return load16(values);
#endif
}

// A bf16 is the top half of an f32.
v16f load16_values(BlockBF16, const uint8_t* p) {
#if defined(__AVX512F__)
  const __m512i wide =
      _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return {reinterpret_cast<f32_part>(_mm512_slli_epi32(wide, 16))};
#elif defined(__AVX2__)
  v16f r;
  for (int h = 0; h < 2; ++h) {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * h)));
    r.part[h] = reinterpret_cast<f32_part>(_mm256_slli_epi32(wide, 16));
  }
  return r;
#else
  float values[kLanes];
  for (int i = 0; i < kLanes; ++i) {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, sizeof(h));
    values[i] = bf16_to_fp32(h);
  }
  return load16(values);
#endif
}

float value_at(BlockF16, const uint8_t* p) {
  return fp16_at(p);
}

float value_at(BlockBF16, const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof(h));
  return bf16_to_fp32(h);
}

// f16 and bf16 rows: converted 16 values at a time and multiplied in place.
template <typename Block>
void dot_rows_halves(const uint8_t* row, size_t row_bytes, int64_t n_rows, const float* x,
                     int64_t n, float* out) {
  for (int64_t r = 0; r < n_rows; ++r, row += row_bytes) {
    v16f acc{};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      acc = load16_values(Block{}, row + 2 * i) * load16(x + i) + acc;
    float tail = 0.0f;
    for (; i < n; ++i) tail += value_at(Block{}, row + 2 * i) * x[i];
    out[r] = hsum(acc) + tail;
  }
}

}  // namespace

std::vector<float> block_sums32(const float* x, int64_t n) {
  std::vector<float> sums(static_cast<size_t>(n / 32));
  for (size_t b = 0; b < sums.size(); ++b)
    sums[b] = hsum(load16(x + 32 * b) + load16(x + 32 * b + 16));
  return sums;
}

template <typename Block>
void dot_rows_f32(const uint8_t* row, size_t row_bytes, int64_t n_rows, const float* x,
                  const float* xsum32, int64_t n, float* out) {
  if constexpr (std::is_same_v<Block, BlockF32>) {
    for (int64_t r = 0; r < n_rows; ++r)
      out[r] = dot(reinterpret_cast<const float*>(row + r * row_bytes), x, n);
  } else if constexpr (Block::kElems == 1) {
    dot_rows_halves<Block>(row, row_bytes, n_rows, x, n, out);
  } else {
    int64_t r = 0;
    for (; r + 4 <= n_rows; r += 4)
      dot_rows_fused<Block, 4>(row + r * row_bytes, row_bytes, x, xsum32, n, out + r);
    for (; r < n_rows; ++r)
      dot_rows_fused<Block, 1>(row + r * row_bytes, row_bytes, x, xsum32, n, out + r);
  }
}

#define EVENTKV_DOT_ROWS_F32(Block)                                                              \
  template void dot_rows_f32<Block>(const uint8_t*, size_t, int64_t, const float*, const float*, \
                                    int64_t, float*)
EVENTKV_DOT_ROWS_F32(BlockF32);
EVENTKV_DOT_ROWS_F32(BlockF16);
EVENTKV_DOT_ROWS_F32(BlockBF16);
EVENTKV_DOT_ROWS_F32(BlockQ4_0);
EVENTKV_DOT_ROWS_F32(BlockQ4_1);
EVENTKV_DOT_ROWS_F32(BlockQ5_0);
EVENTKV_DOT_ROWS_F32(BlockQ5_1);
EVENTKV_DOT_ROWS_F32(BlockQ8_0);
EVENTKV_DOT_ROWS_F32(BlockQ2_K);
EVENTKV_DOT_ROWS_F32(BlockQ3_K);
EVENTKV_DOT_ROWS_F32(BlockQ4_K);
EVENTKV_DOT_ROWS_F32(BlockQ5_K);
EVENTKV_DOT_ROWS_F32(BlockQ6_K);
#undef EVENTKV_DOT_ROWS_F32

}  // namespace eventkv::compute
