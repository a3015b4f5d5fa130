// Collects rows to compute and the keys they read as an AttentionPlan, and
// runs them as one forward pass. The bridge from event-level decisions (kv/)
// to the shape-level forward batch (compute/): callers add each history's
// keys event by event, then each event's rows with the ranges it may see.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "compute/forward.h"
#include "kv/arena.h"
#include "kv/engine.h"

namespace eventkv::kv {

class BatchRunner {
 public:
  BatchRunner(Engine& engine, KvArena& arena) : engine_(engine), arena_(arena) {}

  // Adds keys the batch reads (cells and their positions); returns their range.
  compute::KeyRange add_keys(std::span<const int32_t> cells, std::span<const int32_t> positions) {
    return batch_.plan.add_keys(cells, positions);
  }

  // Adds one row per token of `tokens`, whose K/V rows go to the cells of the
  // keys `own` (added before, in order): the rows see every key of `context`,
  // then `own` causally. Returns the batch index of the first row.
  int32_t add_rows(std::span<const int32_t> tokens, std::span<const compute::KeyRange> context,
                   compute::KeyRange own);
  int32_t size() const { return static_cast<int32_t>(batch_.tokens.size()); }

  // Runs the batch; returns the logits of `logit_rows` ([rows, n_vocab]).
  // Without a precision, the engine's (Engine::products).
  std::vector<float> run(const std::vector<int32_t>& logit_rows,
                         std::optional<compute::ActivationPrecision> precision = std::nullopt);

 private:
  Engine& engine_;
  KvArena& arena_;
  compute::ForwardBatch batch_;
};

}  // namespace eventkv::kv
