// Row dequantization of every weight type the kernels compute with. Each
// block follows ggml's reference arithmetic (same operation order), so results
// match ggml and gguf-py bit for bit: this file is built without FP
// contraction (CMakeLists), unlike the rest of compute/.
#include <cstring>

#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "compute/quant_blocks.h"
#include "util/half.h"

namespace eventkv::compute {
namespace {

void dequantize_values(BlockF32, const uint8_t* src, float* y, int64_t n) {
  std::memcpy(y, src, n * sizeof(float));
}

void dequantize_values(BlockF16, const uint8_t* src, float* y, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(halves));
  }
#endif
  for (; i < n; ++i) y[i] = fp16_at(src + 2 * i);
}

void dequantize_values(BlockBF16, const uint8_t* src, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, src + 2 * i, sizeof(h));
    y[i] = bf16_to_fp32(h);
  }
}

void dequantize_block(BlockQ4_0, const uint8_t* block, float* y) {
  const float d = fp16_at(block);
  const uint8_t* qs = block + BlockQ4_0::kQs;
  for (int j = 0; j < 16; ++j) y[j] = static_cast<float>((qs[j] & 0x0F) - 8) * d;
  for (int j = 0; j < 16; ++j) y[j + 16] = static_cast<float>((qs[j] >> 4) - 8) * d;
}

void dequantize_block(BlockQ4_1, const uint8_t* block, float* y) {
  const float d = fp16_at(block);
  const float m = fp16_at(block + BlockQ4_1::kM);
  const uint8_t* qs = block + BlockQ4_1::kQs;
  for (int j = 0; j < 16; ++j) y[j] = static_cast<float>(qs[j] & 0x0F) * d + m;
  for (int j = 0; j < 16; ++j) y[j + 16] = static_cast<float>(qs[j] >> 4) * d + m;
}

// Q5_0/Q5_1: the 5th bit of element j comes from bit j of qh.
template <bool kHasMin>
void dequantize_block(BlockQ5<kHasMin>, const uint8_t* block, float* y) {
  const float d = fp16_at(block);
  const float m = kHasMin ? fp16_at(block + BlockQ5<kHasMin>::kM) : 0.0f;
  uint32_t qh;
  std::memcpy(&qh, block + BlockQ5<kHasMin>::kQh, sizeof(qh));
  const uint8_t* qs = block + BlockQ5<kHasMin>::kQs;
  const int offset = kHasMin ? 0 : 16;
  for (int j = 0; j < 16; ++j) {
    const int hi0 = static_cast<int>(((qh >> j) << 4) & 0x10);
    const int hi1 = static_cast<int>((qh >> (j + 12)) & 0x10);
    const int x0 = ((qs[j] & 0x0F) | hi0) - offset;
    const int x1 = ((qs[j] >> 4) | hi1) - offset;
    if constexpr (kHasMin) {
      y[j] = static_cast<float>(x0) * d + m;
      y[j + 16] = static_cast<float>(x1) * d + m;
    } else {
      y[j] = static_cast<float>(x0) * d;
      y[j + 16] = static_cast<float>(x1) * d;
    }
  }
}

void dequantize_block(BlockQ8_0, const uint8_t* block, float* y) {
  const float d = fp16_at(block);
  const auto* qs = reinterpret_cast<const int8_t*>(block + BlockQ8_0::kQs);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(qs[j]) * d;
}

void dequantize_block(BlockQ2_K, const uint8_t* block, float* y) {
  const uint8_t* scales = block;
  const uint8_t* q = block + BlockQ2_K::kQs;
  const float d = fp16_at(block + BlockQ2_K::kD);
  const float dmin = fp16_at(block + BlockQ2_K::kDmin);
  int is = 0;
  for (int half = 0; half < 2; ++half, q += 32) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int part = 0; part < 2; ++part) {
        const uint8_t sc = scales[is++];
        const float dl = d * static_cast<float>(sc & 0xF);
        const float ml = dmin * static_cast<float>(sc >> 4);
        for (int l = 0; l < 16; ++l) {
          *y++ = dl * static_cast<float>((q[l + 16 * part] >> shift) & 3) - ml;
        }
      }
    }
  }
}

void dequantize_block(BlockQ3_K, const uint8_t* block, float* y) {
  const uint8_t* hmask = block;
  const uint8_t* q = block + BlockQ3_K::kQs;
  const float d = fp16_at(block + BlockQ3_K::kD);
  int8_t scales[16];
  unpack_q3_k_scales(block + BlockQ3_K::kScales, scales);
  int is = 0;
  uint8_t m = 1;
  for (int half = 0; half < 2; ++half, q += 32) {
    for (int shift = 0; shift < 8; shift += 2, m <<= 1) {
      for (int part = 0; part < 2; ++part) {
        const float dl = d * static_cast<float>(scales[is++]);
        for (int l = 0; l < 16; ++l) {
          const int idx = l + 16 * part;
          const int value = ((q[idx] >> shift) & 3) - ((hmask[idx] & m) != 0 ? 0 : 4);
          *y++ = dl * static_cast<float>(value);
        }
      }
    }
  }
}

// Q4_K and Q5_K share their layout but for Q5_K's qh bit plane.
template <bool kFiveBit>
void dequantize_block(BlockQ45_K<kFiveBit>, const uint8_t* block, float* y) {
  using Block = BlockQ45_K<kFiveBit>;
  const float d = fp16_at(block);
  const float dmin = fp16_at(block + Block::kDmin);
  const uint8_t* packed = block + Block::kScales;
  const uint8_t* qh = block + Block::kQh;
  const uint8_t* ql = block + Block::kQs;
  uint8_t scales_mins[16];
  unpack_k4_scales(packed, scales_mins);
  uint8_t u1 = 1;
  uint8_t u2 = 2;
  for (int chunk = 0; chunk < 4; ++chunk, ql += 32, u1 <<= 2, u2 <<= 2) {
    const float d1 = d * static_cast<float>(scales_mins[2 * chunk]);
    const float m1 = dmin * static_cast<float>(scales_mins[8 + 2 * chunk]);
    const float d2 = d * static_cast<float>(scales_mins[2 * chunk + 1]);
    const float m2 = dmin * static_cast<float>(scales_mins[8 + 2 * chunk + 1]);
    for (int l = 0; l < 32; ++l) {
      const int high = kFiveBit && (qh[l] & u1) != 0 ? 16 : 0;
      *y++ = d1 * static_cast<float>((ql[l] & 0xF) + high) - m1;
    }
    for (int l = 0; l < 32; ++l) {
      const int high = kFiveBit && (qh[l] & u2) != 0 ? 16 : 0;
      *y++ = d2 * static_cast<float>((ql[l] >> 4) + high) - m2;
    }
  }
}

// Q6_K: each half of 128 elements is four runs of 32; run k takes the low
// (k even) or high (k odd) nibbles of ql and bits 2k..2k+1 of qh.
void dequantize_block(BlockQ6_K, const uint8_t* block, float* y) {
  const uint8_t* ql = block;
  const uint8_t* qh = block + BlockQ6_K::kQh;
  const auto* sc = reinterpret_cast<const int8_t*>(block + BlockQ6_K::kScales);
  const float d = fp16_at(block + BlockQ6_K::kD);
  for (int half = 0; half < 2; ++half, y += 128, ql += 64, qh += 32, sc += 8) {
    for (int run = 0; run < 4; ++run) {
      const uint8_t* low = ql + (run % 2) * 32;
      const int nibble_shift = (run / 2) * 4;
      for (int part = 0; part < 2; ++part) {
        const float dl = d * static_cast<float>(sc[part + 2 * run]);
        for (int l = 16 * part; l < 16 * part + 16; ++l) {
          const int q = (((low[l] >> nibble_shift) & 0xF) | (((qh[l] >> (2 * run)) & 3) << 4)) - 32;
          y[32 * run + l] = dl * static_cast<float>(q);
        }
      }
    }
  }
}

}  // namespace

template <typename Block>
void dequantize_blocks(const uint8_t* src, float* dst, int64_t n) {
  if constexpr (Block::kElems == 1) {
    dequantize_values(Block{}, src, dst, n);
  } else {
    for (int64_t b = 0; b < n / Block::kElems; ++b)
      dequantize_block(Block{}, src + b * Block::kBytes, dst + b * Block::kElems);
  }
}

template void dequantize_blocks<BlockF32>(const uint8_t*, float*, int64_t);
template void dequantize_blocks<BlockF16>(const uint8_t*, float*, int64_t);
template void dequantize_blocks<BlockBF16>(const uint8_t*, float*, int64_t);
template void dequantize_blocks<BlockQ4_0>(const uint8_t*, float*, int64_t);
template void dequantize_blocks<BlockQ4_1>(const uint8_t*, float*, int64_t);
template void dequantize_blocks<BlockQ5_0>(const uint8_t*, float*, int64_t);
template void dequantize_blocks<BlockQ5_1>(const uint8_t*, float*, int64_t);
template void dequantize_blocks<BlockQ8_0>(const uint8_t*, float*, int64_t);
template void dequantize_blocks<BlockQ2_K>(const uint8_t*, float*, int64_t);
template void dequantize_blocks<BlockQ3_K>(const uint8_t*, float*, int64_t);
template void dequantize_blocks<BlockQ4_K>(const uint8_t*, float*, int64_t);
template void dequantize_blocks<BlockQ5_K>(const uint8_t*, float*, int64_t);
template void dequantize_blocks<BlockQ6_K>(const uint8_t*, float*, int64_t);

}  // namespace eventkv::compute
