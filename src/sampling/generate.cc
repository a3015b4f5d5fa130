#include "sampling/generate.h"

#include <algorithm>

#include "util/error.h"

namespace eventkv::sampling {
namespace {

// Length of the longest prefix of `text` that ends on a UTF-8 character
// boundary.
size_t complete_utf8(std::string_view text) {
  size_t end = text.size();
  size_t back = 0;
  while (back < 4 && back < end &&
         (static_cast<unsigned char>(text[end - 1 - back]) & 0xC0) == 0x80)
    ++back;
  if (back == end) return end;
  const auto lead = static_cast<unsigned char>(text[end - 1 - back]);
  const size_t expected = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return expected == back + 1 ? end : end - back - 1;
}

// How much of `text` is final: nothing from where a stop string could still start.
size_t final_length(std::string_view text, const std::vector<std::string>& stops) {
  size_t keep = text.size();
  for (const std::string& stop : stops) {
    for (size_t n = std::min(stop.size() - 1, text.size()); n > 0; --n) {
      if (text.substr(text.size() - n) == std::string_view(stop).substr(0, n)) {
        keep = std::min(keep, text.size() - n);
        break;
      }
    }
  }
  return complete_utf8(text.substr(0, keep));
}

}  // namespace

std::string with_whole_characters(std::string text) {
  const size_t whole = complete_utf8(text);
  if (whole == text.size()) return text;
  text.resize(whole);
  return text + "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
}

std::string_view stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::kEndOfGeneration:
      return "end-of-generation";
    case StopReason::kStopString:
      return "stop-string";
    case StopReason::kMaxTokens:
      return "max-tokens";
    case StopReason::kContextFull:
      return "context-full";
  }
  return "?";
}

GenerateResult generate(kv::Context& context, const tokenizer::Tokenizer& tok,
                        std::span<const int32_t> prompt, const GenerateParams& params,
                        const std::function<void(std::string_view)>& on_text) {
  if (prompt.empty()) fail("generate: empty prompt");
  for (const std::string& stop : params.stop) {
    if (stop.empty()) fail("generate: empty stop string");
  }
  Sampler sampler(params.sampling);
  GenerateResult result;
  std::vector<float> logits = context.eval(prompt);
  std::string text;
  size_t emitted = 0;
  const auto emit = [&](size_t upto) {
    if (upto > emitted && on_text) on_text(std::string_view(text).substr(emitted, upto - emitted));
    emitted = std::max(emitted, upto);
  };
  while (true) {
    if (static_cast<int32_t>(result.tokens.size()) >= params.max_tokens) {
      result.reason = StopReason::kMaxTokens;
      break;
    }
    const int32_t token = sampler.sample(logits);
    result.tokens.push_back(token);
    if (tok.is_end_of_generation(token)) {
      result.reason = StopReason::kEndOfGeneration;
      break;
    }
    text += tok.token_text(token);
    const auto stop =
        std::find_if(params.stop.begin(), params.stop.end(),
                     [&](const std::string& s) { return text.find(s) != std::string::npos; });
    if (stop != params.stop.end()) {
      text.resize(text.find(*stop));
      result.reason = StopReason::kStopString;
      break;
    }
    emit(final_length(text, params.stop));
    if (context.n_past() >= context.n_ctx()) {
      result.reason = StopReason::kContextFull;
      break;
    }
    logits = context.eval({&token, 1});
  }
  text = with_whole_characters(std::move(text));
  emit(text.size());
  result.text = text;
  return result;
}

}  // namespace eventkv::sampling
