#include "compute/attention.h"

#include <algorithm>

#include "compute/vec_ops.h"

namespace eventkv::compute {
namespace {

// All query heads of one kv head, for one query.
void attend_group(const AttentionShape& s, const float* q, const float* k, const float* v,
                  const std::vector<int32_t>& keys, float* out, int64_t kv_head, std::vector<float>& scores) {
  const int64_t group = s.n_head / s.n_head_kv;
  const int64_t k_stride = s.n_head_kv * s.head_dim;
  const int64_t v_stride = s.n_head_kv * s.head_dim_v;
  const auto n_keys = static_cast<int64_t>(keys.size());
  scores.resize(static_cast<size_t>(n_keys));
  for (int64_t g = 0; g < group; ++g) {
    const int64_t head = kv_head * group + g;
    const float* q_head = q + head * s.head_dim;
    float* out_head = out + head * s.head_dim_v;
    std::fill(out_head, out_head + s.head_dim_v, 0.0f);
    if (n_keys == 0) continue;
    for (int64_t j = 0; j < n_keys; ++j) {
      scores[j] = s.scale * dot(q_head, k + keys[j] * k_stride + kv_head * s.head_dim, s.head_dim);
    }
    softmax(scores.data(), n_keys);
    for (int64_t j = 0; j < n_keys; ++j) {
      axpy(out_head, scores[j], v + keys[j] * v_stride + kv_head * s.head_dim_v, s.head_dim_v);
    }
  }
}

}  // namespace

void attention(const AttentionShape& shape, const float* q, int64_t n_queries, const float* k, const float* v,
               const std::vector<std::vector<int32_t>>& visible, float* out, ThreadPool& pool) {
  const int64_t q_stride = shape.n_head * shape.head_dim;
  const int64_t out_stride = shape.n_head * shape.head_dim_v;
  pool.parallel_for(n_queries * shape.n_head_kv, [&](int64_t begin, int64_t end) {
    std::vector<float> scores;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t t = task / shape.n_head_kv;
      attend_group(shape, q + t * q_stride, k, v, visible[static_cast<size_t>(t)], out + t * out_stride,
                   task % shape.n_head_kv, scores);
    }
  });
}

}  // namespace eventkv::compute
