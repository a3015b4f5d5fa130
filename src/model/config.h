// Hyperparameters of a model, read from GGUF metadata and checked once, so
// the forward pass can trust them. No per-model constants live in code: all
// come from the file (with llama.cpp's documented defaults where absent).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/reader.h"

namespace eventkv::model {

enum class Arch { kLlama, kQwen2, kQwen3, kGemma3, kMistral3, kGemma4 };

// Which dimensions RoPE rotates together: adjacent pairs (x[2i], x[2i+1]) for
// llama-converted files, half-split pairs (x[i], x[i + n_rot/2]) otherwise.
enum class RopeType { kNorm, kNeox };

enum class FfnActivation { kSilu, kGeluTanh };

std::string_view arch_name(Arch arch);
// The architecture a GGUF general.architecture names, if eventkv runs it.
std::optional<Arch> arch_by_name(std::string_view name);
// "llama, qwen2, qwen3, gemma3, mistral3, gemma4".
inline constexpr std::string_view kArchNames = "llama, qwen2, qwen3, gemma3, mistral3, gemma4";
std::string_view rope_type_name(RopeType type);

// One layer's attention and FFN sizes. Only gemma4's differ between layers:
// its full-attention layers have their own head size and kv head count, and
// its kv-shared layers may have a wider FFN.
struct LayerShape {
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;    // key (and query) length per head
  int64_t head_dim_v = 0;  // value length per head
  int64_t n_ff = 0;
  // The layer whose K and V rows this one attends to: itself, or for
  // gemma4's kv-shared layers the last earlier layer of the same kind
  // (sliding or full) that has K and V projections.
  int64_t kv_layer = 0;
};

struct ModelConfig {
  Arch arch = Arch::kLlama;
  std::string name;  // general.name, for display

  int64_t n_vocab = 0;
  int64_t n_ctx_train = 0;
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  int64_t n_head = 0;
  // Model-wide values: gemma4's key_length and value_length are those of its
  // full-attention layers, head_count_kv and feed_forward_length the first
  // layer's; `layers` holds every layer's own.
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;    // key (and query) length per head
  int64_t head_dim_v = 0;  // value length per head
  int64_t n_ff = 0;
  std::vector<LayerShape> layers;  // [n_layer]
  float rms_eps = 0.0f;

  RopeType rope_type = RopeType::kNorm;
  int64_t n_rot = 0;
  int64_t n_rot_local = 0;  // of sliding-window layers (gemma4: rope.dimension_count_swa)
  // gemma4's proportional RoPE on full-attention layers: pair i's frequency
  // is divided by factor i (1e30 for the pairs it leaves unrotated); empty: none.
  std::vector<float> rope_freq_factors;
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f;  // 1 / rope.scaling.factor (linear or YaRN scaling)
  // YaRN (rope.scaling.type yarn): each pair's frequency blends the scaled
  // one and the unscaled one, by a ramp between the pairs that turn
  // beta_fast and beta_slow times over the original context; cos and sin
  // are multiplied by rope_mscale (YaRN's attention temperature).
  bool rope_yarn = false;
  int64_t rope_n_ctx_orig = 0;  // rope.scaling.original_context_length
  float rope_yarn_beta_fast = 32.0f;
  float rope_yarn_beta_slow = 1.0f;
  float rope_mscale = 1.0f;
  // mistral3 (Llama 4's attention temperature): queries are multiplied by
  // 1 + scale * ln(floor(position / length) + 1) after RoPE; 0: not at all.
  float attn_temperature_scale = 0.0f;
  int64_t attn_temperature_length = 0;

  bool qkv_bias = false;          // qwen2: biases on q, k, v projections
  bool qk_norm = false;           // qwen3, gemma3: per-head RMSNorm of q and k before RoPE
  bool post_norms = false;        // gemma3: RMSNorm after attention and after the FFN
  bool scale_embeddings = false;  // gemma3: token embeddings times sqrt(n_embd)
  FfnActivation ffn_activation = FfnActivation::kSilu;
  float attention_scale = 0.0f;      // multiplies q·k before softmax
  float final_logit_softcap = 0.0f;  // 0: none

  // Sliding-window attention (gemma3): per layer, whether it is local; local
  // layers see keys with p_q - p_k < sliding_window and use their own RoPE.
  int64_t sliding_window = 0;  // 0: no sliding window anywhere
  std::vector<bool> layer_is_local;
  float rope_freq_base_local = 10000.0f;

  bool v_norm = false;  // gemma4: RMSNorm without weight of each V head
  // gemma4's per-layer embeddings: each layer adds a gated projection of a
  // token's slice of per_layer_token_embd mixed with a projection of its
  // embedding; 0: none.
  int64_t n_embd_per_layer = 0;

  bool tied_output = false;  // no output.weight: logits use token_embd

  const LayerShape& layer(int64_t il) const { return layers[static_cast<size_t>(il)]; }
  int64_t q_dim(int64_t il) const { return n_head * layer(il).head_dim; }
  int64_t kv_dim(int64_t il) const { return layer(il).n_head_kv * layer(il).head_dim; }
  int64_t v_dim(int64_t il) const { return layer(il).n_head_kv * layer(il).head_dim_v; }
  // Whether layer il computes and stores K and V rows (not a kv-shared layer).
  bool has_kv(int64_t il) const { return layer(il).kv_layer == il; }
  // K and V values one token stores over all layers (shared layers store none).
  int64_t kv_values_per_token() const;
  bool is_local_layer(int64_t il) const { return sliding_window > 0 && layer_is_local[il]; }
};

// Reads and validates the hyperparameters; throws Error naming the file and
// the key for an unsupported architecture or an inconsistent value.
ModelConfig config_from_gguf(const gguf::GgufFile& file);

}  // namespace eventkv::model
