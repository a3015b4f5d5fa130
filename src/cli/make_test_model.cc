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
  int64_t layers = 2;
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
  cmd->add_option("--arch", options->arch, "llama, qwen2, qwen3, gemma3 or mistral3");
  cmd->add_option("--type", options->type, "ggml type of every weight matrix (f32, q4_k, ...)");
  cmd->add_option("--seed", options->seed, "random seed");
  cmd->add_option("--layers", options->layers, "number of layers")->check(CLI::Range(1, 64));
  cmd->add_option("--name", options->name,
                  "general.name (e.g. to label a llama-arch file as Mistral)");
  cmd->add_option("--tokenizer", options->tokenizer, "byte-level (default), bpe or spm");
  cmd->add_option("--pre", options->pre, "tokenizer.ggml.pre of a BPE tokenizer (default)");
  cmd->add_option("--yarn", options->yarn, "YaRN rope scaling by this factor (default: none)")
      ->check(CLI::Range(1.0f, 64.0f));
  cmd->add_option("--yarn-context", options->yarn_context,
                  "YaRN's original context length (default 128)")
      ->check(CLI::Range(1, 4096));
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
      model::TestModelSpec spec;
      const auto arch = model::arch_by_name(options->arch);
      if (!arch)
        fail("--arch: unknown architecture '", options->arch, "' (", model::kArchNames, ")");
      spec.arch = *arch;
      const auto type = gguf::parse_type_name(options->type);
      if (!type) fail("--type: unknown ggml type '", options->type, "'");
      spec.weight_type = *type;
      spec.seed = options->seed;
      spec.n_layer = options->layers;
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
