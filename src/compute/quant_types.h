// The one table of weight types the kernels compute with: per ggml type its
// block geometry, row dequantization, fused f32 dot, int8 dot and the
// activation block that dot takes. Every kernel family and caller looks a
// type up here, so a new type is one entry (compute/quant_types.cc) plus its
// kernels (compute/quant_blocks.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "compute/activation_q8.h"
#include "gguf/types.h"

namespace eventkv::compute {

// Dequantizes n elements, a multiple of the block size.
using DequantizeFn = void (*)(const uint8_t* src, float* dst, int64_t n);
// As dot_rows (compute/quant_dot.h).
using DotF32Fn = void (*)(const uint8_t* row, size_t row_bytes, int64_t n_rows, const float* x,
                          const float* xsum32, int64_t n, float* out);
// As dot_rows_q8 (compute/quant_dot_q8.h).
using DotQ8Fn = void (*)(const uint8_t* row, size_t row_bytes, int64_t n_rows, const Q8Batch& x,
                         float* out, int64_t out_stride);

// As unpack_u8_blocks (compute/quant_blocks.h): q below 64 (Q8_0: 256) and, per
// u8_scale_columns values, scale and offset (value = scale * q - offset).
using UnpackU8Fn = void (*)(const uint8_t* src, uint8_t* q, float* scale, float* offset, int64_t n);

struct QuantType {
  gguf::GgmlType type;
  int64_t block_elems;  // elements per block
  int64_t block_bytes;  // bytes per block
  DequantizeFn dequantize;
  DotF32Fn dot_f32;
  DotQ8Fn dot_q8;  // nullptr: no int8 path, matmul keeps f32
  // The activation block dot_q8 takes: 32 (llama.cpp's Q8_0 layout) or 256
  // (Q8_K), always the weight block; 0 without dot_q8.
  int64_t q8_block;
  UnpackU8Fn unpack_u8;      // nullptr: no int8 panels (model/weights.h)
  int64_t u8_scale_columns;  // values per scale and offset of unpack_u8: 16 or 32
  int64_t u8_bits;           // every q of unpack_u8 is below 2^u8_bits
};

// The chosen kernel variant's entry of `type`, or nullptr when eventkv
// cannot compute with it.
const QuantType* find_quant_type(gguf::GgmlType type);

// Dequantizes `n` elements (a multiple of the type's block size) starting at
// `src` into `dst`. Throws Error for a type eventkv cannot dequantize.
void dequantize_row(gguf::GgmlType type, const uint8_t* src, float* dst, int64_t n);

}  // namespace eventkv::compute
