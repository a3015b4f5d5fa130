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

ReplyText::ReplyText(const tokenizer::Tokenizer& tok, std::vector<std::string> stop)
    : tok_(tok), stop_(std::move(stop)) {
  for (const std::string& s : stop_) {
    if (s.empty()) fail("generate: empty stop string");
  }
}

std::string ReplyText::release(size_t upto) {
  if (upto <= released_) return {};
  std::string piece = text_.substr(released_, upto - released_);
  released_ = upto;
  return piece;
}

std::string ReplyText::add(int32_t token) {
  if (done_) fail("generate: token after the reply ended");
  if (tok_.is_end_of_generation(token)) {
    done_ = true;
    reason_ = StopReason::kEndOfGeneration;
    return {};
  }
  text_ += tok_.token_text(token);
  for (const std::string& s : stop_) {
    const size_t at = text_.find(s);
    if (at == std::string::npos) continue;
    text_.resize(at);
    done_ = true;
    reason_ = StopReason::kStopString;
    return {};
  }
  return release(final_length(text_, stop_));
}

std::string ReplyText::finish(StopReason reason) {
  if (!done_) reason_ = reason;
  done_ = true;
  text_ = with_whole_characters(std::move(text_));
  return release(text_.size());
}

GenerateResult generate(kv::Context& context, const tokenizer::Tokenizer& tok,
                        std::span<const int32_t> prompt, const GenerateParams& params,
                        const std::function<void(std::string_view)>& on_text) {
  if (prompt.empty()) fail("generate: empty prompt");
  ReplyText reply(tok, params.stop);
  Sampler sampler(params.sampling);
  GenerateResult result;
  const auto emit = [&](const std::string& piece) {
    if (!piece.empty() && on_text) on_text(piece);
  };
  std::vector<float> logits = context.eval(prompt);
  StopReason reason = StopReason::kMaxTokens;
  while (static_cast<int32_t>(result.tokens.size()) < params.max_tokens) {
    const int32_t token = sampler.sample(logits);
    result.tokens.push_back(token);
    emit(reply.add(token));
    if (reply.done()) break;
    if (context.n_past() >= context.n_ctx()) {
      reason = StopReason::kContextFull;
      break;
    }
    logits = context.eval({&token, 1});
  }
  emit(reply.finish(reason));
  result.text = reply.text();
  result.reason = reply.reason();
  return result;
}

}  // namespace eventkv::sampling
