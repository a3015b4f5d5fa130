#include "compute/quant_dot.h"

#include <cstring>

#include "compute/simd.h"
#include "compute/vec_ops.h"
#include "gguf/quants.h"
#include "util/half.h"

namespace eventkv::compute {
namespace {

float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof(h));
  return fp16_to_fp32(h);
}

// sum_j q[j] x[j] for 32 4-bit quants: low nibbles pair with x[0..15], high
// nibbles with x[16..31] (the Q4_0/Q4_1/Q5 layout).
v16f nibbles_times_x(const uint8_t* qs, const float* x, v16f high_lo = v16f{}, v16f high_hi = v16f{}) {
  const v16u8 q = load16_u8(qs);
  const v16f lo = u8_to_f32(q & 15) + high_lo;
  const v16f hi = u8_to_f32(q >> 4) + high_hi;
  return lo * load16(x) + hi * load16(x + 16);
}

float dot_q4_0(const uint8_t* row, const float* x, const float* xsum, int64_t n) {
  v16f acc{};
  float offset = 0.0f;
  for (int64_t b = 0; b < n / 32; ++b, row += 18, x += 32) {
    const float d = half_at(row);
    acc = nibbles_times_x(row + 2, x) * d + acc;
    offset += d * xsum[b];
  }
  return hsum(acc) - 8.0f * offset;
}

float dot_q4_1(const uint8_t* row, const float* x, const float* xsum, int64_t n) {
  v16f acc{};
  float offset = 0.0f;
  for (int64_t b = 0; b < n / 32; ++b, row += 20, x += 32) {
    acc = nibbles_times_x(row + 4, x) * half_at(row) + acc;
    offset += half_at(row + 2) * xsum[b];
  }
  return hsum(acc) + offset;
}

// The fifth bits of a Q5 block as 0/16 per lane, for lanes 0..15 and 16..31.
void fifth_bits(const uint8_t* qh_bytes, v16f* lo, v16f* hi) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, sizeof(qh));
  const v16i lanes = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  const v16i bits = v16i{} + static_cast<int32_t>(qh);
  *lo = __builtin_convertvector(((bits >> lanes) & 1) << 4, v16f);
  *hi = __builtin_convertvector(((bits >> (lanes + 16)) & 1) << 4, v16f);
}

template <bool kHasMin>
float dot_q5(const uint8_t* row, const float* x, const float* xsum, int64_t n) {
  constexpr int kBytes = kHasMin ? 24 : 22;
  constexpr int kQh = kHasMin ? 4 : 2;
  v16f acc{};
  float offset = 0.0f;
  for (int64_t b = 0; b < n / 32; ++b, row += kBytes, x += 32) {
    const float d = half_at(row);
    v16f high_lo;
    v16f high_hi;
    fifth_bits(row + kQh, &high_lo, &high_hi);
    acc = nibbles_times_x(row + kQh + 4, x, high_lo, high_hi) * d + acc;
    offset += (kHasMin ? half_at(row + 2) : -16.0f * d) * xsum[b];
  }
  return hsum(acc) + offset;
}

float dot_q8_0(const uint8_t* row, const float* x, int64_t n) {
  v16f acc{};
  for (int64_t b = 0; b < n / 32; ++b, row += 34, x += 32) {
    v16i8 q0;
    v16i8 q1;
    std::memcpy(&q0, row + 2, 16);
    std::memcpy(&q1, row + 18, 16);
    acc = (i8_to_f32(q0) * load16(x) + i8_to_f32(q1) * load16(x + 16)) * half_at(row) + acc;
  }
  return hsum(acc);
}

// Q4_K: four chunks of 64 (low nibbles, then high nibbles of 32 bytes), each
// half with its own 6-bit scale and min.
float dot_q4_k(const uint8_t* row, const float* x, const float* xsum, int64_t n) {
  v16f acc{};
  float mins = 0.0f;
  for (int64_t b = 0; b < n / 256; ++b, row += 144, x += 256, xsum += 8) {
    const float d = half_at(row);
    const float dmin = half_at(row + 2);
    const uint8_t* packed = row + 4;
    const uint8_t* qs = row + 16;
    for (int sub = 0; sub < 8; ++sub) {
      const int k = sub;
      const uint8_t sc = k < 4 ? packed[k] & 63 : (packed[k + 4] & 0xF) | ((packed[k - 4] >> 6) << 4);
      const uint8_t mn = k < 4 ? packed[k + 4] & 63 : (packed[k + 4] >> 4) | ((packed[k] >> 6) << 4);
      const uint8_t* q = qs + 32 * (sub / 2);
      const v16u8 q0 = load16_u8(q);
      const v16u8 q1 = load16_u8(q + 16);
      const v16f v0 = sub % 2 == 0 ? u8_to_f32(q0 & 15) : u8_to_f32(q0 >> 4);
      const v16f v1 = sub % 2 == 0 ? u8_to_f32(q1 & 15) : u8_to_f32(q1 >> 4);
      acc = (v0 * load16(x + 32 * sub) + v1 * load16(x + 32 * sub + 16)) * (d * static_cast<float>(sc)) + acc;
      mins += dmin * static_cast<float>(mn) * xsum[sub];
    }
  }
  return hsum(acc) - mins;
}

// Q6_K: per half of 128, four runs of 32; run r takes the low (r even) or
// high nibbles of ql[32 (r % 2) ..] and bits 2r of qh; one int8 scale per 16.
float dot_q6_k(const uint8_t* row, const float* x, int64_t n) {
  v16f acc{};
  for (int64_t b = 0; b < n / 256; ++b, row += 210) {
    const float d = half_at(row + 208);
    const auto* scales = reinterpret_cast<const int8_t*>(row + 192);
    for (int half = 0; half < 2; ++half, x += 128) {
      const uint8_t* ql = row + 64 * half;
      const uint8_t* qh = row + 128 + 32 * half;
      for (int run = 0; run < 4; ++run) {
        for (int part = 0; part < 2; ++part) {
          const v16u8 low = load16_u8(ql + 32 * (run % 2) + 16 * part);
          const v16u8 high = load16_u8(qh + 16 * part);
          const v16u8 nibble = run < 2 ? (low & 15) : (low >> 4);
          const v16u8 two_bits = (high >> static_cast<uint8_t>(2 * run)) & 3;
          const v16f q = u8_to_f32(nibble | (two_bits << 4)) - 32.0f;
          const float scale = d * static_cast<float>(scales[8 * half + 2 * run + part]);
          acc = q * load16(x + 32 * run + 16 * part) * scale + acc;
        }
      }
    }
  }
  return hsum(acc);
}

// Any other type: dequantize 256 elements at a time and take the dot.
float dot_dequantized(gguf::GgmlType type, const uint8_t* row, const float* x, int64_t n) {
  const gguf::TypeTraits traits = gguf::type_traits(type);
  const int64_t chunk = traits.block_elems > 256 ? traits.block_elems : 256;
  float buffer[256];
  float total = 0.0f;
  for (int64_t i = 0; i < n; i += chunk) {
    const int64_t len = n - i < chunk ? n - i : chunk;
    gguf::dequantize_row(type, row + i / traits.block_elems * traits.block_bytes, buffer, len);
    total += dot(buffer, x + i, len);
  }
  return total;
}

}  // namespace

std::vector<float> block_sums32(const float* x, int64_t n) {
  std::vector<float> sums(static_cast<size_t>(n / 32));
  for (size_t b = 0; b < sums.size(); ++b) sums[b] = hsum(load16(x + 32 * b) + load16(x + 32 * b + 16));
  return sums;
}

float dot_row(gguf::GgmlType type, const uint8_t* row, const float* x, const float* xsum32, int64_t n) {
  switch (type) {
    case gguf::GgmlType::kF32: return dot(reinterpret_cast<const float*>(row), x, n);
    case gguf::GgmlType::kQ4_0: return dot_q4_0(row, x, xsum32, n);
    case gguf::GgmlType::kQ4_1: return dot_q4_1(row, x, xsum32, n);
    case gguf::GgmlType::kQ5_0: return dot_q5<false>(row, x, xsum32, n);
    case gguf::GgmlType::kQ5_1: return dot_q5<true>(row, x, xsum32, n);
    case gguf::GgmlType::kQ8_0: return dot_q8_0(row, x, n);
    case gguf::GgmlType::kQ4_K: return dot_q4_k(row, x, xsum32, n);
    case gguf::GgmlType::kQ6_K: return dot_q6_k(row, x, n);
    default: return dot_dequantized(type, row, x, n);
  }
}

}  // namespace eventkv::compute
