// ggml tensor types as stored in GGUF: ids, block geometry and names.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace eventkv::gguf {

enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = 30,
  kTQ1_0 = 34,
  kTQ2_0 = 35,
  kMXFP4 = 39,
};

struct TypeTraits {
  std::string_view name;
  int64_t block_elems;  // elements per block along ne[0]
  int64_t block_bytes;  // bytes per block
  bool dequantizable;   // compute/quant_types.h has it (a test keeps the two equal)
};

// Traits of a known type id, or nullopt for an id ggml does not define.
std::optional<TypeTraits> find_type_traits(uint32_t type_id);

// Traits of a known type; throws Error for an unknown one.
TypeTraits type_traits(GgmlType type);

std::string_view type_name(GgmlType type);

// Parses a type name such as "q4_k" or "F16" (case-insensitive).
std::optional<GgmlType> parse_type_name(std::string_view name);

// The types eventkv dequantizes, in id order.
inline constexpr std::array<GgmlType, 13> kDequantizableTypes = {
    GgmlType::kF32,  GgmlType::kF16,  GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0,
    GgmlType::kQ5_1, GgmlType::kQ8_0, GgmlType::kQ2_K, GgmlType::kQ3_K, GgmlType::kQ4_K,
    GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kBF16};

}  // namespace eventkv::gguf
