#include "compute/matmul.h"

#include <algorithm>
#include <vector>

#include "compute/activation_q8.h"
#include "compute/int8_gemm.h"
#include "compute/quant_dot.h"
#include "compute/quant_dot_q8.h"
#include "compute/quant_types.h"
#include "compute/simd.h"
#include "compute/vec_ops.h"
#include "util/aligned_vector.h"
#include "util/error.h"

namespace eventkv::compute {
namespace {

using model::kPanelDepth;  // a multiple of every block size
using model::kPanelRows;   // two vectors of outputs
// Tokens per micro-kernel call: as many as keep the accumulators (two
// vectors of outputs per token) and a panel row in vector registers.
#if defined(__AVX512F__)
constexpr int64_t kPanelTokens = 6;  // 12 + 2 of 32 zmm
#elif defined(__AVX2__)
constexpr int64_t kPanelTokens = 3;  // 12 + 4 of 16 ymm
#else
constexpr int64_t kPanelTokens = 1;  // 8 + 8 of 16 xmm
#endif
constexpr int64_t kDotRows = 4;    // rows per fused dot call (few tokens)
constexpr int64_t kFewTokens = 3;  // below this many tokens, fused dots (matmul.h)

// Few tokens: each weight is used n_tokens times, so fused per-row dot
// products beat dequantizing into panels. dot(r, rows) writes every token's
// products with rows [r, r + rows), a few rows at a time so that they stay
// in L1 while the tokens pass over them.
template <typename DotRows>
void matvec_rows(const WeightView& w, ThreadPool& pool, const DotRows& dot) {
  pool.parallel_for(
      w.n_out,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; r += kDotRows) dot(r, std::min(kDotRows, end - r));
      },
      kDotRows);
}

// Columns per pass over y: a row strip of this many columns (256 KB of
// panels) stays in L2 while every token block multiplies it, and y is read
// and written once per pass instead of once per panel.
constexpr int64_t kStripColumns = 8 * kPanelDepth;

// y[t, 0:32] (+)= sum_k x[t, k] * strip[k, 0:32] for kTokens tokens, over the
// n_cols columns of a strip of panels: the outer-product form, with every
// accumulator a row of outputs (no reductions). Each panel's products are
// summed apart and then added to the running sum, so the sums are the same
// however many panels one strip holds. `first`: y is written, not added to.
template <int kTokens>
void strip_kernel(const float* x, int64_t x_stride, const float* strip, int64_t n_cols, float* y,
                  int64_t y_stride, int64_t rows, bool first) {
  v16f sum[kTokens][2] = {};
  float lanes[kPanelRows] = {};
  if (!first) {
    for (int t = 0; t < kTokens; ++t) {
      std::copy(y + t * y_stride, y + t * y_stride + rows, lanes);
      sum[t][0] = load16(lanes);
      sum[t][1] = load16(lanes + kLanes);
    }
  }
  for (int64_t k0 = 0; k0 < n_cols; k0 += kPanelDepth) {
    const int64_t len = std::min(kPanelDepth, n_cols - k0);
    const float* panel = strip + k0 * kPanelRows;
    v16f acc[kTokens][2] = {};
    for (int64_t k = 0; k < len; ++k) {
      const v16f w0 = load16(panel + k * kPanelRows);
      const v16f w1 = load16(panel + k * kPanelRows + kLanes);
      for (int t = 0; t < kTokens; ++t) {
        const float xv = x[t * x_stride + k0 + k];
        acc[t][0] = xv * w0 + acc[t][0];
        acc[t][1] = xv * w1 + acc[t][1];
      }
    }
    for (int t = 0; t < kTokens; ++t) {
      sum[t][0] += acc[t][0];
      sum[t][1] += acc[t][1];
    }
  }
  for (int t = 0; t < kTokens; ++t) {
    store16(lanes, sum[t][0]);
    store16(lanes + kLanes, sum[t][1]);
    std::copy(lanes, lanes + rows, y + t * y_stride);
  }
}

void strip_times_tokens(const float* x, int64_t x_stride, int64_t n_tokens, const float* strip,
                        int64_t n_cols, float* y, int64_t y_stride, int64_t rows, bool first) {
  int64_t t = 0;
  for (; t + kPanelTokens <= n_tokens; t += kPanelTokens) {
    strip_kernel<kPanelTokens>(x + t * x_stride, x_stride, strip, n_cols, y + t * y_stride,
                               y_stride, rows, first);
  }
  const float* xt = x + t * x_stride;
  float* yt = y + t * y_stride;
  switch (n_tokens - t) {
    case 5:
      return strip_kernel<5>(xt, x_stride, strip, n_cols, yt, y_stride, rows, first);
    case 4:
      return strip_kernel<4>(xt, x_stride, strip, n_cols, yt, y_stride, rows, first);
    case 3:
      return strip_kernel<3>(xt, x_stride, strip, n_cols, yt, y_stride, rows, first);
    case 2:
      return strip_kernel<2>(xt, x_stride, strip, n_cols, yt, y_stride, rows, first);
    case 1:
      return strip_kernel<1>(xt, x_stride, strip, n_cols, yt, y_stride, rows, first);
    default:
      return;
  }
}

// Many tokens: each strip of 32 rows x kStripColumns columns is dequantized
// once (or was, into w.panels) and multiplied with every token's slice of x.
void matmul_rows(const WeightView& w, const float* x, int64_t n_tokens, float* y, int64_t row_begin,
                 int64_t row_end) {
  thread_local std::vector<float> scratch;
  thread_local AlignedVector<float> dequantized;
  scratch.resize(static_cast<size_t>(kPanelRows * kPanelDepth));
  dequantized.resize(static_cast<size_t>(kPanelRows * kStripColumns));
  for (int64_t c0 = 0; c0 < w.n_in; c0 += kStripColumns) {
    const int64_t n_cols = std::min(kStripColumns, w.n_in - c0);
    for (int64_t r0 = row_begin; r0 < row_end; r0 += kPanelRows) {
      const int64_t rows = std::min(kPanelRows, row_end - r0);
      const float* strip = dequantized.data();
      if (w.panels != nullptr) {
        strip = w.panels +
                (r0 / kPanelRows * w.panel_columns() + c0 / kPanelDepth) * kPanelRows * kPanelDepth;
      } else {
        for (int64_t k0 = c0; k0 < c0 + n_cols; k0 += kPanelDepth) {
          model::dequantize_panel(w, r0, k0, std::min(kPanelDepth, w.n_in - k0), scratch.data(),
                                  dequantized.data() + (k0 - c0) * kPanelRows);
        }
      }
      strip_times_tokens(x + c0, w.n_in, n_tokens, strip, n_cols, y + r0, w.n_out, rows, c0 == 0);
    }
  }
}

// Few tokens, f32 activations: the quantized types add offsets and mins
// through the sums of each 32 values of x.
void matvec_f32(const WeightView& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool) {
  std::vector<std::vector<float>> xsums;
  for (int64_t t = 0; t < n_tokens; ++t) xsums.push_back(block_sums32(x + t * w.n_in, w.n_in));
  matvec_rows(w, pool, [&](int64_t r, int64_t rows) {
    for (int64_t t = 0; t < n_tokens; ++t) {
      dot_rows(w.type, w.data + r * w.row_bytes, w.row_bytes, rows, x + t * w.n_in, xsums[t].data(),
               w.n_in, y + t * w.n_out + r);
    }
  });
}

// Few tokens, int8 activations: each token's x is quantized once (in blocks
// of q8_block), then every row multiplies them all in integers.
void matvec_int8(const WeightView& w, const float* x, int64_t n_tokens, float* y, int64_t q8_block,
                 ThreadPool& pool) {
  const Q8Batch xq = quantize_batch(x, n_tokens, w.n_in, q8_block);
  matvec_rows(w, pool, [&](int64_t r, int64_t rows) {
    dot_rows_q8(w.type, w.data + r * w.row_bytes, w.row_bytes, rows, xq, y + r, w.n_out);
  });
}

}  // namespace

void matmul(const WeightView& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool,
            ActivationPrecision precision) {
  const bool rowwise = precision == ActivationPrecision::kF32Rowwise ||
                       precision == ActivationPrecision::kInt8Rowwise ||
                       precision == ActivationPrecision::kInt8Panels;
  const bool gemm = precision == ActivationPrecision::kInt8Panels ||
                    (n_tokens >= kFewTokens && precision == ActivationPrecision::kInt8);
  if (gemm && w.int8 != nullptr) {
    const Int8Rows xq = quantize_rows(x, n_tokens, w.n_in, pool);
    pool.parallel_for(w.int8->groups(),
                      [&](int64_t begin, int64_t end) { int8_gemm(*w.int8, xq, y, begin, end); });
    return;
  }
  if (n_tokens >= kFewTokens && !rowwise) {
    pool.parallel_for(
        w.n_out, [&](int64_t begin, int64_t end) { matmul_rows(w, x, n_tokens, y, begin, end); },
        kPanelRows);
    return;
  }
  const bool int8 = precision == ActivationPrecision::kInt8 ||
                    precision == ActivationPrecision::kInt8Rowwise ||
                    precision == ActivationPrecision::kInt8Panels;
  const int64_t q8_block = int8 ? q8_block_elems(w.type) : 0;
  if (q8_block > 0) return matvec_int8(w, x, n_tokens, y, q8_block, pool);
  matvec_f32(w, x, n_tokens, y, pool);
}

void dequantize_weight_row(const WeightView& w, int64_t row, float* out) {
  if (row < 0 || row >= w.n_out) fail("weight row ", row, " out of range ", w.n_out);
  dequantize_row(w.type, w.data + row * w.row_bytes, out, w.n_in);
}

}  // namespace eventkv::compute
