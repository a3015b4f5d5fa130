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

  int64_t panel_rows() const { return (n_out + kPanelRows - 1) / kPanelRows; }
  int64_t panel_columns() const { return (n_in + kPanelDepth - 1) / kPanelDepth; }
  int64_t panel_floats() const { return panel_rows() * panel_columns() * kPanelRows * kPanelDepth; }
};

// Dequantizes panel (row0 / kPanelRows, k0 / kPanelDepth) of `w`: columns
// [k0, k0 + len) of rows [row0, row0 + kPanelRows). scratch: kPanelRows *
// kPanelDepth floats; out: len * kPanelRows floats.
void dequantize_panel(const WeightView& w, int64_t row0, int64_t k0, int64_t len, float* scratch,
                      float* out);

// Every panel of `w` in the layout of WeightView::panels. Cost: one
// dequantization of the matrix; 4 bytes per element (rows and columns padded).
AlignedVector<float> pack_panels(const WeightView& w);

struct LayerWeights {
  std::vector<float> attn_norm;
  WeightView wq, wk, wv, wo;
  std::vector<float> bq, bk, bv;           // qkv_bias (qwen2); empty otherwise
  std::vector<float> q_norm, k_norm;       // qk_norm (qwen3, gemma3); empty otherwise
  std::vector<float> post_attention_norm;  // post_norms (gemma3); empty otherwise
  std::vector<float> ffn_norm;
  WeightView ffn_gate, ffn_up, ffn_down;
  std::vector<float> post_ffw_norm;  // post_norms (gemma3); empty otherwise
};

struct ModelWeights {
  WeightView token_embd;  // [n_vocab rows of n_embd]
  std::vector<float> output_norm;
  WeightView output;  // token_embd when the output is tied
  std::vector<LayerWeights> layers;
};

// Throws Error naming the file and tensor for a missing tensor, a wrong
// shape or a type eventkv cannot compute with.
ModelWeights load_weights(const gguf::GgufFile& file, const ModelConfig& config);

}  // namespace eventkv::model
