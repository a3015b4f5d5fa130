// The event KV cache against independent constructions of the same
// computation (SPEC section 2, issue "Event-addressable KV cache").
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "compute/forward.h"
#include "compute/matmul.h"
#include "kv/context.h"
#include "kv/event_batch.h"
#include "kv/event_kv.h"
#include "kv/snapshot.h"
#include "model/test_model.h"
#include "test_support.h"
#include "util/error.h"
#include "util/half.h"
#include "util/hash.h"
#include "util/rng.h"

namespace eventkv::kv {
namespace {

constexpr double kTolerance = 1e-5;  // relative to the largest magnitude compared

struct TestCache {
  std::vector<uint8_t> bytes;
  std::shared_ptr<Engine> engine;
  std::shared_ptr<KvArena> arena;

  EventKV history() const { return EventKV(engine, arena); }
  const model::ModelConfig& config() const { return engine->model().config(); }
};

// A generated model of `arch`, or a real model file when `real_file` is set
// (an empty engine when that file is not downloaded).
TestCache make_cache(model::Arch arch, uint64_t seed = 21,
                     compute::KvType type = compute::KvType::kF32,
                     const std::string& real_file = "", float yarn_factor = 0.0f,
                     bool gemma4_dense = false) {
  TestCache setup;
  if (!real_file.empty()) {
    const std::string path = testing::real_model_path(real_file);
    if (path.empty()) return setup;
    setup.engine = std::make_shared<Engine>(model::Model::load(path), 2);
    setup.arena = std::make_shared<KvArena>(setup.config(), 1024, type);
    return setup;
  }
  model::TestModelSpec spec;
  spec.arch = arch;
  spec.seed = seed;
  spec.weight_type = gguf::GgmlType::kQ8_0;
  spec.swa_pattern = 2;  // gemma3, dense gemma4: layers alternate local (window 8) and global
  spec.gemma4_dense = gemma4_dense;
  spec.yarn_factor = yarn_factor;
  if (arch == model::Arch::kMistral3) {  // prompts cross the attention temperature's steps
    spec.yarn_original_context = 32;
    spec.attn_temperature_scale = 0.1f;
  }
  // gemma4: layers 2 and 3 reuse 0's and 1's K and V (dense: 1 and 3 are full)
  if (arch == model::Arch::kGemma4) spec.n_layer = 4;
  setup.bytes = model::build_test_model(spec).to_bytes();
  setup.engine = std::make_shared<Engine>(model::Model::from_bytes(setup.bytes, "test"), 2);
  setup.arena = std::make_shared<KvArena>(setup.config(), 1024, type);
  return setup;
}

std::vector<EventTokens> random_events(uint64_t seed, int n_events) {
  Rng rng(seed);
  std::vector<EventTokens> events;
  for (int e = 0; e < n_events; ++e) {
    EventTokens event{str_cat("e", e), e % 2 == 0 ? "user" : "assistant", {}};
    const int length = 3 + static_cast<int>(rng.below(6));
    for (int i = 0; i < length; ++i) event.tokens.push_back(static_cast<int32_t>(rng.below(256)));
    events.push_back(event);
  }
  return events;
}

std::vector<int32_t> query_tokens() {
  return {10, 20, 30, 40};
}

double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double max_diff = 0.0;
  double max_value = 1e-30;
  for (size_t i = 0; i < a.size(); ++i) {
    max_diff = std::max(max_diff, std::abs(static_cast<double>(a[i]) - b[i]));
    max_value = std::max(max_value, std::abs(static_cast<double>(b[i])));
  }
  return max_diff / max_value;
}

// K (or V) rows of every layer of a slot, as floats.
std::vector<float> rows_of(const EventKV& h, int32_t slot, bool keys) {
  const auto& storage = h.arena().storage();
  std::vector<float> out;
  for (int64_t il = 0; il < storage.n_layer(); ++il) {
    std::vector<float> row(static_cast<size_t>(keys ? storage.k_dim(il) : storage.v_dim(il)));
    if (keys) {
      storage.read_k(il, h.cell_of(slot), 0, storage.k_dim(il), row.data());
    } else {
      storage.read_v(il, h.cell_of(slot), 0, storage.v_dim(il), row.data());
    }
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

std::vector<int32_t> all_tokens(const std::vector<EventTokens>& events) {
  std::vector<int32_t> tokens;
  for (const EventTokens& e : events) tokens.insert(tokens.end(), e.tokens.begin(), e.tokens.end());
  return tokens;
}

struct ModelCase {
  std::string label;
  model::Arch arch;
  std::string real_file;     // empty: a generated model
  float yarn_factor = 0.0f;  // a generated model's YaRN rope scaling (0: none)
  bool gemma4_dense = false;
};

const std::vector<ModelCase> kModelCases = {
    {"llama", model::Arch::kLlama, ""},
    {"qwen2", model::Arch::kQwen2, ""},
    {"qwen2_yarn", model::Arch::kQwen2, "", 4.0f},
    {"mistral3", model::Arch::kMistral3, "", 4.0f},
    {"qwen3", model::Arch::kQwen3, ""},
    {"gemma3", model::Arch::kGemma3, ""},
    {"gemma4", model::Arch::kGemma4, ""},
    {"gemma4_dense", model::Arch::kGemma4, "", 0.0f, true},
    {"smollm2_135m", model::Arch::kLlama, "smollm2-135m-instruct-q4_1.gguf"},
    {"gemma3_270m", model::Arch::kGemma3, "gemma-3-270m-q4_k_m.gguf"},
    {"qwen25_coder_05b", model::Arch::kQwen2, "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"},
};

class EventKvTest : public ::testing::TestWithParam<ModelCase> {
 protected:
  void SetUp() override {
    cache_ = make_cache(GetParam().arch, 21, compute::KvType::kF32, GetParam().real_file,
                        GetParam().yarn_factor, GetParam().gemma4_dense);
    if (!cache_.engine)
      GTEST_SKIP() << GetParam().real_file << " not downloaded (scripts/get-models --all)";
  }
  TestCache cache_;
};

TEST_P(EventKvTest, ServingEveryEventEqualsAFullContextForward) {
  const TestCache& setup = cache_;
  const auto events = random_events(1, 6);
  EventKV h = setup.history();
  h.append(events);
  const std::vector<float> served = h.query_logits(query_tokens());
  Context context(setup.engine, {.n_ctx = 128});
  std::vector<int32_t> tokens = all_tokens(events);
  const auto query = query_tokens();
  tokens.insert(tokens.end(), query.begin(), query.end());
  EXPECT_LE(relative_error(served, context.eval(tokens)), kTolerance);
}

// The reference builds the masked computation directly: every history token
// sees the history causally; query tokens see it minus the evicted events.
std::vector<float> masked_query_reference(const TestCache& setup,
                                          const std::vector<EventTokens>& events,
                                          const std::vector<bool>& evicted) {
  compute::ForwardBatch batch;
  std::vector<compute::KeyRange> shown;
  for (size_t e = 0; e < events.size(); ++e) {
    const auto first = static_cast<int32_t>(batch.tokens.size());
    batch.tokens.insert(batch.tokens.end(), events[e].tokens.begin(), events[e].tokens.end());
    if (!evicted[e]) shown.push_back({first, static_cast<int32_t>(batch.tokens.size())});
  }
  const auto n_history = static_cast<int32_t>(batch.tokens.size());
  for (const int32_t token : query_tokens()) batch.tokens.push_back(token);
  batch.positions.resize(batch.tokens.size());
  std::iota(batch.positions.begin(), batch.positions.end(), 0);
  batch.cells = batch.positions;
  const compute::KeyRange all = batch.plan.add_keys(batch.cells, batch.positions);
  batch.plan.add_block(n_history, {}, {0, n_history});
  batch.plan.add_block(all.end - n_history, shown, {n_history, all.end});
  batch.logit_rows = {static_cast<int32_t>(batch.tokens.size() - 1)};
  compute::KvStorage storage = compute::KvStorage::for_model(
      setup.config(), static_cast<int64_t>(batch.tokens.size()), compute::KvType::kF32);
  return compute::forward(setup.engine->model(), storage, batch, setup.engine->pool());
}

TEST_P(EventKvTest, EvictionEqualsMaskingTheQueryFromTheEvictedEvents) {
  const TestCache& setup = cache_;
  const auto events = random_events(2, 8);  // ~45 tokens: longer than gemma3's window of 8
  const std::vector<bool> evicted = {false, true, false, false, true, true, false, false};
  EventKV h = setup.history();
  h.append(events);
  std::vector<std::string> ids;
  for (size_t e = 0; e < events.size(); ++e) {
    if (evicted[e]) ids.push_back(events[e].id);
  }
  h.evict(ids);
  EXPECT_LE(relative_error(h.query_logits(query_tokens()),
                           masked_query_reference(setup, events, evicted)),
            kTolerance);
}

EdgeMask mask_from_everyone_after(const std::vector<EventTokens>& events, size_t source) {
  EdgeMask mask;
  for (size_t e = source + 1; e < events.size(); ++e) mask.remove(events[e].id, events[source].id);
  return mask;
}

TEST_P(EventKvTest, IncrementalLocalRecomputeEqualsAFreshMaskedCompute) {
  const TestCache& setup = cache_;
  const auto events = random_events(3, 6);
  const size_t source = 1;
  const EdgeMask mask = mask_from_everyone_after(events, source);
  EventKV incremental = setup.history();
  incremental.append(events);
  incremental.recompute({{events[source + 1].id}}, mask, /*with_descendants=*/true);
  EventKV fresh = setup.history();
  fresh.append(events, mask);
  for (int32_t s = 0; s < fresh.n_slots(); ++s) {
    EXPECT_LE(relative_error(rows_of(incremental, s, true), rows_of(fresh, s, true)), kTolerance)
        << "slot " << s;
    EXPECT_LE(relative_error(rows_of(incremental, s, false), rows_of(fresh, s, false)), kTolerance)
        << "slot " << s;
  }
  // The recomputed rows cannot depend on the masked source's tokens.
  auto other_events = events;
  for (int32_t& token : other_events[source].tokens) token = (token + 97) % 256;
  EventKV other = setup.history();
  other.append(other_events);
  other.recompute({{events[source + 1].id}}, mask, true);
  for (int32_t s =
           events[source + 1].tokens.empty() ? 0 : incremental.event(events[source + 1].id).begin;
       s < other.n_slots(); ++s) {
    EXPECT_EQ(rows_of(other, s, true), rows_of(incremental, s, true)) << "slot " << s;
    EXPECT_EQ(rows_of(other, s, false), rows_of(incremental, s, false)) << "slot " << s;
  }
}

TEST_P(EventKvTest, TransplantingEveryRowReproducesTheDonorsLogits) {
  const TestCache& setup = cache_;
  auto events_a = random_events(4, 6);
  auto events_b = events_a;
  for (int32_t& token : events_b[1].tokens) token = (token + 31) % 256;  // the donor payload
  EventKV a = setup.history();
  EventKV b = setup.history();
  a.append(events_a);
  b.append(events_b);
  const std::vector<std::string> source = {events_a[1].id};
  a.evict(source);
  b.evict(source);
  const std::vector<float> a_logits = a.query_logits(query_tokens());
  EXPECT_NE(a_logits, b.query_logits(query_tokens()));  // the retained rows carry the payload
  for (const EventTokens& e : events_a) {
    if (e.id != events_a[1].id) b.transplant(a, e.id, 0, setup.config().n_layer);
  }
  EXPECT_EQ(b.query_logits(query_tokens()), a_logits);
}

// Rotates one head in double: pairs as the model's RoPE pairs them.
void rotate_reference(const model::ModelConfig& c, int64_t il, float* head, int64_t position) {
  const compute::RopeParams rope = compute::layer_rope(c, il);
  const int64_t half = rope.n_rot / 2;
  for (int64_t i = 0; i < half; ++i) {
    double unscaled =
        std::pow(static_cast<double>(rope.freq_base), -2.0 * static_cast<double>(i) / rope.n_rot);
    if (!rope.freq_factors.empty()) unscaled /= rope.freq_factors[static_cast<size_t>(i)];
    double frequency = unscaled * rope.freq_scale;
    if (rope.yarn) {  // scaled above yarn_high, unscaled below yarn_low, a linear blend between
      const double t = std::clamp((static_cast<double>(i) - rope.yarn_low) /
                                      std::max(0.001, double{rope.yarn_high - rope.yarn_low}),
                                  0.0, 1.0);
      frequency = frequency * t + unscaled * (1.0 - t);
    }
    const double theta = static_cast<double>(position) * frequency;
    const int64_t i0 = rope.pairing == compute::RopePairing::kAdjacent ? 2 * i : i;
    const int64_t i1 = rope.pairing == compute::RopePairing::kAdjacent ? 2 * i + 1 : i + half;
    const double x0 = head[i0];
    const double x1 = head[i1];
    head[i0] = static_cast<float>(x0 * std::cos(theta) - x1 * std::sin(theta));
    head[i1] = static_cast<float>(x0 * std::sin(theta) + x1 * std::cos(theta));
  }
}

TEST_P(EventKvTest, RepositionedRowsEqualRowsRotatedToTheirNewPositions) {
  const TestCache& setup = cache_;
  const model::ModelConfig& c = setup.config();
  const auto events = random_events(5, 5);
  EventKV h = setup.history();
  h.append(events);
  h.evict({{events[0].id, events[2].id}});
  std::vector<std::vector<float>> keys_before;
  std::vector<std::vector<float>> values_before;
  std::vector<int32_t> positions_before;
  for (int32_t s = 0; s < h.n_slots(); ++s) {
    if (h.cell_of(s) < 0) continue;
    keys_before.push_back(rows_of(h, s, true));
    values_before.push_back(rows_of(h, s, false));
    positions_before.push_back(h.position_of(s));
  }
  h.reposition();
  size_t r = 0;
  for (int32_t s = 0; s < h.n_slots(); ++s) {
    if (h.cell_of(s) < 0) continue;
    EXPECT_EQ(h.position_of(s), static_cast<int32_t>(r));
    std::vector<float> expected = keys_before[r];
    float* row = expected.data();  // the layers' K rows one after the other
    for (int64_t il = 0; il < c.n_layer; ++il) {
      if (!c.has_kv(il)) continue;
      for (int64_t head = 0; head < c.layer(il).n_head_kv; ++head) {
        rotate_reference(c, il, row, -positions_before[r]);
        rotate_reference(c, il, row, static_cast<int64_t>(r));
        row += c.layer(il).head_dim;
      }
    }
    EXPECT_LE(relative_error(rows_of(h, s, true), expected), kTolerance) << "slot " << s;
    EXPECT_EQ(rows_of(h, s, false), values_before[r]);
    ++r;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, EventKvTest, ::testing::ValuesIn(kModelCases),
                         [](const auto& info) { return info.param.label; });

TEST(EventKv, SlidingWindowCountsOriginalPositionsAfterEviction) {
  // gemma3 with a window of 8: evicting events must not pull older rows into
  // the window. The reference hides exactly the evicted rows and keeps
  // positions, so windows cover the same keys in both.
  const TestCache setup = make_cache(model::Arch::kGemma3);
  const auto events = random_events(6, 10);
  std::vector<bool> evicted(events.size(), false);
  evicted[7] = evicted[8] = true;
  EventKV h = setup.history();
  h.append(events);
  h.evict({{events[7].id, events[8].id}});
  const std::vector<float> served = h.query_logits(query_tokens());
  EXPECT_LE(relative_error(served, masked_query_reference(setup, events, evicted)), kTolerance);
  // Compacting positions changes which keys fall in the window, so the answer moves.
  h.reposition();
  EXPECT_GT(relative_error(h.query_logits(query_tokens(), QueryPositions::kAfterRetained), served),
            1e-4);
}

// A long append runs in micro-batches (compute::kMaxMicroBatch rows at most):
// its rows equal, bit for bit, those of the same tokens appended as two
// events in two calls, with the sliding-window layers of gemma3 included.
TEST(EventKv, MicroBatchesOfALongAppendEqualSeparateAppends) {
  const TestCache whole_setup = make_cache(model::Arch::kGemma3);
  const TestCache parts_setup = make_cache(model::Arch::kGemma3);
  constexpr int32_t kHalf = 260;  // 520 rows: two micro-batches of 260
  static_assert(2 * kHalf > compute::kMaxMicroBatch);
  Rng rng(9);
  std::vector<int32_t> tokens(2 * kHalf);
  for (int32_t& token : tokens) token = static_cast<int32_t>(rng.below(256));
  EventKV whole = whole_setup.history();
  whole.append(std::vector<EventTokens>{{"all", "user", tokens}});
  EventKV parts = parts_setup.history();
  parts.append(std::vector<EventTokens>{
      {"first", "user", std::vector<int32_t>(tokens.begin(), tokens.begin() + kHalf)}});
  parts.append(std::vector<EventTokens>{
      {"second", "user", std::vector<int32_t>(tokens.begin() + kHalf, tokens.end())}});
  for (int32_t s = 0; s < 2 * kHalf; ++s) {
    ASSERT_EQ(rows_of(whole, s, true), rows_of(parts, s, true)) << "slot " << s;
    ASSERT_EQ(rows_of(whole, s, false), rows_of(parts, s, false)) << "slot " << s;
  }
  EXPECT_EQ(whole.query_logits(query_tokens()), parts.query_logits(query_tokens()));
}

TEST(EventKv, ForkSharesRowsAndBatchedSidesMatchSeparateOnes) {
  const TestCache setup = make_cache(model::Arch::kLlama);
  auto events_a = random_events(7, 6);
  auto events_b = events_a;
  for (int32_t& token : events_b[2].tokens) token = (token + 5) % 256;
  EventKV prefix = setup.history();
  prefix.append(std::vector<EventTokens>(events_a.begin(), events_a.begin() + 2));
  const int64_t cells_before = setup.arena->cells_in_use();
  EventKV a = prefix.fork();
  EventKV b = prefix.fork();
  EXPECT_EQ(setup.arena->cells_in_use(), cells_before);  // shared, not copied
  EventBatch batch(*setup.engine, *setup.arena);
  batch.append(a, std::span(events_a).subspan(2));
  batch.append(b, std::span(events_b).subspan(2));
  batch.run();
  EventKV a_alone = setup.history();
  a_alone.append(events_a);
  EventKV b_alone = setup.history();
  b_alone.append(events_b);
  // Bit for bit: a row's arithmetic does not depend on what else is in its
  // batch (attention sums each query's own visible keys, in position order).
  EXPECT_EQ(a.query_logits(query_tokens()), a_alone.query_logits(query_tokens()));
  EXPECT_EQ(b.query_logits(query_tokens()), b_alone.query_logits(query_tokens()));
  // Writing to a shared row copies it: b's recompute leaves a untouched.
  const std::vector<float> a_logits = a.query_logits(query_tokens());
  EdgeMask mask;
  mask.remove(events_b[1].id, events_b[0].id);
  b.recompute({{events_b[1].id}}, mask, true);
  EXPECT_EQ(a.query_logits(query_tokens()), a_logits);
}

TEST(EventKv, EvictionReleasesMemory) {
  const TestCache setup = make_cache(model::Arch::kLlama);
  auto events = random_events(8, 40);
  EventKV h = setup.history();
  h.append(events);
  const size_t held = setup.arena->bytes_held();
  EXPECT_GT(held, 0u);
  EXPECT_EQ(h.bytes_retained(), h.bytes_full());
  std::vector<std::string> ids;
  for (const EventTokens& e : events) ids.push_back(e.id);
  h.evict(std::vector<std::string>(ids.begin(), ids.begin() + 20));
  EXPECT_LT(h.bytes_retained(), h.bytes_full());
  EXPECT_LT(setup.arena->bytes_held(), held);
  h.evict(std::vector<std::string>(ids.begin() + 20, ids.end()));
  EXPECT_EQ(setup.arena->bytes_held(), 0u);
}

TEST(EventKv, ScoresAreTeacherForcedLogProbabilities) {
  const TestCache setup = make_cache(model::Arch::kQwen3);
  const auto events = random_events(9, 4);
  EventKV h = setup.history();
  h.append(events);
  const std::vector<std::vector<int32_t>> candidates = {{7}, {8, 9, 10}};
  const auto scores = h.score(query_tokens(), candidates);
  ASSERT_EQ(scores.size(), 2u);
  // Reference: extend the context token by token and read each log-softmax.
  for (size_t c = 0; c < candidates.size(); ++c) {
    Context context(setup.engine, {.n_ctx = 128});
    std::vector<int32_t> tokens = all_tokens(events);
    const auto query = query_tokens();
    tokens.insert(tokens.end(), query.begin(), query.end());
    std::vector<float> logits = context.eval(tokens);
    double expected = 0.0;
    for (const int32_t token : candidates[c]) {
      const float max_logit = *std::max_element(logits.begin(), logits.end());
      double total = 0.0;
      for (const float l : logits) total += std::exp(static_cast<double>(l - max_logit));
      expected +=
          static_cast<double>(logits[static_cast<size_t>(token)] - max_logit) - std::log(total);
      logits = context.eval({&token, 1});
    }
    EXPECT_NEAR(scores[c].log_prob, expected, 1e-4) << "candidate " << c;
    EXPECT_EQ(scores[c].n_tokens, static_cast<int32_t>(candidates[c].size()));
  }
  EXPECT_EQ(setup.arena->cells_in_use(), h.retained_rows());  // temporary rows were released
}

// The captured residual stream is the one the logits are read from: the last
// layer's row of the last token, normed and projected, gives the logits the
// pass returned; and every appended row is captured once.
TEST(EventKv, CapturedResidualsGiveTheLogits) {
  const TestCache setup = make_cache(model::Arch::kQwen3);
  const model::ModelConfig& c = setup.config();
  const auto events = random_events(12, 3);
  EventKV h = setup.history();
  h.append({events.data(), 1});
  compute::ResidualCapture capture;
  setup.engine->set_capture(&capture);
  EventBatch batch(*setup.engine, *setup.arena);
  batch.append(h, std::span(events).subspan(1, 2), {}, true);
  batch.run();
  const std::vector<float>& logits = batch.logits(0);
  setup.engine->set_capture(nullptr);
  const auto n_rows = static_cast<int64_t>(events[1].tokens.size() + events[2].tokens.size());
  ASSERT_EQ(capture.rows, n_rows);
  ASSERT_EQ(capture.values.size(), static_cast<size_t>(n_rows * c.n_layer * c.n_embd));
  const float* last = capture.values.data() + ((n_rows - 1) * c.n_layer + c.n_layer - 1) * c.n_embd;
  double sum_squares = 0.0;
  for (int64_t i = 0; i < c.n_embd; ++i) sum_squares += static_cast<double>(last[i]) * last[i];
  const double scale = 1.0 / std::sqrt(sum_squares / static_cast<double>(c.n_embd) + c.rms_eps);
  std::vector<float> normed(static_cast<size_t>(c.n_embd));
  for (int64_t i = 0; i < c.n_embd; ++i) {
    normed[static_cast<size_t>(i)] = static_cast<float>(
        last[i] * scale * setup.engine->model().weights().output_norm[static_cast<size_t>(i)]);
  }
  std::vector<float> projected(static_cast<size_t>(c.n_vocab));
  compute::matmul(setup.engine->model().weights().output, normed.data(), 1, projected.data(),
                  setup.engine->pool(), compute::ActivationPrecision::kF32);
  EXPECT_LT(relative_error(projected, logits), kTolerance);
  // The first layers' rows differ from token to token: each row is its own.
  EXPECT_NE(std::vector<float>(capture.values.begin(), capture.values.begin() + c.n_embd),
            std::vector<float>(capture.values.begin() + c.n_layer * c.n_embd,
                               capture.values.begin() + (c.n_layer + 1) * c.n_embd));
}

TEST(EventKv, FailedOperationsChangeNothing) {
  const TestCache setup = make_cache(model::Arch::kLlama);
  const auto events = random_events(10, 3);
  EventKV h = setup.history();
  h.append(events);
  const int64_t cells = setup.arena->cells_in_use();
  EXPECT_THROW(h.append(std::vector<EventTokens>{{"e0", "user", {1, 2}}}), Error);  // duplicate id
  EXPECT_THROW(h.append(std::vector<EventTokens>{{"new", "user", {1, 999999}}}), Error);
  EXPECT_THROW(h.append(std::vector<EventTokens>{{"big", "user", std::vector<int32_t>(5000, 1)}}),
               Error);
  EXPECT_THROW(h.evict({{"missing"}}), Error);
  EXPECT_THROW(h.transplant(h, "missing", 0, 1), Error);
  EXPECT_EQ(h.events().size(), 3u);
  EXPECT_EQ(setup.arena->cells_in_use(), cells);
}

// One pass holding an append, a decode step, a recompute and a scored query,
// each on its own history, gives each the bits it gets alone (with a
// Rowwise precision: the f32 products' sums depend on the batch's rows).
TEST(EventBatch, MixedItemsInOnePassEqualSeparatePasses) {
  constexpr auto kRowwise = compute::ActivationPrecision::kF32Rowwise;
  const TestCache setup = make_cache(model::Arch::kLlama);
  const auto events = random_events(30, 4);
  EventKV base = setup.history();
  base.append(std::span(events).first(2));
  base.evict({{"e0"}});
  const std::vector<std::vector<int32_t>> candidates = {{1, 2}, {3}};
  const std::vector<int32_t> step = {5, 6, 7};
  const std::vector<std::string> recomputed = {"e1"};
  // Each item's work on a fork of `base`, staged into `batch`.
  const auto stage = [&](EventBatch& batch, EventKV& h, int item) {
    switch (item) {
      case 0:
        return batch.append(h, std::span(events).subspan(2), {}, true);
      case 1:
        return batch.extend(h, step);
      case 2:
        return batch.recompute(h, recomputed, {}, false);
      default:
        return batch.score(h, query_tokens(), candidates);
    }
  };
  std::vector<EventKV> together;
  for (int item = 0; item < 4; ++item) together.push_back(base.fork());
  EventBatch batch(*setup.engine, *setup.arena);
  for (int item = 0; item < 4; ++item)
    EXPECT_EQ(stage(batch, together[static_cast<size_t>(item)], item), static_cast<size_t>(item));
  batch.run(kRowwise);
  for (int item = 0; item < 4; ++item) {
    EventKV h = base.fork();
    EventBatch one(*setup.engine, *setup.arena);
    stage(one, h, item);
    one.run(kRowwise);
    const EventKV& mixed = together[static_cast<size_t>(item)];
    EXPECT_EQ(batch.logits(static_cast<size_t>(item)), one.logits(0)) << "item " << item;
    ASSERT_EQ(batch.scores(static_cast<size_t>(item)).size(), one.scores(0).size());
    for (size_t c = 0; c < one.scores(0).size(); ++c)
      EXPECT_EQ(batch.scores(static_cast<size_t>(item))[c].log_prob, one.scores(0)[c].log_prob);
    // The rows each pass wrote are the same bits.
    ASSERT_EQ(mixed.n_slots(), h.n_slots());
    for (int32_t slot = 0; slot < h.n_slots(); ++slot) {
      if (h.cell_of(slot) < 0) continue;
      EXPECT_EQ(rows_of(mixed, slot, true), rows_of(h, slot, true)) << "item " << item;
      EXPECT_EQ(rows_of(mixed, slot, false), rows_of(h, slot, false)) << "item " << item;
    }
  }
  EXPECT_TRUE(batch.logits(2).empty());
  EXPECT_EQ(together[1].events().back().tokens.size(), events[1].tokens.size() + step.size());
  EXPECT_EQ(batch.scores(3).size(), candidates.size());
  // The recompute moved e1's rows: they no longer see e0.
  const int32_t first_e1 = base.event("e1").begin;
  EXPECT_NE(rows_of(together[2], first_e1 + 1, true), rows_of(base, first_e1 + 1, true));
}

// A batch dropped before it runs undoes its placements; misuse is refused
// before anything changes.
TEST(EventBatch, DroppedAndRefusedWorkChangesNothing) {
  const TestCache setup = make_cache(model::Arch::kLlama);
  const auto events = random_events(31, 4);
  EventKV h = setup.history();
  h.append(std::span(events).first(2));
  EventKV g = h.fork();
  const int64_t cells = setup.arena->cells_in_use();
  const std::vector<int32_t> last_tokens = h.events().back().tokens;
  const std::vector<int32_t> step = {5, 6};
  EventKV queried = h.fork();
  {
    EventBatch batch(*setup.engine, *setup.arena);
    batch.append(h, std::span(events).subspan(2));
    batch.extend(g, step);
    batch.score(queried, query_tokens(), {{1}});
    EXPECT_GT(setup.arena->cells_in_use(), cells);
    EXPECT_THROW(batch.extend(h, step), Error);  // one item per history
    EXPECT_THROW(batch.logits(0), Error);        // not run yet
  }
  EXPECT_EQ(setup.arena->cells_in_use(), cells);
  EXPECT_EQ(h.events().size(), 2u);
  EXPECT_EQ(g.events().back().tokens, last_tokens);
  EXPECT_EQ(h.n_slots(), g.n_slots());

  EventBatch batch(*setup.engine, *setup.arena);
  batch.extend(g, step);
  batch.run();
  EXPECT_THROW(batch.extend(h, step), Error);  // already run
  EXPECT_THROW(batch.run(), Error);
  EXPECT_THROW(batch.logits(1), Error);  // no such item
  const TestCache other = make_cache(model::Arch::kLlama);
  EventBatch foreign(*other.engine, *other.arena);
  EXPECT_THROW(foreign.extend(h, step), Error);
  EXPECT_THROW(foreign.append(h, std::span(events).first(1), {}, true), Error);  // duplicate id
  EXPECT_EQ(h.events().size(), 2u);
}

class SnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / str_cat("eventkv-snap-", ::getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

// gemma3, and gemma4 with rows of two widths and kv-shared layers without rows.
TEST_F(SnapshotTest, RoundTripIsBitExact) {
  for (const auto& [arch, type] : {std::pair{model::Arch::kGemma3, compute::KvType::kF32},
                                   std::pair{model::Arch::kGemma3, compute::KvType::kF16},
                                   std::pair{model::Arch::kGemma4, compute::KvType::kF16}}) {
    const TestCache setup = make_cache(arch, 21, type);
    const auto events = random_events(11, 5);
    EventKV h = setup.history();
    h.append(events);
    h.evict({{events[1].id}});
    save_snapshot(h, path("h.snap"));
    auto arena = std::make_shared<KvArena>(setup.config(), 256, type);
    EventKV loaded = load_snapshot(path("h.snap"), setup.engine, arena);
    ASSERT_EQ(loaded.n_slots(), h.n_slots());
    for (int32_t s = 0; s < h.n_slots(); ++s) {
      ASSERT_EQ(loaded.cell_of(s) >= 0, h.cell_of(s) >= 0);
      EXPECT_EQ(loaded.position_of(s), h.position_of(s));
      if (h.cell_of(s) < 0) continue;
      EXPECT_EQ(rows_of(loaded, s, true), rows_of(h, s, true));
      EXPECT_EQ(rows_of(loaded, s, false), rows_of(h, s, false));
    }
    EXPECT_EQ(loaded.query_logits(query_tokens()), h.query_logits(query_tokens()));
    EXPECT_FALSE(loaded.event(events[1].id).retained);
  }
}

// A version 1 file (one K and one V width for all layers, as written before
// widths went per layer) still loads: a server's state directory survives
// the upgrade. The v1 bytes are the v2 file with its header rewritten.
TEST_F(SnapshotTest, VersionOneFilesStillLoad) {
  const TestCache setup = make_cache(model::Arch::kLlama, 22, compute::KvType::kF16);
  EventKV h = setup.history();
  h.append(random_events(13, 3));
  save_snapshot(h, path("v2.snap"));
  std::vector<uint8_t> v2;
  {
    std::ifstream in(path("v2.snap"), std::ios::binary);
    v2.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // magic 8, version 4, fingerprint 8, type 4, n_layer 4, then per layer
  // the K and V widths (4 + 4 bytes), all equal here.
  constexpr size_t kWidthsAt = 8 + 4 + 8 + 4 + 4;
  const size_t n_layer = static_cast<size_t>(setup.config().n_layer);
  std::vector<uint8_t> v1(v2.begin(), v2.begin() + kWidthsAt + 8);
  v1[8] = 1;
  v1.insert(v1.end(), v2.begin() + static_cast<std::ptrdiff_t>(kWidthsAt + 8 * n_layer),
            v2.end() - 8);
  const uint64_t checksum = fnv1a64(v1);
  v1.resize(v1.size() + 8);
  std::memcpy(v1.data() + v1.size() - 8, &checksum, 8);
  std::ofstream(path("v1.snap"), std::ios::binary)
      .write(reinterpret_cast<const char*>(v1.data()), static_cast<std::streamsize>(v1.size()));
  auto arena = std::make_shared<KvArena>(setup.config(), 256, compute::KvType::kF16);
  EventKV loaded = load_snapshot(path("v1.snap"), setup.engine, arena);
  EXPECT_EQ(loaded.query_logits(query_tokens()), h.query_logits(query_tokens()));
}

std::string load_error(const std::string& file, const TestCache& setup) {
  try {
    auto arena = std::make_shared<KvArena>(setup.config(), 256, compute::KvType::kF32);
    (void)load_snapshot(file, setup.engine, arena);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_F(SnapshotTest, CorruptTruncatedAndForeignSnapshotsAreRefused) {
  const TestCache setup = make_cache(model::Arch::kLlama);
  EventKV h = setup.history();
  h.append(random_events(12, 3));
  save_snapshot(h, path("good.snap"));
  std::vector<char> bytes;
  {
    std::ifstream in(path("good.snap"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const auto write = [&](const std::string& name, const std::vector<char>& content) {
    std::ofstream(path(name), std::ios::binary)
        .write(content.data(), static_cast<std::streamsize>(content.size()));
    return path(name);
  };
  auto flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x40;
  EXPECT_NE(load_error(write("flipped.snap", flipped), setup).find("checksum"), std::string::npos);
  EXPECT_NE(load_error(write("cut.snap",
                             std::vector<char>(bytes.begin(), bytes.begin() + bytes.size() / 3)),
                       setup)
                .find("checksum"),
            std::string::npos);
  EXPECT_NE(
      load_error(write("junk.snap", {'n', 'o', 'p', 'e'}), setup).find("not an eventkv snapshot"),
      std::string::npos);
  EXPECT_NE(load_error(path("absent.snap"), setup).find("cannot open"), std::string::npos);
  const TestCache other = make_cache(model::Arch::kLlama, 99);
  EXPECT_NE(load_error(path("good.snap"), other).find("different model"), std::string::npos);
  EXPECT_THROW(save_snapshot(h, path("no/such/dir/x.snap")), Error);
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos)
        << "left " << entry.path();
  }
}

}  // namespace
}  // namespace eventkv::kv
