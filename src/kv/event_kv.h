// The event-addressable KV cache: one history of events whose rows are
// tagged by event and position. Rows are computed globally (each event sees
// the retained rows before it, minus masked edges), evicted by event without
// moving anyone else's position or RoPE phase, recomputed locally, copied
// between histories, re-positioned, saved and loaded. Histories that share
// an arena can share rows (fork), copied on write.
//
// Not thread-safe; all histories of an engine run on the caller's thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compute/attention_plan.h"
#include "compute/matmul.h"
#include "kv/arena.h"
#include "kv/edge_mask.h"
#include "kv/engine.h"

namespace eventkv::kv {

class BatchRunner;
class EventBatch;

// An event as the cache takes it: already rendered into tokens.
struct EventTokens {
  std::string id;
  std::string role;
  std::vector<int32_t> tokens;
};

struct EventState {
  std::string id;
  std::string role;
  std::vector<int32_t> tokens;
  int32_t begin = 0;  // first slot (its original position)
  bool retained = true;

  int32_t end() const { return begin + static_cast<int32_t>(tokens.size()); }
};

// Where a query's tokens go: after the last position of the history
// (default: retained rows keep their phases and the query its distance), or
// right after the last retained row.
enum class QueryPositions { kAfterHistory, kAfterRetained };

struct CandidateScore {
  double log_prob = 0.0;  // sum over the candidate's tokens, teacher-forced
  int32_t n_tokens = 0;
};

class EventKV {
 public:
  EventKV(std::shared_ptr<Engine> engine, std::shared_ptr<KvArena> arena);
  ~EventKV();
  EventKV(EventKV&& other) noexcept;
  EventKV& operator=(EventKV&& other) noexcept;
  EventKV(const EventKV&) = delete;
  EventKV& operator=(const EventKV&) = delete;

  // Appends events after the last position and computes their rows: each
  // token sees the retained rows before it (minus `mask`'s edges) and its own
  // event causally. Ids must be new and non-empty. On error nothing changes.
  // (EventBatch does this, and the rest below, for several histories in one
  // forward pass.)
  void append(std::span<const EventTokens> events, const EdgeMask& mask = {});

  // Frees the rows of the given events; every other row keeps its position.
  void evict(std::span<const std::string> ids);

  // Recomputes the rows of the given retained events (and, with
  // `with_descendants`, of every later retained event) at their positions,
  // seeing what the mask allows of the rows retained now.
  void recompute(std::span<const std::string> ids, const EdgeMask& mask, bool with_descendants);

  // Copies the rows of event `id` in layers [layer_begin, layer_end) from
  // `source`, which must hold the same event at the same positions with the
  // same tokens, computed by the same model. With a token range, only the
  // event's tokens [token_begin, token_end) are copied. A layer without rows
  // of its own (gemma4's kv-shared layers) copies nothing: it attends to its
  // source layer's rows.
  void transplant(const EventKV& source, std::string_view id, int64_t layer_begin,
                  int64_t layer_end, int32_t token_begin = 0, int32_t token_end = -1);

  // Moves retained rows to positions 0, 1, 2, ... by rotating their keys
  // (exact for RoPE); the slots keep their original indices.
  void reposition();

  // A history sharing this one's first `n_events` events' rows (all by
  // default); writes to shared rows copy them first.
  EventKV fork(int64_t n_events = -1) const;

  // Teacher-forced log-probability of each candidate continuing `query`,
  // whose tokens are appended temporarily (the history is unchanged).
  std::vector<CandidateScore> score(const std::vector<int32_t>& query,
                                    const std::vector<std::vector<int32_t>>& candidates,
                                    QueryPositions mode = QueryPositions::kAfterHistory);

  // Logits after `query`, appended temporarily ([n_vocab]).
  std::vector<float> query_logits(const std::vector<int32_t>& query,
                                  QueryPositions mode = QueryPositions::kAfterHistory);

  const std::vector<EventState>& events() const { return events_; }
  const EventState& event(std::string_view id) const;  // throws when unknown
  int32_t n_slots() const { return static_cast<int32_t>(slots_.size()); }
  // The position the next appended token takes.
  int32_t next_position() const { return last_position() + 1; }
  int32_t position_of(int32_t slot) const { return slots_[static_cast<size_t>(slot)].position; }
  int32_t cell_of(int32_t slot) const { return slots_[static_cast<size_t>(slot)].cell; }
  int64_t retained_rows() const;
  size_t row_bytes() const { return arena_->storage().bytes_per_cell(); }
  size_t bytes_retained() const { return static_cast<size_t>(retained_rows()) * row_bytes(); }
  size_t bytes_full() const { return slots_.size() * row_bytes(); }  // had nothing been evicted

  const Engine& engine() const { return *engine_; }
  Engine& engine() { return *engine_; }
  const KvArena& arena() const { return *arena_; }
  KvArena& arena() { return *arena_; }
  const std::shared_ptr<Engine>& shared_engine() const { return engine_; }
  const std::shared_ptr<KvArena>& shared_arena() const { return arena_; }

  // Restores a history whose rows were written elsewhere (snapshots): cells
  // must be allocated in this history's arena, one reference each.
  struct Slot {
    int32_t cell = -1;     // -1: evicted
    int32_t position = 0;  // RoPE position of the row
    int32_t event = 0;     // index into events()
  };
  static EventKV adopt(std::shared_ptr<Engine> engine, std::shared_ptr<KvArena> arena,
                       std::vector<EventState> events, std::vector<Slot> slots);
  const std::vector<Slot>& slots() const { return slots_; }

 private:
  friend class EventBatch;

  int32_t event_index(std::string_view id) const;
  std::vector<size_t> recompute_events(std::span<const std::string> ids,
                                       bool with_descendants) const;
  // The retained rows of every event as keys of `runner`, in slot order; one
  // range per event (empty for an evicted one).
  std::vector<compute::KeyRange> add_event_keys(BatchRunner& runner) const;
  void add_event_rows(BatchRunner& runner, const std::vector<compute::KeyRange>& keys, size_t index,
                      const EdgeMask& mask) const;
  std::vector<int32_t> add_query(BatchRunner& runner, const std::vector<int32_t>& query,
                                 const std::vector<std::vector<int32_t>>& candidates,
                                 QueryPositions mode, const std::vector<int32_t>& cells) const;
  int32_t last_position() const;
  void own_cell(int32_t slot);  // copy on write: a private cell for this slot
  void release_all();

  std::shared_ptr<Engine> engine_;
  std::shared_ptr<KvArena> arena_;
  std::vector<EventState> events_;
  std::vector<Slot> slots_;  // one per original position
};

}  // namespace eventkv::kv
