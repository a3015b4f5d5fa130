#include "model/test_model.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "gguf/random_tensor.h"
#include "util/rng.h"

namespace eventkv::model {
namespace {

constexpr float kWeightScale = 0.05f;
constexpr float kNormScale = 0.1f;
constexpr int64_t kGemma4PerLayerEmbd = 256;  // embedding_length_per_layer_input

class ModelBuilder {
 public:
  explicit ModelBuilder(const TestModelSpec& spec) : spec_(spec), rng_(spec.seed) {}

  void matrix(const std::string& name, int64_t n_in, int64_t n_out,
              gguf::GgmlType q4_k_m_type = gguf::GgmlType::kQ4_K) {
    const gguf::GgmlType type = spec_.q4_k_m ? q4_k_m_type : spec_.weight_type;
    writer_.add_tensor(name, type, {n_in, n_out},
                       gguf::random_tensor_bytes(type, n_in, n_out, rng_, kWeightScale));
  }

  void vector(const std::string& name, int64_t n, float mean, float scale) {
    writer_.add_tensor(name, gguf::GgmlType::kF32, {n},
                       gguf::random_tensor_bytes(gguf::GgmlType::kF32, n, 1, rng_, scale, mean));
  }

  gguf::GgufWriter build() {
    const int64_t n_vocab = write_metadata();
    if (spec_.arch == Arch::kGemma4) return build_gemma4(n_vocab);
    const bool untied = spec_.arch == Arch::kQwen2 || spec_.untied_output;
    token_embd(n_vocab, untied);
    vector("output_norm.weight", spec_.n_embd, 1.0f, kNormScale);
    if (untied) matrix("output.weight", spec_.n_embd, n_vocab, gguf::GgmlType::kQ6_K);
    for (int64_t il = 0; il < spec_.n_layer; ++il) write_layer(il);
    return std::move(writer_);
  }

 private:
  // Returns the vocabulary size.
  int64_t write_metadata() {
    const std::string arch(arch_name(spec_.arch));
    writer_.set_string("general.architecture", arch);
    writer_.set_string("general.name", spec_.name.empty() ? "eventkv test " + arch : spec_.name);
    const int64_t n_ctx =
        spec_.yarn_factor > 0.0f
            ? static_cast<int64_t>(spec_.yarn_factor *
                                   static_cast<float>(spec_.yarn_original_context))
            : spec_.n_ctx;
    writer_.set_uint32(arch + ".context_length", static_cast<uint32_t>(n_ctx));
    writer_.set_uint32(arch + ".embedding_length", static_cast<uint32_t>(spec_.n_embd));
    writer_.set_uint32(arch + ".block_count", static_cast<uint32_t>(spec_.n_layer));
    writer_.set_uint32(arch + ".feed_forward_length", static_cast<uint32_t>(spec_.n_ff));
    writer_.set_uint32(arch + ".attention.head_count", static_cast<uint32_t>(spec_.n_head));
    writer_.set_uint32(arch + ".attention.head_count_kv", static_cast<uint32_t>(spec_.n_head_kv));
    writer_.set_uint32(arch + ".attention.key_length", static_cast<uint32_t>(spec_.head_dim));
    writer_.set_uint32(arch + ".attention.value_length", static_cast<uint32_t>(spec_.head_dim));
    writer_.set_uint32(arch + ".rope.dimension_count", static_cast<uint32_t>(spec_.head_dim));
    writer_.set_float32(arch + ".attention.layer_norm_rms_epsilon", 1e-6f);
    writer_.set_float32(arch + ".rope.freq_base", spec_.arch == Arch::kGemma3 ? 1e6f : 1e4f);
    if (spec_.attn_temperature_scale != 0.0f)
      writer_.set_float32(arch + ".attention.temperature_scale", spec_.attn_temperature_scale);
    if (spec_.yarn_factor > 0.0f) {
      writer_.set_string(arch + ".rope.scaling.type", "yarn");
      writer_.set_float32(arch + ".rope.scaling.factor", spec_.yarn_factor);
      writer_.set_uint32(arch + ".rope.scaling.original_context_length",
                         static_cast<uint32_t>(spec_.yarn_original_context));
    }
    if (spec_.arch == Arch::kGemma3) {
      writer_.set_uint32(arch + ".attention.sliding_window",
                         static_cast<uint32_t>(spec_.sliding_window));
      if (spec_.swa_pattern > 0) {
        writer_.set_uint32(arch + ".attention.sliding_window_pattern",
                           static_cast<uint32_t>(spec_.swa_pattern));
      }
    }
    constexpr uint32_t kFileTypeQ4KM = 15;  // llama_ftype LLAMA_FTYPE_MOSTLY_Q4_K_M
    writer_.set_uint32("general.file_type", spec_.q4_k_m ? kFileTypeQ4KM : 0);
    if (!spec_.vocab_from.empty()) return copy_vocab(writer_, spec_.vocab_from);
    return add_test_vocab(writer_, spec_.tokenizer, spec_.pre);
  }

  // Q4_K_M keeps a tied token_embd in the output's Q6_K, as llama.cpp does.
  void token_embd(int64_t n_vocab, bool untied) {
    matrix("token_embd.weight", spec_.n_embd, n_vocab,
           untied ? gguf::GgmlType::kQ4_K : gguf::GgmlType::kQ6_K);
  }

  // llama.cpp's use_more_bits: which of n attn_v (or ffn_down) tensors, the
  // i-th counted in layer order, Q4_K_M keeps in Q6_K.
  static gguf::GgmlType more_bits_type(int64_t i, int64_t n) {
    const bool more_bits = i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
    return more_bits ? gguf::GgmlType::kQ6_K : gguf::GgmlType::kQ4_K;
  }

  void write_layer(int64_t il) {
    const std::string prefix = "blk." + std::to_string(il) + ".";
    const int64_t q_dim = spec_.n_head * spec_.head_dim;
    const int64_t kv_dim = spec_.n_head_kv * spec_.head_dim;
    vector(prefix + "attn_norm.weight", spec_.n_embd, 1.0f, kNormScale);
    matrix(prefix + "attn_q.weight", spec_.n_embd, q_dim);
    matrix(prefix + "attn_k.weight", spec_.n_embd, kv_dim);
    matrix(prefix + "attn_v.weight", spec_.n_embd, kv_dim, more_bits_type(il, spec_.n_layer));
    matrix(prefix + "attn_output.weight", q_dim, spec_.n_embd);
    if (spec_.arch == Arch::kQwen2) {
      vector(prefix + "attn_q.bias", q_dim, 0.0f, kWeightScale);
      vector(prefix + "attn_k.bias", kv_dim, 0.0f, kWeightScale);
      vector(prefix + "attn_v.bias", kv_dim, 0.0f, kWeightScale);
    }
    if (spec_.arch == Arch::kQwen3 || spec_.arch == Arch::kGemma3) {
      vector(prefix + "attn_q_norm.weight", spec_.head_dim, 1.0f, kNormScale);
      vector(prefix + "attn_k_norm.weight", spec_.head_dim, 1.0f, kNormScale);
    }
    if (spec_.arch == Arch::kGemma3) {
      vector(prefix + "post_attention_norm.weight", spec_.n_embd, 1.0f, kNormScale);
      vector(prefix + "post_ffw_norm.weight", spec_.n_embd, 1.0f, kNormScale);
    }
    vector(prefix + "ffn_norm.weight", spec_.n_embd, 1.0f, kNormScale);
    matrix(prefix + "ffn_gate.weight", spec_.n_embd, spec_.n_ff);
    matrix(prefix + "ffn_up.weight", spec_.n_embd, spec_.n_ff);
    matrix(prefix + "ffn_down.weight", spec_.n_ff, spec_.n_embd, more_bits_type(il, spec_.n_layer));
  }

  // gemma4's edge layout: every fourth layer, the last and the one before
  // the last two (kv-shared, from 4 layers on) are full-attention layers, the
  // rest sliding. Shared layers thus read the last sliding and the last full
  // layer before them, as both llama.cpp and transformers pick them. The
  // dense layout: every swa_pattern-th layer and the last are full.
  bool gemma4_full(int64_t il) const {
    if (spec_.gemma4_dense) {
      const int64_t pattern = spec_.swa_pattern > 0 ? spec_.swa_pattern : 6;
      return il % pattern == pattern - 1 || il == spec_.n_layer - 1;
    }
    return il % 4 == 3 || il == spec_.n_layer - 1 || il == gemma4_first_shared() - 1;
  }
  int64_t gemma4_first_shared() const {
    return spec_.n_layer >= 4 && !spec_.gemma4_dense ? spec_.n_layer - 2 : spec_.n_layer;
  }
  // Layers with an attn_v: full layers take V from the K projection.
  bool gemma4_has_v(int64_t il) const { return il < gemma4_first_shared() && !gemma4_full(il); }
  // Full layers: heads twice as long, one kv head, no attn_v (V is the K
  // projection), a quarter of each head rotated (proportional RoPE).
  int64_t gemma4_head_dim(int64_t il) const {
    return gemma4_full(il) ? 2 * spec_.head_dim : spec_.head_dim;
  }
  int64_t gemma4_n_head_kv(int64_t il) const { return gemma4_full(il) ? 1 : spec_.n_head_kv; }
  // kv-shared layers have a double-wide FFN (use_double_wide_mlp).
  int64_t gemma4_n_ff(int64_t il) const {
    return il >= gemma4_first_shared() ? 2 * spec_.n_ff : spec_.n_ff;
  }
  // Q4_K_M's type of layer il's attn_v, counted over the layers that have one.
  gguf::GgmlType gemma4_v_type(int64_t il) const {
    int64_t index = 0;
    int64_t count = 0;
    for (int64_t l = 0; l < spec_.n_layer; ++l) {
      if (!gemma4_has_v(l)) continue;
      if (l < il) ++index;
      ++count;
    }
    return more_bits_type(index, count);
  }

  // Gemma 4's text model, under the keys and tensor names llama.cpp reads:
  // sliding and full layers of different head sizes and kv head counts,
  // proportional RoPE, layer output scales and a final softcap; in the edge
  // layout also kv-shared layers and per-layer embeddings.
  gguf::GgufWriter build_gemma4(int64_t n_vocab) {
    const std::string arch(arch_name(spec_.arch));
    const int64_t n_layer = spec_.n_layer;
    const int64_t full_head_dim = 2 * spec_.head_dim;
    std::vector<bool> sliding;
    std::vector<int32_t> n_head_kv;
    std::vector<int32_t> n_ff;
    for (int64_t il = 0; il < n_layer; ++il) {
      sliding.push_back(!gemma4_full(il));
      n_head_kv.push_back(static_cast<int32_t>(gemma4_n_head_kv(il)));
      n_ff.push_back(static_cast<int32_t>(gemma4_n_ff(il)));
    }
    writer_.set_int32s(arch + ".feed_forward_length", n_ff);
    writer_.set_int32s(arch + ".attention.head_count_kv", n_head_kv);
    writer_.set_bools(arch + ".attention.sliding_window_pattern", sliding);
    writer_.set_uint32(arch + ".attention.sliding_window",
                       static_cast<uint32_t>(spec_.sliding_window));
    writer_.set_uint32(arch + ".attention.key_length", static_cast<uint32_t>(full_head_dim));
    writer_.set_uint32(arch + ".attention.value_length", static_cast<uint32_t>(full_head_dim));
    writer_.set_uint32(arch + ".attention.key_length_swa", static_cast<uint32_t>(spec_.head_dim));
    writer_.set_uint32(arch + ".attention.value_length_swa", static_cast<uint32_t>(spec_.head_dim));
    writer_.set_uint32(arch + ".rope.dimension_count", static_cast<uint32_t>(full_head_dim));
    writer_.set_uint32(arch + ".rope.dimension_count_swa", static_cast<uint32_t>(spec_.head_dim));
    writer_.set_float32(arch + ".rope.freq_base", 1e6f);
    writer_.set_float32(arch + ".rope.freq_base_swa", 1e4f);
    writer_.set_uint32(arch + ".attention.shared_kv_layers",
                       static_cast<uint32_t>(n_layer - gemma4_first_shared()));
    const int64_t per_layer_embd = spec_.gemma4_dense ? 0 : kGemma4PerLayerEmbd;
    writer_.set_uint32(arch + ".embedding_length_per_layer_input",
                       static_cast<uint32_t>(per_layer_embd));
    writer_.set_float32(arch + ".final_logit_softcapping", 30.0f);

    token_embd(n_vocab, false);
    vector("output_norm.weight", spec_.n_embd, 1.0f, kNormScale);
    // Proportional RoPE as llama.cpp's converter writes it: factor 1 for the
    // rotated quarter of the pairs, 1e30 (no rotation) for the rest.
    std::vector<float> factors(static_cast<size_t>(full_head_dim / 2), 1e30f);
    std::fill_n(factors.begin(), full_head_dim / 8, 1.0f);
    std::vector<uint8_t> factor_bytes(factors.size() * sizeof(float));
    std::memcpy(factor_bytes.data(), factors.data(), factor_bytes.size());
    writer_.add_tensor("rope_freqs.weight", gguf::GgmlType::kF32, {full_head_dim / 2},
                       std::move(factor_bytes));
    if (per_layer_embd > 0) {
      matrix("per_layer_token_embd.weight", n_layer * per_layer_embd, n_vocab);
      matrix("per_layer_model_proj.weight", spec_.n_embd, n_layer * per_layer_embd);
      vector("per_layer_proj_norm.weight", per_layer_embd, 1.0f, kNormScale);
    }
    for (int64_t il = 0; il < n_layer; ++il) write_gemma4_layer(il);
    return std::move(writer_);
  }

  void write_gemma4_layer(int64_t il) {
    const std::string prefix = "blk." + std::to_string(il) + ".";
    const int64_t head_dim = gemma4_head_dim(il);
    const int64_t kv_dim = gemma4_n_head_kv(il) * head_dim;
    vector(prefix + "attn_norm.weight", spec_.n_embd, 1.0f, kNormScale);
    matrix(prefix + "attn_q.weight", spec_.n_embd, spec_.n_head * head_dim);
    vector(prefix + "attn_q_norm.weight", head_dim, 1.0f, kNormScale);
    if (il < gemma4_first_shared()) {
      matrix(prefix + "attn_k.weight", spec_.n_embd, kv_dim);
      if (gemma4_has_v(il))
        matrix(prefix + "attn_v.weight", spec_.n_embd, kv_dim, gemma4_v_type(il));
      vector(prefix + "attn_k_norm.weight", head_dim, 1.0f, kNormScale);
    }
    matrix(prefix + "attn_output.weight", spec_.n_head * head_dim, spec_.n_embd);
    vector(prefix + "post_attention_norm.weight", spec_.n_embd, 1.0f, kNormScale);
    vector(prefix + "ffn_norm.weight", spec_.n_embd, 1.0f, kNormScale);
    matrix(prefix + "ffn_gate.weight", spec_.n_embd, gemma4_n_ff(il));
    matrix(prefix + "ffn_up.weight", spec_.n_embd, gemma4_n_ff(il));
    matrix(prefix + "ffn_down.weight", gemma4_n_ff(il), spec_.n_embd,
           more_bits_type(il, spec_.n_layer));
    vector(prefix + "post_ffw_norm.weight", spec_.n_embd, 1.0f, kNormScale);
    if (!spec_.gemma4_dense) {
      matrix(prefix + "inp_gate.weight", spec_.n_embd, kGemma4PerLayerEmbd);
      matrix(prefix + "proj.weight", kGemma4PerLayerEmbd, spec_.n_embd);
      vector(prefix + "post_norm.weight", spec_.n_embd, 1.0f, kNormScale);
    }
    vector(prefix + "layer_output_scale.weight", 1, 0.8f, kNormScale);
  }

  TestModelSpec spec_;
  Rng rng_;
  gguf::GgufWriter writer_;
};

}  // namespace

gguf::GgufWriter build_test_model(const TestModelSpec& spec) {
  return ModelBuilder(spec).build();
}

gguf::GgufWriter build_type_zoo(uint64_t seed) {
  Rng rng(seed);
  gguf::GgufWriter writer;
  writer.set_string("general.architecture", "type-zoo");
  for (const gguf::GgmlType type : gguf::kDequantizableTypes) {
    writer.add_tensor(std::string(gguf::type_name(type)), type, {256, 4},
                      gguf::random_tensor_bytes(type, 256, 4, rng, 1.0f));
  }
  return writer;
}

}  // namespace eventkv::model
