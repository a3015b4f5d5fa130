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
typedef uint32_t v8u __attribute__((vector_size(32)));

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

// A word of 4 weights in every 32-bit lane, from memory: a broadcast load
// runs on a load port, while spreading a word held in a register takes a
// shuffle, on the one port that the unpacking's shuffles need too.
v32u8 broadcast_word(const uint8_t* p) {
  uint32_t word;
  std::memcpy(&word, p, sizeof(word));
  return reinterpret_cast<v32u8>(v8u{} + word);
}

// Word w (0..7) of the 32 4-bit weights of 16 packed bytes: low nibbles are
// weights 0..15, high nibbles 16..31 (as nibbles32), broadcast from memory.
v32u8 nibble_word(const uint8_t* qs, int w) {
  const v32u8 word = broadcast_word(qs + 4 * (w % 4));
  return w < 4 ? word & 15 : reinterpret_cast<v32u8>(reinterpret_cast<v8u>(word) >> 4) & 15;
}

// Weights<Block> holds what the kernels know of a layout, two ways:
// - add() multiplies one block with one token's activation block: the
//   integer products, scaled by the block's d times the activations' dx,
//   into a vector accumulator whose lane j sums the products of every block's
//   word j (weights 4 j .. 4 j + 3 of each 32), and a per-block offset or min
//   (times the sums of the activation quants) into `offset` or the lanes;
// - unpack() and finish() do the same for a tile of 8 tokens side by side
//   (compute/activation_q8.h: Q8TokenLanes), a token per lane: unpack()
//   writes the block's weights as bytes and an integer scale per word, the
//   tile kernel multiplies each word with all tokens at once into P[word %
//   8], and finish() applies the float terms to accumulators acc[j] that
//   are each token's lane j of add(), with the same operations in the same
//   order. So a token's result has the same bits alone or in a tile.
template <typename Block>
struct Weights;

template <>
struct Weights<BlockQ4_0> {
  static constexpr bool kSigned = false;
  static v32u8 quants(const uint8_t* block) { return nibbles32(block + BlockQ4_0::kQs); }
  static v32u8 word(const uint8_t* block, int w) { return nibble_word(block + BlockQ4_0::kQs, w); }
  static void add(const uint8_t* block, const int8_t* x, float dx, const float* sums32, v8f& acc,
                  float& offset) {
    const float d = fp16_at(block);
    acc = __builtin_convertvector(dot_u6(quants(block), load32_i8(x)), v8f) * (d * dx) + acc;
    offset -= 8.0f * d * sums32[0];
  }
  static void finish(const uint8_t* block, const v8i* p, v8f dx, const v8f* sums, v8f* acc,
                     v8f& offset) {
    const float d = fp16_at(block);
    for (int j = 0; j < 8; ++j) acc[j] = __builtin_convertvector(p[j], v8f) * (d * dx) + acc[j];
    offset -= 8.0f * d * sums[0];
  }
};

// Q5_0 (kHasMin false: q - 16 times d) and Q5_1 (q times d plus a min).
template <bool kHasMin>
struct Weights<BlockQ5<kHasMin>> {
  using Block = BlockQ5<kHasMin>;
  static constexpr bool kSigned = false;
  static v32u8 quants(const uint8_t* block) {
    return nibbles32(block + Block::kQs) | fifth_bits32(block + Block::kQh);
  }
  static float min_of(const uint8_t* block, float d) {
    return kHasMin ? fp16_at(block + Block::kM) : -16.0f * d;
  }
  static void add(const uint8_t* block, const int8_t* x, float dx, const float* sums32, v8f& acc,
                  float& offset) {
    const float d = fp16_at(block);
    acc = __builtin_convertvector(dot_u6(quants(block), load32_i8(x)), v8f) * (d * dx) + acc;
    offset += min_of(block, d) * sums32[0];
  }
  static void finish(const uint8_t* block, const v8i* p, v8f dx, const v8f* sums, v8f* acc,
                     v8f& offset) {
    const float d = fp16_at(block);
    for (int j = 0; j < 8; ++j) acc[j] = __builtin_convertvector(p[j], v8f) * (d * dx) + acc[j];
    offset += min_of(block, d) * sums[0];
  }
};

template <>
struct Weights<BlockQ4_1> {
  static constexpr bool kSigned = false;
  static v32u8 quants(const uint8_t* block) { return nibbles32(block + BlockQ4_1::kQs); }
  static v32u8 word(const uint8_t* block, int w) { return nibble_word(block + BlockQ4_1::kQs, w); }
  static void add(const uint8_t* block, const int8_t* x, float dx, const float* sums32, v8f& acc,
                  float& offset) {
    acc =
        __builtin_convertvector(dot_u6(quants(block), load32_i8(x)), v8f) * (fp16_at(block) * dx) +
        acc;
    offset += fp16_at(block + BlockQ4_1::kM) * sums32[0];
  }
  static void finish(const uint8_t* block, const v8i* p, v8f dx, const v8f* sums, v8f* acc,
                     v8f& offset) {
    const float d = fp16_at(block);
    for (int j = 0; j < 8; ++j) acc[j] = __builtin_convertvector(p[j], v8f) * (d * dx) + acc[j];
    offset += fp16_at(block + BlockQ4_1::kM) * sums[0];
  }
};

template <>
struct Weights<BlockQ8_0> {
  static constexpr bool kSigned = true;
  static v32u8 quants(const uint8_t* block) { return load32_u8(block + BlockQ8_0::kQs); }
  static v32u8 word(const uint8_t* block, int w) {
    return broadcast_word(block + BlockQ8_0::kQs + 4 * w);
  }
  static void add(const uint8_t* block, const int8_t* x, float dx, const float*, v8f& acc, float&) {
    const v8i p = dot_i8(reinterpret_cast<v32i8>(quants(block)), load32_i8(x));
    acc = __builtin_convertvector(p, v8f) * (fp16_at(block) * dx) + acc;
  }
  static void finish(const uint8_t* block, const v8i* p, v8f dx, const v8f*, v8f* acc, v8f&) {
    const float d = fp16_at(block);
    for (int j = 0; j < 8; ++j) acc[j] = __builtin_convertvector(p[j], v8f) * (d * dx) + acc[j];
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

  static void add(const uint8_t* block, const int8_t* x, float dx, const float* sums32, v8f& acc,
                  float&) {
    uint8_t scales_mins[16];
    unpack_k4_scales(block + Block::kScales, scales_mins);
    v8i products{};
    for (int c = 0; c < 4; ++c) {
      v32u8 low, high;
      chunk(block, c, low, high);
      products +=
          scaled_dot_u6(low, load32_i8(x + 64 * c), v16i16{} + scales_mins[2 * c]) +
          scaled_dot_u6(high, load32_i8(x + 64 * c + 32), v16i16{} + scales_mins[2 * c + 1]);
    }
    v8u8 mins;
    std::memcpy(&mins, scales_mins + 8, sizeof(mins));
    v8f sums;
    std::memcpy(&sums, sums32, sizeof(sums));
    acc = __builtin_convertvector(products, v8f) * (fp16_at(block) * dx) + acc;
    acc = __builtin_convertvector(mins, v8f) * sums * -fp16_at(block + Block::kDmin) + acc;
  }

  static void unpack(const uint8_t* block, uint8_t* q, int16_t* word_scales) {
    uint8_t scales_mins[16];
    unpack_k4_scales(block + Block::kScales, scales_mins);
    for (int c = 0; c < 4; ++c) {
      v32u8 low, high;
      chunk(block, c, low, high);
      std::memcpy(q + 64 * c, &low, sizeof(low));
      std::memcpy(q + 64 * c + 32, &high, sizeof(high));
    }
    for (int w = 0; w < 64; ++w) word_scales[w] = scales_mins[w / 8];
  }

  static void finish(const uint8_t* block, const v8i* p, v8f dx, const v8f* sums, v8f* acc, v8f&) {
    uint8_t scales_mins[16];
    unpack_k4_scales(block + Block::kScales, scales_mins);
    const float d = fp16_at(block);
    const float dmin = fp16_at(block + Block::kDmin);
    for (int j = 0; j < 8; ++j) {
      acc[j] = __builtin_convertvector(p[j], v8f) * (d * dx) + acc[j];
      acc[j] = static_cast<float>(scales_mins[8 + j]) * sums[j] * -dmin + acc[j];
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

  static void add(const uint8_t* block, const int8_t* x, float dx, const float*, v8f& acc, float&) {
    v16i8 packed;
    std::memcpy(&packed, block + BlockQ6_K::kScales, sizeof(packed));
    const auto scales = __builtin_convertvector(packed, v16i16);
    v8i products{};
    for (int half = 0; half < 2; ++half) {
      for (int run = 0; run < 4; ++run) {
        const int k = 8 * half + 2 * run;
        const v16i16 scale = {scales[k],     scales[k],     scales[k],     scales[k],
                              scales[k],     scales[k],     scales[k],     scales[k],
                              scales[k + 1], scales[k + 1], scales[k + 1], scales[k + 1],
                              scales[k + 1], scales[k + 1], scales[k + 1], scales[k + 1]};
        products += scaled_dot_i8(run_weights(block, half, run),
                                  load32_i8(x + 128 * half + 32 * run), scale);
      }
    }
    acc = __builtin_convertvector(products, v8f) * (fp16_at(block + BlockQ6_K::kD) * dx) + acc;
  }

  static void unpack(const uint8_t* block, uint8_t* q, int16_t* word_scales) {
    for (int half = 0; half < 2; ++half) {
      for (int run = 0; run < 4; ++run) {
        const v32i8 weights = run_weights(block, half, run);
        std::memcpy(q + 128 * half + 32 * run, &weights, sizeof(weights));
      }
    }
    for (int w = 0; w < 64; ++w)
      word_scales[w] = static_cast<int8_t>(block[BlockQ6_K::kScales + w / 4]);
  }

  static void finish(const uint8_t* block, const v8i* p, v8f dx, const v8f*, v8f* acc, v8f&) {
    const float d = fp16_at(block + BlockQ6_K::kD);
    for (int j = 0; j < 8; ++j) acc[j] = __builtin_convertvector(p[j], v8f) * (d * dx) + acc[j];
  }
};

// One weight word, broadcast, times 4 quants of each of 8 tokens: a token's
// products per lane, as dot_u6 / dot_i8 give them per word for one token.
template <bool kSigned>
v8i word_dots(v32u8 word, v32i8 x) {
  if constexpr (kSigned) return dot_i8(reinterpret_cast<v32i8>(word), x);
  return dot_u6(word, x);
}

template <bool kSigned>
v8i scaled_word_dots(v32u8 word, v32i8 x, int16_t scale) {
  if constexpr (kSigned) return scaled_dot_i8(reinterpret_cast<v32i8>(word), x, v16i16{} + scale);
  return scaled_dot_u6(word, x, v16i16{} + scale);
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

// A tile of up to 8 tokens, one per lane: each weight block is unpacked
// once, and each of its words, broadcast, multiplies every token.
template <typename Block>
void dot_rows_tile(const uint8_t* row, size_t row_bytes, int64_t n_rows, const Q8TokenLanes& x,
                   float* out, int64_t out_stride) {
  using W = Weights<Block>;
  constexpr int64_t kT = Q8TokenLanes::kTokens;
  constexpr int kWords = Block::kElems / 4;
  constexpr int kSums = Block::kElems / 32;
  const auto n_blocks = static_cast<int64_t>(x.d.size()) / kT;
  alignas(32) uint8_t q[Block::kElems];
  int16_t word_scales[kWords];
  for (int64_t r = 0; r < n_rows; ++r, row += row_bytes) {
    v8f acc[8] = {};
    v8f offset{};
    for (int64_t b = 0; b < n_blocks; ++b) {
      const uint8_t* block = row + b * Block::kBytes;
      const int8_t* xb = x.q.data() + b * Block::kElems * kT;
      v8i p[8] = {};
      if constexpr (requires { W::word(block, 0); }) {
        for (int w = 0; w < kWords; ++w)
          p[w] = word_dots<W::kSigned>(W::word(block, w), load32_i8(xb + 32 * w));
      } else if constexpr (Block::kElems == 32) {
        const v32u8 quants = W::quants(block);
        std::memcpy(q, &quants, sizeof(quants));
        // Keeps GCC from forwarding the stored register to the broadcasts.
        asm volatile("" ::: "memory");
        for (int w = 0; w < kWords; ++w)
          p[w] = word_dots<W::kSigned>(broadcast_word(q + 4 * w), load32_i8(xb + 32 * w));
      } else {
        W::unpack(block, q, word_scales);
        asm volatile("" ::: "memory");
        for (int w = 0; w < kWords; ++w) {
          p[w % 8] += scaled_word_dots<W::kSigned>(broadcast_word(q + 4 * w),
                                                   load32_i8(xb + 32 * w), word_scales[w]);
        }
      }
      v8f dx;
      std::memcpy(&dx, x.d.data() + b * kT, sizeof(dx));
      v8f sums[kSums];
      std::memcpy(sums, x.sums32.data() + b * kSums * kT, sizeof(sums));
      W::finish(block, p, dx, sums, acc, offset);
    }
    v8f total{};
    for (const v8f& lane : acc) total += lane;
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
  if (x.tiles.empty()) {
    for (size_t t = 0; t < x.tokens.size(); ++t) {
      dot_rows_token<Block>(row, row_bytes, n_rows, x.tokens[t],
                            out + static_cast<int64_t>(t) * out_stride);
    }
    return;
  }
  for (size_t i = 0; i < x.tiles.size(); ++i) {
    dot_rows_tile<Block>(row, row_bytes, n_rows, x.tiles[i],
                         out + static_cast<int64_t>(i) * Q8TokenLanes::kTokens * out_stride,
                         out_stride);
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
