// Tiny random-weight GGUF models of every supported architecture, so tests
// need no download. Same spec and seed give the same bytes everywhere.
#pragma once

#include <cstdint>
#include <string>

#include "gguf/types.h"
#include "gguf/writer.h"
#include "model/config.h"
#include "model/test_vocab.h"

namespace eventkv::model {

struct TestModelSpec {
  Arch arch = Arch::kLlama;
  gguf::GgmlType weight_type = gguf::GgmlType::kF32;  // of every matrix
  uint64_t seed = 1;
  int64_t n_embd = 256;  // a multiple of 256, so every type (K-quants too) fits
  int64_t n_layer = 2;
  int64_t n_head = 4;
  int64_t n_head_kv = 2;
  int64_t head_dim = 64;
  int64_t n_ff = 512;
  int64_t n_ctx = 512;
  int64_t sliding_window = 8;  // gemma3, gemma4
  std::string name;            // general.name; empty: "eventkv test <arch>"
  // gemma3: every swa_pattern-th layer is global; 0 leaves the key out (6).
  // A dense gemma4: every swa_pattern-th layer is full (0: 6).
  int64_t swa_pattern = 0;
  // gemma4's dense layout (the 12B and 31B) instead of the edge models' (E2B,
  // E4B): no per-layer embeddings, no kv-shared layers, full layers every
  // swa_pattern-th and last.
  bool gemma4_dense = false;
  TestTokenizer tokenizer = TestTokenizer::kByteLevel;
  std::string pre = "default";  // tokenizer.ggml.pre of the BPE kinds
  // YaRN rope scaling by this factor over yarn_original_context positions
  // (n_ctx = factor * original, as transformers expects); 0: none.
  float yarn_factor = 0.0f;
  int64_t yarn_original_context = 128;
  float attn_temperature_scale = 0.0f;  // mistral3's attention.temperature_scale; 0: none
  // llama.cpp's Q4_K_M mix instead of weight_type: Q6_K for output (or for a
  // tied token_embd) and for attn_v and ffn_down of its "more bits" layers,
  // Q4_K elsewhere.
  bool q4_k_m = false;
  bool untied_output = false;  // an output.weight of its own (qwen2 always has one)
  // A GGUF file whose tokenizer.* keys replace spec.tokenizer's vocabulary, so
  // a generated model has a real model's vocabulary size and chat template.
  std::string vocab_from;
};

// The model as a writer, ready to write or to serialize in memory. Its
// vocabulary is spec.tokenizer's (by default byte-level BPE: 256 byte tokens,
// ChatML specials, no merges).
gguf::GgufWriter build_test_model(const TestModelSpec& spec);

// One [256, 4] tensor of each dequantizable type, named after the type.
gguf::GgufWriter build_type_zoo(uint64_t seed);

}  // namespace eventkv::model
