// The tensors of a model, checked against its config once at load: matrices
// stay views into the mapped file in their GGUF type; the small vectors
// (norms, biases) are dequantized to f32 copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gguf/reader.h"
#include "model/config.h"

namespace eventkv::model {

// A matrix as stored in GGUF: n_out rows of n_in elements, row r at
// data + r * row_bytes, in the tensor's own type. y[o] = sum_i W[o, i] x[i].
struct WeightView {
  gguf::GgmlType type = gguf::GgmlType::kF32;
  int64_t n_in = 0;
  int64_t n_out = 0;
  const uint8_t* data = nullptr;
  size_t row_bytes = 0;
};

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
