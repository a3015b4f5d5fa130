#include "compute/attention.h"

#include <algorithm>
#include <cmath>

#include "compute/simd.h"
#include "compute/vec_ops.h"

namespace eventkv::compute {
namespace {

// Keys transposed per kv head, [n_head_kv][head_dim][n_padded], so scores of
// 16 consecutive keys come from head_dim vector FMAs with no reductions.
struct TransposedKeys {
  int64_t n_padded = 0;
  std::vector<float> values;

  const float* head(int64_t kv_head, int64_t head_dim) const {
    return values.data() + kv_head * head_dim * n_padded;
  }
};

TransposedKeys transpose_keys(const AttentionShape& s, const float* k, int64_t n_keys) {
  TransposedKeys kt;
  kt.n_padded = (n_keys + kLanes - 1) / kLanes * kLanes;
  kt.values.assign(static_cast<size_t>(s.n_head_kv * s.head_dim * kt.n_padded), 0.0f);
  const int64_t k_stride = s.n_head_kv * s.head_dim;
  for (int64_t j = 0; j < n_keys; ++j) {
    for (int64_t c = 0; c < k_stride; ++c) kt.values[c * kt.n_padded + j] = k[j * k_stride + c];
  }
  return kt;
}

// For kGroup query heads sharing one kv head: scores[g][i] = scale * q_g .
// key(begin + i) for keys [begin, end), begin a multiple of 16. Each key
// vector loaded feeds every head of the group.
template <int kGroup>
void score_span(const float* q, int64_t q_stride, const float* kt_head, int64_t n_padded,
                int64_t head_dim, int64_t begin, int64_t end, float scale, float* scores,
                int64_t scores_stride) {
  for (int64_t j = begin; j < end; j += kLanes) {
    v16f acc[kGroup] = {};
    for (int64_t d = 0; d < head_dim; ++d) {
      const v16f keys = load16(kt_head + d * n_padded + j);
      for (int g = 0; g < kGroup; ++g) acc[g] = q[g * q_stride + d] * keys + acc[g];
    }
    for (int g = 0; g < kGroup; ++g)
      store16(scores + g * scores_stride + (j - begin), acc[g] * scale);
  }
}

// Softmax over scores[0, n) where `keys` (ascending) lists the entries that
// count; the others become exactly 0.
void masked_softmax(float* scores, int64_t n, const std::vector<int32_t>& keys, int64_t begin) {
  if (static_cast<int64_t>(keys.size()) != keys.back() - keys.front() + 1) {
    std::vector<float> kept(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) kept[i] = scores[keys[i] - begin];
    std::fill(scores, scores + n, 0.0f);
    softmax(kept.data(), static_cast<int64_t>(kept.size()));
    for (size_t i = 0; i < keys.size(); ++i) scores[keys[i] - begin] = kept[i];
    return;
  }
  const int64_t first = keys.front() - begin;
  const int64_t last = keys.back() - begin + 1;
  std::fill(scores, scores + first, 0.0f);
  std::fill(scores + last, scores + n, 0.0f);
  softmax(scores + first, last - first);
}

// out_g[0, head_dim_v) = sum_i p_g[i] v(begin + i) for kGroup heads, one
// output vector at a time; each value vector loaded feeds every head.
template <int kGroup>
void weighted_values(const float* p, int64_t p_stride, const float* v_head, int64_t v_stride,
                     int64_t head_dim_v, int64_t begin, int64_t end, float* out,
                     int64_t out_stride) {
  for (int64_t c = 0; c + kLanes <= head_dim_v; c += kLanes) {
    v16f acc[kGroup] = {};
    for (int64_t j = begin; j < end; ++j) {
      const v16f values = load16(v_head + j * v_stride + c);
      for (int g = 0; g < kGroup; ++g) acc[g] = p[g * p_stride + (j - begin)] * values + acc[g];
    }
    for (int g = 0; g < kGroup; ++g) store16(out + g * out_stride + c, acc[g]);
  }
}

// All query heads of one kv head, for one query, kGroup heads at a time.
template <int kGroup>
void attend_heads(const AttentionShape& s, const float* q, const TransposedKeys& kt, const float* v,
                  const std::vector<int32_t>& keys, float* out, int64_t kv_head, int64_t first_head,
                  std::vector<float>& scores) {
  const int64_t begin = keys.front() / kLanes * kLanes;
  const int64_t end = keys.back() + 1;
  const int64_t padded_end = (end + kLanes - 1) / kLanes * kLanes;
  const int64_t span = padded_end - begin;
  scores.resize(static_cast<size_t>(kGroup * span));
  score_span<kGroup>(q + first_head * s.head_dim, s.head_dim, kt.head(kv_head, s.head_dim),
                     kt.n_padded, s.head_dim, begin, padded_end, s.scale, scores.data(), span);
  for (int g = 0; g < kGroup; ++g)
    masked_softmax(scores.data() + g * span, end - begin, keys, begin);
  weighted_values<kGroup>(scores.data(), span, v + kv_head * s.head_dim_v,
                          s.n_head_kv * s.head_dim_v, s.head_dim_v, begin, end,
                          out + first_head * s.head_dim_v, s.head_dim_v);
}

void attend_group(const AttentionShape& s, const float* q, const TransposedKeys& kt, const float* v,
                  const std::vector<int32_t>& keys, float* out, int64_t kv_head,
                  std::vector<float>& scores) {
  const int64_t group = s.n_head / s.n_head_kv;
  if (keys.empty()) {
    std::fill(out + kv_head * group * s.head_dim_v, out + (kv_head + 1) * group * s.head_dim_v,
              0.0f);
    return;
  }
  int64_t head = kv_head * group;
  const int64_t last = head + group;
  for (; head + 4 <= last; head += 4)
    attend_heads<4>(s, q, kt, v, keys, out, kv_head, head, scores);
  for (; head + 2 <= last; head += 2)
    attend_heads<2>(s, q, kt, v, keys, out, kv_head, head, scores);
  for (; head < last; ++head) attend_heads<1>(s, q, kt, v, keys, out, kv_head, head, scores);
}

}  // namespace

void attention(const AttentionShape& shape, const float* q, int64_t n_queries, const float* k,
               const float* v, int64_t n_keys, const std::vector<std::vector<int32_t>>& visible,
               float* out, ThreadPool& pool) {
  const TransposedKeys kt = transpose_keys(shape, k, n_keys);
  const int64_t q_stride = shape.n_head * shape.head_dim;
  const int64_t out_stride = shape.n_head * shape.head_dim_v;
  pool.parallel_for(n_queries * shape.n_head_kv, [&](int64_t begin, int64_t end) {
    std::vector<float> scores;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t t = task / shape.n_head_kv;
      attend_group(shape, q + t * q_stride, kt, v, visible[static_cast<size_t>(t)],
                   out + t * out_stride, task % shape.n_head_kv, scores);
    }
  });
}

}  // namespace eventkv::compute
