// compute::attention against a double-precision reference, on visible lists
// of every shape the kv layer produces: causal runs of one sequence, two
// sequences interleaved in the kv list, holes (removed edges), none at all.
// A query's result must not depend on the rest of its batch, bit for bit.
#include "compute/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace eventkv::compute {
namespace {

constexpr AttentionShape kShape{6, 2, 32, 16, 0.2f};
constexpr int64_t kKeys = 40;

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(n);
  for (float& x : values) x = dist(rng);
  return values;
}

// out[h * head_dim_v + c] for one query, in double.
std::vector<double> reference(const float* q, const std::vector<float>& k,
                              const std::vector<float>& v, const std::vector<int32_t>& keys) {
  const AttentionShape& s = kShape;
  std::vector<double> out(static_cast<size_t>(s.n_head * s.head_dim_v), 0.0);
  if (keys.empty()) return out;
  for (int64_t h = 0; h < s.n_head; ++h) {
    const int64_t kv_head = h / (s.n_head / s.n_head_kv);
    std::vector<double> p;
    for (const int32_t j : keys) {
      double dot = 0.0;
      for (int64_t d = 0; d < s.head_dim; ++d) {
        dot += static_cast<double>(q[h * s.head_dim + d]) *
               k[static_cast<size_t>((j * s.n_head_kv + kv_head) * s.head_dim + d)];
      }
      p.push_back(dot * s.scale);
    }
    double max_p = p[0];
    for (const double x : p) max_p = std::max(max_p, x);
    double sum = 0.0;
    for (double& x : p) sum += (x = std::exp(x - max_p));
    for (size_t i = 0; i < keys.size(); ++i) {
      for (int64_t c = 0; c < s.head_dim_v; ++c) {
        out[static_cast<size_t>(h * s.head_dim_v + c)] +=
            p[i] / sum *
            v[static_cast<size_t>((keys[i] * s.n_head_kv + kv_head) * s.head_dim_v + c)];
      }
    }
  }
  return out;
}

std::vector<std::vector<int32_t>> visible_lists() {
  std::vector<std::vector<int32_t>> lists;
  for (int32_t t = 1; t <= 5; ++t) {  // one sequence, causal: keys 0..t-1
    std::vector<int32_t> list;
    for (int32_t j = 0; j < t + 10; ++j) list.push_back(j);
    lists.push_back(list);
  }
  for (const int32_t parity : {0, 1}) {  // two sequences interleaved after a shared prefix
    for (int32_t end = 30; end <= 34; end += 2) {
      std::vector<int32_t> list;
      for (int32_t j = 0; j < 10; ++j) list.push_back(j);
      for (int32_t j = 10 + parity; j < end; j += 2) list.push_back(j);
      lists.push_back(list);
    }
  }
  lists.push_back({0, 1, 2, 7, 8, 20, 39});  // holes
  lists.push_back({});                       // sees nothing
  lists.push_back({5});
  return lists;
}

std::vector<float> run(const std::vector<float>& q, const std::vector<float>& k,
                       const std::vector<float>& v, const std::vector<std::vector<int32_t>>& lists,
                       ThreadPool& pool) {
  std::vector<float> out(lists.size() * static_cast<size_t>(kShape.n_head * kShape.head_dim_v));
  attention(kShape, q.data(), static_cast<int64_t>(lists.size()), k.data(), v.data(), lists,
            out.data(), pool);
  return out;
}

TEST(Attention, MatchesReferenceOnEveryVisibleListShape) {
  const std::vector<std::vector<int32_t>> lists = visible_lists();
  const auto n = static_cast<int64_t>(lists.size());
  const std::vector<float> q = random_values(n * kShape.n_head * kShape.head_dim, 1);
  const std::vector<float> k = random_values(kKeys * kShape.n_head_kv * kShape.head_dim, 2);
  const std::vector<float> v = random_values(kKeys * kShape.n_head_kv * kShape.head_dim_v, 3);
  ThreadPool pool(2);
  const std::vector<float> out = run(q, k, v, lists, pool);
  const int64_t width = kShape.n_head * kShape.head_dim_v;
  for (int64_t t = 0; t < n; ++t) {
    const std::vector<double> expected =
        reference(q.data() + t * kShape.n_head * kShape.head_dim, k, v, lists[t]);
    for (int64_t i = 0; i < width; ++i)
      ASSERT_NEAR(out[t * width + i], expected[i], 1e-5) << "query " << t << " output " << i;
  }
}

TEST(Attention, QueryResultDoesNotDependOnItsBatch) {
  const std::vector<std::vector<int32_t>> lists = visible_lists();
  const auto n = static_cast<int64_t>(lists.size());
  const int64_t q_width = kShape.n_head * kShape.head_dim;
  const int64_t width = kShape.n_head * kShape.head_dim_v;
  const std::vector<float> q = random_values(n * q_width, 4);
  const std::vector<float> k = random_values(kKeys * kShape.n_head_kv * kShape.head_dim, 5);
  const std::vector<float> v = random_values(kKeys * kShape.n_head_kv * kShape.head_dim_v, 6);
  ThreadPool pool(2);
  const std::vector<float> batched = run(q, k, v, lists, pool);
  for (int64_t t = 0; t < n; ++t) {
    const std::vector<float> q_alone(q.begin() + t * q_width, q.begin() + (t + 1) * q_width);
    const std::vector<float> alone = run(q_alone, k, v, {lists[t]}, pool);
    EXPECT_EQ(0,
              std::memcmp(alone.data(), batched.data() + t * width, alone.size() * sizeof(float)))
        << "query " << t;
  }
}

}  // namespace
}  // namespace eventkv::compute
