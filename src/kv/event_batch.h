// Work on several histories of one engine and arena, computed in one forward
// pass: appended events, tokens added to a last event (decode steps),
// recomputed events and scored queries, staged in any mix, then run. The
// probe batches a donor pair's sides through it and the server the decode
// steps of its sessions (continuous batching).
//
// Staging checks the work and places its rows at once (cells allocated,
// events and tokens added to the history); run() computes them. If run()
// fails, or the batch is dropped before it runs, every placement is undone
// and the histories are as before. A history takes at most one item per
// batch. Not thread-safe, like EventKV.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compute/matmul.h"
#include "kv/batch_runner.h"
#include "kv/edge_mask.h"
#include "kv/event_kv.h"

namespace eventkv::kv {

class EventBatch {
 public:
  EventBatch(Engine& engine, KvArena& arena);
  ~EventBatch();
  EventBatch(const EventBatch&) = delete;
  EventBatch& operator=(const EventBatch&) = delete;

  // Each staging call returns its item's index: 0, 1, 2, ... in order.

  // Appends `events` after the history's last position: each token sees the
  // retained rows before it (minus `mask`'s edges) and its own event
  // causally. Ids must be new and non-empty. With `logits`, the item's
  // logits are those after its last new token.
  size_t append(EventKV& history, std::span<const EventTokens> events, const EdgeMask& mask = {},
                bool logits = false);

  // Adds `tokens` to the history's last event (which must be retained): they
  // see what its earlier tokens saw, the event causally. The item's logits
  // are those after the last of them.
  size_t extend(EventKV& history, std::span<const int32_t> tokens);

  // Recomputes the rows of the given retained events (with
  // `with_descendants`, of every later retained event too) at their
  // positions, seeing what the mask allows of the rows retained now.
  size_t recompute(EventKV& history, std::span<const std::string> ids, const EdgeMask& mask,
                   bool with_descendants);

  // Scores each candidate continuing `query` (teacher-forced), on temporary
  // cells: the history is unchanged. The item's logits are those after the
  // query's last token.
  size_t score(EventKV& history, const std::vector<int32_t>& query,
               const std::vector<std::vector<int32_t>>& candidates,
               QueryPositions mode = QueryPositions::kAfterHistory);

  // Computes everything staged, once. Without a precision, the engine's
  // (Engine::products). With a Rowwise or the Panels precision
  // (compute/matmul.h) a row is the same bits however the batch was
  // composed.
  void run(std::optional<compute::ActivationPrecision> precision = std::nullopt);

  // After run(): an item's logits ([n_vocab], copied out of the pass's; empty
  // for an item that asked for none) and a score item's candidate scores.
  std::vector<float> logits(size_t item) const;
  const std::vector<CandidateScore>& scores(size_t item) const;

 private:
  struct Item {
    EventKV* history = nullptr;
    // What run() undoes on failure: the history's sizes before the item.
    size_t events_before = 0;
    size_t slots_before = 0;
    size_t last_tokens_before = 0;   // tokens of its last event (extend)
    std::vector<int32_t> temporary;  // a query's cells, released after the run
    std::vector<int32_t> logit_rows;
    size_t first_logits = 0;                       // its first row in logits_
    std::vector<std::vector<int32_t>> candidates;  // a score item's
    std::vector<CandidateScore> scores;
  };

  Item& stage(EventKV& history);
  void check_free_cells(size_t n, std::string_view what) const;
  void undo();
  void release_temporary();
  const Item& ran(size_t item) const;

  Engine& engine_;
  KvArena& arena_;
  BatchRunner runner_;
  std::vector<Item> items_;
  std::vector<float> logits_;  // the pass's logit rows, item after item
  bool ran_ = false;
};

}  // namespace eventkv::kv
