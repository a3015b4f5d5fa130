// eventkv generate -m MODEL -p PROMPT: a plain completion, streamed.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_options.h"
#include "kv/context.h"
#include "sampling/generate.h"

namespace eventkv::cli {
namespace {

struct GenerateOptions {
  ModelOptions model;
  std::string prompt;
  sampling::GenerateParams params;
  bool special = false;
  compute::ActivationPrecision precision = compute::ActivationPrecision::kInt8;
};

void run(const GenerateOptions& options) {
  const auto engine = load_engine(with_precision_panels(options.model, options.precision));
  const tokenizer::Tokenizer& tok = engine->model().tokenizer();
  std::vector<int32_t> prompt;
  if (tok.add_bos()) prompt.push_back(tok.bos());
  const std::vector<int32_t> text = tok.encode(options.prompt, options.special);
  prompt.insert(prompt.end(), text.begin(), text.end());
  kv::Context context(engine, {.n_ctx = context_size(options.model, engine->model()),
                               .decode_precision = options.precision});
  std::cout << options.prompt << std::flush;
  const sampling::GenerateResult result =
      sampling::generate(context, tok, prompt, options.params,
                         [](std::string_view piece) { std::cout << piece << std::flush; });
  std::cout << std::endl;
  std::fprintf(stderr, "[%zu prompt tokens, %zu generated, stop: %s]\n", prompt.size(),
               result.tokens.size(),
               std::string(sampling::stop_reason_name(result.reason)).c_str());
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "generate", "Continue a prompt (plain text, no chat format), streaming the output");
  auto options = std::make_shared<GenerateOptions>();
  add_model_options(cmd, options->model);
  cmd->add_option("-p,--prompt", options->prompt, "prompt text")->required();
  cmd->add_option("-n,--n-predict", options->params.max_tokens, "tokens to generate at most")
      ->check(at_least(0));
  cmd->add_option("--stop", options->params.stop, "stop string (repeatable)");
  cmd->add_flag("--special", options->special, "parse special-token text in the prompt");
  add_sampling_options(cmd, options->params.sampling);
  add_precision_option(cmd, options->precision);
  cmd->callback([options] { run(*options); });
}

}  // namespace eventkv::cli
