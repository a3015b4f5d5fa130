#include "kv/event_kv.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "compute/forward.h"
#include "compute/rope.h"
#include "kv/batch_runner.h"
#include "kv/event_batch.h"
#include "util/error.h"

namespace eventkv::kv {
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
  std::vector<float> row;
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
      if (!c.has_kv(il)) continue;
      const compute::RopeParams rope = compute::rotation_only(compute::layer_rope(c, il));
      const compute::RopeTable table = compute::make_rope_table(rope, &delta, 1);
      row.resize(static_cast<size_t>(c.kv_dim(il)));
      storage.read_k(il, slot.cell, 0, c.kv_dim(il), row.data());
      compute::apply_rope(rope, table, 0, row.data(), c.layer(il).n_head_kv, c.layer(il).head_dim);
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

void EventKV::append(std::span<const EventTokens> events, const EdgeMask& mask) {
  EventBatch batch(*engine_, *arena_);
  batch.append(*this, events, mask);
  batch.run();
}

void EventKV::recompute(std::span<const std::string> ids, const EdgeMask& mask,
                        bool with_descendants) {
  EventBatch batch(*engine_, *arena_);
  batch.recompute(*this, ids, mask, with_descendants);
  batch.run();
}

std::vector<CandidateScore> EventKV::score(const std::vector<int32_t>& query,
                                           const std::vector<std::vector<int32_t>>& candidates,
                                           QueryPositions mode) {
  EventBatch batch(*engine_, *arena_);
  batch.score(*this, query, candidates, mode);
  batch.run();
  return batch.scores(0);
}

std::vector<float> EventKV::query_logits(const std::vector<int32_t>& query, QueryPositions mode) {
  EventBatch batch(*engine_, *arena_);
  batch.score(*this, query, {}, mode);
  batch.run();
  return batch.logits(0);
}

EventKV EventKV::adopt(std::shared_ptr<Engine> engine, std::shared_ptr<KvArena> arena,
                       std::vector<EventState> events, std::vector<Slot> slots) {
  EventKV history(std::move(engine), std::move(arena));
  history.events_ = std::move(events);
  history.slots_ = std::move(slots);
  return history;
}

}  // namespace eventkv::kv
