// Token-by-token generation on a causal context: sample, append, stop on an
// end-of-generation token, a stop string, the token budget or a full
// context. Text is streamed as it becomes final: whole UTF-8 characters that
// cannot turn into a stop string any more.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kv/context.h"
#include "sampling/sampler.h"
#include "tokenizer/tokenizer.h"

namespace eventkv::sampling {

struct GenerateParams {
  int32_t max_tokens = 128;
  SamplingParams sampling;
  std::vector<std::string> stop;  // stop strings (not included in the text)
};

enum class StopReason { kEndOfGeneration, kStopString, kMaxTokens, kContextFull };

std::string_view stop_reason_name(StopReason reason);

struct GenerateResult {
  std::vector<int32_t> tokens;  // every generated token, the end token included
  std::string text;             // up to (not including) a stop string or end token
  StopReason reason = StopReason::kMaxTokens;
};

// `text`, with an incomplete UTF-8 sequence at its end (generation stopped
// inside a character: its last token was half of one) replaced by U+FFFD.
// The streamed text holds such bytes back until the character completes.
std::string with_whole_characters(std::string text);

// Generated tokens turned into the reply's text, as generation goes: it
// ends at an end-of-generation token or a stop string (neither included),
// and text is released once final (whole UTF-8 characters that cannot turn
// into a stop string any more). Shared by generate() and the server.
class ReplyText {
 public:
  // Throws Error for an empty stop string.
  ReplyText(const tokenizer::Tokenizer& tok, std::vector<std::string> stop);

  // Takes the next generated token; returns the text it made final (often
  // empty). After an end token or a stop string, done() is true.
  std::string add(int32_t token);
  // Ends the reply (for `reason` unless a stop came first); returns the
  // rest of the text, an incomplete last character replaced by U+FFFD.
  std::string finish(StopReason reason);

  bool done() const { return done_; }
  StopReason reason() const { return reason_; }
  const std::string& text() const { return text_; }

 private:
  std::string release(size_t upto);

  const tokenizer::Tokenizer& tok_;
  std::vector<std::string> stop_;
  std::string text_;
  size_t released_ = 0;
  bool done_ = false;
  StopReason reason_ = StopReason::kMaxTokens;
};

// Evaluates `prompt` (may be empty when the context already ends where
// generation should start... it must then hold at least one token) and
// generates. `on_text` receives the text in order as it becomes final.
GenerateResult generate(kv::Context& context, const tokenizer::Tokenizer& tok,
                        std::span<const int32_t> prompt, const GenerateParams& params,
                        const std::function<void(std::string_view)>& on_text = {});

}  // namespace eventkv::sampling
