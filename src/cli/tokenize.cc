// eventkv tokenize -m MODEL [--chat] [--special] [--json] TEXT|-: token ids
// and pieces of a text, or of a chat (a JSON list of {role, content}) with
// each message's span; --json for programs.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "gguf/reader.h"
#include "tokenizer/chat_format.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace eventkv::cli {
namespace {

using nlohmann::json;
using tokenizer::TokenId;

struct TokenizeOptions {
  std::string model;
  std::string input;
  bool chat = false;
  bool special = false;
  bool generation_prompt = false;
  std::string format;
  bool as_json = false;
};

std::string read_input(const std::string& input) {
  if (input != "-") return input;
  return {std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
}

std::vector<tokenizer::ChatMessage> parse_messages(const std::string& text) {
  json messages;
  try {
    messages = json::parse(text);
  } catch (const json::exception& e) {
    fail("--chat: input is not JSON: ", e.what());
  }
  if (!messages.is_array()) fail("--chat: input must be a JSON list of {role, content} objects");
  std::vector<tokenizer::ChatMessage> out;
  for (const json& m : messages) {
    if (!m.is_object() || !m.contains("role") || !m.contains("content") || !m["role"].is_string() ||
        !m["content"].is_string()) {
      fail("--chat: every message needs string fields role and content: ", m.dump());
    }
    out.push_back({m["role"], m["content"]});
  }
  return out;
}

std::string quoted(const std::string& piece) {
  return json(piece).dump(-1, ' ', false, json::error_handler_t::replace);
}

void print_tokens(const tokenizer::Tokenizer& tok, const std::vector<TokenId>& ids) {
  for (size_t i = 0; i < ids.size(); ++i) {
    std::printf("%6zu %8d  %s\n", i, ids[i], quoted(tok.token_text(ids[i])).c_str());
  }
}

void print_span(const std::string& label, tokenizer::TokenSpan span) {
  std::printf("%-24s [%d, %d)  %d tokens\n", label.c_str(), span.begin, span.end, span.size());
}

// The decoded text of `ids` and each token's id, piece and byte span in it.
// A token's span is what decoding it after its predecessor adds (an SPM
// tokenizer drops the space it puts at the start and after a special token,
// which only the predecessor decides), so the spans tile the text.
json tokens_json(const tokenizer::Tokenizer& tok, const std::vector<TokenId>& ids) {
  json tokens = json::array();
  size_t offset = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const size_t before = i == 0 ? 0 : tok.decode({&ids[i - 1], 1}).size();
    const size_t with = tok.decode({&ids[i == 0 ? 0 : i - 1], i == 0 ? 1u : 2u}).size();
    tokens.push_back({{"id", ids[i]},
                      {"piece", tok.token_text(ids[i])},
                      {"begin", offset},
                      {"end", offset + with - before}});
    offset += with - before;
  }
  return {{"text", tok.decode(ids)}, {"tokens", tokens}};
}

json span_json(tokenizer::TokenSpan span) {
  return {{"begin", span.begin}, {"end", span.end}};
}

// Invalid UTF-8 in a piece (half a character) is written as U+FFFD.
void print_json(const json& out) {
  std::printf("%s\n", out.dump(2, ' ', false, json::error_handler_t::replace).c_str());
}

void run(const TokenizeOptions& options) {
  const gguf::GgufFile file = gguf::GgufFile::open(options.model);
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_gguf(file);
  const std::string input = read_input(options.input);
  if (!options.chat) {
    const std::vector<TokenId> ids = tok.encode(input, options.special);
    if (options.as_json) return print_json(tokens_json(tok, ids));
    std::printf("%zu tokens\n", ids.size());
    print_tokens(tok, ids);
    return;
  }
  const std::vector<tokenizer::ChatMessage> messages = parse_messages(input);
  const tokenizer::ChatFormat format = options.format.empty()
                                           ? tokenizer::ChatFormat::detect(file)
                                           : tokenizer::ChatFormat::by_name(options.format);
  const tokenizer::RenderedChat chat = format.render(tok, messages, options.generation_prompt);
  if (options.as_json) {
    json out = tokens_json(tok, chat.ids);
    out["format"] = format.name();
    out["preamble"] = span_json(chat.preamble);
    out["messages"] = json::array();
    for (size_t i = 0; i < messages.size(); ++i) {
      json message = span_json(chat.messages[i]);
      message["role"] = messages[i].role;
      out["messages"].push_back(message);
    }
    out["generation_prompt"] = span_json(chat.generation_prompt);
    return print_json(out);
  }
  std::printf("format %s, %zu tokens\n", std::string(format.name()).c_str(), chat.ids.size());
  print_span("preamble", chat.preamble);
  for (size_t i = 0; i < messages.size(); ++i) {
    print_span("message " + std::to_string(i) + " (" + messages[i].role + ")", chat.messages[i]);
  }
  print_span("generation prompt", chat.generation_prompt);
  print_tokens(tok, chat.ids);
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("tokenize", "Print the token ids and pieces of a text or a chat");
  auto options = std::make_shared<TokenizeOptions>();
  cmd->add_option("-m,--model", options->model, "GGUF file")->required();
  cmd->add_option("input", options->input, "text, or - to read standard input")->required();
  cmd->add_flag("--chat", options->chat,
                "input is a JSON list of {role, content} messages; print each message's span");
  cmd->add_flag("--special", options->special, "parse special-token text in plain input");
  cmd->add_flag("--generation-prompt", options->generation_prompt,
                "with --chat, end with the assistant's turn opener");
  cmd->add_option("--format", options->format,
                  "with --chat, the chat format (default: detected from the file)");
  cmd->add_flag("--json", options->as_json,
                "print JSON: the decoded text and each token's id, piece and byte span [begin, "
                "end) in it; with --chat also the format and each message's token span");
  cmd->callback([options] { run(*options); });
}

}  // namespace eventkv::cli
