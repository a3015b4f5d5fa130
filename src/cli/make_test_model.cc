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
  bool type_zoo = false;
  std::string out;
};

model::Arch parse_arch_option(const std::string& name) {
  for (const model::Arch arch :
       {model::Arch::kLlama, model::Arch::kQwen2, model::Arch::kQwen3, model::Arch::kGemma3}) {
    if (model::arch_name(arch) == name) return arch;
  }
  fail("--arch: unknown architecture '", name, "' (llama, qwen2, qwen3, gemma3)");
}

}  // namespace

void add_make_test_model_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("make-test-model", "Write a tiny random-weight GGUF model for tests");
  auto options = std::make_shared<MakeTestModelOptions>();
  cmd->add_option("--arch", options->arch, "llama, qwen2, qwen3 or gemma3");
  cmd->add_option("--type", options->type, "ggml type of every weight matrix (f32, q4_k, ...)");
  cmd->add_option("--seed", options->seed, "random seed");
  cmd->add_option("--layers", options->layers, "number of layers")->check(CLI::Range(1, 64));
  cmd->add_option("--name", options->name,
                  "general.name (e.g. to label a llama-arch file as Mistral)");
  cmd->add_option("--tokenizer", options->tokenizer, "byte-level (default), bpe or spm");
  cmd->add_option("--pre", options->pre, "tokenizer.ggml.pre of a BPE tokenizer (default)");
  cmd->add_option("--yarn", options->yarn,
                  "YaRN rope scaling by this factor over 128 original positions (default: none)")
      ->check(CLI::Range(1.0f, 64.0f));
  cmd->add_flag("--type-zoo", options->type_zoo,
                "write one small tensor of every supported type instead");
  cmd->add_option("-o,--output", options->out, "output file")->required();
  cmd->callback([options] {
    if (options->type_zoo) {
      model::build_type_zoo(options->seed).write(options->out);
    } else {
      model::TestModelSpec spec;
      spec.arch = parse_arch_option(options->arch);
      const auto type = gguf::parse_type_name(options->type);
      if (!type) fail("--type: unknown ggml type '", options->type, "'");
      spec.weight_type = *type;
      spec.seed = options->seed;
      spec.n_layer = options->layers;
      spec.name = options->name;
      spec.tokenizer = model::parse_test_tokenizer(options->tokenizer);
      spec.pre = options->pre;
      spec.yarn_factor = options->yarn;
      model::build_test_model(spec).write(options->out);
    }
    std::cout << "wrote " << options->out << "\n";
  });
}

}  // namespace eventkv::cli
