#include "compute/matmul.h"

#include <algorithm>
#include <vector>

#include "compute/activation_q8.h"
#include "compute/quant_dot.h"
#include "compute/quant_dot_q8.h"
#include "compute/simd.h"
#include "compute/vec_ops.h"
#include "gguf/quants.h"
#include "util/aligned_vector.h"
#include "util/error.h"

namespace eventkv::compute {
namespace {

using model::kPanelDepth;            // a multiple of every block size
using model::kPanelRows;             // two vectors of outputs
constexpr int64_t kPanelTokens = 6;  // tokens per micro-kernel call
constexpr int64_t kDotRows = 4;      // rows per fused dot call (few tokens)

// Few tokens: each weight is used n_tokens times, so fused per-row dot
// products beat dequantizing into panels. dot(t, r, rows, out) writes token
// t's products with rows [r, r + rows).
template <typename DotRows>
void matvec_rows(const WeightView& w, int64_t n_tokens, float* y, int64_t row_begin,
                 int64_t row_end, const DotRows& dot) {
  float out[kDotRows];
  for (int64_t r = row_begin; r < row_end; r += kDotRows) {
    const int64_t rows = std::min(kDotRows, row_end - r);
    for (int64_t t = 0; t < n_tokens; ++t) {
      dot(t, r, rows, out);
      std::copy(out, out + rows, y + t * w.n_out + r);
    }
  }
}

// y[t, 0:32] += sum_k x[t, k] * panel[k, 0:32] for kTokens tokens: the
// outer-product form, with every accumulator a row of outputs (no reductions).
template <int kTokens>
void panel_kernel(const float* x, int64_t x_stride, const float* panel, int64_t len, float* y,
                  int64_t y_stride, int64_t rows) {
  v16f acc[kTokens][2] = {};
  for (int64_t k = 0; k < len; ++k) {
    const v16f w0 = load16(panel + k * kPanelRows);
    const v16f w1 = load16(panel + k * kPanelRows + kLanes);
    for (int t = 0; t < kTokens; ++t) {
      const float xv = x[t * x_stride + k];
      acc[t][0] = xv * w0 + acc[t][0];
      acc[t][1] = xv * w1 + acc[t][1];
    }
  }
  for (int t = 0; t < kTokens; ++t) {
    float* out = y + t * y_stride;
    if (rows == kPanelRows) {
      store16(out, load16(out) + acc[t][0]);
      store16(out + kLanes, load16(out + kLanes) + acc[t][1]);
    } else {
      float lanes[kPanelRows];
      store16(lanes, acc[t][0]);
      store16(lanes + kLanes, acc[t][1]);
      for (int64_t r = 0; r < rows; ++r) out[r] += lanes[r];
    }
  }
}

void panel_times_tokens(const float* x, int64_t x_stride, int64_t n_tokens, const float* panel,
                        int64_t len, float* y, int64_t y_stride, int64_t rows) {
  int64_t t = 0;
  for (; t + kPanelTokens <= n_tokens; t += kPanelTokens) {
    panel_kernel<kPanelTokens>(x + t * x_stride, x_stride, panel, len, y + t * y_stride, y_stride,
                               rows);
  }
  const float* xt = x + t * x_stride;
  float* yt = y + t * y_stride;
  switch (n_tokens - t) {
    case 5:
      return panel_kernel<5>(xt, x_stride, panel, len, yt, y_stride, rows);
    case 4:
      return panel_kernel<4>(xt, x_stride, panel, len, yt, y_stride, rows);
    case 3:
      return panel_kernel<3>(xt, x_stride, panel, len, yt, y_stride, rows);
    case 2:
      return panel_kernel<2>(xt, x_stride, panel, len, yt, y_stride, rows);
    case 1:
      return panel_kernel<1>(xt, x_stride, panel, len, yt, y_stride, rows);
    default:
      return;
  }
}

// Many tokens: each panel of 32 rows x 256 columns is dequantized once (or
// was, into w.panels) and multiplied with every token's slice of x.
void matmul_rows(const WeightView& w, const float* x, int64_t n_tokens, float* y, int64_t row_begin,
                 int64_t row_end) {
  thread_local std::vector<float> scratch;
  thread_local AlignedVector<float> dequantized;
  scratch.resize(static_cast<size_t>(kPanelRows * kPanelDepth));
  dequantized.resize(static_cast<size_t>(kPanelRows * kPanelDepth));
  for (int64_t t = 0; t < n_tokens; ++t)
    std::fill(y + t * w.n_out + row_begin, y + t * w.n_out + row_end, 0.0f);
  for (int64_t k0 = 0; k0 < w.n_in; k0 += kPanelDepth) {
    const int64_t len = std::min(kPanelDepth, w.n_in - k0);
    for (int64_t r0 = row_begin; r0 < row_end; r0 += kPanelRows) {
      const int64_t rows = std::min(kPanelRows, row_end - r0);
      const float* panel = dequantized.data();
      if (w.panels != nullptr) {
        panel = w.panels +
                (r0 / kPanelRows * w.panel_columns() + k0 / kPanelDepth) * kPanelRows * kPanelDepth;
      } else {
        model::dequantize_panel(w, r0, k0, len, scratch.data(), dequantized.data());
      }
      panel_times_tokens(x + k0, w.n_in, n_tokens, panel, len, y + r0, w.n_out, rows);
    }
  }
}

// Few tokens, f32 activations: the quantized types add offsets and mins
// through the sums of each 32 values of x.
void matvec_f32(const WeightView& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool) {
  std::vector<std::vector<float>> xsums;
  for (int64_t t = 0; t < n_tokens; ++t) xsums.push_back(block_sums32(x + t * w.n_in, w.n_in));
  pool.parallel_for(
      w.n_out,
      [&](int64_t begin, int64_t end) {
        matvec_rows(w, n_tokens, y, begin, end,
                    [&](int64_t t, int64_t r, int64_t rows, float* out) {
                      dot_rows(w.type, w.data + r * w.row_bytes, w.row_bytes, rows, x + t * w.n_in,
                               xsums[t].data(), w.n_in, out);
                    });
      },
      kDotRows);
}

// Few tokens, int8 activations: each token's x is quantized once (in blocks
// of q8_block), then every row multiplies it in integers.
void matvec_int8(const WeightView& w, const float* x, int64_t n_tokens, float* y, int64_t q8_block,
                 ThreadPool& pool) {
  std::vector<Q8Activations> xq;
  for (int64_t t = 0; t < n_tokens; ++t)
    xq.push_back(quantize_activations(x + t * w.n_in, w.n_in, q8_block));
  pool.parallel_for(
      w.n_out,
      [&](int64_t begin, int64_t end) {
        matvec_rows(w, n_tokens, y, begin, end,
                    [&](int64_t t, int64_t r, int64_t rows, float* out) {
                      dot_rows_q8(w.type, w.data + r * w.row_bytes, w.row_bytes, rows, xq[t], out);
                    });
      },
      kDotRows);
}

}  // namespace

void matmul(const WeightView& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool,
            ActivationPrecision precision) {
  if (n_tokens >= kPanelTokens / 2) {
    pool.parallel_for(
        w.n_out, [&](int64_t begin, int64_t end) { matmul_rows(w, x, n_tokens, y, begin, end); },
        kPanelRows);
    return;
  }
  const int64_t q8_block = precision == ActivationPrecision::kInt8 ? q8_block_elems(w.type) : 0;
  if (q8_block > 0) return matvec_int8(w, x, n_tokens, y, q8_block, pool);
  matvec_f32(w, x, n_tokens, y, pool);
}

void dequantize_weight_row(const WeightView& w, int64_t row, float* out) {
  if (row < 0 || row >= w.n_out) fail("weight row ", row, " out of range ", w.n_out);
  gguf::dequantize_row(w.type, w.data + row * w.row_bytes, out, w.n_in);
}

}  // namespace eventkv::compute
