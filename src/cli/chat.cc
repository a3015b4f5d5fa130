// eventkv chat -m MODEL: a multi-turn conversation in the model's chat
// format, one user message per input line; the context keeps every turn.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_options.h"
#include "kv/context.h"
#include "sampling/generate.h"
#include "tokenizer/chat_format.h"

namespace eventkv::cli {
namespace {

struct ChatOptions {
  ModelOptions model;
  std::string system;
  std::string format;
  sampling::GenerateParams params;
  compute::ActivationPrecision precision = compute::ActivationPrecision::kInt8;
};

void run(const ChatOptions& options) {
  const auto engine = load_engine(with_precision_panels(options.model, options.precision));
  const tokenizer::Tokenizer& tok = engine->model().tokenizer();
  const tokenizer::ChatFormat format = options.format.empty()
                                           ? tokenizer::ChatFormat::detect(engine->model().file())
                                           : tokenizer::ChatFormat::by_name(options.format);
  kv::Context context(engine, {.n_ctx = context_size(options.model, engine->model()),
                               .decode_precision = options.precision});
  std::vector<tokenizer::ChatMessage> messages;
  if (!options.system.empty()) messages.push_back({"system", options.system});
  // Tokens already in the context; each turn appends what the canonical
  // rendering of the conversation adds after them.
  std::vector<int32_t> in_context;
  const bool interactive = isatty(0) != 0;
  std::string line;
  while (true) {
    if (interactive) std::cout << "> " << std::flush;
    if (!std::getline(std::cin, line) || line == "/exit") break;
    if (line.empty()) continue;
    messages.push_back({"user", line});
    const tokenizer::RenderedChat chat =
        format.render(tok, messages, /*add_generation_prompt=*/true);
    if (chat.ids.size() < in_context.size() ||
        !std::equal(in_context.begin(), in_context.end(), chat.ids.begin())) {
      context.clear();
      in_context.clear();
    }
    const std::vector<int32_t> fresh(
        chat.ids.begin() + static_cast<std::ptrdiff_t>(in_context.size()), chat.ids.end());
    const sampling::GenerateResult reply =
        sampling::generate(context, tok, fresh, options.params,
                           [](std::string_view piece) { std::cout << piece << std::flush; });
    std::cout << "\n";
    if (reply.reason == sampling::StopReason::kMaxTokens) {
      std::fprintf(stderr, "[reply cut at %d tokens; -n sets the limit]\n",
                   options.params.max_tokens);
    }
    in_context = chat.ids;
    in_context.insert(in_context.end(), reply.tokens.begin(), reply.tokens.end());
    if (reply.reason == sampling::StopReason::kContextFull) {
      std::fprintf(stderr, "[context full: %lld tokens]\n",
                   static_cast<long long>(context.n_ctx()));
      break;
    }
    messages.push_back({"assistant", reply.text});
  }
}

}  // namespace

void add_chat_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "chat", "Talk with a model: one user message per line on stdin, /exit to stop");
  auto options = std::make_shared<ChatOptions>();
  add_model_options(cmd, options->model);
  cmd->add_option("--system", options->system, "system message");
  cmd->add_option("--format", options->format, "chat format (default: from the model's template)");
  cmd->add_option("-n,--n-predict", options->params.max_tokens, "tokens per reply at most")
      ->check(at_least(0));
  add_sampling_options(cmd, options->params.sampling);
  add_precision_option(cmd, options->precision);
  cmd->callback([options] { run(*options); });
}

}  // namespace eventkv::cli
