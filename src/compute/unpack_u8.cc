// The weights of a block as unsigned integers with a scale and an offset per
// 32 values, or 16 for Q6_K (value = scale * q - offset), for the int8 panels of the many-token
// integer product (model/weights.h). Every type here but Q8_0 stores q below
// 64, so a pair of products with int8 activations fits vpmaddubsw's int16;
// Q8_0's q = w + 128 takes 8 bits (compute/int8_gemm.cc multiplies it apart).
// Integer-only but for the scales, which are the products dequantize.cc
// forms (d times the sub-block scale), so dequantizing from these gives the
// same values up to one rounding.
#include <cstring>

#include "compute/quant_blocks.h"
#include "util/half.h"

namespace eventkv::compute {
namespace {

// Group `group`'s values share scale `a` and offset `b`.
void set_group(float* scale, float* offset, int group, float a, float b) {
  scale[group] = a;
  offset[group] = b;
}

void unpack_block(BlockQ4_0, const uint8_t* block, uint8_t* q, float* scale, float* offset) {
  const float d = fp16_at(block);
  const uint8_t* qs = block + BlockQ4_0::kQs;
  for (int j = 0; j < 16; ++j) {
    q[j] = qs[j] & 0x0F;
    q[j + 16] = qs[j] >> 4;
  }
  set_group(scale, offset, 0, d, 8.0f * d);
}

void unpack_block(BlockQ4_1, const uint8_t* block, uint8_t* q, float* scale, float* offset) {
  const float d = fp16_at(block);
  const float m = fp16_at(block + BlockQ4_1::kM);
  const uint8_t* qs = block + BlockQ4_1::kQs;
  for (int j = 0; j < 16; ++j) {
    q[j] = qs[j] & 0x0F;
    q[j + 16] = qs[j] >> 4;
  }
  set_group(scale, offset, 0, d, -m);
}

// The fifth bit of element j is bit j of qh.
template <bool kHasMin>
void unpack_block(BlockQ5<kHasMin>, const uint8_t* block, uint8_t* q, float* scale, float* offset) {
  using Block = BlockQ5<kHasMin>;
  const float d = fp16_at(block);
  uint32_t qh;
  std::memcpy(&qh, block + Block::kQh, sizeof(qh));
  const uint8_t* qs = block + Block::kQs;
  for (int j = 0; j < 16; ++j) {
    q[j] = static_cast<uint8_t>((qs[j] & 0x0F) | (((qh >> j) & 1) << 4));
    q[j + 16] = static_cast<uint8_t>((qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4));
  }
  const float b = kHasMin ? -fp16_at(block + Block::kM) : 16.0f * d;
  set_group(scale, offset, 0, d, b);
}

template <bool kFifthBit>
void unpack_block(BlockQ45_K<kFifthBit>, const uint8_t* block, uint8_t* q, float* scale,
                  float* offset) {
  using Block = BlockQ45_K<kFifthBit>;
  const float d = fp16_at(block);
  const float dmin = fp16_at(block + Block::kDmin);
  uint8_t scales_mins[16];
  unpack_k4_scales(block + Block::kScales, scales_mins);
  const uint8_t* qh = block + Block::kQh;
  const uint8_t* qs = block + Block::kQs;
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      const int low_bit = kFifthBit ? ((qh[l] >> (2 * c)) & 1) << 4 : 0;
      const int high_bit = kFifthBit ? ((qh[l] >> (2 * c + 1)) & 1) << 4 : 0;
      q[64 * c + l] = static_cast<uint8_t>((qs[32 * c + l] & 0x0F) | low_bit);
      q[64 * c + 32 + l] = static_cast<uint8_t>((qs[32 * c + l] >> 4) | high_bit);
    }
  }
  for (int s = 0; s < 8; ++s) {
    set_group(scale, offset, s, d * static_cast<float>(scales_mins[s]),
              dmin * static_cast<float>(scales_mins[8 + s]));
  }
}

// Signed 8-bit values w as q = w + 128 (the bit pattern of w with its top
// bit flipped).
void unpack_block(BlockQ8_0, const uint8_t* block, uint8_t* q, float* scale, float* offset) {
  const float d = fp16_at(block);
  const uint8_t* qs = block + BlockQ8_0::kQs;
  for (int j = 0; j < 32; ++j) q[j] = static_cast<uint8_t>(qs[j] ^ 0x80);
  set_group(scale, offset, 0, d, 128.0f * d);
}

// Values q - 32 with q of 6 bits; one int8 scale per 16 values.
void unpack_block(BlockQ6_K, const uint8_t* block, uint8_t* q, float* scale, float* offset) {
  const uint8_t* ql = block;
  const uint8_t* qh = block + BlockQ6_K::kQh;
  const auto* sc = reinterpret_cast<const int8_t*>(block + BlockQ6_K::kScales);
  const float d = fp16_at(block + BlockQ6_K::kD);
  for (int half = 0; half < 2; ++half) {
    for (int run = 0; run < 4; ++run) {
      const uint8_t* low = ql + 64 * half + (run % 2) * 32;
      const int shift = (run / 2) * 4;
      for (int l = 0; l < 32; ++l) {
        q[128 * half + 32 * run + l] = static_cast<uint8_t>(
            ((low[l] >> shift) & 0x0F) | (((qh[32 * half + l] >> (2 * run)) & 3) << 4));
      }
      for (int part = 0; part < 2; ++part) {
        const float a = d * static_cast<float>(sc[8 * half + 2 * run + part]);
        set_group(scale, offset, 8 * half + 2 * run + part, a, 32.0f * a);
      }
    }
  }
}

}  // namespace

template <typename Block>
void unpack_u8_blocks(const uint8_t* src, uint8_t* q, float* scale, float* offset, int64_t n) {
  constexpr int64_t kGroups = Block::kElems / u8_scale_columns<Block>;
  for (int64_t b = 0; b < n / Block::kElems; ++b) {
    unpack_block(Block{}, src + b * Block::kBytes, q + b * Block::kElems, scale + b * kGroups,
                 offset + b * kGroups);
  }
}

#define EVENTKV_UNPACK_U8(Block) \
  template void unpack_u8_blocks<Block>(const uint8_t*, uint8_t*, float*, float*, int64_t)
EVENTKV_UNPACK_U8(BlockQ4_0);
EVENTKV_UNPACK_U8(BlockQ4_1);
EVENTKV_UNPACK_U8(BlockQ5_0);
EVENTKV_UNPACK_U8(BlockQ5_1);
EVENTKV_UNPACK_U8(BlockQ8_0);
EVENTKV_UNPACK_U8(BlockQ4_K);
EVENTKV_UNPACK_U8(BlockQ5_K);
EVENTKV_UNPACK_U8(BlockQ6_K);
#undef EVENTKV_UNPACK_U8

}  // namespace eventkv::compute
