#include "events/render.h"

#include "util/error.h"

namespace eventkv::events {

std::vector<kv::EventTokens> render_events(const tokenizer::ChatFormat& format,
                                           const tokenizer::Tokenizer& tok,
                                           const std::vector<Event>& events) {
  std::vector<tokenizer::ChatMessage> messages;
  for (const Event& e : events) {
    if (e.id == kPreambleId) fail("event id '", kPreambleId, "' is reserved");
    messages.push_back({e.role, e.content});
  }
  const tokenizer::RenderedChat chat =
      format.render(tok, messages, /*add_generation_prompt=*/false);
  const auto slice = [&](tokenizer::TokenSpan span) {
    return std::vector<int32_t>(chat.ids.begin() + span.begin, chat.ids.begin() + span.end);
  };
  std::vector<kv::EventTokens> out;
  if (!chat.preamble.empty()) out.push_back({kPreambleId, "preamble", slice(chat.preamble)});
  for (size_t i = 0; i < events.size(); ++i)
    out.push_back({events[i].id, events[i].role, slice(chat.messages[i])});
  return out;
}

std::vector<int32_t> query_prompt(const tokenizer::ChatFormat& format,
                                  const tokenizer::Tokenizer& tok, const std::string& question,
                                  const std::string& answer_prefix) {
  std::vector<int32_t> tokens = format.render_message(tok, {"user", question});
  const std::vector<int32_t> prompt = format.generation_prompt(tok);
  tokens.insert(tokens.end(), prompt.begin(), prompt.end());
  const std::vector<int32_t> prefix = tok.encode(answer_prefix);
  tokens.insert(tokens.end(), prefix.begin(), prefix.end());
  return tokens;
}

QueryTokens render_query(const tokenizer::ChatFormat& format, const tokenizer::Tokenizer& tok,
                         const std::string& question, const std::string& answer_prefix,
                         const std::vector<std::string>& candidates) {
  if (candidates.empty()) fail("a query needs at least one candidate answer");
  QueryTokens query;
  query.prompt = query_prompt(format, tok, question, answer_prefix);
  for (const std::string& candidate : candidates) {
    query.candidates.push_back(tok.encode(candidate));
    if (query.candidates.back().empty()) fail("candidate answer '", candidate, "' has no tokens");
  }
  return query;
}

}  // namespace eventkv::events
