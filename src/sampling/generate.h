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

// Evaluates `prompt` (may be empty when the context already ends where
// generation should start... it must then hold at least one token) and
// generates. `on_text` receives the text in order as it becomes final.
GenerateResult generate(kv::Context& context, const tokenizer::Tokenizer& tok,
                        std::span<const int32_t> prompt, const GenerateParams& params,
                        const std::function<void(std::string_view)>& on_text = {});

}  // namespace eventkv::sampling
