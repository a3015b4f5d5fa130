// Collects tokens to compute, each with the cells it may attend to, and runs
// them as one forward pass. The bridge from event-level decisions (kv/) to
// the shape-level forward batch (compute/).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "kv/arena.h"
#include "kv/engine.h"

namespace eventkv::kv {

struct VisibleCell {
  int32_t cell;
  int32_t position;
};

class BatchRunner {
 public:
  BatchRunner(Engine& engine, KvArena& arena) : engine_(engine), arena_(arena) {}

  // Adds a token whose K/V rows go to `cell` (it must be among `visible`);
  // returns its index in the batch.
  int32_t add(int32_t token, int32_t position, int32_t cell,
              const std::vector<VisibleCell>& visible);
  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }

  // Runs the batch; returns the logits of `logit_rows` ([rows, n_vocab]).
  std::vector<float> run(const std::vector<int32_t>& logit_rows);

 private:
  Engine& engine_;
  KvArena& arena_;
  std::vector<int32_t> tokens_;
  std::vector<int32_t> positions_;
  std::vector<int32_t> cells_;
  std::vector<std::vector<VisibleCell>> visible_;
};

}  // namespace eventkv::kv
