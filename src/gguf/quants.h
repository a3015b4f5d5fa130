// Block formats of the ggml quantized types and their row dequantization.
// Each function follows ggml's reference arithmetic (same operation order),
// so results match ggml and gguf-py bit for bit when contraction is off.
#pragma once

#include <cstdint>

#include "gguf/types.h"

namespace eventkv::gguf {

inline constexpr int kQK_K = 256;

// Dequantizes `n` elements (a multiple of the type's block size) starting at
// `src` into `dst`. Throws Error for a type eventkv cannot dequantize.
void dequantize_row(GgmlType type, const uint8_t* src, float* dst, int64_t n);

}  // namespace eventkv::gguf
