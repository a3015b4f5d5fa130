#include "kv/event_batch.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "util/error.h"

namespace eventkv::kv {
namespace {

// Log-probability of `token` under softmax(logits).
double log_prob(const float* logits, int64_t n_vocab, int32_t token) {
  const float max_logit = *std::max_element(logits, logits + n_vocab);
  double total = 0.0;
  for (int64_t i = 0; i < n_vocab; ++i)
    total += std::exp(static_cast<double>(logits[i] - max_logit));
  return static_cast<double>(logits[token] - max_logit) - std::log(total);
}

// Throws Error "WHAT: token id T is outside the vocabulary".
void check_vocabulary(std::span<const int32_t> tokens, int64_t n_vocab, std::string_view what) {
  for (const int32_t token : tokens) {
    if (token < 0 || token >= n_vocab)
      fail(what, ": token id ", token, " is outside the vocabulary");
  }
}

// Scores of each candidate from a query's logit rows: the query's last
// token's, then one per branch token (the candidate's tokens but its last).
std::vector<CandidateScore> candidate_scores(const std::vector<std::vector<int32_t>>& candidates,
                                             const float* rows, int64_t n_vocab) {
  std::vector<CandidateScore> scores;
  size_t row = 1;
  for (const auto& candidate : candidates) {
    CandidateScore score{log_prob(rows, n_vocab, candidate[0]),
                         static_cast<int32_t>(candidate.size())};
    for (size_t j = 1; j < candidate.size(); ++j)
      score.log_prob += log_prob(rows + (row++) * n_vocab, n_vocab, candidate[j]);
    scores.push_back(score);
  }
  return scores;
}

}  // namespace

EventBatch::EventBatch(Engine& engine, KvArena& arena)
    : engine_(engine), arena_(arena), runner_(engine, arena) {}

EventBatch::~EventBatch() {
  if (!ran_) undo();
}

EventBatch::Item& EventBatch::stage(EventKV& history) {
  if (ran_) fail("EventBatch: the batch has already run");
  if (history.engine_.get() != &engine_ || history.arena_.get() != &arena_)
    fail("EventBatch: histories must share the batch's engine and arena");
  for (const Item& item : items_) {
    if (item.history == &history) fail("EventBatch: a history takes one item per batch");
  }
  Item& item = items_.emplace_back();
  item.history = &history;
  item.events_before = history.events_.size();
  item.slots_before = history.slots_.size();
  item.last_tokens_before = history.events_.empty() ? 0 : history.events_.back().tokens.size();
  return item;
}

void EventBatch::check_free_cells(size_t n, std::string_view what) const {
  const int64_t free_cells = arena_.storage().capacity() - arena_.cells_in_use();
  if (static_cast<int64_t>(n) > free_cells)
    fail("KV arena too small: ", n, " ", what, ", ", free_cells, " free cells");
}

size_t EventBatch::append(EventKV& history, std::span<const EventTokens> events,
                          const EdgeMask& mask, bool logits) {
  size_t n_tokens = 0;
  std::set<std::string> seen;
  for (const EventTokens& e : events) {
    if (e.id.empty()) fail("event ids must not be empty");
    if (history.event_index(e.id) >= 0 || !seen.insert(e.id).second)
      fail("duplicate event id '", e.id, "'");
    if (e.tokens.empty()) fail("event '", e.id, "' has no tokens");
    check_vocabulary(e.tokens, engine_.model().config().n_vocab, str_cat("event '", e.id, "'"));
    n_tokens += e.tokens.size();
  }
  if (logits && n_tokens == 0) fail("append: no events to give logits after");
  check_free_cells(n_tokens, "new tokens");
  Item& item = stage(history);
  if (n_tokens == 0) return items_.size() - 1;
  int32_t position = history.last_position();
  for (const EventTokens& e : events) {
    const auto index = static_cast<int32_t>(history.events_.size());
    history.events_.push_back(
        {e.id, e.role, e.tokens, static_cast<int32_t>(history.slots_.size()), true});
    for (size_t i = 0; i < e.tokens.size(); ++i)
      history.slots_.push_back({arena_.allocate(), ++position, index});
  }
  const std::vector<compute::KeyRange> keys = history.add_event_keys(runner_);
  for (size_t e = item.events_before; e < history.events_.size(); ++e)
    history.add_event_rows(runner_, keys, e, mask);
  if (logits) item.logit_rows.push_back(runner_.size() - 1);
  return items_.size() - 1;
}

size_t EventBatch::extend(EventKV& history, std::span<const int32_t> tokens) {
  if (history.events_.empty() || !history.events_.back().retained)
    fail("extend: the last event is missing or evicted");
  if (tokens.empty()) fail("extend: no tokens");
  check_vocabulary(tokens, engine_.model().config().n_vocab, "extend");
  check_free_cells(tokens.size(), "new tokens");
  Item& item = stage(history);
  EventState& last = history.events_.back();
  int32_t position = history.last_position();
  const auto index = static_cast<int32_t>(history.events_.size() - 1);
  for (size_t i = 0; i < tokens.size(); ++i)
    history.slots_.push_back({arena_.allocate(), ++position, index});
  last.tokens.insert(last.tokens.end(), tokens.begin(), tokens.end());
  // The event's earlier rows are context; the new ones its own keys.
  std::vector<compute::KeyRange> context = history.add_event_keys(runner_);
  const auto n_new = static_cast<int32_t>(tokens.size());
  compute::KeyRange& event_keys = context.back();
  const compute::KeyRange own{event_keys.end - n_new, event_keys.end};
  event_keys.end = own.begin;
  item.logit_rows.push_back(runner_.add_rows(tokens, context, own) + n_new - 1);
  return items_.size() - 1;
}

size_t EventBatch::recompute(EventKV& history, std::span<const std::string> ids,
                             const EdgeMask& mask, bool with_descendants) {
  const std::vector<size_t> targets = history.recompute_events(ids, with_descendants);
  size_t shared = 0;
  for (const size_t e : targets) {
    const EventState& event = history.events_[e];
    for (int32_t s = event.begin; s < event.end(); ++s)
      shared += arena_.references(history.slots_[static_cast<size_t>(s)].cell) > 1 ? 1 : 0;
  }
  check_free_cells(shared, "shared rows to copy");
  stage(history);
  for (const size_t e : targets) {
    for (int32_t s = history.events_[e].begin; s < history.events_[e].end(); ++s)
      history.own_cell(s);
  }
  const std::vector<compute::KeyRange> keys = history.add_event_keys(runner_);
  for (const size_t e : targets) history.add_event_rows(runner_, keys, e, mask);
  return items_.size() - 1;
}

size_t EventBatch::score(EventKV& history, const std::vector<int32_t>& query,
                         const std::vector<std::vector<int32_t>>& candidates, QueryPositions mode) {
  if (query.empty()) fail("query: no tokens");
  const int64_t n_vocab = engine_.model().config().n_vocab;
  check_vocabulary(query, n_vocab, "query");
  size_t n_cells = query.size();
  for (const auto& candidate : candidates) {
    if (candidate.empty()) fail("query: empty candidate");
    check_vocabulary(candidate, n_vocab, "query");
    n_cells += candidate.size() - 1;
  }
  check_free_cells(n_cells, "query tokens");
  Item& item = stage(history);
  for (size_t i = 0; i < n_cells; ++i) item.temporary.push_back(arena_.allocate());
  item.logit_rows = history.add_query(runner_, query, candidates, mode, item.temporary);
  item.candidates = candidates;
  return items_.size() - 1;
}

void EventBatch::run(std::optional<compute::ActivationPrecision> precision) {
  if (ran_) fail("EventBatch: the batch has already run");
  std::vector<int32_t> rows;
  for (const Item& item : items_)
    rows.insert(rows.end(), item.logit_rows.begin(), item.logit_rows.end());
  try {
    if (runner_.size() > 0) logits_ = runner_.run(rows, precision);
  } catch (...) {
    undo();
    items_.clear();  // nothing to read back
    ran_ = true;
    throw;
  }
  ran_ = true;
  const int64_t n_vocab = engine_.model().config().n_vocab;
  size_t row = 0;
  for (Item& item : items_) {
    item.first_logits = row;
    if (!item.temporary.empty()) {
      item.scores = candidate_scores(item.candidates,
                                     logits_.data() + static_cast<int64_t>(row) * n_vocab, n_vocab);
    }
    row += item.logit_rows.size();
  }
  release_temporary();
}

// Puts every history back as it was before its item (one item per history,
// so the order does not matter).
void EventBatch::undo() {
  release_temporary();
  for (const Item& item : items_) {
    EventKV& history = *item.history;
    for (size_t s = item.slots_before; s < history.slots_.size(); ++s)
      arena_.release(history.slots_[s].cell);
    history.slots_.resize(item.slots_before);
    history.events_.resize(item.events_before);
    if (!history.events_.empty()) history.events_.back().tokens.resize(item.last_tokens_before);
  }
}

void EventBatch::release_temporary() {
  for (Item& item : items_) {
    for (const int32_t cell : item.temporary) arena_.release(cell);
    item.temporary.clear();
  }
}

const EventBatch::Item& EventBatch::ran(size_t item) const {
  if (!ran_) fail("EventBatch: results before the batch has run");
  if (item >= items_.size()) fail("EventBatch: no item ", item);
  return items_[item];
}

std::vector<float> EventBatch::logits(size_t item) const {
  const Item& ran_item = ran(item);
  if (ran_item.logit_rows.empty()) return {};
  const auto n_vocab = static_cast<size_t>(engine_.model().config().n_vocab);
  const auto first = logits_.begin() + static_cast<std::ptrdiff_t>(ran_item.first_logits * n_vocab);
  return {first, first + static_cast<std::ptrdiff_t>(n_vocab)};
}

const std::vector<CandidateScore>& EventBatch::scores(size_t item) const {
  return ran(item).scores;
}

}  // namespace eventkv::kv
