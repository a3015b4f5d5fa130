#include "probe/stored_pair.h"

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace eventkv::probe {
namespace {

using nlohmann::json;

json events_json(const std::vector<events::Event>& events) {
  json out = json::array();
  for (const events::Event& e : events)
    out.push_back({{"id", e.id}, {"role", e.role}, {"content", e.content}});
  return out;
}

json side_spans(const std::vector<kv::EventTokens>& events) {
  json out = json::array();
  size_t start = 0;
  for (const kv::EventTokens& e : events) {
    out.push_back({{"id", e.id}, {"start", start}, {"end", start + e.tokens.size()}});
    start += e.tokens.size();
  }
  return out;
}

std::vector<events::Event> stored_events(const json& list) {
  std::vector<events::Event> events;
  for (const json& e : list) events.push_back({e.at("id"), e.at("role"), e.at("content")});
  return events;
}

}  // namespace

store::PairRecord pair_record(const TokenizedPair& pair, const Cell& cell,
                              const PairScores& scores) {
  store::PairRecord record;
  record.pair_index = pair.texts.index;
  record.construction = cell.construction;
  record.distance = cell.distance;
  record.value_a = pair.texts.value_a;
  record.value_b = pair.texts.value_b;
  record.candidates = pair.texts.candidates;
  record.texts_json = texts_json(pair.texts);
  record.spans_json = spans_json(pair);
  for (const auto& e : pair.events_a) record.n_tokens += static_cast<int64_t>(e.tokens.size());
  record.rejected = pair.rejected;
  for (const ConditionScores& c : scores.conditions) {
    record.conditions[std::string(c.condition)] = {{c.a.log_probs}, {c.b.log_probs}};
  }
  return record;
}

std::string texts_json(const DonorPair& texts) {
  return json{{"a", events_json(texts.events_a)}, {"b", events_json(texts.events_b)},
              {"record_a", texts.record_a},       {"record_b", texts.record_b},
              {"question", texts.question},       {"answer_prefix", texts.answer_prefix}}
      .dump();
}

std::string spans_json(const TokenizedPair& pair) {
  return json{{"a", side_spans(pair.events_a)}, {"b", side_spans(pair.events_b)}}.dump();
}

DonorPair stored_texts(const store::PairRecord& record, const std::string& what) {
  DonorPair texts;
  texts.index = record.pair_index;
  texts.candidates = record.candidates;
  texts.value_a = record.value_a;
  texts.value_b = record.value_b;
  try {
    const json stored = json::parse(record.texts_json);
    texts.events_a = stored_events(stored.at("a"));
    texts.events_b = stored_events(stored.at("b"));
    texts.record_a = stored.at("record_a");
    texts.record_b = stored.at("record_b");
    texts.question = stored.at("question");
    texts.answer_prefix = stored.at("answer_prefix");
  } catch (const json::exception& e) {
    fail(what, ": stored texts unreadable: ", e.what());
  }
  return texts;
}

}  // namespace eventkv::probe
