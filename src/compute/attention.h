// Scaled dot-product attention over an explicit list of visible keys per
// query: callers express causal order, sliding windows and removed event
// edges as these lists; this code knows only shapes.
#pragma once

#include <cstdint>
#include <vector>

#include "compute/thread_pool.h"

namespace eventkv::compute {

struct AttentionShape {
  int64_t n_head = 0;
  int64_t n_head_kv = 0;  // query head h reads kv head h / (n_head / n_head_kv)
  int64_t head_dim = 0;   // of queries and keys
  int64_t head_dim_v = 0;
  float scale = 1.0f;  // multiplies q . k before the softmax
};

// q: [n_queries, n_head * head_dim]; k: [n_keys, n_head_kv * head_dim];
// v: [n_keys, n_head_kv * head_dim_v]; visible[t]: ascending indices into
// k/v that query t attends to. out: [n_queries, n_head * head_dim_v]. A query
// that sees no key gets zeros. Sums run over each query's visible keys in
// list order, so a query's result does not depend on the other queries or
// keys of the batch. Cost: per query and head, one pass over its visible
// keys; plus one compacted copy of the keys per run of queries whose lists
// are prefixes of one list (a sequence's causal tokens), per call.
void attention(const AttentionShape& shape, const float* q, int64_t n_queries, const float* k,
               const float* v, const std::vector<std::vector<int32_t>>& visible, float* out,
               ThreadPool& pool);

}  // namespace eventkv::compute
