#include "compute/int8_gemm.h"

#include <algorithm>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "compute/simd.h"
#include "util/error.h"

namespace eventkv::compute {
namespace {

using model::kInt8GroupRows;

// One group's 16 rows: int32 sums, f32 outputs, 4 columns of quants.
typedef int32_t v16i32 __attribute__((vector_size(64)));
typedef float v16f32 __attribute__((vector_size(64)));
typedef uint8_t v64u8 __attribute__((vector_size(64)));

// Tokens per tile: their sums and outputs stay in vector registers.
#if defined(__AVX512F__)
constexpr int kTileTokens = 12;  // 24 of 32 zmm
#elif defined(__AVX2__)
// 16 of 16 ymm in the loop (the f32 sums stay in memory); 8 decode steps
// fill two tiles, where 3 tokens a tile padded them to 9 (1.22x the
// products a second on a Zen 3, int8_gemm benchmark).
constexpr int kTileTokens = 4;
#else
constexpr int kTileTokens = 1;
#endif

// The tile width of n_tokens activations. With AVX-512 fewer tokens take a
// narrower tile: a decode step of 8 sessions computed 12 tokens' products
// in a tile of 12 (SmolLM2, Zen 5, 1 thread, tiles of 8 and 4: decode
// steps of 8 sessions 1.07x the tokens/s, of 3 sessions 1.3x). A token's
// sums do not depend on the tile's width.
int64_t tile_tokens([[maybe_unused]] int64_t n_tokens) {
#if defined(__AVX512F__)
  if (n_tokens <= 4) return 4;
  if (n_tokens <= 8) return 8;
#endif
  return kTileTokens;
}
// Tiles per pass over a thread's rows: their quants (up to 96 x 9k bytes)
// stay in L2 while the rows stream past.
constexpr int64_t kBlockTiles = 8;

#if defined(__AVX2__) && !defined(__AVX512F__)
// The first tile of a pass over a group reads its quants from memory, and
// asks for them this far ahead: the hardware prefetcher alone left 8
// sessions' decode steps waiting on memory (SmolLM2, Zen 3: 10% more
// tokens/s with it, 1 or 2 threads).
constexpr int64_t kPrefetchBytes = 4096;

// Asks for the quants kPrefetchBytes past the 8 columns at w0 (128 bytes).
void prefetch_ahead(const uint8_t* w0) {
  _mm_prefetch(reinterpret_cast<const char*>(w0 + kPrefetchBytes), _MM_HINT_T0);
  _mm_prefetch(reinterpret_cast<const char*>(w0 + kPrefetchBytes + 64), _MM_HINT_T0);
}

__m256i load256(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

__m256i broadcast4(const int8_t* p) {
  int32_t x4;
  std::memcpy(&x4, p, sizeof(x4));
  return _mm256_set1_epi32(x4);
}

// The tile's real tokens and rows of acc into y.
void store_tile(const model::Int8Panels& w, int64_t g, const Int8Rows& x, int64_t tile_index,
                const float (*acc)[kInt8GroupRows], float* y) {
  const int64_t rows = std::min(kInt8GroupRows, w.n_out - g * kInt8GroupRows);
  const int64_t tokens = std::min<int64_t>(kTileTokens, x.n_tokens - tile_index * kTileTokens);
  for (int64_t t = 0; t < tokens; ++t) {
    std::memcpy(y + (tile_index * kTileTokens + t) * w.n_out + g * kInt8GroupRows, acc[t],
                static_cast<size_t>(rows) * sizeof(float));
  }
}

// AVX2 has no vpdpbusd, and 64-byte vectors spill its 16 ymm registers, so
// this variant works on the group's two 8-row halves in registers of its
// own: vpmaddubsw multiplies 4 columns' quants by one token's 4 activation
// bytes into int16 pairs, two such steps (8 columns) add in int16 (q < 64,
// |x| <= 127: |sum| <= 4 * 63 * 127 < 32768) before vpmaddwd widens them.
// Narrower quants add kWidenColumns in int16: 16 for 5 bits (|sum| <=
// 8 * 31 * 127), a whole scale of 32 for 4 bits (16 * 15 * 127), so a half
// or a quarter of the widenings, which share the multiply port
// (first-generation Zen: its only one).
// The integer sums are exact and the f32 part is the same expression as
// the other variants', so results differ only where the compiler fuses
// multiply-adds (the x86-64 baseline has no FMA).
// 8 columns' quants at p as the halves of their first 4 columns and of
// their next 4 (nibbles: the low and the high ones of 64 bytes).
template <bool kNibbles>
void load_halves(const uint8_t* p, __m256i* first, __m256i* second) {
  if constexpr (kNibbles) {
    const __m256i low = _mm256_set1_epi8(0x0F);
    for (int h = 0; h < 2; ++h) {
      const __m256i both = load256(p + 32 * h);
      first[h] = _mm256_and_si256(both, low);
      second[h] = _mm256_and_si256(_mm256_srli_epi16(both, 4), low);
    }
  } else {
    for (int h = 0; h < 2; ++h) {
      first[h] = load256(p + 32 * h);
      second[h] = load256(p + 64 + 32 * h);
    }
  }
}

template <int64_t kColumns, int64_t kWidenColumns, bool kNibbles>
void tile(const model::Int8Panels& w, int64_t g, const Int8Rows& x, int64_t tile_index, float* y,
          bool prefetch) {
  static_assert(kColumns % kWidenColumns == 0 && kWidenColumns % 8 == 0);
  constexpr int kT = kTileTokens;
  constexpr int kSteps = kWidenColumns / 8;  // of 8 columns per widening
  constexpr int kChunks = kColumns / kWidenColumns;
  constexpr int64_t kColumnBytes = model::Int8Panels::column_bytes(kNibbles);
  const int64_t n = w.n_in;
  const int64_t scale_groups = n / kColumns;
  const uint8_t* q = w.quants(g, 0);
  const float* scale = w.scale.data() + g * scale_groups * kInt8GroupRows;
  const float* offset = w.offset.data() + g * scale_groups * kInt8GroupRows;
  const int8_t* xq = x.q.data() + tile_index * n * kT;
  const float* xd = x.d.data() + tile_index * (n / 32) * kT;
  const float* xdsum =
      (kColumns == 32 ? x.dsum32 : x.dsum16).data() + tile_index * scale_groups * kT;
  const __m256i ones = _mm256_set1_epi16(1);
  // The f32 sums stay in memory: read and written once per scale, they
  // would take registers that the integer loop needs.
  alignas(32) float acc[kT][kInt8GroupRows] = {};
  for (int64_t c = 0; c < scale_groups; ++c) {
    __m256i sums[kT][2];
#pragma GCC unroll 4
    for (int chunk = 0; chunk < kChunks; ++chunk) {
      __m256i pairs[kT][2];
      for (auto& token : pairs) token[0] = token[1] = _mm256_setzero_si256();
#pragma GCC unroll 4
      for (int step = 0; step < kSteps; ++step) {  // fully unrolled: every sum in its register
        const int64_t k = kColumns * c + kWidenColumns * chunk + 8 * step;
        const uint8_t* w0 = q + k * kColumnBytes;
        if (prefetch) prefetch_ahead(w0);
        __m256i w0_halves[2];
        __m256i w1_halves[2];
        load_halves<kNibbles>(w0, w0_halves, w1_halves);
        const int8_t* x0 = xq + k * kT;
#pragma GCC unroll 16
        for (int t = 0; t < kT; ++t) {
          const __m256i x0_t = broadcast4(x0 + 4 * t);
          const __m256i x1_t = broadcast4(x0 + 4 * (kT + t));
          for (int h = 0; h < 2; ++h) {
            pairs[t][h] = _mm256_add_epi16(
                pairs[t][h], _mm256_add_epi16(_mm256_maddubs_epi16(w0_halves[h], x0_t),
                                              _mm256_maddubs_epi16(w1_halves[h], x1_t)));
            // Keeps GCC from reassociating the sums across steps: it then
            // computed every product of the loop first and kept them on the
            // stack.
            asm("" : "+x"(pairs[t][h]));
          }
        }
      }
      for (int t = 0; t < kT; ++t) {
        for (int h = 0; h < 2; ++h) {
          const __m256i widened = _mm256_madd_epi16(pairs[t][h], ones);
          sums[t][h] = chunk == 0 ? widened : _mm256_add_epi32(sums[t][h], widened);
        }
      }
    }
    const int64_t c32 = kColumns * c / 32;
    for (int h = 0; h < 2; ++h) {
      const __m256 a = _mm256_loadu_ps(scale + c * kInt8GroupRows + 8 * h);
      const __m256 b = _mm256_loadu_ps(offset + c * kInt8GroupRows + 8 * h);
      for (int t = 0; t < kT; ++t) {
        const __m256 d = _mm256_set1_ps(xd[c32 * kT + t]);
        const __m256 dsum = _mm256_set1_ps(xdsum[c * kT + t]);
        const __m256 sum = _mm256_cvtepi32_ps(sums[t][h]);
        float* out = acc[t] + 8 * h;
        _mm256_store_ps(out, sum * (a * d) - b * dsum + _mm256_load_ps(out));
      }
    }
  }
  store_tile(w, g, x, tile_index, acc, y);
}

// Q8_0's 8-bit quants (q = w + 128): a pair of their products with int8
// activations overflows vpmaddubsw's int16. This tile flips q back to the
// signed w and multiplies |w| by x negated where w < 0 (a pair within
// 2 * 128 * 127), widening each pair. Its sums are of w, not q, so the
// offset term (b * dsum = 128 * a * d * sum(x)) drops out: the other
// variants' values, rounded differently. The halves take turns over each
// scale, so that the sums of both do not need 8 more registers.
void tile_signed(const model::Int8Panels& w, int64_t g, const Int8Rows& x, int64_t tile_index,
                 float* y, bool prefetch) {
  constexpr int kT = kTileTokens;
  const int64_t n = w.n_in;
  const int64_t scale_groups = n / 32;
  const uint8_t* q = w.quants(g, 0);
  const float* scale = w.scale.data() + g * scale_groups * kInt8GroupRows;
  const int8_t* xq = x.q.data() + tile_index * n * kT;
  const float* xd = x.d.data() + tile_index * scale_groups * kT;
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i top_bit = _mm256_set1_epi8(static_cast<char>(0x80));
  alignas(32) float acc[kT][kInt8GroupRows] = {};
  for (int64_t c = 0; c < scale_groups; ++c) {
    for (int h = 0; h < 2; ++h) {
      __m256i sums[kT];
      for (__m256i& sum : sums) sum = _mm256_setzero_si256();
#pragma GCC unroll 4
      for (int step = 0; step < 4; ++step) {
        const int64_t k = 32 * c + 8 * step;
        const uint8_t* w0 = q + k * kInt8GroupRows;
        if (prefetch && h == 0) prefetch_ahead(w0);
        const __m256i signed0 = _mm256_xor_si256(load256(w0 + 32 * h), top_bit);
        const __m256i signed1 = _mm256_xor_si256(load256(w0 + 64 + 32 * h), top_bit);
        const __m256i abs0 = _mm256_abs_epi8(signed0);
        const __m256i abs1 = _mm256_abs_epi8(signed1);
        const int8_t* x0 = xq + k * kT;
#pragma GCC unroll 16
        for (int t = 0; t < kT; ++t) {
          const __m256i p0 =
              _mm256_maddubs_epi16(abs0, _mm256_sign_epi8(broadcast4(x0 + 4 * t), signed0));
          const __m256i p1 =
              _mm256_maddubs_epi16(abs1, _mm256_sign_epi8(broadcast4(x0 + 4 * (kT + t)), signed1));
          sums[t] = _mm256_add_epi32(
              sums[t], _mm256_add_epi32(_mm256_madd_epi16(p0, ones), _mm256_madd_epi16(p1, ones)));
          asm("" : "+x"(sums[t]));  // as in tile()
        }
      }
      const __m256 a = _mm256_loadu_ps(scale + c * kInt8GroupRows + 8 * h);
      for (int t = 0; t < kT; ++t) {
        const __m256 d = _mm256_set1_ps(xd[c * kT + t]);
        float* out = acc[t] + 8 * h;
        _mm256_store_ps(out, _mm256_cvtepi32_ps(sums[t]) * (a * d) + _mm256_load_ps(out));
      }
    }
  }
  store_tile(w, g, x, tile_index, acc, y);
}
#else
v16f32 load16f(const float* p) {
  v16f32 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// acc[r] + sum_j w[4 r + j] * x4's byte j (signed), for the 16 rows r.
v16i32 dot4(v16i32 acc, v64u8 w, int32_t x4) {
#if defined(__AVX512VNNI__)
  return reinterpret_cast<v16i32>(_mm512_dpbusd_epi32(
      reinterpret_cast<__m512i>(acc), reinterpret_cast<__m512i>(w), _mm512_set1_epi32(x4)));
#else
  int8_t x[4];
  std::memcpy(x, &x4, sizeof(x));
  for (int r = 0; r < 16; ++r) {
    for (int j = 0; j < 4; ++j) acc[r] += static_cast<int32_t>(w[4 * r + j]) * x[j];
  }
  return acc;
#endif
}

// 8 columns' quants at p: those of the first 4 and of the next 4 (nibbles:
// the low and the high ones of 64 bytes).
template <bool kNibbles>
void load_columns(const uint8_t* p, v64u8& first, v64u8& second) {
  if constexpr (kNibbles) {
    v64u8 both;
    std::memcpy(&both, p, sizeof(both));
    first = both & 0x0F;
    second = both >> 4;
  } else {
    std::memcpy(&first, p, sizeof(first));
    std::memcpy(&second, p + sizeof(first), sizeof(second));
  }
}

// Group g's rows times the kT tokens of one tile, kColumns columns per
// scale; only the tile's real tokens are stored.
template <int64_t kColumns, bool kNibbles, int kT>
void tile(const model::Int8Panels& w, int64_t g, const Int8Rows& x, int64_t tile_index, float* y) {
  constexpr int64_t kColumnBytes = model::Int8Panels::column_bytes(kNibbles);
  const int64_t n = w.n_in;
  const int64_t scale_groups = n / kColumns;
  const uint8_t* q = w.quants(g, 0);
  const float* scale = w.scale.data() + g * scale_groups * kInt8GroupRows;
  const float* offset = w.offset.data() + g * scale_groups * kInt8GroupRows;
  const int8_t* xq = x.q.data() + tile_index * n * kT;
  const float* xd = x.d.data() + tile_index * (n / 32) * kT;
  const float* xdsum =
      (kColumns == 32 ? x.dsum32 : x.dsum16).data() + tile_index * scale_groups * kT;
  v16f32 acc[kT] = {};
  for (int64_t c = 0; c < scale_groups; ++c) {
    v16i32 sums[kT] = {};
    for (int64_t k = kColumns * c; k < kColumns * c + kColumns; k += 8) {
      v64u8 quants[2];
      load_columns<kNibbles>(q + k * kColumnBytes, quants[0], quants[1]);
      for (int half = 0; half < 2; ++half) {
        for (int t = 0; t < kT; ++t) {
          int32_t x4;
          std::memcpy(&x4, xq + ((k / 4 + half) * kT + t) * 4, sizeof(x4));
          sums[t] = dot4(sums[t], quants[half], x4);
        }
      }
    }
    const v16f32 a = load16f(scale + c * kInt8GroupRows);
    const v16f32 b = load16f(offset + c * kInt8GroupRows);
    const int64_t c32 = kColumns * c / 32;
    for (int t = 0; t < kT; ++t) {
      const float d = xd[c32 * kT + t];
      const float dsum = xdsum[c * kT + t];
      acc[t] = __builtin_convertvector(sums[t], v16f32) * (a * d) - b * dsum + acc[t];
    }
  }
  const int64_t rows = std::min(kInt8GroupRows, w.n_out - g * kInt8GroupRows);
  const int64_t tokens = std::min<int64_t>(kT, x.n_tokens - tile_index * kT);
  for (int64_t t = 0; t < tokens; ++t) {
    std::memcpy(y + (tile_index * kT + t) * w.n_out + g * kInt8GroupRows, &acc[t],
                static_cast<size_t>(rows) * sizeof(float));
  }
}

#endif

// Token t of x into its tile's slots of out.
void quantize_row(const float* x, int64_t t, Int8Rows& out) {
  const int64_t width = out.tile_tokens;
  const int64_t n = out.n;
  const int64_t tile_index = t / width;
  for (int64_t c = 0; c < n / 32; ++c) {
    const v16f low = load16(x + t * n + 32 * c);
    const v16f high = load16(x + t * n + 32 * c + 16);
    const float d =
        std::max(hmax(select(low < 0.0f, -low, low)), hmax(select(high < 0.0f, -high, high))) /
        127.0f;
    const float inverse = d > 0.0f ? 1.0f / d : 0.0f;
    const v16f halves[2] = {(low * inverse + kRoundingShift) - kRoundingShift,
                            (high * inverse + kRoundingShift) - kRoundingShift};
    for (int h = 0; h < 2; ++h) {
      const v16i8 q = to_i8(to_i32(halves[h]));
      for (int64_t j = 0; j < 4; ++j) {
        std::memcpy(
            out.q.data() + ((tile_index * n / 4 + 8 * c + 4 * h + j) * width + t % width) * 4,
            reinterpret_cast<const int8_t*>(&q) + 4 * j, 4);
      }
      out.dsum16[static_cast<size_t>((tile_index * n / 16 + 2 * c + h) * width + t % width)] =
          d * hsum_integers(halves[h]);
    }
    const auto at = static_cast<size_t>((tile_index * n / 32 + c) * width + t % width);
    out.d[at] = d;
    out.dsum32[at] = d * hsum_integers(halves[0] + halves[1]);
  }
}

#if !defined(__AVX2__) || defined(__AVX512F__)
// The tile for w's scale and layout, kT tokens wide.
template <int kT>
void run_tile_of(const model::Int8Panels& w, int64_t g, const Int8Rows& x, int64_t tile_index,
                 float* y) {
  if (w.scale_columns == 16) return tile<16, false, kT>(w, g, x, tile_index, y);
  if (w.nibbles) return tile<32, true, kT>(w, g, x, tile_index, y);
  tile<32, false, kT>(w, g, x, tile_index, y);
}
#endif

// The tile for w's scale and, on AVX2, its quants' width (model/weights.h
// quant_bits); on AVX-512, for the activations' tile width.
void run_tile(const model::Int8Panels& w, int64_t g, const Int8Rows& x, int64_t tile_index,
              float* y, [[maybe_unused]] bool first_of_pass) {
#if defined(__AVX2__) && !defined(__AVX512F__)
  if (w.quant_bits == 8) return tile_signed(w, g, x, tile_index, y, first_of_pass);
  if (w.scale_columns == 16) return tile<16, 8, false>(w, g, x, tile_index, y, first_of_pass);
  if (w.nibbles) return tile<32, 32, true>(w, g, x, tile_index, y, first_of_pass);
  switch (w.quant_bits) {
    case 4:
      return tile<32, 32, false>(w, g, x, tile_index, y, first_of_pass);
    case 5:
      return tile<32, 16, false>(w, g, x, tile_index, y, first_of_pass);
    default:
      return tile<32, 8, false>(w, g, x, tile_index, y, first_of_pass);
  }
#elif defined(__AVX512F__)
  switch (x.tile_tokens) {
    case 4:
      return run_tile_of<4>(w, g, x, tile_index, y);
    case 8:
      return run_tile_of<8>(w, g, x, tile_index, y);
    default:
      return run_tile_of<kTileTokens>(w, g, x, tile_index, y);
  }
#else
  run_tile_of<kTileTokens>(w, g, x, tile_index, y);
#endif
}

}  // namespace

Int8Rows quantize_rows(const float* x, int64_t n_tokens, int64_t n, ThreadPool& pool) {
  if (n % 32 != 0) fail("quantize_rows: ", n, " values do not split into blocks of 32");
  const int64_t width = tile_tokens(n_tokens);
  Int8Rows out;
  out.n_tokens = n_tokens;
  out.n = n;
  out.tile_tokens = width;
  const int64_t padded = (n_tokens + width - 1) / width * width;
  out.q.assign(static_cast<size_t>(padded * n), 0);
  out.d.assign(static_cast<size_t>(padded * n / 32), 0.0f);
  out.dsum32.assign(out.d.size(), 0.0f);
  out.dsum16.assign(2 * out.d.size(), 0.0f);
  // Tokens write disjoint slots; whole tiles per thread keep them off each
  // other's cache lines.
  pool.parallel_for(
      n_tokens,
      [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) quantize_row(x, t, out);
      },
      width);
  return out;
}

void int8_gemm(const model::Int8Panels& w, const Int8Rows& x, float* y, int64_t group_begin,
               int64_t group_end) {
  if (x.n != w.n_in || x.tile_tokens != tile_tokens(x.n_tokens)) {
    fail("int8_gemm: activations of ", x.n, " values in tiles of ", x.tile_tokens, ", rows of ",
         w.n_in, " values");
  }
  const int64_t tiles = (x.n_tokens + x.tile_tokens - 1) / x.tile_tokens;
  for (int64_t tile0 = 0; tile0 < tiles; tile0 += kBlockTiles) {
    const int64_t tile_end = std::min(tiles, tile0 + kBlockTiles);
    for (int64_t g = group_begin; g < group_end; ++g) {
      for (int64_t i = tile0; i < tile_end; ++i) run_tile(w, g, x, i, y, i == tile0);
    }
  }
}

}  // namespace eventkv::compute
