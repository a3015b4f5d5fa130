#include "kv/event_kv.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "compute/forward.h"
#include "compute/rope.h"
#include "kv/batch_runner.h"
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

// [n, n_vocab] logits as n rows.
std::vector<std::vector<float>> split_rows(const std::vector<float>& logits, size_t n) {
  std::vector<std::vector<float>> rows(n);
  const size_t width = n == 0 ? 0 : logits.size() / n;
  for (size_t r = 0; r < n; ++r) {
    const auto first = logits.begin() + static_cast<std::ptrdiff_t>(r * width);
    rows[r].assign(first, first + static_cast<std::ptrdiff_t>(width));
  }
  return rows;
}

}  // namespace

EventKV::EventKV(std::shared_ptr<Engine> engine, std::shared_ptr<KvArena> arena)
    : engine_(std::move(engine)), arena_(std::move(arena)) {}

EventKV::~EventKV() {
  release_all();
}

EventKV::EventKV(EventKV&& other) noexcept
    : engine_(std::move(other.engine_)),
      arena_(std::move(other.arena_)),
      events_(std::move(other.events_)),
      slots_(std::move(other.slots_)) {
  other.slots_.clear();
}

EventKV& EventKV::operator=(EventKV&& other) noexcept {
  if (this != &other) {
    release_all();
    engine_ = std::move(other.engine_);
    arena_ = std::move(other.arena_);
    events_ = std::move(other.events_);
    slots_ = std::move(other.slots_);
    other.slots_.clear();
  }
  return *this;
}

void EventKV::release_all() {
  for (Slot& slot : slots_) {
    if (slot.cell >= 0) arena_->release(slot.cell);
    slot.cell = -1;
  }
}

int32_t EventKV::event_index(std::string_view id) const {
  for (size_t i = 0; i < events_.size(); ++i) {
    if (events_[i].id == id) return static_cast<int32_t>(i);
  }
  return -1;
}

const EventState& EventKV::event(std::string_view id) const {
  const int32_t index = event_index(id);
  if (index < 0) fail("unknown event '", id, "'");
  return events_[static_cast<size_t>(index)];
}

int32_t EventKV::last_position() const {
  int32_t last = -1;
  for (const Slot& slot : slots_) last = std::max(last, slot.position);
  return last;
}

int64_t EventKV::retained_rows() const {
  return std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.cell >= 0; });
}

std::vector<compute::KeyRange> EventKV::add_event_keys(BatchRunner& runner) const {
  std::vector<compute::KeyRange> ranges;
  std::vector<int32_t> cells;
  std::vector<int32_t> positions;
  for (const EventState& e : events_) {
    cells.clear();
    positions.clear();
    for (int32_t s = e.begin; s < e.end(); ++s) {
      const Slot& slot = slots_[static_cast<size_t>(s)];
      if (slot.cell < 0) continue;
      cells.push_back(slot.cell);
      positions.push_back(slot.position);
    }
    ranges.push_back(runner.add_keys(cells, positions));
  }
  return ranges;
}

// The rows of event `index` see the retained rows of every earlier event
// the mask allows, and their own event causally.
void EventKV::add_event_rows(BatchRunner& runner, const std::vector<compute::KeyRange>& keys,
                             size_t index, const EdgeMask& mask) const {
  const EventState& event = events_[index];
  std::vector<compute::KeyRange> context;
  for (size_t f = 0; f < index; ++f) {
    if (mask.empty() || mask.allows(event.id, events_[f].id)) context.push_back(keys[f]);
  }
  runner.add_rows(event.tokens, context, keys[index]);
}

void EventKV::append(std::span<const EventTokens> events, const EdgeMask& mask) {
  EventKV* self = this;
  const std::vector<std::vector<EventTokens>> lists = {
      std::vector<EventTokens>(events.begin(), events.end())};
  append_batched({&self, 1}, lists, mask);
}

std::vector<std::vector<float>> EventKV::append_batched(
    std::span<EventKV* const> histories, std::span<const std::vector<EventTokens>> events,
    const EdgeMask& mask, bool last_logits, std::optional<compute::ActivationPrecision> precision) {
  if (histories.size() != events.size())
    fail("append_batched: ", histories.size(), " histories, ", events.size(), " event lists");
  if (histories.empty()) return {};
  Engine& engine = *histories[0]->engine_;
  KvArena& arena = *histories[0]->arena_;
  size_t n_tokens = 0;
  for (size_t h = 0; h < histories.size(); ++h) {
    if (histories[h]->engine_.get() != &engine || histories[h]->arena_.get() != &arena) {
      fail("append_batched: histories must share one engine and one arena");
    }
    std::set<std::string> seen;
    for (const EventTokens& e : events[h]) {
      if (e.id.empty()) fail("event ids must not be empty");
      if (histories[h]->event_index(e.id) >= 0 || !seen.insert(e.id).second)
        fail("duplicate event id '", e.id, "'");
      if (e.tokens.empty()) fail("event '", e.id, "' has no tokens");
      check_vocabulary(e.tokens, engine.model().config().n_vocab, str_cat("event '", e.id, "'"));
      n_tokens += e.tokens.size();
    }
  }
  const int64_t free_cells = arena.storage().capacity() - arena.cells_in_use();
  if (static_cast<int64_t>(n_tokens) > free_cells) {
    fail("KV arena too small: ", n_tokens, " new tokens, ", free_cells, " free cells");
  }
  if (n_tokens == 0) return {};
  // Place the events, then compute them; undo the placement if that fails.
  std::vector<size_t> old_events(histories.size());
  std::vector<size_t> old_slots(histories.size());
  std::vector<int32_t> logit_rows;
  BatchRunner runner(engine, arena);
  try {
    for (size_t h = 0; h < histories.size(); ++h) {
      EventKV& history = *histories[h];
      old_events[h] = history.events_.size();
      old_slots[h] = history.slots_.size();
      int32_t position = history.last_position();
      for (const EventTokens& e : events[h]) {
        const auto index = static_cast<int32_t>(history.events_.size());
        history.events_.push_back(
            {e.id, e.role, e.tokens, static_cast<int32_t>(history.slots_.size()), true});
        for (size_t i = 0; i < e.tokens.size(); ++i)
          history.slots_.push_back({arena.allocate(), ++position, index});
      }
      const std::vector<compute::KeyRange> keys = history.add_event_keys(runner);
      for (size_t e = old_events[h]; e < history.events_.size(); ++e)
        history.add_event_rows(runner, keys, e, mask);
      if (last_logits) logit_rows.push_back(runner.size() - 1);
    }
    return split_rows(runner.run(logit_rows, precision), logit_rows.size());
  } catch (...) {
    for (size_t h = 0; h < histories.size(); ++h) {
      EventKV& history = *histories[h];
      for (size_t s = old_slots[h]; s < history.slots_.size(); ++s)
        arena.release(history.slots_[s].cell);
      history.slots_.resize(old_slots[h]);
      history.events_.resize(old_events[h]);
    }
    throw;
  }
}

std::vector<std::vector<float>> EventKV::extend_batched(
    std::span<EventKV* const> histories, std::span<const std::vector<int32_t>> tokens,
    compute::ActivationPrecision precision) {
  if (histories.size() != tokens.size())
    fail("extend_batched: ", histories.size(), " histories, ", tokens.size(), " token lists");
  if (histories.empty()) return {};
  Engine& engine = *histories[0]->engine_;
  KvArena& arena = *histories[0]->arena_;
  size_t n_tokens = 0;
  for (size_t h = 0; h < histories.size(); ++h) {
    const EventKV& history = *histories[h];
    if (history.engine_.get() != &engine || history.arena_.get() != &arena)
      fail("extend_batched: histories must share one engine and one arena");
    if (history.events_.empty() || !history.events_.back().retained)
      fail("extend_batched: the last event is missing or evicted");
    if (tokens[h].empty()) fail("extend_batched: no tokens");
    check_vocabulary(tokens[h], engine.model().config().n_vocab, "extend");
    n_tokens += tokens[h].size();
  }
  if (static_cast<int64_t>(n_tokens) > arena.storage().capacity() - arena.cells_in_use())
    fail("KV arena too small: ", n_tokens, " new tokens");
  std::vector<size_t> old_slots;
  for (const EventKV* history : histories) old_slots.push_back(history->slots_.size());
  std::vector<int32_t> logit_rows;
  BatchRunner runner(engine, arena);
  try {
    for (size_t h = 0; h < histories.size(); ++h) {
      EventKV& history = *histories[h];
      EventState& last = history.events_.back();
      int32_t position = history.last_position();
      const auto index = static_cast<int32_t>(history.events_.size() - 1);
      for (size_t i = 0; i < tokens[h].size(); ++i)
        history.slots_.push_back({arena.allocate(), ++position, index});
      last.tokens.insert(last.tokens.end(), tokens[h].begin(), tokens[h].end());
      // The event's earlier rows are context; the new ones its own keys.
      std::vector<compute::KeyRange> context = history.add_event_keys(runner);
      const auto n_new = static_cast<int32_t>(tokens[h].size());
      compute::KeyRange& event_keys = context.back();
      const compute::KeyRange own{event_keys.end - n_new, event_keys.end};
      event_keys.end = own.begin;
      logit_rows.push_back(runner.add_rows(tokens[h], context, own) + n_new - 1);
    }
    return split_rows(runner.run(logit_rows, precision), logit_rows.size());
  } catch (...) {
    for (size_t h = 0; h < histories.size(); ++h) {
      EventKV& history = *histories[h];
      if (history.slots_.size() <= old_slots[h]) continue;
      for (size_t s = old_slots[h]; s < history.slots_.size(); ++s)
        arena.release(history.slots_[s].cell);
      const size_t added = history.slots_.size() - old_slots[h];
      history.slots_.resize(old_slots[h]);
      std::vector<int32_t>& last = history.events_.back().tokens;
      last.resize(last.size() - added);
    }
    throw;
  }
}

void EventKV::evict(std::span<const std::string> ids) {
  std::vector<int32_t> indices;
  for (const std::string& id : ids) {
    const int32_t index = event_index(id);
    if (index < 0) fail("evict: unknown event '", id, "'");
    indices.push_back(index);
  }
  for (const int32_t index : indices) {
    EventState& e = events_[static_cast<size_t>(index)];
    for (int32_t s = e.begin; s < e.end(); ++s) {
      Slot& slot = slots_[static_cast<size_t>(s)];
      if (slot.cell >= 0) arena_->release(slot.cell);
      slot.cell = -1;
    }
    e.retained = false;
  }
}

void EventKV::own_cell(int32_t slot_index) {
  Slot& slot = slots_[static_cast<size_t>(slot_index)];
  if (arena_->references(slot.cell) == 1) return;
  const int32_t fresh = arena_->allocate();
  arena_->storage().copy_cell(arena_->storage(), slot.cell, fresh, 0, arena_->storage().n_layer());
  arena_->release(slot.cell);
  slot.cell = fresh;
}

std::vector<size_t> EventKV::recompute_events(std::span<const std::string> ids,
                                              bool with_descendants) const {
  std::vector<char> target(events_.size(), 0);
  size_t first = events_.size();
  for (const std::string& id : ids) {
    const int32_t index = event_index(id);
    if (index < 0) fail("recompute: unknown event '", id, "'");
    if (!events_[static_cast<size_t>(index)].retained)
      fail("recompute: event '", id, "' was evicted");
    target[static_cast<size_t>(index)] = 1;
    first = std::min(first, static_cast<size_t>(index));
  }
  if (with_descendants) {
    for (size_t e = first; e < events_.size(); ++e) target[e] = events_[e].retained ? 1 : 0;
  }
  std::vector<size_t> indices;
  for (size_t e = 0; e < events_.size(); ++e) {
    if (target[e]) indices.push_back(e);
  }
  return indices;
}

void EventKV::recompute(std::span<const std::string> ids, const EdgeMask& mask,
                        bool with_descendants) {
  EventKV* self = this;
  recompute_batched({&self, 1}, ids, mask, with_descendants);
}

void EventKV::recompute_batched(std::span<EventKV* const> histories,
                                std::span<const std::string> ids, const EdgeMask& mask,
                                bool with_descendants) {
  if (histories.empty()) return;
  KvArena& arena = *histories[0]->arena_;
  std::vector<std::vector<size_t>> targets;
  int64_t shared = 0;
  for (EventKV* history : histories) {
    if (history->arena_.get() != &arena || history->engine_ != histories[0]->engine_) {
      fail("recompute_batched: histories must share one engine and one arena");
    }
    targets.push_back(history->recompute_events(ids, with_descendants));
    for (const size_t e : targets.back()) {
      const EventState& event = history->events_[e];
      for (int32_t s = event.begin; s < event.end(); ++s)
        shared += arena.references(history->slots_[static_cast<size_t>(s)].cell) > 1 ? 1 : 0;
    }
  }
  if (shared > arena.storage().capacity() - arena.cells_in_use())
    fail("KV arena too small to copy ", shared, " shared rows");
  BatchRunner runner(*histories[0]->engine_, arena);
  for (size_t h = 0; h < histories.size(); ++h) {
    EventKV& history = *histories[h];
    for (const size_t e : targets[h]) {
      for (int32_t s = history.events_[e].begin; s < history.events_[e].end(); ++s)
        history.own_cell(s);
    }
    const std::vector<compute::KeyRange> keys = history.add_event_keys(runner);
    for (const size_t e : targets[h]) history.add_event_rows(runner, keys, e, mask);
  }
  if (runner.size() > 0) runner.run({});
}

void EventKV::transplant(const EventKV& source, std::string_view id, int64_t layer_begin,
                         int64_t layer_end, int32_t token_begin, int32_t token_end) {
  const EventState& mine = event(id);
  const EventState& theirs = source.event(id);
  if (source.engine_->model().fingerprint() != engine_->model().fingerprint()) {
    fail("transplant: the source history was computed by another model");
  }
  if (mine.begin != theirs.begin || mine.tokens != theirs.tokens) {
    fail("transplant: event '", id, "' has different tokens or positions in the source");
  }
  if (!mine.retained || !theirs.retained)
    fail("transplant: event '", id, "' is evicted on one side");
  if (layer_begin < 0 || layer_end > arena_->storage().n_layer() || layer_begin >= layer_end) {
    fail("transplant: layer range [", layer_begin, ", ", layer_end, ") is invalid");
  }
  const auto n_tokens = static_cast<int32_t>(mine.tokens.size());
  if (token_end < 0) token_end = n_tokens;
  if (token_begin < 0 || token_end > n_tokens || token_begin >= token_end) {
    fail("transplant: token range [", token_begin, ", ", token_end, ") of event '", id,
         "' is invalid");
  }
  const int32_t first = mine.begin + token_begin;
  const int32_t last = mine.begin + token_end;
  for (int32_t s = first; s < last; ++s) {
    if (source.slots_[static_cast<size_t>(s)].position != slots_[static_cast<size_t>(s)].position) {
      fail("transplant: event '", id, "' rows sit at different positions in the source");
    }
  }
  for (int32_t s = first; s < last; ++s) {
    own_cell(s);
    arena_->storage().copy_cell(source.arena_->storage(),
                                source.slots_[static_cast<size_t>(s)].cell,
                                slots_[static_cast<size_t>(s)].cell, layer_begin, layer_end);
  }
}

void EventKV::reposition() {
  const model::ModelConfig& c = engine_->model().config();
  compute::KvStorage& storage = arena_->storage();
  std::vector<float> row(static_cast<size_t>(c.kv_dim()));
  int32_t next = 0;
  for (size_t s = 0; s < slots_.size(); ++s) {
    Slot& slot = slots_[s];
    if (slot.cell < 0) {
      slot.position = -1;
      continue;
    }
    const int32_t delta = next - slot.position;
    slot.position = next++;
    if (delta == 0) continue;
    own_cell(static_cast<int32_t>(s));
    for (int64_t il = 0; il < c.n_layer; ++il) {
      const compute::RopeParams rope = compute::layer_rope(c, il);
      const compute::RopeTable table = compute::make_rope_table(rope, &delta, 1);
      storage.read_k(il, slot.cell, 0, c.kv_dim(), row.data());
      compute::apply_rope(rope, table, 0, row.data(), c.n_head_kv, c.head_dim);
      storage.write_k(il, slot.cell, row.data());
    }
  }
}

EventKV EventKV::fork(int64_t n_events) const {
  const size_t kept =
      n_events < 0 ? events_.size() : std::min(events_.size(), static_cast<size_t>(n_events));
  EventKV copy(engine_, arena_);
  copy.events_.assign(events_.begin(), events_.begin() + static_cast<std::ptrdiff_t>(kept));
  const size_t n_slots = kept == 0 ? 0 : static_cast<size_t>(copy.events_.back().end());
  copy.slots_.assign(slots_.begin(), slots_.begin() + static_cast<std::ptrdiff_t>(n_slots));
  for (const Slot& slot : copy.slots_) {
    if (slot.cell >= 0) arena_->retain(slot.cell);
  }
  return copy;
}

std::vector<int32_t> EventKV::temporary_cells(size_t n) {
  const int64_t free_cells = arena_->storage().capacity() - arena_->cells_in_use();
  if (static_cast<int64_t>(n) > free_cells)
    fail("KV arena too small for the query: ", n, " tokens, ", free_cells, " free cells");
  std::vector<int32_t> cells;
  for (size_t i = 0; i < n; ++i) cells.push_back(arena_->allocate());
  return cells;
}

// Adds `query` and one branch per candidate (all but its last token) for one
// history; returns the batch rows whose logits score the candidates: the
// query's last token, then every branch token.
std::vector<int32_t> EventKV::add_query(BatchRunner& runner, const std::vector<int32_t>& query,
                                        const std::vector<std::vector<int32_t>>& candidates,
                                        QueryPositions mode,
                                        const std::vector<int32_t>& cells) const {
  std::vector<int32_t> retained_cells;
  std::vector<int32_t> retained_positions;
  int32_t base = last_position() + 1;
  for (const Slot& slot : slots_) {
    if (slot.cell < 0) continue;
    retained_cells.push_back(slot.cell);
    retained_positions.push_back(slot.position);
  }
  if (mode == QueryPositions::kAfterRetained) {
    base = 0;
    for (const int32_t position : retained_positions) base = std::max(base, position + 1);
  }
  const compute::KeyRange retained = runner.add_keys(retained_cells, retained_positions);
  // Query and branch keys sit at consecutive positions from `base`.
  size_t next_cell = 0;
  const auto add_run = [&](size_t n, int32_t first_position) {
    std::vector<int32_t> positions(n);
    for (size_t i = 0; i < n; ++i) positions[i] = first_position + static_cast<int32_t>(i);
    const std::span<const int32_t> run_cells(cells.data() + next_cell, n);
    next_cell += n;
    return runner.add_keys(run_cells, positions);
  };
  const compute::KeyRange query_keys = add_run(query.size(), base);
  const compute::KeyRange query_context[] = {retained};
  std::vector<int32_t> rows = {runner.add_rows(query, query_context, query_keys) +
                               query_keys.size() - 1};
  const compute::KeyRange branch_context[] = {retained, query_keys};
  for (const auto& candidate : candidates) {
    if (candidate.size() < 2) continue;
    const std::span<const int32_t> branch(candidate.data(), candidate.size() - 1);
    const compute::KeyRange branch_keys =
        add_run(branch.size(), base + static_cast<int32_t>(query.size()));
    const int32_t first = runner.add_rows(branch, branch_context, branch_keys);
    for (int32_t j = 0; j < branch_keys.size(); ++j) rows.push_back(first + j);
  }
  return rows;
}

std::vector<float> EventKV::run_queries(std::span<EventKV* const> histories,
                                        const std::vector<int32_t>& query,
                                        const std::vector<std::vector<int32_t>>& candidates,
                                        QueryPositions mode) {
  if (histories.empty()) return {};
  if (query.empty()) fail("query: no tokens");
  Engine& engine = *histories[0]->engine_;
  KvArena& arena = *histories[0]->arena_;
  const int64_t n_vocab = engine.model().config().n_vocab;
  size_t n_cells = query.size();
  std::vector<const std::vector<int32_t>*> sequences = {&query};
  for (const auto& candidate : candidates) {
    if (candidate.empty()) fail("query: empty candidate");
    n_cells += candidate.size() - 1;
    sequences.push_back(&candidate);
  }
  for (const auto* sequence : sequences) check_vocabulary(*sequence, n_vocab, "query");
  for (const EventKV* history : histories) {
    if (history->arena_.get() != &arena || history->engine_.get() != &engine) {
      fail("query: batched histories must share one engine and one arena");
    }
  }
  const std::vector<int32_t> cells = histories[0]->temporary_cells(n_cells * histories.size());
  const auto release_cells = [&] {
    for (const int32_t cell : cells) arena.release(cell);
  };
  try {
    BatchRunner runner(engine, arena);
    std::vector<int32_t> rows;
    for (size_t h = 0; h < histories.size(); ++h) {
      const std::vector<int32_t> own(
          cells.begin() + static_cast<std::ptrdiff_t>(h * n_cells),
          cells.begin() + static_cast<std::ptrdiff_t>((h + 1) * n_cells));
      const std::vector<int32_t> added =
          histories[h]->add_query(runner, query, candidates, mode, own);
      rows.insert(rows.end(), added.begin(), added.end());
    }
    std::vector<float> logits = runner.run(rows);
    release_cells();
    return logits;
  } catch (...) {
    release_cells();
    throw;
  }
}

std::vector<std::vector<CandidateScore>> EventKV::score_batched(
    std::span<EventKV* const> histories, const std::vector<int32_t>& query,
    const std::vector<std::vector<int32_t>>& candidates, QueryPositions mode) {
  const std::vector<float> logits = run_queries(histories, query, candidates, mode);
  if (histories.empty()) return {};
  const int64_t n_vocab = histories[0]->engine_->model().config().n_vocab;
  std::vector<std::vector<CandidateScore>> all;
  size_t row = 0;
  for (size_t h = 0; h < histories.size(); ++h) {
    const size_t query_row = row++;
    std::vector<CandidateScore> scores;
    for (const auto& candidate : candidates) {
      CandidateScore score{log_prob(logits.data() + query_row * n_vocab, n_vocab, candidate[0]),
                           static_cast<int32_t>(candidate.size())};
      for (size_t j = 1; j < candidate.size(); ++j) {
        score.log_prob += log_prob(logits.data() + (row++) * n_vocab, n_vocab, candidate[j]);
      }
      scores.push_back(score);
    }
    all.push_back(std::move(scores));
  }
  return all;
}

std::vector<CandidateScore> EventKV::score(const std::vector<int32_t>& query,
                                           const std::vector<std::vector<int32_t>>& candidates,
                                           QueryPositions mode) {
  EventKV* self = this;
  return score_batched({&self, 1}, query, candidates, mode).front();
}

std::vector<float> EventKV::query_logits(const std::vector<int32_t>& query, QueryPositions mode) {
  EventKV* self = this;
  return run_queries({&self, 1}, query, {}, mode);
}

EventKV EventKV::adopt(std::shared_ptr<Engine> engine, std::shared_ptr<KvArena> arena,
                       std::vector<EventState> events, std::vector<Slot> slots) {
  EventKV history(std::move(engine), std::move(arena));
  history.events_ = std::move(events);
  history.slots_ = std::move(slots);
  return history;
}

}  // namespace eventkv::kv
