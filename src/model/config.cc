#include "model/config.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "util/error.h"

namespace eventkv::model {

std::string_view arch_name(Arch arch) {
  switch (arch) {
    case Arch::kLlama:
      return "llama";
    case Arch::kQwen2:
      return "qwen2";
    case Arch::kQwen3:
      return "qwen3";
    case Arch::kGemma3:
      return "gemma3";
    case Arch::kMistral3:
      return "mistral3";
    case Arch::kGemma4:
      return "gemma4";
  }
  return "?";
}

std::optional<Arch> arch_by_name(std::string_view name) {
  for (const Arch arch :
       {Arch::kLlama, Arch::kQwen2, Arch::kQwen3, Arch::kGemma3, Arch::kMistral3, Arch::kGemma4}) {
    if (arch_name(arch) == name) return arch;
  }
  return std::nullopt;
}

std::string_view rope_type_name(RopeType type) {
  return type == RopeType::kNorm ? "norm" : "neox";
}

namespace {

// Metadata of one architecture: every key is read under "{arch}.".
class ArchKeys {
 public:
  ArchKeys(const gguf::GgufFile& file, std::string_view arch) : file_(file), prefix_(arch) {}

  std::string key(std::string_view suffix) const { return prefix_ + "." + std::string(suffix); }

  // An integer that may be stored per layer; per-layer arrays must be uniform.
  std::optional<int64_t> get_int(std::string_view suffix) const {
    const std::string full = key(suffix);
    const gguf::MetaValue* value = file_.find(full);
    if (value == nullptr) return std::nullopt;
    if (const gguf::MetaArray* array = value->as_array()) return uniform_int(full, *array);
    const auto number = file_.get_uint(full);
    if (*number > static_cast<uint64_t>(INT64_MAX))
      fail(file_.name(), ": ", full, " is out of range");
    return static_cast<int64_t>(*number);
  }

  int64_t require_int(std::string_view suffix) const {
    const auto value = get_int(suffix);
    if (!value) fail(file_.name(), ": missing metadata key '", key(suffix), "'");
    return *value;
  }

  // An integer per layer: an array of n_layer values, or one for all layers.
  std::optional<std::vector<int64_t>> get_per_layer_ints(std::string_view suffix,
                                                         int64_t n_layer) const {
    const std::string full = key(suffix);
    const gguf::MetaValue* value = file_.find(full);
    if (value == nullptr) return std::nullopt;
    const gguf::MetaArray* array = value->as_array();
    if (array == nullptr)
      return std::vector<int64_t>(static_cast<size_t>(n_layer), *get_int(suffix));
    std::vector<int64_t> values = array->to_ints();
    if (static_cast<int64_t>(values.size()) != n_layer)
      fail(file_.name(), ": ", full, " has ", values.size(), " values for ", n_layer, " layers");
    return values;
  }

  std::optional<float> get_float(std::string_view suffix) const {
    const auto value = file_.get_float(key(suffix));
    if (!value) return std::nullopt;
    return static_cast<float>(*value);
  }

 private:
  int64_t uniform_int(const std::string& full, const gguf::MetaArray& array) const {
    const std::vector<int64_t> values = array.to_ints();
    if (values.empty()) fail(file_.name(), ": ", full, " is an empty array");
    if (std::any_of(values.begin(), values.end(), [&](int64_t v) { return v != values[0]; })) {
      fail(file_.name(), ": ", full, " varies per layer, which eventkv does not support");
    }
    return values[0];
  }

  const gguf::GgufFile& file_;
  std::string prefix_;
};

Arch parse_arch(const gguf::GgufFile& file) {
  const auto name = file.get_string("general.architecture");
  if (!name) fail(file.name(), ": missing metadata key 'general.architecture'");
  if (const auto arch = arch_by_name(*name)) return *arch;
  fail(file.name(), ": unsupported architecture '", *name, "' (eventkv supports ", kArchNames, ")");
}

// YaRN's keys as llama.cpp reads them, and its magnitude scale as
// transformers computes it: 0.1 ln(factor) + 1, divided by the same with
// yarn_log_multiplier as its slope when that is given, times attn_factor.
void read_yarn(const gguf::GgufFile& file, const ArchKeys& keys, float factor,
               ModelConfig& config) {
  config.rope_yarn = true;
  config.rope_n_ctx_orig =
      keys.get_int("rope.scaling.original_context_length").value_or(config.n_ctx_train);
  config.rope_yarn_beta_fast = keys.get_float("rope.scaling.yarn_beta_fast").value_or(32.0f);
  config.rope_yarn_beta_slow = keys.get_float("rope.scaling.yarn_beta_slow").value_or(1.0f);
  if (config.rope_n_ctx_orig <= 0 || !(factor >= 1.0f)) {
    fail(file.name(), ": YaRN needs a positive original context length and a factor >= 1");
  }
  const auto mscale = [factor](float slope) {
    return factor <= 1.0f ? 1.0f : 0.1f * slope * std::log(factor) + 1.0f;
  };
  const float log_multiplier = keys.get_float("rope.scaling.yarn_log_multiplier").value_or(0.0f);
  config.rope_mscale =
      log_multiplier != 0.0f ? mscale(1.0f) / mscale(log_multiplier) : mscale(1.0f);
  config.rope_mscale *= keys.get_float("rope.scaling.attn_factor").value_or(1.0f);
  if (!std::isfinite(config.rope_mscale) || config.rope_mscale <= 0.0f)
    fail(file.name(), ": YaRN's attention scale must be positive and finite");
}

void read_common(const gguf::GgufFile& file, const ArchKeys& keys, ModelConfig& config) {
  config.name = file.get_string("general.name").value_or("");
  config.n_ctx_train = keys.require_int("context_length");
  config.n_embd = keys.require_int("embedding_length");
  config.n_layer = keys.require_int("block_count");
  config.n_head = keys.require_int("attention.head_count");
  if (config.n_head <= 0 || config.n_embd <= 0 || config.n_layer <= 0) {
    fail(file.name(), ": embedding_length, block_count and head_count must be positive");
  }
  const auto n_ff = keys.get_per_layer_ints("feed_forward_length", config.n_layer);
  if (!n_ff) fail(file.name(), ": missing metadata key '", keys.key("feed_forward_length"), "'");
  const std::vector<int64_t> n_head_kv =
      keys.get_per_layer_ints("attention.head_count_kv", config.n_layer)
          .value_or(std::vector<int64_t>(static_cast<size_t>(config.n_layer), config.n_head));
  config.n_ff = n_ff->front();
  config.n_head_kv = n_head_kv.front();
  config.head_dim = keys.get_int("attention.key_length").value_or(config.n_embd / config.n_head);
  config.head_dim_v = keys.get_int("attention.value_length").value_or(config.head_dim);
  for (int64_t il = 0; il < config.n_layer; ++il) {
    const auto i = static_cast<size_t>(il);
    config.layers.push_back({n_head_kv[i], config.head_dim, config.head_dim_v, (*n_ff)[i], il});
  }
  config.n_rot = keys.get_int("rope.dimension_count").value_or(config.head_dim);
  config.n_rot_local = config.n_rot;
  config.rms_eps = keys.get_float("attention.layer_norm_rms_epsilon").value_or(0.0f);
  config.rope_freq_base = keys.get_float("rope.freq_base").value_or(10000.0f);
  float factor = keys.get_float("rope.scaling.factor").value_or(0.0f);
  if (factor == 0.0f) factor = keys.get_float("rope.scale_linear").value_or(1.0f);
  const std::string scaling = file.get_string(keys.key("rope.scaling.type")).value_or("linear");
  if (scaling != "none" && scaling != "linear" && scaling != "yarn") {
    fail(file.name(), ": rope scaling type '", scaling, "' is not supported (none, linear, yarn)");
  }
  config.rope_freq_scale = scaling == "none" ? 1.0f : 1.0f / factor;
  if (scaling == "yarn") read_yarn(file, keys, factor, config);
  config.attention_scale = 1.0f / std::sqrt(static_cast<float>(config.head_dim));
  config.layer_is_local.assign(static_cast<size_t>(config.n_layer), false);
}

// Ministral 3: llama's layers, and (as llama.cpp reads it) the attention
// temperature over the original context length.
void read_mistral3(const gguf::GgufFile& file, const ArchKeys& keys, ModelConfig& config) {
  config.rope_type = RopeType::kNorm;
  config.attn_temperature_scale = keys.get_float("attention.temperature_scale").value_or(0.0f);
  if (config.attn_temperature_scale == 0.0f) return;
  config.attn_temperature_length =
      keys.get_int("rope.scaling.original_context_length").value_or(config.n_ctx_train);
  if (config.attn_temperature_length <= 0 || !std::isfinite(config.attn_temperature_scale))
    fail(file.name(), ": the attention temperature needs a finite scale and a positive length");
}

void read_gemma3(const ArchKeys& keys, ModelConfig& config) {
  config.qk_norm = true;
  config.post_norms = true;
  config.scale_embeddings = true;
  config.ffn_activation = FfnActivation::kGeluTanh;
  config.final_logit_softcap = keys.get_float("final_logit_softcapping").value_or(0.0f);
  config.sliding_window = keys.get_int("attention.sliding_window").value_or(0);
  config.rope_freq_base_local = keys.get_float("rope.freq_base_swa").value_or(10000.0f);
  // Every `pattern`-th layer is global, the rest local (llama.cpp's default 6).
  const int64_t pattern = keys.get_int("attention.sliding_window_pattern").value_or(6);
  for (int64_t il = 0; il < config.n_layer; ++il) {
    config.layer_is_local[il] = pattern > 0 && il % pattern < pattern - 1;
  }
  // llama.cpp: query_pre_attn_scalar is head_dim for every Gemma 3 size but
  // the 62-layer 27B, where it is n_embd / n_head. GGUF does not store it.
  if (config.n_layer == 62) {
    const int64_t query_pre_attn_scalar = config.n_embd / config.n_head;
    config.attention_scale = 1.0f / std::sqrt(static_cast<float>(query_pre_attn_scalar));
  }
}

// The layer a gemma4 kv-shared layer reads K and V from: the last layer
// before the shared ones that is of its kind (as transformers' Gemma 4 does).
int64_t shared_kv_source(const gguf::GgufFile& file, const ModelConfig& config, int64_t il,
                         int64_t first_shared) {
  for (int64_t source = first_shared - 1; source >= 0; --source) {
    if (config.layer_is_local[source] == config.layer_is_local[il]) return source;
  }
  fail(file.name(), ": gemma4 layer ", il,
       " shares K and V, but no earlier layer of its kind has them");
}

// Proportional RoPE's frequency factors: the rope_freqs.weight tensor, one
// per rotated pair of a full-attention head.
std::vector<float> read_rope_freq_factors(const gguf::GgufFile& file, int64_t n_pairs) {
  const gguf::TensorInfo* t = file.find_tensor("rope_freqs.weight");
  if (t == nullptr) return {};
  if (t->type != gguf::GgmlType::kF32 || t->n_elements() != n_pairs) {
    fail(file.name(), ": rope_freqs.weight must hold ", n_pairs,
         " F32 values (half of key_length)");
  }
  std::vector<float> factors(static_cast<size_t>(n_pairs));
  std::memcpy(factors.data(), t->data, factors.size() * sizeof(float));
  return factors;
}

// Gemma 4's dense text model, with the keys and tensors llama.cpp reads:
// sliding and full layers of their own head sizes (and kv head counts), the
// last shared_kv_layers layers reusing earlier layers' K and V, per-layer
// embeddings and proportional RoPE on full layers.
void read_gemma4(const gguf::GgufFile& file, const ArchKeys& keys, ModelConfig& config) {
  if (keys.get_int("expert_count").value_or(0) > 0 ||
      file.find_tensor("blk.0.ffn_gate_inp.weight") != nullptr) {
    fail(file.name(), ": gemma4 mixture-of-experts models (26B-A4B) are not supported");
  }
  config.rope_type = RopeType::kNeox;
  config.qk_norm = true;
  config.v_norm = true;
  config.post_norms = true;
  config.scale_embeddings = true;
  config.ffn_activation = FfnActivation::kGeluTanh;
  config.attention_scale = 1.0f;  // q and k are RMS-normed instead of scaled
  config.final_logit_softcap = keys.get_float("final_logit_softcapping").value_or(0.0f);
  config.sliding_window = keys.require_int("attention.sliding_window");
  config.rope_freq_base_local = keys.get_float("rope.freq_base_swa").value_or(10000.0f);
  config.n_rot_local = keys.get_int("rope.dimension_count_swa").value_or(config.n_rot);
  config.n_embd_per_layer = keys.get_int("embedding_length_per_layer_input").value_or(0);
  const gguf::MetaValue* pattern = file.find(keys.key("attention.sliding_window_pattern"));
  const gguf::MetaArray* kinds = pattern != nullptr ? pattern->as_array() : nullptr;
  if (kinds == nullptr || static_cast<int64_t>(kinds->count) != config.n_layer) {
    fail(file.name(), ": ", keys.key("attention.sliding_window_pattern"),
         " must be an array of one value per layer");
  }
  for (int64_t il = 0; il < config.n_layer; ++il) {
    const gguf::MetaValue kind = kinds->at(static_cast<size_t>(il));
    config.layer_is_local[il] = kind.as_bool().value_or(kind.as_int().value_or(0) != 0);
  }
  const int64_t head_dim_local = keys.get_int("attention.key_length_swa").value_or(config.head_dim);
  const int64_t head_dim_v_local =
      keys.get_int("attention.value_length_swa").value_or(config.head_dim_v);
  const int64_t n_shared = keys.get_int("attention.shared_kv_layers").value_or(0);
  if (n_shared >= config.n_layer)
    fail(file.name(), ": shared_kv_layers ", n_shared, " leaves no layer with K and V");
  const int64_t first_shared = config.n_layer - n_shared;
  for (int64_t il = 0; il < config.n_layer; ++il) {
    LayerShape& layer = config.layers[static_cast<size_t>(il)];
    if (config.layer_is_local[il]) {
      layer.head_dim = head_dim_local;
      layer.head_dim_v = head_dim_v_local;
    }
    if (il >= first_shared) layer.kv_layer = shared_kv_source(file, config, il, first_shared);
  }
  config.rope_freq_factors = read_rope_freq_factors(file, config.n_rot / 2);
}

void validate_layers(const gguf::GgufFile& file, const ModelConfig& config) {
  for (int64_t il = 0; il < config.n_layer; ++il) {
    const LayerShape& layer = config.layer(il);
    if (config.arch != Arch::kGemma4 &&
        (layer.n_head_kv != config.n_head_kv || layer.n_ff != config.n_ff)) {
      fail(file.name(), ": head_count_kv or feed_forward_length varies per layer, which eventkv ",
           "supports only for gemma4");
    }
    if (layer.n_head_kv <= 0 || config.n_head % layer.n_head_kv != 0) {
      fail(file.name(), ": head_count ", config.n_head, " is not a multiple of head_count_kv ",
           layer.n_head_kv, " (layer ", il, ")");
    }
    if (layer.head_dim <= 0 || layer.head_dim_v <= 0 || layer.n_ff <= 0) {
      fail(file.name(), ": key_length, value_length and feed_forward_length must be positive");
    }
    if (layer.head_dim % 16 != 0 || layer.head_dim_v % 16 != 0) {
      fail(file.name(), ": head sizes ", layer.head_dim, " and ", layer.head_dim_v,
           " must be multiples of 16 (the attention kernels' vector width)");
    }
    const int64_t n_rot = config.is_local_layer(il) ? config.n_rot_local : config.n_rot;
    if (n_rot <= 0 || n_rot > layer.head_dim || n_rot % 2 != 0) {
      fail(file.name(), ": rope.dimension_count ", n_rot, " must be even and at most layer ", il,
           "'s head size ", layer.head_dim);
    }
    const LayerShape& source = config.layer(layer.kv_layer);
    if (source.head_dim != layer.head_dim || source.head_dim_v != layer.head_dim_v ||
        source.n_head_kv != layer.n_head_kv) {
      fail(file.name(), ": layer ", il, " shares K and V of layer ", layer.kv_layer,
           ", whose heads differ");
    }
  }
}

void validate(const gguf::GgufFile& file, ModelConfig& config) {
  const gguf::TensorInfo& embd = file.tensor("token_embd.weight");
  if (embd.ne[0] != config.n_embd) {
    fail(file.name(), ": token_embd.weight has ne[0]=", embd.ne[0], " but embedding_length is ",
         config.n_embd);
  }
  config.n_vocab = embd.ne[1];
  config.tied_output = file.find_tensor("output.weight") == nullptr;
  validate_layers(file, config);
  if ((config.arch == Arch::kLlama || config.arch == Arch::kMistral3) &&
      config.n_rot != config.head_dim) {
    fail(file.name(), ": ", arch_name(config.arch),
         " models must rotate the whole head (rope.dimension_count ", config.n_rot,
         " vs head size ", config.head_dim, ")");
  }
  if (!(config.rms_eps > 0.0f) || !std::isfinite(config.rope_freq_base) ||
      config.rope_freq_base <= 0.0f || !std::isfinite(config.rope_freq_scale) ||
      config.rope_freq_scale <= 0.0f) {
    fail(file.name(), ": rms epsilon, rope.freq_base and rope scaling must be positive and finite");
  }
  if (config.sliding_window < 0 || config.n_ctx_train <= 0) {
    fail(file.name(), ": context_length and sliding_window must be positive");
  }
}

}  // namespace

int64_t ModelConfig::kv_values_per_token() const {
  int64_t values = 0;
  for (int64_t il = 0; il < n_layer; ++il) {
    if (has_kv(il)) values += kv_dim(il) + v_dim(il);
  }
  return values;
}

ModelConfig config_from_gguf(const gguf::GgufFile& file) {
  ModelConfig config;
  config.arch = parse_arch(file);
  const ArchKeys keys(file, arch_name(config.arch));
  read_common(file, keys, config);
  switch (config.arch) {
    case Arch::kLlama:
      config.rope_type = RopeType::kNorm;
      break;
    case Arch::kQwen2:
      config.rope_type = RopeType::kNeox;
      config.qkv_bias = true;
      break;
    case Arch::kQwen3:
      config.rope_type = RopeType::kNeox;
      config.qk_norm = true;
      break;
    case Arch::kGemma3:
      config.rope_type = RopeType::kNeox;
      read_gemma3(keys, config);
      break;
    case Arch::kMistral3:
      read_mistral3(file, keys, config);
      break;
    case Arch::kGemma4:
      read_gemma4(file, keys, config);
      break;
  }
  validate(file, config);
  return config;
}

}  // namespace eventkv::model
