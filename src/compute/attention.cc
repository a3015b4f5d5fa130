#include "compute/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compute/simd.h"
#include "compute/vec_ops.h"

namespace eventkv::compute {
namespace {

constexpr float kMasked = -std::numeric_limits<float>::infinity();

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

// scores[i] = scale * q . key(begin + i) for keys [begin, end), begin a multiple of 16.
void score_span(const float* q, const float* kt_head, int64_t n_padded, int64_t head_dim, int64_t begin, int64_t end,
                float scale, float* scores) {
  for (int64_t j = begin; j < end; j += kLanes) {
    v16f acc{};
    for (int64_t d = 0; d < head_dim; ++d) acc = q[d] * load16(kt_head + d * n_padded + j) + acc;
    store16(scores + (j - begin), acc * scale);
  }
}

// Softmax over scores[0, n) where `visible` (ascending, relative to the span)
// lists the entries that count; the others become exactly 0.
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

// out[0, head_dim_v) = sum_i p[i] v(begin + i), one output vector at a time.
void weighted_values(const float* p, const float* v_head, int64_t v_stride, int64_t head_dim_v, int64_t begin,
                     int64_t end, float* out) {
  int64_t c = 0;
  for (; c + kLanes <= head_dim_v; c += kLanes) {
    v16f acc{};
    for (int64_t j = begin; j < end; ++j) acc = p[j - begin] * load16(v_head + j * v_stride + c) + acc;
    store16(out + c, acc);
  }
  for (; c < head_dim_v; ++c) {
    float acc = 0.0f;
    for (int64_t j = begin; j < end; ++j) acc += p[j - begin] * v_head[j * v_stride + c];
    out[c] = acc;
  }
}

// All query heads of one kv head, for one query.
void attend_group(const AttentionShape& s, const float* q, const TransposedKeys& kt, const float* v,
                  const std::vector<int32_t>& keys, float* out, int64_t kv_head, std::vector<float>& scores) {
  const int64_t group = s.n_head / s.n_head_kv;
  if (keys.empty()) {
    std::fill(out + kv_head * group * s.head_dim_v, out + (kv_head + 1) * group * s.head_dim_v, 0.0f);
    return;
  }
  const int64_t begin = keys.front() / kLanes * kLanes;
  const int64_t end = keys.back() + 1;
  const int64_t padded_end = (end + kLanes - 1) / kLanes * kLanes;
  scores.resize(static_cast<size_t>(padded_end - begin));
  const int64_t v_stride = s.n_head_kv * s.head_dim_v;
  for (int64_t g = 0; g < group; ++g) {
    const int64_t head = kv_head * group + g;
    score_span(q + head * s.head_dim, kt.head(kv_head, s.head_dim), kt.n_padded, s.head_dim, begin, padded_end,
               s.scale, scores.data());
    masked_softmax(scores.data(), end - begin, keys, begin);
    weighted_values(scores.data(), v + kv_head * s.head_dim_v, v_stride, s.head_dim_v, begin, end,
                    out + head * s.head_dim_v);
  }
}

}  // namespace

void attention(const AttentionShape& shape, const float* q, int64_t n_queries, const float* k, const float* v,
               int64_t n_keys, const std::vector<std::vector<int32_t>>& visible, float* out, ThreadPool& pool) {
  const TransposedKeys kt = transpose_keys(shape, k, n_keys);
  const int64_t q_stride = shape.n_head * shape.head_dim;
  const int64_t out_stride = shape.n_head * shape.head_dim_v;
  pool.parallel_for(n_queries * shape.n_head_kv, [&](int64_t begin, int64_t end) {
    std::vector<float> scores;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t t = task / shape.n_head_kv;
      attend_group(shape, q + t * q_stride, kt, v, visible[static_cast<size_t>(t)], out + t * out_stride,
                   task % shape.n_head_kv, scores);
    }
  });
}

}  // namespace eventkv::compute
