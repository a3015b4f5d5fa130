// eventkv make-test-model: writes a tiny random-weight model (or the type
// zoo) for tests and reference scripts.
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "model/test_model.h"
#include "util/error.h"

namespace eventkv::cli {
namespace {

struct MakeTestModelOptions {
  std::string arch = "llama";
  std::string type = "f32";
  uint64_t seed = 1;
  model::TestModelSpec dims;  // the shape options' defaults and values
  std::string vocab_from;
  bool untied = false;
  std::string name;
  std::string tokenizer = "byte-level";
  std::string pre = "default";
  float yarn = 0.0f;
  int64_t yarn_context = 128;
  float temperature = 0.0f;
  bool type_zoo = false;
  std::string out;
};

}  // namespace

void add_make_test_model_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("make-test-model", "Write a tiny random-weight GGUF model for tests");
  auto options = std::make_shared<MakeTestModelOptions>();
  cmd->add_option("--arch", options->arch, "llama, qwen2, qwen3, gemma3, gemma4 or mistral3");
  cmd->add_option(
      "--type", options->type,
      "ggml type of every weight matrix (f32, q4_k, ...), or q4_k_m for llama.cpp's Q4_K_M mix");
  cmd->add_option("--seed", options->seed, "random seed");
  model::TestModelSpec& dims = options->dims;
  cmd->add_option("--layers", dims.n_layer, "number of layers")->check(CLI::Range(1, 128));
  cmd->add_option("--embd", dims.n_embd, "embedding length, a multiple of 256 (default 256)")
      ->check(CLI::Range(256, 65536));
  cmd->add_option("--heads", dims.n_head, "query heads (default 4)")->check(CLI::Range(1, 256));
  cmd->add_option("--kv-heads", dims.n_head_kv, "key/value heads (default 2)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--head-dim", dims.head_dim, "key/value length per head (default 64)")
      ->check(CLI::Range(2, 1024));
  cmd->add_option("--ff", dims.n_ff, "feed-forward length, a multiple of 256 (default 512)")
      ->check(CLI::Range(256, 262144));
  cmd->add_option("--context", dims.n_ctx, "trained context length (default 512)")
      ->check(CLI::Range(16, 1 << 20));
  cmd->add_option("--sliding-window", dims.sliding_window,
                  "gemma3 and gemma4: sliding-window length (default 8)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--swa-pattern", dims.swa_pattern,
                  "gemma3 and dense gemma4: every Nth layer attends globally (default 6)")
      ->check(CLI::Range(1, 128));
  cmd->add_flag("--dense", dims.gemma4_dense,
                "gemma4: the dense layout of the 12B and 31B (no per-layer embeddings or "
                "kv-shared layers) instead of the edge models'");
  cmd->add_option("--vocab-from", options->vocab_from,
                  "copy the vocabulary and chat template of this GGUF file (a real model's)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--untied-output", options->untied,
                "give the model an output matrix of its own (default: tied to token_embd)");
  cmd->add_option("--name", options->name,
                  "general.name (e.g. to label a llama-arch file as Mistral)");
  cmd->add_option("--tokenizer", options->tokenizer, "byte-level (default), bpe, spm or gemma4");
  cmd->add_option("--pre", options->pre, "tokenizer.ggml.pre of a BPE tokenizer (default)");
  cmd->add_option("--yarn", options->yarn, "YaRN rope scaling by this factor (default: none)")
      ->check(CLI::Range(1.0f, 64.0f));
  cmd->add_option("--yarn-context", options->yarn_context,
                  "YaRN's original context length (default 128)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--attn-temperature", options->temperature,
                  "mistral3's attention temperature scale over the original context (default: "
                  "none)")
      ->check(CLI::Range(0.0f, 10.0f));
  cmd->add_flag("--type-zoo", options->type_zoo,
                "write one small tensor of every supported type instead");
  cmd->add_option("-o,--output", options->out, "output file")->required();
  cmd->callback([options] {
    if (options->type_zoo) {
      model::build_type_zoo(options->seed).write(options->out);
    } else {
      model::TestModelSpec spec = options->dims;
      const auto arch = model::arch_by_name(options->arch);
      if (!arch)
        fail("--arch: unknown architecture '", options->arch, "' (", model::kArchNames, ")");
      spec.arch = *arch;
      if (spec.gemma4_dense && spec.arch != model::Arch::kGemma4)
        fail("--dense: only gemma4 has a dense layout (--arch ", options->arch, ")");
      spec.q4_k_m = options->type == "q4_k_m";
      const auto type = gguf::parse_type_name(spec.q4_k_m ? "q4_k" : options->type);
      if (!type) fail("--type: unknown ggml type '", options->type, "'");
      if (spec.n_embd % 256 != 0 || spec.n_ff % 256 != 0 ||
          spec.n_head * spec.head_dim % 256 != 0) {
        fail(
            "--embd, --ff and --heads times --head-dim must be multiples of 256, so every "
            "type's blocks fit");
      }
      if (spec.n_head % spec.n_head_kv != 0) {
        fail("--heads (", spec.n_head, ") must be a multiple of --kv-heads (", spec.n_head_kv, ")");
      }
      spec.weight_type = *type;
      spec.seed = options->seed;
      spec.vocab_from = options->vocab_from;
      spec.untied_output = options->untied;
      spec.name = options->name;
      spec.tokenizer = model::parse_test_tokenizer(options->tokenizer);
      spec.pre = options->pre;
      spec.yarn_factor = options->yarn;
      spec.yarn_original_context = options->yarn_context;
      spec.attn_temperature_scale = options->temperature;
      model::build_test_model(spec).write(options->out);
    }
    std::cout << "wrote " << options->out << "\n";
  });
}

}  // namespace eventkv::cli
