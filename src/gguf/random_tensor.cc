#include "gguf/random_tensor.h"

#include <cstring>

#include "gguf/writer.h"
#include "util/error.h"
#include "util/half.h"

namespace eventkv::gguf {
namespace {

void store_half(uint8_t* at, float value) {
  const uint16_t h = fp32_to_fp16(value);
  std::memcpy(at, &h, sizeof(h));
}

// Where a block keeps its f16 scale (d) and optional f16 min, and how large
// its quant range is, so that d * range is about the wanted magnitude.
struct ScaleLayout {
  int d_offset;
  int min_offset;    // -1 when the type has no min
  float range;       // |q| * sub-scale the scale is multiplied by, at most
  float min_factor;  // stored min = min_factor * magnitude, centring values on zero
};

ScaleLayout scale_layout(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0:
      return {0, -1, 8.0f, 0.0f};
    case GgmlType::kQ4_1:
      return {0, 2, 15.0f, -0.5f};
    case GgmlType::kQ5_0:
      return {0, -1, 16.0f, 0.0f};
    case GgmlType::kQ5_1:
      return {0, 2, 31.0f, -0.5f};
    case GgmlType::kQ8_0:
      return {0, -1, 127.0f, 0.0f};
    case GgmlType::kQ2_K:
      return {80, 82, 45.0f, 1.0f / 30.0f};
    case GgmlType::kQ3_K:
      return {108, -1, 128.0f, 0.0f};
    case GgmlType::kQ4_K:
      return {0, 2, 945.0f, 1.0f / 126.0f};
    case GgmlType::kQ5_K:
      return {0, 2, 1953.0f, 1.0f / 126.0f};
    case GgmlType::kQ6_K:
      return {208, -1, 4096.0f, 0.0f};
    default:
      fail("random_tensor_bytes: no random blocks for type ", type_name(type));
  }
}

void fill_float(GgmlType type, std::vector<uint8_t>& bytes, Rng& rng, float scale, float mean) {
  const size_t n = bytes.size() / static_cast<size_t>(type_traits(type).block_bytes);
  for (size_t i = 0; i < n; ++i) {
    const float value = mean + scale * static_cast<float>(rng.normal());
    if (type == GgmlType::kF32) {
      std::memcpy(bytes.data() + 4 * i, &value, sizeof(value));
    } else if (type == GgmlType::kF16) {
      store_half(bytes.data() + 2 * i, value);
    } else {
      const uint16_t h = fp32_to_bf16(value);
      std::memcpy(bytes.data() + 2 * i, &h, sizeof(h));
    }
  }
}

}  // namespace

std::vector<uint8_t> random_tensor_bytes(GgmlType type, int64_t ne0, int64_t rows, Rng& rng,
                                         float scale, float mean) {
  std::vector<uint8_t> bytes(tensor_bytes(type, {ne0, rows}));
  if (type == GgmlType::kF32 || type == GgmlType::kF16 || type == GgmlType::kBF16) {
    fill_float(type, bytes, rng, scale, mean);
    return bytes;
  }
  const ScaleLayout layout = scale_layout(type);
  const auto block_bytes = static_cast<size_t>(type_traits(type).block_bytes);
  for (size_t at = 0; at < bytes.size(); at += block_bytes) {
    for (size_t i = 0; i < block_bytes; ++i) bytes[at + i] = static_cast<uint8_t>(rng.next_u64());
    const float d = scale / layout.range * static_cast<float>(rng.uniform(0.5, 1.5));
    store_half(bytes.data() + at + layout.d_offset, d);
    if (layout.min_offset >= 0) {
      const float min = layout.min_factor * scale * static_cast<float>(rng.uniform(0.5, 1.5));
      store_half(bytes.data() + at + layout.min_offset, min);
    }
  }
  return bytes;
}

}  // namespace eventkv::gguf
