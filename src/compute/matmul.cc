#include "compute/matmul.h"

#include <algorithm>
#include <vector>

#include "compute/quant_dot.h"
#include "compute/simd.h"
#include "compute/vec_ops.h"
#include "gguf/quants.h"
#include "util/error.h"

namespace eventkv::compute {
namespace {

constexpr int64_t kTileRows = 4;     // weight rows per micro-kernel
constexpr int64_t kTileTokens = 4;   // tokens per micro-kernel
constexpr int64_t kChunk = 512;      // elements of a row dequantized at once (a multiple of 256)
constexpr int64_t kTokenBlock = 64;  // tokens whose activations stay in cache while a tile is reused

// Dequantizes elements [k0, k0 + len) of `rows` consecutive weight rows into
// tile (row-major, stride len).
void dequantize_tile(const WeightView& w, int64_t row0, int64_t rows, int64_t k0, int64_t len, float* tile) {
  const gguf::TypeTraits traits = gguf::type_traits(w.type);
  const size_t offset = static_cast<size_t>(k0 / traits.block_elems * traits.block_bytes);
  for (int64_t r = 0; r < rows; ++r) {
    gguf::dequantize_row(w.type, w.data + (row0 + r) * w.row_bytes + offset, tile + r * len, len);
  }
}

// y[t, r] += dot(x[t, :len], tile[r, :len]) for a full 4 x 4 block.
void kernel_4x4(const float* x, int64_t x_stride, const float* tile, int64_t len, float* y, int64_t y_stride) {
  v16f acc[kTileTokens][kTileRows] = {};
  int64_t k = 0;
  for (; k + kLanes <= len; k += kLanes) {
    v16f w[kTileRows];
    for (int r = 0; r < kTileRows; ++r) w[r] = load16(tile + r * len + k);
    for (int t = 0; t < kTileTokens; ++t) {
      const v16f xv = load16(x + t * x_stride + k);
      for (int r = 0; r < kTileRows; ++r) acc[t][r] = xv * w[r] + acc[t][r];
    }
  }
  for (int t = 0; t < kTileTokens; ++t) {
    for (int r = 0; r < kTileRows; ++r) {
      float sum = hsum(acc[t][r]);
      for (int64_t kk = k; kk < len; ++kk) sum += x[t * x_stride + kk] * tile[r * len + kk];
      y[t * y_stride + r] += sum;
    }
  }
}

// One weight tile against a block of tokens; edges fall back to dot products.
void tile_times_tokens(const float* x, int64_t x_stride, int64_t n_tokens, const float* tile, int64_t rows,
                       int64_t len, float* y, int64_t y_stride) {
  int64_t t = 0;
  if (rows == kTileRows) {
    for (; t + kTileTokens <= n_tokens; t += kTileTokens) {
      kernel_4x4(x + t * x_stride, x_stride, tile, len, y + t * y_stride, y_stride);
    }
  }
  for (; t < n_tokens; ++t) {
    for (int64_t r = 0; r < rows; ++r) y[t * y_stride + r] += dot(x + t * x_stride, tile + r * len, len);
  }
}

// Few tokens: each weight is used n_tokens times, so fused per-row dot
// products beat dequantizing into tiles.
void matvec_rows(const WeightView& w, const float* x, const std::vector<std::vector<float>>& xsums,
                 int64_t n_tokens, float* y, int64_t row_begin, int64_t row_end) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint8_t* row = w.data + r * w.row_bytes;
    for (int64_t t = 0; t < n_tokens; ++t) {
      y[t * w.n_out + r] = dot_row(w.type, row, x + t * w.n_in, xsums[t].data(), w.n_in);
    }
  }
}

void matmul_rows(const WeightView& w, const float* x, int64_t n_tokens, float* y, int64_t row_begin,
                 int64_t row_end) {
  thread_local std::vector<float> tile;
  tile.resize(static_cast<size_t>(kTileRows * kChunk));
  for (int64_t t = 0; t < n_tokens; ++t) std::fill(y + t * w.n_out + row_begin, y + t * w.n_out + row_end, 0.0f);
  for (int64_t k0 = 0; k0 < w.n_in; k0 += kChunk) {
    const int64_t len = std::min(kChunk, w.n_in - k0);
    for (int64_t t0 = 0; t0 < n_tokens; t0 += kTokenBlock) {
      const int64_t block = std::min(kTokenBlock, n_tokens - t0);
      for (int64_t r0 = row_begin; r0 < row_end; r0 += kTileRows) {
        const int64_t rows = std::min(kTileRows, row_end - r0);
        dequantize_tile(w, r0, rows, k0, len, tile.data());
        tile_times_tokens(x + t0 * w.n_in + k0, w.n_in, block, tile.data(), rows, len, y + t0 * w.n_out + r0,
                          w.n_out);
      }
    }
  }
}

}  // namespace

void matmul(const WeightView& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool) {
  if (n_tokens < kTileTokens) {
    std::vector<std::vector<float>> xsums;
    for (int64_t t = 0; t < n_tokens; ++t) xsums.push_back(block_sums32(x + t * w.n_in, w.n_in));
    pool.parallel_for(
        w.n_out, [&](int64_t begin, int64_t end) { matvec_rows(w, x, xsums, n_tokens, y, begin, end); }, kTileRows);
    return;
  }
  pool.parallel_for(
      w.n_out, [&](int64_t begin, int64_t end) { matmul_rows(w, x, n_tokens, y, begin, end); }, kTileRows);
}

void dequantize_weight_row(const WeightView& w, int64_t row, float* out) {
  if (row < 0 || row >= w.n_out) fail("weight row ", row, " out of range ", w.n_out);
  gguf::dequantize_row(w.type, w.data + row * w.row_bytes, out, w.n_in);
}

}  // namespace eventkv::compute
