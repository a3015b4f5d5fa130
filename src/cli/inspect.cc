// eventkv inspect FILE [--json]: what a GGUF file holds.
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "gguf/reader.h"
#include "model/config.h"
#include "util/error.h"

namespace eventkv::cli {
namespace {

using nlohmann::json;

struct TokenizerSummary {
  std::string model;
  std::string pre;
  uint64_t n_tokens = 0;
  uint64_t n_merges = 0;
  std::optional<uint64_t> bos, eos;
  bool has_chat_template = false;
};

TokenizerSummary summarize_tokenizer(const gguf::GgufFile& file) {
  TokenizerSummary summary;
  summary.model = file.get_string("tokenizer.ggml.model").value_or("");
  summary.pre = file.get_string("tokenizer.ggml.pre").value_or("");
  if (const auto* tokens = file.get_array("tokenizer.ggml.tokens"))
    summary.n_tokens = tokens->count;
  if (const auto* merges = file.get_array("tokenizer.ggml.merges"))
    summary.n_merges = merges->count;
  summary.bos = file.get_uint("tokenizer.ggml.bos_token_id");
  summary.eos = file.get_uint("tokenizer.ggml.eos_token_id");
  summary.has_chat_template = file.find("tokenizer.chat_template") != nullptr;
  return summary;
}

json config_json(const model::ModelConfig& c) {
  int64_t n_local = 0;
  for (int64_t il = 0; il < c.n_layer; ++il) n_local += c.is_local_layer(il) ? 1 : 0;
  json fields{
      {"architecture", model::arch_name(c.arch)},
      {"name", c.name},
      {"n_vocab", c.n_vocab},
      {"n_ctx_train", c.n_ctx_train},
      {"n_embd", c.n_embd},
      {"n_layer", c.n_layer},
      {"n_head", c.n_head},
      {"n_head_kv", c.n_head_kv},
      {"head_dim", c.head_dim},
      {"head_dim_v", c.head_dim_v},
      {"n_ff", c.n_ff},
      {"rms_eps", c.rms_eps},
      {"rope_type", model::rope_type_name(c.rope_type)},
      {"n_rot", c.n_rot},
      {"rope_freq_base", c.rope_freq_base},
      {"rope_freq_scale", c.rope_freq_scale},
      {"qkv_bias", c.qkv_bias},
      {"qk_norm", c.qk_norm},
      {"post_norms", c.post_norms},
      {"scale_embeddings", c.scale_embeddings},
      {"ffn_activation", c.ffn_activation == model::FfnActivation::kSilu ? "silu" : "gelu_tanh"},
      {"attention_scale", c.attention_scale},
      {"final_logit_softcap", c.final_logit_softcap},
      {"sliding_window", c.sliding_window},
      {"n_local_layers", n_local},
      {"rope_freq_base_local", c.rope_freq_base_local},
      {"tied_output", c.tied_output}};
  if (c.rope_yarn) {
    fields["rope_yarn_orig_ctx"] = c.rope_n_ctx_orig;
    fields["rope_yarn_beta_fast"] = c.rope_yarn_beta_fast;
    fields["rope_yarn_beta_slow"] = c.rope_yarn_beta_slow;
    fields["rope_mscale"] = c.rope_mscale;
  }
  if (c.attn_temperature_scale != 0.0f) {
    fields["attn_temp_scale"] = c.attn_temperature_scale;
    fields["attn_temp_length"] = c.attn_temperature_length;
  }
  if (c.arch == model::Arch::kGemma4) {
    // Per layer: sliding or full, kv heads x head size, the FFN width, and
    // for a kv-shared layer the layer whose K and V it reads.
    json layers = json::array();
    for (int64_t il = 0; il < c.n_layer; ++il) {
      const model::LayerShape& l = c.layer(il);
      std::string text = std::string(c.is_local_layer(il) ? "sliding " : "full ") +
                         std::to_string(l.n_head_kv) + "x" + std::to_string(l.head_dim) + " ff " +
                         std::to_string(l.n_ff);
      if (!c.has_kv(il)) text += " kv of " + std::to_string(l.kv_layer);
      layers.push_back(text);
    }
    fields["layers"] = layers;
    fields["n_rot_local"] = c.n_rot_local;
    fields["proportional_rope"] = !c.rope_freq_factors.empty();
    fields["v_norm"] = c.v_norm;
    fields["n_embd_per_layer"] = c.n_embd_per_layer;
  }
  return fields;
}

json shape_json(const gguf::TensorInfo& t) {
  json shape = json::array();
  for (int d = 0; d < t.n_dims; ++d) shape.push_back(t.ne[d]);
  return shape;
}

std::string shape_text(const gguf::TensorInfo& t) {
  std::string text = "[";
  for (int d = 0; d < t.n_dims; ++d) text += (d > 0 ? ", " : "") + std::to_string(t.ne[d]);
  return text + "]";
}

std::string human_bytes(uint64_t bytes) {
  char buffer[32];
  if (bytes >= (1ull << 30)) {
    std::snprintf(buffer, sizeof(buffer), "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
  } else if (bytes >= (1ull << 20)) {
    std::snprintf(buffer, sizeof(buffer), "%.2f MiB", static_cast<double>(bytes) / (1ull << 20));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  }
  return buffer;
}

json inspect_json(const gguf::GgufFile& file, const std::optional<model::ModelConfig>& config,
                  const std::string& config_error) {
  const TokenizerSummary tok = summarize_tokenizer(file);
  json out{{"file", file.name()},
           {"file_size", file.file_size()},
           {"gguf_version", file.version()},
           {"alignment", file.alignment()},
           {"data_offset", file.data_offset()},
           {"architecture", file.get_string("general.architecture").value_or("")},
           {"tokenizer",
            {{"model", tok.model},
             {"pre", tok.pre},
             {"n_tokens", tok.n_tokens},
             {"n_merges", tok.n_merges},
             {"bos_token_id", tok.bos ? json(*tok.bos) : json(nullptr)},
             {"eos_token_id", tok.eos ? json(*tok.eos) : json(nullptr)},
             {"chat_template", tok.has_chat_template}}}};
  out["hyperparameters"] = config ? config_json(*config) : json(nullptr);
  if (!config) out["hyperparameters_error"] = config_error;
  json metadata = json::object();
  for (const auto& entry : file.metadata())
    metadata[entry.key] = gguf::format_value(entry.value, 4);
  out["metadata"] = metadata;
  json tensors = json::array();
  for (const auto& t : file.tensors()) {
    tensors.push_back({{"name", t.name},
                       {"type", gguf::type_name(t.type)},
                       {"shape", shape_json(t)},
                       {"bytes", t.n_bytes},
                       {"offset", t.offset}});
  }
  out["tensors"] = tensors;
  return out;
}

void print_text(const gguf::GgufFile& file, const std::optional<model::ModelConfig>& config,
                const std::string& config_error) {
  const TokenizerSummary tok = summarize_tokenizer(file);
  std::cout << "file          " << file.name() << " (" << human_bytes(file.file_size()) << ")\n"
            << "gguf          v" << file.version() << ", " << file.metadata().size()
            << " metadata keys, " << file.tensors().size() << " tensors, alignment "
            << file.alignment() << ", data at byte " << file.data_offset() << "\n"
            << "architecture  " << file.get_string("general.architecture").value_or("(none)")
            << "\n"
            << "tokenizer     " << (tok.model.empty() ? "(none)" : tok.model) << " (pre "
            << (tok.pre.empty() ? "-" : tok.pre) << "), " << tok.n_tokens << " tokens, "
            << tok.n_merges << " merges, bos " << (tok.bos ? std::to_string(*tok.bos) : "-")
            << ", eos " << (tok.eos ? std::to_string(*tok.eos) : "-") << ", chat template "
            << (tok.has_chat_template ? "yes" : "no") << "\n";
  if (config) {
    std::cout << "hyperparameters\n";
    const json fields = config_json(*config);
    for (const auto& [key, value] : fields.items()) {
      std::cout << "  " << key << std::string(key.size() < 22 ? 22 - key.size() : 1, ' ')
                << value.dump() << "\n";
    }
  } else {
    std::cout << "hyperparameters  unavailable: " << config_error << "\n";
  }
  std::map<std::string, std::pair<int, uint64_t>> by_type;
  std::cout << "tensors\n";
  for (const auto& t : file.tensors()) {
    const std::string type(gguf::type_name(t.type));
    by_type[type].first += 1;
    by_type[type].second += t.n_bytes;
    std::printf("  %-34s %-7s %-18s %12llu\n", t.name.c_str(), type.c_str(), shape_text(t).c_str(),
                static_cast<unsigned long long>(t.n_bytes));
  }
  std::cout << "tensor types\n";
  for (const auto& [type, stats] : by_type) {
    std::printf("  %-7s %4d tensors %12s\n", type.c_str(), stats.first,
                human_bytes(stats.second).c_str());
  }
  std::cout.flush();
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "inspect", "Print a GGUF file's architecture, hyperparameters, tokenizer and tensors");
  auto path = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  cmd->add_option("file", *path, "GGUF file")->required();
  cmd->add_flag("--json", *as_json, "Print one JSON object instead of text");
  cmd->callback([path, as_json] {
    const gguf::GgufFile file = gguf::GgufFile::open(*path);
    std::optional<model::ModelConfig> config;
    std::string config_error;
    try {
      config = model::config_from_gguf(file);
    } catch (const Error& e) {
      config_error = e.what();
    }
    if (*as_json) {
      std::cout << inspect_json(file, config, config_error).dump(2) << std::endl;
    } else {
      print_text(file, config, config_error);
    }
  });
}

}  // namespace eventkv::cli
