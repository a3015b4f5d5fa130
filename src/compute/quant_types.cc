#include "compute/quant_types.h"

#include <array>

#include "compute/quant_blocks.h"
#include "compute/quant_dot.h"
#include "compute/quant_dot_q8.h"
#include "util/error.h"

namespace eventkv::compute {
namespace {

// A type's entry: its layout's geometry and dequantization, and the kernels
// its families define (nullptr: none); int8 activations come in blocks of
// the weight block.
template <typename Block>
constexpr QuantType entry(DotF32Fn dot_f32, DotQ8Fn dot_q8, UnpackU8Fn unpack_u8 = nullptr) {
  return {Block::kType,
          Block::kElems,
          Block::kBytes,
          &dequantize_blocks<Block>,
          dot_f32,
          dot_q8,
          dot_q8 != nullptr ? Block::kElems : 0,
          unpack_u8,
          u8_scale_columns<Block>,
          u8_bits<Block>};
}

// The types eventkv computes with, in id order.
constexpr QuantType kQuantTypes[] = {
    entry<BlockF32>(&dot_rows_f32<BlockF32>, nullptr),
    entry<BlockF16>(&dot_rows_f32<BlockF16>, nullptr),
    entry<BlockQ4_0>(&dot_rows_f32<BlockQ4_0>, &dot_rows_int8<BlockQ4_0>,
                     &unpack_u8_blocks<BlockQ4_0>),
    entry<BlockQ4_1>(&dot_rows_f32<BlockQ4_1>, &dot_rows_int8<BlockQ4_1>,
                     &unpack_u8_blocks<BlockQ4_1>),
    entry<BlockQ5_0>(&dot_rows_f32<BlockQ5_0>, &dot_rows_int8<BlockQ5_0>,
                     &unpack_u8_blocks<BlockQ5_0>),
    entry<BlockQ5_1>(&dot_rows_f32<BlockQ5_1>, &dot_rows_int8<BlockQ5_1>,
                     &unpack_u8_blocks<BlockQ5_1>),
    entry<BlockQ8_0>(&dot_rows_f32<BlockQ8_0>, &dot_rows_int8<BlockQ8_0>,
                     &unpack_u8_blocks<BlockQ8_0>),
    entry<BlockQ2_K>(&dot_rows_f32<BlockQ2_K>, nullptr),
    entry<BlockQ3_K>(&dot_rows_f32<BlockQ3_K>, nullptr),
    entry<BlockQ4_K>(&dot_rows_f32<BlockQ4_K>, &dot_rows_int8<BlockQ4_K>,
                     &unpack_u8_blocks<BlockQ4_K>),
    entry<BlockQ5_K>(&dot_rows_f32<BlockQ5_K>, &dot_rows_int8<BlockQ5_K>,
                     &unpack_u8_blocks<BlockQ5_K>),
    entry<BlockQ6_K>(&dot_rows_f32<BlockQ6_K>, &dot_rows_int8<BlockQ6_K>,
                     &unpack_u8_blocks<BlockQ6_K>),
    entry<BlockBF16>(&dot_rows_f32<BlockBF16>, nullptr),
};

// Indexed by type id (ggml's largest is 39): dot_rows looks its type up
// every few rows.
constexpr size_t kIdLimit = 40;
constexpr std::array<const QuantType*, kIdLimit> kById = [] {
  std::array<const QuantType*, kIdLimit> by_id{};
  for (const QuantType& q : kQuantTypes) by_id[static_cast<size_t>(q.type)] = &q;
  return by_id;
}();

const QuantType& require(gguf::GgmlType type, const char* what) {
  const QuantType* q = find_quant_type(type);
  if (q == nullptr)
    fail(what, ": tensor type ", gguf::type_name(type), " is not supported by eventkv");
  return *q;
}

}  // namespace

const QuantType* find_quant_type(gguf::GgmlType type) {
  const auto id = static_cast<size_t>(type);
  return id < kIdLimit ? kById[id] : nullptr;
}

void dequantize_row(gguf::GgmlType type, const uint8_t* src, float* dst, int64_t n) {
  const QuantType& q = require(type, "dequantize_row");
  if (n % q.block_elems != 0) {
    fail("dequantize_row: ", n, " elements is not a multiple of the ", gguf::type_name(type),
         " block size ", q.block_elems);
  }
  q.dequantize(src, dst, n);
}

void dot_rows(gguf::GgmlType type, const uint8_t* row, size_t row_bytes, int64_t n_rows,
              const float* x, const float* xsum32, int64_t n, float* out) {
  const QuantType& q = require(type, "dot_rows");
  q.dot_f32(row, row_bytes, n_rows, x, xsum32, n, out);
}

int64_t q8_block_elems(gguf::GgmlType type) {
  const QuantType* q = find_quant_type(type);
  return q != nullptr ? q->q8_block : 0;
}

void dot_rows_q8(gguf::GgmlType type, const uint8_t* row, size_t row_bytes, int64_t n_rows,
                 const Q8Batch& x, float* out, int64_t out_stride) {
  const QuantType* q = find_quant_type(type);
  if (q == nullptr || q->dot_q8 == nullptr)
    fail("dot_rows_q8: no integer kernel for ", gguf::type_name(type));
  q->dot_q8(row, row_bytes, n_rows, x, out, out_stride);
}

}  // namespace eventkv::compute
