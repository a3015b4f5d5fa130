// Scaled dot-product attention that follows an AttentionPlan: rows read
// their keys and values straight from the KV storage, range by range, with
// an online softmax, so no copy of a layer's K or V is ever made. Callers
// express causal order, events and removed edges in the plan; this code
// knows only shapes.
#pragma once

#include <cstdint>
#include <span>

#include "compute/attention_plan.h"
#include "compute/kv_storage.h"
#include "compute/thread_pool.h"

namespace eventkv::compute {

struct AttentionShape {
  int64_t n_head = 0;
  int64_t n_head_kv = 0;   // query head h reads kv head h / (n_head / n_head_kv)
  int64_t head_dim = 0;    // of queries and keys, a multiple of 16
  int64_t head_dim_v = 0;  // a multiple of 16
  float scale = 1.0f;      // multiplies q . k before the softmax
};

// Keys per softmax segment: a row's keys are summed in segments of this many
// keys, counted from the first key it could see before any sliding window;
// each segment's partial softmax is merged into the row's total in order.
inline constexpr int32_t kSegmentKeys = 256;

// Where a layer's attention reads and writes.
struct AttentionIo {
  const float* q = nullptr;            // [rows, n_head * head_dim]
  const int32_t* positions = nullptr;  // [rows] RoPE positions of the rows
  const KvStorage* kv = nullptr;       // keys and values of plan.key_cells
  int64_t layer = 0;
  int64_t window = 0;    // > 0: skip keys at positions <= p - window
  float* out = nullptr;  // [rows, n_head * head_dim_v]
};

// Attention of the rows of `blocks` (numbered from 0; see
// AttentionPlan::slice). A row that sees no key gets zeros. A row's result
// depends only on the keys it sees and their order, not on the rest of the
// batch or on the number of threads, bit for bit. Cost: per row and head one
// pass over its keys; memory per task is a few tiles of 16 keys.
void attention(const AttentionShape& shape, const AttentionPlan& plan,
               std::span<const QueryBlock> blocks, const AttentionIo& io, ThreadPool& pool);

}  // namespace eventkv::compute
