#include "tokenizer/chat_format.h"

#include <array>

#include "gguf/reader.h"
#include "tokenizer/unicode.h"
#include "util/error.h"

namespace eventkv::tokenizer {
namespace {

constexpr std::string_view kSmolLmSystem =
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face";
constexpr std::string_view kQwenSystem =
    "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";

constexpr std::array<std::string_view, 8> kNames = {
    "chatml", "smollm2", "qwen2.5", "gemma", "gemma4", "llama3", "mistral", "mistral-tekken",
};

void check_role(const std::string& role) {
  if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
    fail("unknown chat role '", role, "' (system, user, assistant, tool)");
  }
}

// Removes white space (Unicode White_Space) at both ends.
std::string trim(std::string_view text) {
  DecodedText decoded;
  const std::string valid = replace_invalid_utf8(text);
  decode_utf8(valid, decoded);
  size_t first = 0;
  size_t last = decoded.codepoints.size();
  const auto space = [&](size_t i) {
    return (codepoint_classes(decoded.codepoints[i]) & kWhitespace) != 0;
  };
  while (first < last && space(first)) ++first;
  while (last > first && space(last - 1)) --last;
  return valid.substr(decoded.offsets[first], decoded.offsets[last] - decoded.offsets[first]);
}

// Whether the file's vocabulary holds a token with this text.
bool vocab_has(const gguf::GgufFile& file, std::string_view text) {
  const gguf::MetaArray* tokens = file.get_array("tokenizer.ggml.tokens");
  if (tokens == nullptr) return false;
  for (const std::string& token : tokens->strings) {
    if (token == text) return true;
  }
  return false;
}

}  // namespace

ChatFormat ChatFormat::by_name(std::string_view name) {
  if (name == "chatml") return ChatFormat(name, Family::kChatml);
  if (name == "smollm2" || name == "qwen2.5") {
    ChatFormat format(name, Family::kChatml);
    format.default_system_ = name == "smollm2" ? kSmolLmSystem : kQwenSystem;
    format.tool_as_response_ = name == "qwen2.5";
    return format;
  }
  if (name == "gemma") return ChatFormat(name, Family::kGemma);
  if (name == "gemma4") return ChatFormat(name, Family::kGemma4);
  if (name == "llama3") return ChatFormat(name, Family::kLlama3);
  if (name == "mistral" || name == "mistral-tekken") {
    ChatFormat format(name, Family::kMistral);
    format.tag_space_ = name == "mistral" ? " " : "";
    return format;
  }
  std::string known;
  for (const std::string_view n : kNames) known += (known.empty() ? "" : ", ") + std::string(n);
  fail("unknown chat format '", name, "' (", known, ")");
}

std::vector<std::string_view> ChatFormat::names() {
  return {kNames.begin(), kNames.end()};
}

ChatFormat ChatFormat::detect(const gguf::GgufFile& file) {
  const std::optional<std::string> tmpl = file.get_string("tokenizer.chat_template");
  const auto has = [&](std::string_view text) {
    return tmpl ? tmpl->find(text) != std::string::npos : vocab_has(file, text);
  };
  const bool tekken = file.get_string("tokenizer.ggml.pre").value_or("") == "tekken";
  if (has("<|im_start|>")) {
    if (tmpl && tmpl->find("named SmolLM") != std::string::npos) return by_name("smollm2");
    if (tmpl && tmpl->find(kQwenSystem) != std::string::npos) return by_name("qwen2.5");
    return by_name("chatml");
  }
  if (has("<|turn>")) return by_name("gemma4");
  if (has("<start_of_turn>")) return by_name("gemma");
  if (has("<|start_header_id|>")) return by_name("llama3");
  if (has("[INST]")) return by_name(tekken ? "mistral-tekken" : "mistral");
  fail(file.name(),
       tmpl ? ": unrecognized chat template" : ": no chat template and no known turn tokens",
       "; choose a format by name");
}

std::vector<ChatFormat::Part> ChatFormat::preamble_parts(
    std::span<const ChatMessage> messages) const {
  if (default_system_.empty() || (!messages.empty() && messages[0].role == "system")) return {};
  return message_parts({"system", default_system_});
}

std::vector<ChatFormat::Part> ChatFormat::message_parts(const ChatMessage& message) const {
  check_role(message.role);
  const std::string& role = message.role;
  switch (family_) {
    case Family::kChatml:
      if (tool_as_response_ && role == "tool") {
        return {{"<|im_start|>", true},
                {"user\n<tool_response>\n" + message.content + "\n</tool_response>"},
                {"<|im_end|>", true},
                {"\n"}};
      }
      return {
          {"<|im_start|>", true}, {role + "\n" + message.content}, {"<|im_end|>", true}, {"\n"}};
    case Family::kGemma:
      return {{"<start_of_turn>", true},
              {(role == "assistant" ? "model\n" : "user\n") + trim(message.content)},
              {"<end_of_turn>", true},
              {"\n"}};
    case Family::kGemma4: {
      if (role != "assistant") {
        return {{"<|turn>", true},
                {(role == "system" ? "system\n" : "user\n") + trim(message.content)},
                {"<turn|>", true},
                {"\n"}};
      }
      std::vector<Part> parts = generation_parts();
      parts.insert(parts.end(), {{trim(message.content)}, {"<turn|>", true}, {"\n"}});
      return parts;
    }
    case Family::kLlama3:
      return {{"<|start_header_id|>", true},
              {role == "tool" ? "ipython" : role},
              {"<|end_header_id|>", true},
              {"\n\n" + trim(message.content)},
              {"<|eot_id|>", true}};
    case Family::kMistral: {
      if (role == "assistant") return {{std::string(tag_space_) + message.content}, {"</s>", true}};
      const std::string tag = role == "system" ? "SYSTEM_PROMPT"
                              : role == "tool" ? "TOOL_RESULTS"
                                               : "INST";
      return {{"[" + tag + "]", true},
              {std::string(tag_space_) + message.content},
              {"[/" + tag + "]", true}};
    }
  }
  return {};
}

std::vector<ChatFormat::Part> ChatFormat::generation_parts() const {
  switch (family_) {
    case Family::kChatml:
      return {{"<|im_start|>", true}, {"assistant\n"}};
    case Family::kGemma:
      return {{"<start_of_turn>", true}, {"model\n"}};
    case Family::kGemma4:
      return {{"<|turn>", true},
              {"model\n"},
              {"<|channel>", true},
              {"thought\n"},
              {"<channel|>", true}};
    case Family::kLlama3:
      return {{"<|start_header_id|>", true}, {"assistant"}, {"<|end_header_id|>", true}, {"\n\n"}};
    case Family::kMistral:
      return {};
  }
  return {};
}

void ChatFormat::append_parts(const Tokenizer& tok, const std::vector<Part>& parts,
                              std::vector<TokenId>& out) const {
  std::string text;
  const auto flush_text = [&] {
    const std::vector<TokenId> ids = tok.encode(text);
    out.insert(out.end(), ids.begin(), ids.end());
    text.clear();
  };
  for (const Part& part : parts) {
    if (!part.special) {
      text += part.text;
      continue;
    }
    if (!text.empty()) flush_text();
    const std::optional<TokenId> id = tok.find_token(part.text);
    if (!id || !tok.is_special(*id)) {
      fail("chat format '", name_, "' needs the special token '", part.text,
           "', which the vocabulary lacks");
    }
    out.push_back(*id);
  }
  if (!text.empty()) flush_text();
}

std::vector<TokenId> ChatFormat::render_message(const Tokenizer& tok,
                                                const ChatMessage& message) const {
  std::vector<TokenId> ids;
  append_parts(tok, message_parts(message), ids);
  return ids;
}

std::vector<TokenId> ChatFormat::generation_prompt(const Tokenizer& tok) const {
  std::vector<TokenId> ids;
  append_parts(tok, generation_parts(), ids);
  return ids;
}

RenderedChat ChatFormat::render(const Tokenizer& tok, std::span<const ChatMessage> messages,
                                bool add_generation_prompt) const {
  RenderedChat chat;
  const auto position = [&] { return static_cast<int32_t>(chat.ids.size()); };
  if (tok.add_bos()) chat.ids.push_back(tok.bos());
  append_parts(tok, preamble_parts(messages), chat.ids);
  chat.preamble = {0, position()};
  for (const ChatMessage& message : messages) {
    const int32_t begin = position();
    append_parts(tok, message_parts(message), chat.ids);
    chat.messages.push_back({begin, position()});
  }
  const int32_t begin = position();
  if (add_generation_prompt) append_parts(tok, generation_parts(), chat.ids);
  chat.generation_prompt = {begin, position()};
  return chat;
}

}  // namespace eventkv::tokenizer
