#include "compute/attention.h"

#include <algorithm>
#include <cmath>

#include "compute/simd.h"
#include "compute/vec_ops.h"
#include "util/aligned_vector.h"

namespace eventkv::compute {
namespace {

// Queries [first, end) whose visible lists are all prefixes of `keys` (the
// tokens of one sequence, causal) share one compacted copy of those keys, so
// no query computes scores for keys it does not see: in a batch of several
// histories, their rows interleave in the kv list.
struct QueryGroup {
  int64_t first = 0;
  int64_t end = 0;
  const std::vector<int32_t>* keys = nullptr;  // the longest list of the group
};

bool is_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

std::vector<QueryGroup> group_queries(const std::vector<std::vector<int32_t>>& visible) {
  std::vector<QueryGroup> groups;
  for (int64_t t = 0; t < static_cast<int64_t>(visible.size()); ++t) {
    const std::vector<int32_t>& list = visible[static_cast<size_t>(t)];
    if (!groups.empty() && is_prefix(list, *groups.back().keys)) {
      groups.back().end = t + 1;
    } else if (!groups.empty() && is_prefix(*groups.back().keys, list)) {
      groups.back().end = t + 1;
      groups.back().keys = &list;
    } else {
      groups.push_back({t, t + 1, &list});
    }
  }
  return groups;
}

// A group's keys, compacted and transposed per kv head,
// [n_head_kv][head_dim][n_padded], so scores of 16 consecutive keys come from
// head_dim vector FMAs with no reductions.
struct TransposedKeys {
  int64_t n_padded = 0;
  AlignedVector<float> values;

  const float* head(int64_t kv_head, int64_t head_dim) const {
    return values.data() + kv_head * head_dim * n_padded;
  }
};

TransposedKeys gather_keys(const AttentionShape& s, const float* k,
                           const std::vector<int32_t>& keys) {
  TransposedKeys kt;
  const auto n_keys = static_cast<int64_t>(keys.size());
  kt.n_padded = (n_keys + kLanes - 1) / kLanes * kLanes;
  kt.values.assign(static_cast<size_t>(s.n_head_kv * s.head_dim * kt.n_padded), 0.0f);
  const int64_t k_stride = s.n_head_kv * s.head_dim;
  for (int64_t j = 0; j < n_keys; ++j) {
    const float* row = k + keys[static_cast<size_t>(j)] * k_stride;
    for (int64_t c = 0; c < k_stride; ++c) kt.values[c * kt.n_padded + j] = row[c];
  }
  return kt;
}

// For kGroup query heads sharing one kv head: scores[g][j] = scale * q_g .
// key(j) for the group's first n_keys keys (rounded up to 16). Each key
// vector loaded feeds every head of the group.
template <int kGroup>
void score_keys(const float* q, int64_t q_stride, const float* kt_head, int64_t n_padded,
                int64_t head_dim, int64_t n_keys, float scale, float* scores,
                int64_t scores_stride) {
  for (int64_t j = 0; j < n_keys; j += kLanes) {
    v16f acc[kGroup] = {};
    for (int64_t d = 0; d < head_dim; ++d) {
      const v16f keys = load16(kt_head + d * n_padded + j);
      for (int g = 0; g < kGroup; ++g) acc[g] = q[g * q_stride + d] * keys + acc[g];
    }
    for (int g = 0; g < kGroup; ++g) store16(scores + g * scores_stride + j, acc[g] * scale);
  }
}

// out_g[0, head_dim_v) = sum_j p_g[j] v(keys[j]) over the first n_keys keys
// for kGroup heads, one output vector at a time; each value vector loaded
// feeds every head.
template <int kGroup>
void weighted_values(const float* p, int64_t p_stride, const float* v_head, int64_t v_stride,
                     int64_t head_dim_v, const std::vector<int32_t>& keys, int64_t n_keys,
                     float* out, int64_t out_stride) {
  for (int64_t c = 0; c + kLanes <= head_dim_v; c += kLanes) {
    v16f acc[kGroup] = {};
    for (int64_t j = 0; j < n_keys; ++j) {
      const v16f values = load16(v_head + keys[static_cast<size_t>(j)] * v_stride + c);
      for (int g = 0; g < kGroup; ++g) acc[g] = p[g * p_stride + j] * values + acc[g];
    }
    for (int g = 0; g < kGroup; ++g) store16(out + g * out_stride + c, acc[g]);
  }
}

// kGroup query heads of one kv head, for one query that sees the first
// n_keys keys of its group.
template <int kGroup>
void attend_heads(const AttentionShape& s, const float* q, const TransposedKeys& kt, const float* v,
                  const std::vector<int32_t>& keys, int64_t n_keys, float* out, int64_t kv_head,
                  int64_t first_head, std::vector<float>& scores) {
  const int64_t span = (n_keys + kLanes - 1) / kLanes * kLanes;
  scores.resize(static_cast<size_t>(kGroup * span));
  score_keys<kGroup>(q + first_head * s.head_dim, s.head_dim, kt.head(kv_head, s.head_dim),
                     kt.n_padded, s.head_dim, n_keys, s.scale, scores.data(), span);
  for (int g = 0; g < kGroup; ++g) softmax(scores.data() + g * span, n_keys);
  weighted_values<kGroup>(scores.data(), span, v + kv_head * s.head_dim_v,
                          s.n_head_kv * s.head_dim_v, s.head_dim_v, keys, n_keys,
                          out + first_head * s.head_dim_v, s.head_dim_v);
}

void attend_group(const AttentionShape& s, const float* q, const TransposedKeys& kt, const float* v,
                  const std::vector<int32_t>& keys, int64_t n_keys, float* out, int64_t kv_head,
                  std::vector<float>& scores) {
  const int64_t group = s.n_head / s.n_head_kv;
  if (n_keys == 0) {
    std::fill(out + kv_head * group * s.head_dim_v, out + (kv_head + 1) * group * s.head_dim_v,
              0.0f);
    return;
  }
  int64_t head = kv_head * group;
  const int64_t last = head + group;
  for (; head + 4 <= last; head += 4)
    attend_heads<4>(s, q, kt, v, keys, n_keys, out, kv_head, head, scores);
  for (; head + 2 <= last; head += 2)
    attend_heads<2>(s, q, kt, v, keys, n_keys, out, kv_head, head, scores);
  for (; head < last; ++head)
    attend_heads<1>(s, q, kt, v, keys, n_keys, out, kv_head, head, scores);
}

}  // namespace

void attention(const AttentionShape& shape, const float* q, int64_t n_queries, const float* k,
               const float* v, const std::vector<std::vector<int32_t>>& visible, float* out,
               ThreadPool& pool) {
  const std::vector<QueryGroup> groups = group_queries(visible);
  std::vector<TransposedKeys> group_keys(groups.size());
  std::vector<size_t> group_of(static_cast<size_t>(n_queries));
  pool.parallel_for(static_cast<int64_t>(groups.size()), [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g) {
      const QueryGroup& group = groups[static_cast<size_t>(g)];
      group_keys[static_cast<size_t>(g)] = gather_keys(shape, k, *group.keys);
      for (int64_t t = group.first; t < group.end; ++t)
        group_of[static_cast<size_t>(t)] = static_cast<size_t>(g);
    }
  });
  const int64_t q_stride = shape.n_head * shape.head_dim;
  const int64_t out_stride = shape.n_head * shape.head_dim_v;
  pool.parallel_for(n_queries * shape.n_head_kv, [&](int64_t begin, int64_t end) {
    std::vector<float> scores;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t t = task / shape.n_head_kv;
      const size_t g = group_of[static_cast<size_t>(t)];
      attend_group(shape, q + t * q_stride, group_keys[g], v, *groups[g].keys,
                   static_cast<int64_t>(visible[static_cast<size_t>(t)].size()),
                   out + t * out_stride, task % shape.n_head_kv, scores);
    }
  });
}

}  // namespace eventkv::compute
