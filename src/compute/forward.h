// The forward pass of every supported architecture, one parameterized
// implementation driven by ModelConfig. It reads and writes KV rows by cell
// and attends as an AttentionPlan says, so callers (kv/) decide causality,
// eviction and masked edges.
#pragma once

#include <cstdint>
#include <vector>

#include "compute/attention_plan.h"
#include "compute/kv_storage.h"
#include "compute/matmul.h"
#include "compute/rope.h"
#include "compute/thread_pool.h"
#include "model/model.h"

namespace eventkv::compute {

struct ForwardBatch {
  std::vector<int32_t> tokens;     // [n]
  std::vector<int32_t> positions;  // [n] RoPE positions
  std::vector<int32_t> cells;      // [n] cells that receive each token's K and V rows
  // What each row attends to (its own cell included). Local (sliding window)
  // layers further drop keys with position_q - position_k >= window.
  AttentionPlan plan;
  std::vector<int32_t> logit_rows;  // batch indices whose logits are computed
};

// Rows per forward step: longer batches run in micro-batches of at most
// this many rows (in row order, each seeing the rows of the ones before),
// so activation memory is bounded whatever the batch's length.
inline constexpr int64_t kMaxMicroBatch = 512;

// The residual stream after every layer of every row a forward pass
// computes, for hooks that read it (the Python package's hook_resid_post).
// Rows are appended in batch order across passes: [row][layer][n_embd].
struct ResidualCapture {
  std::vector<float> values;
  int64_t rows = 0;
};

// Runs the batch: writes its K/V rows into `kv` and returns the logits of
// logit_rows, [logit_rows.size(), n_vocab]. Throws Error for an invalid
// token id or an inconsistent batch. Cost: O(n * params + n * visible * dims).
// `precision` applies to the weight products of batches under 3 tokens (see
// compute/matmul.h); the default keeps every product exact in f32. A row's
// result does not depend on how the batch is split into micro-batches. With
// `capture`, every row's residual stream after each layer is appended to it.
std::vector<float> forward(const model::Model& model, KvStorage& kv, const ForwardBatch& batch,
                           ThreadPool& pool,
                           ActivationPrecision precision = ActivationPrecision::kF32,
                           ResidualCapture* capture = nullptr);

}  // namespace eventkv::compute
