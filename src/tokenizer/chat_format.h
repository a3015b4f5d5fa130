// Chat formats: a list of messages rendered into token ids, with the exact
// span of every message. An event of eventkv is one message, so a span holds
// the message's role header and its end-of-turn marker: evicting an event
// frees exactly its span, and what is left is still well-formed turns.
//
// Rendering is event by event: ids = preamble + each message + generation
// prompt, each part tokenized on its own. Every message starts with a special
// token and ends with a special token or text that a special token follows,
// so this equals tokenizing the whole rendered string (specials parsed);
// tests check it on the real models. Message content is never parsed for
// special tokens: a user cannot inject "<|im_end|>".
//
// Formats ("name": what it renders):
//   "chatml"      <|im_start|>{role}\n{content}<|im_end|>\n ; prompt <|im_start|>assistant\n
//   "smollm2"     chatml, with SmolLM2's default system prompt in the preamble
//                 when the first message is not a system message (as its template)
//   "qwen2.5"     chatml, with Qwen's default system prompt likewise; a tool
//                 message is a user turn <tool_response>\n{content}\n</tool_response>.
//                 DIFFERENCE: Qwen's template puts consecutive tool messages in
//                 one user turn; here each is its own turn, so each is an event.
//   "gemma"       <bos><start_of_turn>{user|model}\n{content trimmed}<end_of_turn>\n ;
//                 prompt <start_of_turn>model\n. A tool message is a user turn.
//                 DIFFERENCE: Gemma's template folds the system text into the
//                 first user turn ("{system}\n\n{user}"); here a system message
//                 is its own user turn, so that it can be evicted alone.
//   "gemma4"      <bos><|turn>{system|user|model}\n{content trimmed}<turn|>\n, where a
//                 model turn opens with an empty thought channel:
//                 <|turn>model\n<|channel>thought\n<channel|>{content trimmed}<turn|>\n ;
//                 prompt <|turn>model\n<|channel>thought\n<channel|> (thinking off).
//                 A tool message is a user turn.
//                 DIFFERENCE: Gemma 4's template drops the thought channel from
//                 earlier model turns; here a model turn keeps the empty channel
//                 its generation prompt opened, so a generated reply's rows are
//                 exactly its event's rendering. Its template also renders tool
//                 results inside the model turn that called the tool, which needs
//                 the call; here each is its own turn, so each is an event.
//   "llama3"      <|begin_of_text|><|start_header_id|>{role}<|end_header_id|>\n\n
//                 {content trimmed}<|eot_id|> ; a tool message has role ipython;
//                 prompt <|start_header_id|>assistant<|end_header_id|>\n\n
//   "mistral"     <s>[SYSTEM_PROMPT] {content}[/SYSTEM_PROMPT], [INST] {content}[/INST],
//                 [TOOL_RESULTS] {content}[/TOOL_RESULTS], assistant " {content}</s>";
//                 no prompt (the v7 template)
//   "mistral-tekken"  the same without the space after each opening tag and
//                 before a reply (v7-tekken; Ministral 3's own template agrees)
// The preamble starts with BOS when the tokenizer adds one ("<bos>", "<s>" and
// "<|begin_of_text|>" above stand for it). "Trimmed" removes white space at
// both ends, as the templates' `trim` does.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace eventkv::gguf {
class GgufFile;
}

namespace eventkv::tokenizer {

struct ChatMessage {
  std::string role;  // system | user | assistant | tool
  std::string content;
};

struct TokenSpan {
  int32_t begin = 0;  // [begin, end) positions in RenderedChat::ids
  int32_t end = 0;

  int32_t size() const { return end - begin; }
  bool empty() const { return end == begin; }
};

struct RenderedChat {
  std::vector<TokenId> ids;
  TokenSpan preamble;               // tokens before the first message (BOS, default system prompt)
  std::vector<TokenSpan> messages;  // one per message, contiguous, in order
  TokenSpan generation_prompt;      // empty when not requested
};

class ChatFormat {
 public:
  // From the tokenizer.chat_template fingerprint; a file without a template
  // (a base model) gets the format its vocabulary's turn tokens belong to.
  // Throws Error naming the file when neither is recognized.
  static ChatFormat detect(const gguf::GgufFile& file);
  // One of the names above; throws Error listing them otherwise.
  static ChatFormat by_name(std::string_view name);
  static std::vector<std::string_view> names();

  std::string_view name() const { return name_; }

  // Throws Error for an unknown role or a turn token the vocabulary lacks.
  RenderedChat render(const Tokenizer& tok, std::span<const ChatMessage> messages,
                      bool add_generation_prompt) const;
  // Tokens of one message rendered alone (what appending an event to a live
  // session costs); render() concatenates exactly these.
  std::vector<TokenId> render_message(const Tokenizer& tok, const ChatMessage& message) const;
  // Tokens that open the assistant's reply (empty for formats without one).
  std::vector<TokenId> generation_prompt(const Tokenizer& tok) const;

 private:
  enum class Family { kChatml, kGemma, kGemma4, kLlama3, kMistral };
  struct Part {
    std::string text;
    bool special = false;  // text names a special token
  };

  ChatFormat(std::string_view name, Family family) : name_(name), family_(family) {}

  std::vector<Part> preamble_parts(std::span<const ChatMessage> messages) const;
  std::vector<Part> message_parts(const ChatMessage& message) const;
  std::vector<Part> generation_parts() const;
  // Appends the ids of `parts`: special parts by id, each run of text parts as
  // one fragment (specials not parsed).
  void append_parts(const Tokenizer& tok, const std::vector<Part>& parts,
                    std::vector<TokenId>& out) const;

  std::string name_;
  Family family_;
  std::string default_system_;        // chatml variants
  bool tool_as_response_ = false;     // qwen2.5
  std::string_view tag_space_ = " ";  // mistral
};

}  // namespace eventkv::tokenizer
