// Block layouts of the weight types the kernels compute with, the helpers
// their kernel families share, and the per-layout kernels each family
// defines (compute/quant_types.cc puts them into one table). Internal to the
// kernels: callers use compute/quant_types.h.
//
// Everything here is integer-only: it is inlined into files built with FP
// contraction (the dots) and without it (the dequantization, which must match
// ggml), and the linker keeps one copy of each inline function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "compute/activation_q8.h"
#include "gguf/types.h"

namespace eventkv::compute {

// Byte layouts as in ggml-common.h: kElems values take kBytes bytes; the
// other constants are byte offsets of the fields (f16 scales d and m/dmin,
// quants qs, high bits qh, packed scales). d is at 0 unless named.
struct BlockF32 {
  static constexpr gguf::GgmlType kType = gguf::GgmlType::kF32;
  static constexpr int kElems = 1;
  static constexpr int kBytes = 4;
};

struct BlockF16 {
  static constexpr gguf::GgmlType kType = gguf::GgmlType::kF16;
  static constexpr int kElems = 1;
  static constexpr int kBytes = 2;
};

struct BlockBF16 {
  static constexpr gguf::GgmlType kType = gguf::GgmlType::kBF16;
  static constexpr int kElems = 1;
  static constexpr int kBytes = 2;
};

struct BlockQ4_0 {  // d, qs[16]
  static constexpr gguf::GgmlType kType = gguf::GgmlType::kQ4_0;
  static constexpr int kElems = 32;
  static constexpr int kBytes = 18;
  static constexpr int kQs = 2;
};

struct BlockQ4_1 {  // d, m, qs[16]
  static constexpr gguf::GgmlType kType = gguf::GgmlType::kQ4_1;
  static constexpr int kElems = 32;
  static constexpr int kBytes = 20;
  static constexpr int kM = 2;
  static constexpr int kQs = 4;
};

// Q5_0: d, qh[4], qs[16]; Q5_1: d, m, qh[4], qs[16]. The fifth bit of
// element j is bit j of qh.
template <bool kHasMin>
struct BlockQ5 {
  static constexpr gguf::GgmlType kType = kHasMin ? gguf::GgmlType::kQ5_1 : gguf::GgmlType::kQ5_0;
  static constexpr int kElems = 32;
  static constexpr int kBytes = kHasMin ? 24 : 22;
  static constexpr int kM = 2;  // Q5_1 only
  static constexpr int kQh = kHasMin ? 4 : 2;
  static constexpr int kQs = kQh + 4;
};
using BlockQ5_0 = BlockQ5<false>;
using BlockQ5_1 = BlockQ5<true>;

struct BlockQ8_0 {  // d, qs[32]
  static constexpr gguf::GgmlType kType = gguf::GgmlType::kQ8_0;
  static constexpr int kElems = 32;
  static constexpr int kBytes = 34;
  static constexpr int kQs = 2;
};

inline constexpr int kQK_K = 256;  // elements of a K-quant block

struct BlockQ2_K {  // scales[16], qs[64], d, dmin
  static constexpr gguf::GgmlType kType = gguf::GgmlType::kQ2_K;
  static constexpr int kElems = kQK_K;
  static constexpr int kBytes = 84;
  static constexpr int kQs = 16;
  static constexpr int kD = 80;
  static constexpr int kDmin = 82;
};

struct BlockQ3_K {  // hmask[32], qs[64], scales[12], d
  static constexpr gguf::GgmlType kType = gguf::GgmlType::kQ3_K;
  static constexpr int kElems = kQK_K;
  static constexpr int kBytes = 110;
  static constexpr int kQs = 32;
  static constexpr int kScales = 96;
  static constexpr int kD = 108;
};

// Q4_K: d, dmin, scales[12], qs[128]; Q5_K: d, dmin, scales[12], qh[32],
// qs[128]. Four chunks of 64 weights, each 32 bytes of qs whose low nibbles
// are the first 32 weights (sub-block 2c) and high nibbles the next 32
// (2c + 1); Q5_K adds bits 2c and 2c + 1 of qh[l] as the fifth bit.
template <bool kFifthBit>
struct BlockQ45_K {
  static constexpr gguf::GgmlType kType = kFifthBit ? gguf::GgmlType::kQ5_K : gguf::GgmlType::kQ4_K;
  static constexpr int kElems = kQK_K;
  static constexpr int kBytes = kFifthBit ? 176 : 144;
  static constexpr int kDmin = 2;
  static constexpr int kScales = 4;  // the 12 packed bytes of unpack_k4_scales
  static constexpr int kQh = 16;
  static constexpr int kQs = kFifthBit ? 48 : 16;
};
using BlockQ4_K = BlockQ45_K<false>;
using BlockQ5_K = BlockQ45_K<true>;

struct BlockQ6_K {  // ql[128], qh[64], scales[16], d
  static constexpr gguf::GgmlType kType = gguf::GgmlType::kQ6_K;
  static constexpr int kElems = kQK_K;
  static constexpr int kBytes = 210;
  static constexpr int kQh = 128;
  static constexpr int kScales = 192;  // int8, one per 16 weights
  static constexpr int kD = 208;
};

// The eight 6-bit scales (out[0..7]) and mins (out[8..15]) of a Q4_K/Q5_K
// block from their 12 packed bytes, four at a time in 32-bit words (ggml's
// layout: the low 6 bits of bytes 0..7 hold scales and mins 0..3, bytes 8..11
// the low 4 bits of 4..7, whose top 2 bits sit in bytes 0..7's top bits).
inline void unpack_k4_scales(const uint8_t* packed, uint8_t* out) {
  constexpr uint32_t kLow6 = 0x3F3F3F3F;
  constexpr uint32_t kLow4 = 0x0F0F0F0F;
  constexpr uint32_t kLow2 = 0x03030303;
  uint32_t w[3];
  std::memcpy(w, packed, sizeof(w));
  const uint32_t words[4] = {w[0] & kLow6, (w[2] & kLow4) | (((w[0] >> 6) & kLow2) << 4),
                             w[1] & kLow6, ((w[2] >> 4) & kLow4) | (((w[1] >> 6) & kLow2) << 4)};
  std::memcpy(out, words, sizeof(words));
}

// Q3_K's sixteen signed 6-bit scales from their 12 packed bytes: the low 4
// bits in bytes 0..7 (low nibbles for scales 0..7, high for 8..15), the top 2
// in bytes 8..11.
inline void unpack_q3_k_scales(const uint8_t* packed, int8_t* scales) {
  for (int s = 0; s < 16; ++s) {
    const int low4 = s < 8 ? packed[s] & 0xF : packed[s - 8] >> 4;
    const int high2 = (packed[8 + s % 4] >> (2 * (s / 4))) & 3;
    scales[s] = static_cast<int8_t>((low4 | (high2 << 4)) - 32);
  }
}

// The kernels of a layout, one per family, each defined (and explicitly
// instantiated for the layouts it supports) in its family's file.

// compute/dequantize.cc: n elements, a multiple of Block::kElems.
template <typename Block>
void dequantize_blocks(const uint8_t* src, float* dst, int64_t n);

// compute/quant_dot.cc: as compute::dot_rows (compute/quant_dot.h).
template <typename Block>
void dot_rows_f32(const uint8_t* row, size_t row_bytes, int64_t n_rows, const float* x,
                  const float* xsum32, int64_t n, float* out);

// compute/quant_dot_q8.cc: as compute::dot_rows_q8 (compute/quant_dot_q8.h),
// with x.block == Block::kElems.
template <typename Block>
void dot_rows_int8(const uint8_t* row, size_t row_bytes, int64_t n_rows, const Q8Batch& x,
                   float* out, int64_t out_stride);

// compute/unpack_u8.cc: n elements (a multiple of Block::kElems) as q[n]
// below 64 (Q8_0: 256) and, per u8_scale_columns<Block> values, scale and offset (value
// = scale * q - offset): 32 (a block or sub-block's scale), 16 for Q6_K.
template <typename Block>
inline constexpr int64_t u8_scale_columns = 32;
template <>
inline constexpr int64_t u8_scale_columns<BlockQ6_K> = 16;
// Bits of the largest q: 4-bit ones pack as nibbles (model/weights.h).
template <typename Block>
inline constexpr int64_t u8_bits = 5;
template <>
inline constexpr int64_t u8_bits<BlockQ4_0> = 4;
template <>
inline constexpr int64_t u8_bits<BlockQ4_1> = 4;
template <>
inline constexpr int64_t u8_bits<BlockQ4_K> = 4;
template <>
inline constexpr int64_t u8_bits<BlockQ6_K> = 6;
template <>
inline constexpr int64_t u8_bits<BlockQ8_0> = 8;

template <typename Block>
void unpack_u8_blocks(const uint8_t* src, uint8_t* q, float* scale, float* offset, int64_t n);

}  // namespace eventkv::compute
