// Events as people write them (id, role, text) turned into what the cache
// takes (tokens), through the model's chat format: each event is exactly its
// message's span, and whatever the format puts before the first message
// (BOS, a default system prompt) becomes an event of its own, "preamble".
#pragma once

#include <string>
#include <vector>

#include "kv/event_kv.h"
#include "tokenizer/chat_format.h"
#include "tokenizer/tokenizer.h"

namespace eventkv::events {

inline constexpr const char* kPreambleId = "preamble";

struct Event {
  std::string id;
  std::string role;  // system | user | assistant | tool
  std::string content;
};

std::vector<kv::EventTokens> render_events(const tokenizer::ChatFormat& format,
                                           const tokenizer::Tokenizer& tok,
                                           const std::vector<Event>& events);

// A query as a user turn, the assistant's generation prompt and an answer
// prefix; each candidate is tokenized on its own (so " on" and " off" are the
// same tokens whatever the prefix), as evaluation harnesses do.
struct QueryTokens {
  std::vector<int32_t> prompt;
  std::vector<std::vector<int32_t>> candidates;
};

// The prompt of a query: the question as a user turn, the assistant's
// generation prompt and the answer prefix.
std::vector<int32_t> query_prompt(const tokenizer::ChatFormat& format,
                                  const tokenizer::Tokenizer& tok, const std::string& question,
                                  const std::string& answer_prefix);

QueryTokens render_query(const tokenizer::ChatFormat& format, const tokenizer::Tokenizer& tok,
                         const std::string& question, const std::string& answer_prefix,
                         const std::vector<std::string>& candidates);

}  // namespace eventkv::events
