// The tensors of a model, checked against its config once at load: matrices
// stay views into the mapped file in their GGUF type; the small vectors
// (norms, biases) are dequantized to f32 copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gguf/reader.h"
#include "model/config.h"
#include "util/aligned_vector.h"

namespace eventkv::model {

// The many-token product (compute/matmul.h) multiplies f32 panels of
// kPanelRows rows x kPanelDepth columns, stored column by column
// (panel[k * kPanelRows + r]) with rows past the matrix's end zero.
inline constexpr int64_t kPanelRows = 32;
inline constexpr int64_t kPanelDepth = 256;

// A matrix as unsigned 8-bit integers for the many-token integer product
// (compute/int8_gemm.h): value = scale * q - offset, with q below 64 (but
// Q8_0's, below 256) and one scale and offset per `scale_columns` values of a
// row (32, or 16 for Q6_K).
// Rows come in groups of kInt8GroupRows (the last padded with zeros): group
// g's q holds, for each 4 columns k .. k + 3, its rows' 4 bytes one row after
// the other (q[(g * n_in + k) * 16 + 4 r + j] is row 16 g + r, column k + j),
// so that one 64-byte load feeds one vpdpbusd; scale and offset hold per
// scale_columns columns the group's 16 rows
// ([(g * n_in / scale_columns + k / scale_columns) * 16 + r]).
// 4-bit quants are stored as nibbles, half the bytes that many-token
// products stream: each 64 bytes hold 8 columns, those of the first 4 in
// the low nibbles and of the next 4 in the high ones (quant() reads both
// layouts).
inline constexpr int64_t kInt8GroupRows = 16;

struct Int8Panels {
  int64_t n_in = 0;
  int64_t n_out = 0;
  int64_t scale_columns = 32;
  // Every q is below 2^quant_bits (4, 5, 6 or 8): the fewer bits, the more
  // columns AVX2's int16 sums hold before widening (compute/int8_gemm.cc).
  int64_t quant_bits = 6;
  bool nibbles = false;  // two quants a byte
  AlignedVector<uint8_t> q;
  AlignedVector<float> scale;
  AlignedVector<float> offset;

  int64_t groups() const { return (n_out + kInt8GroupRows - 1) / kInt8GroupRows; }
  // Bytes of one column of a group's quants.
  static constexpr int64_t column_bytes(bool nibbles) {
    return nibbles ? kInt8GroupRows / 2 : kInt8GroupRows;
  }
  // Group g's quants from column k (a multiple of 8 with nibbles, else of 4).
  const uint8_t* quants(int64_t g, int64_t k) const {
    return q.data() + (g * n_in + k) * column_bytes(nibbles);
  }
  // The quant of row r, column k.
  uint8_t quant(int64_t r, int64_t k) const {
    const int64_t lane = 4 * (r % kInt8GroupRows) + k % 4;
    if (!nibbles) return quants(r / kInt8GroupRows, k / 4 * 4)[lane];
    const uint8_t both = quants(r / kInt8GroupRows, k / 8 * 8)[lane];
    return k % 8 < 4 ? both & 0x0F : both >> 4;
  }
};

// A matrix as stored in GGUF: n_out rows of n_in elements, row r at
// data + r * row_bytes, in the tensor's own type. y[o] = sum_i W[o, i] x[i].
struct WeightView {
  gguf::GgmlType type = gguf::GgmlType::kF32;
  int64_t n_in = 0;
  int64_t n_out = 0;
  const uint8_t* data = nullptr;
  size_t row_bytes = 0;
  // Optional: every panel dequantized once, so many-token products skip
  // dequantizing per call (same values, same results). Panel (p, c), of rows
  // [32p, 32p + 32) and columns [256c, 256c + 256), starts at
  // panels + (p * panel_columns() + c) * kPanelRows * kPanelDepth.
  const float* panels = nullptr;
  // Optional: the matrix as int8 panels, which many-token products with int8
  // activations use (compute/matmul.h).
  const Int8Panels* int8 = nullptr;

  int64_t panel_rows() const { return (n_out + kPanelRows - 1) / kPanelRows; }
  int64_t panel_columns() const { return (n_in + kPanelDepth - 1) / kPanelDepth; }
  int64_t panel_floats() const { return panel_rows() * panel_columns() * kPanelRows * kPanelDepth; }
  // Bytes of this matrix as Int8Panels, at most: a byte per value (half
  // for a type of 4-bit quants) and two floats per 16, rows padded to a
  // group; 0 when it does not pack.
  int64_t int8_panel_bytes() const;
};

// Dequantizes panel (row0 / kPanelRows, k0 / kPanelDepth) of `w`: columns
// [k0, k0 + len) of rows [row0, row0 + kPanelRows). scratch: kPanelRows *
// kPanelDepth floats; out: len * kPanelRows floats.
void dequantize_panel(const WeightView& w, int64_t row0, int64_t k0, int64_t len, float* scratch,
                      float* out);

// Every panel of `w` in the layout of WeightView::panels. Cost: one
// dequantization of the matrix; 4 bytes per element (rows and columns padded).
AlignedVector<float> pack_panels(const WeightView& w);

// Whether pack_int8_panels can pack `w`'s type (compute/quant_types.h
// unpack_u8).
bool int8_packable(const WeightView& w);

// `w` as int8 panels, 4-bit quants as nibbles unless `nibbles` is false
// (tests compare the layouts). Cost: one pass over the matrix; a byte per
// element (half with nibbles) and the scales and offsets, as
// int8_panel_bytes counts. Throws Error for a type int8_packable refuses.
Int8Panels pack_int8_panels(const WeightView& w, bool nibbles = true);

struct LayerWeights {
  std::vector<float> attn_norm;
  // wk and wv are empty (data null) in gemma4's kv-shared layers; wv alone
  // in its full layers without attn_v (attention_k_eq_v), whose V is the K
  // projection before its norm.
  WeightView wq, wk, wv, wo;
  std::vector<float> bq, bk, bv;           // qkv_bias (qwen2); empty otherwise
  std::vector<float> q_norm, k_norm;       // qk_norm (qwen3, gemma3); empty otherwise
  std::vector<float> post_attention_norm;  // post_norms (gemma3); empty otherwise
  std::vector<float> ffn_norm;
  WeightView ffn_gate, ffn_up, ffn_down;
  std::vector<float> post_ffw_norm;  // post_norms (gemma3); empty otherwise
  // gemma4's per-layer embedding input (n_embd_per_layer > 0): inp_gate
  // [n_embd -> n_embd_per_layer], proj [n_embd_per_layer -> n_embd].
  WeightView per_layer_gate, per_layer_proj;
  std::vector<float> per_layer_post_norm;
  std::vector<float> output_scale;  // gemma4: [1], the layer's output times it; or empty
};

struct ModelWeights {
  WeightView token_embd;  // [n_vocab rows of n_embd]
  std::vector<float> output_norm;
  WeightView output;  // token_embd when the output is tied
  // gemma4's per-layer embeddings (n_embd_per_layer > 0): token rows of
  // n_layer * n_embd_per_layer, the projection of the embedding to the same
  // width, and the RMSNorm of each layer's slice of that projection.
  WeightView per_layer_token_embd, per_layer_model_proj;
  std::vector<float> per_layer_proj_norm;
  std::vector<LayerWeights> layers;
};

// Throws Error naming the file and tensor for a missing tensor, a wrong
// shape or a type eventkv cannot compute with.
ModelWeights load_weights(const gguf::GgufFile& file, const ModelConfig& config);

}  // namespace eventkv::model
