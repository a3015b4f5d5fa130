// The probe's conditions on generated and real models: pair identity after
// tokenization, the exact sparse-local control, and the visible ceiling.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "kv/event_kv.h"
#include "model/test_model.h"
#include "probe/conditions.h"
#include "probe/pairs.h"
#include "probe/scenario.h"
#include "test_support.h"
#include "util/error.h"

namespace eventkv::probe {
namespace {

Scenario tiny_scenario() {
  std::ifstream in(testing::fixture_path("scenarios/tiny.json"));
  return parse_scenario({std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()},
                        "tiny.json");
}

struct Harness {
  std::vector<uint8_t> bytes;
  std::shared_ptr<kv::Engine> engine;
  std::shared_ptr<kv::KvArena> arena;
};

// "" : the generated llama; an architecture name: a generated model of it
// (mistral3 with YaRN and its attention temperature, gemma4 with 4 layers,
// the last two kv-shared, and its tokenizer and chat format; gemma4_dense:
// the dense layout, layers 1 and 3 full); otherwise a real file.
Harness make_harness(const std::string& real_file) {
  Harness h;
  std::shared_ptr<const model::Model> model;
  const bool gemma4_dense = real_file == "gemma4_dense";
  const auto arch = gemma4_dense ? model::Arch::kGemma4 : model::arch_by_name(real_file);
  if (real_file.empty() || arch) {
    model::TestModelSpec spec;
    spec.arch = arch.value_or(model::Arch::kLlama);
    if (spec.arch == model::Arch::kMistral3) {
      spec.yarn_factor = 4.0f;
      spec.attn_temperature_scale = 0.1f;
    }
    if (spec.arch == model::Arch::kGemma4) {
      spec.n_layer = 4;
      spec.tokenizer = model::TestTokenizer::kGemma4;
      spec.gemma4_dense = gemma4_dense;
      spec.swa_pattern = 2;
    }
    h.bytes = model::build_test_model(spec).to_bytes();
    model = model::Model::from_bytes(h.bytes, "generated");
  } else {
    const std::string path = testing::real_model_path(real_file);
    if (path.empty()) return h;
    model = model::Model::load(path);
  }
  h.engine = std::make_shared<kv::Engine>(model, 2);
  h.arena = std::make_shared<kv::KvArena>(model->config(), 2048, compute::KvType::kF32);
  return h;
}

class ConditionsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ConditionsTest, PairsAreIdenticalOutsideTheSourceAndSparseLocalIsExact) {
  const Harness h = make_harness(GetParam());
  if (!h.engine) GTEST_SKIP() << GetParam() << " not downloaded";
  const Scenario scenario = tiny_scenario();
  const tokenizer::ChatFormat format = tokenizer::ChatFormat::detect(h.engine->model().file());
  for (const Cell& cell : scenario_cells(scenario)) {
    for (int64_t index = 0; index < (GetParam().find(".gguf") == std::string::npos ? 3 : 1);
         ++index) {
      const TokenizedPair pair =
          tokenize_pair(scenario, cell, index, format, h.engine->model().tokenizer());
      ASSERT_EQ(pair.events_a.size(), pair.events_b.size());
      for (size_t e = 0; e < pair.events_a.size(); ++e) {
        EXPECT_EQ(pair.events_a[e].tokens.size(), pair.events_b[e].tokens.size());
        if (static_cast<int64_t>(e) == pair.source_event) {
          EXPECT_NE(pair.events_a[e].tokens, pair.events_b[e].tokens);
        } else {
          EXPECT_EQ(pair.events_a[e].tokens, pair.events_b[e].tokens) << pair.events_a[e].id;
        }
      }
      const int64_t cells_before = h.arena->cells_in_use();
      const PairScores scores = run_conditions(pair, h.engine, h.arena);
      EXPECT_EQ(h.arena->cells_in_use(), cells_before);  // every fork and query released its rows
      ASSERT_EQ(scores.conditions.size(), kConditions.size());
      EXPECT_TRUE(scores.local_identical);
      const ConditionScores& local = scores.conditions[3];
      EXPECT_EQ(local.condition, "sparse-local");
      EXPECT_EQ(local.a.log_probs, local.b.log_probs);
      EXPECT_EQ(predicted(local.a), predicted(local.b));
      const ConditionScores& visible = scores.conditions[0];
      EXPECT_NE(visible.a.log_probs,
                visible.b.log_probs);  // the source's payload reaches the query
      EXPECT_EQ(visible.a.log_probs.size(), pair.texts.candidates.size());
    }
  }
}

// --precision fast (int8 panels and activations): the scores move by
// rounding, and sparse-local stays exact, since a row's int8 products do not
// depend on which rows share its batch.
TEST(ConditionsFast, SparseLocalStaysExactAndScoresMove) {
  model::TestModelSpec spec;
  spec.weight_type = gguf::GgmlType::kQ4_K;  // a type with int8 panels
  const std::vector<uint8_t> bytes = model::build_test_model(spec).to_bytes();
  const auto exact = std::make_shared<kv::Engine>(model::Model::from_bytes(bytes, "generated"), 2);
  const auto fast = std::make_shared<kv::Engine>(
      model::Model::from_bytes(bytes, "generated", 1 << 30, model::Panels::kInt8), 2,
      compute::ActivationPrecision::kInt8);
  const Scenario scenario = tiny_scenario();
  const tokenizer::ChatFormat format = tokenizer::ChatFormat::detect(exact->model().file());
  const TokenizedPair pair =
      tokenize_pair(scenario, scenario_cells(scenario)[0], 0, format, exact->model().tokenizer());
  const auto arena = [&](const kv::Engine& e) {
    return std::make_shared<kv::KvArena>(e.model().config(), 2048, compute::KvType::kF32);
  };
  const PairScores exact_scores = run_conditions(pair, exact, arena(*exact));
  const PairScores fast_scores = run_conditions(pair, fast, arena(*fast));
  EXPECT_TRUE(fast_scores.local_identical);
  EXPECT_EQ(fast_scores.conditions[3].a.log_probs, fast_scores.conditions[3].b.log_probs);
  EXPECT_NE(fast_scores.conditions[0].a.log_probs, exact_scores.conditions[0].a.log_probs);
  for (size_t c = 0; c < kConditions.size(); ++c) {
    for (size_t i = 0; i < exact_scores.conditions[c].a.log_probs.size(); ++i) {
      EXPECT_NEAR(fast_scores.conditions[c].a.log_probs[i],
                  exact_scores.conditions[c].a.log_probs[i], 0.5);
    }
  }
}

// Drawn pairs differ only in the source, so sparse-local is computed once
// and B gets A's scores; a pair whose sides differ after the source too has
// both sides computed, and its sparse-local scores differ.
TEST(Conditions, SparseLocalComputesBothSidesWhenTheyDifferAfterTheSource) {
  const Harness h = make_harness("");
  const Scenario scenario = tiny_scenario();
  const tokenizer::ChatFormat format = tokenizer::ChatFormat::detect(h.engine->model().file());
  const TokenizedPair drawn = tokenize_pair(scenario, scenario_cells(scenario)[0], 0, format,
                                            h.engine->model().tokenizer());
  const PairScores same = run_conditions(drawn, h.engine, h.arena);
  EXPECT_TRUE(same.local_identical);
  TokenizedPair differing = drawn;
  ASSERT_LT(drawn.source_event + 1, static_cast<int64_t>(drawn.events_b.size()));
  std::vector<int32_t>& later = differing.events_b[drawn.source_event + 1].tokens;
  later.front() = later.front() == 5 ? 6 : 5;
  const PairScores differ = run_conditions(differing, h.engine, h.arena);
  EXPECT_FALSE(differ.local_identical);
  EXPECT_NE(differ.conditions[3].a.log_probs, differ.conditions[3].b.log_probs);
  // A's side is unchanged.
  EXPECT_EQ(differ.conditions[3].a.log_probs, same.conditions[3].a.log_probs);
  EXPECT_EQ(differ.conditions[0].a.log_probs, same.conditions[0].a.log_probs);
}

// One pair at filler distances 1 and 2: the shorter is the leading part of
// the longer, and serving both from the longer's rows gives the scores each
// gets computed alone, bit for bit.
class NestedDistancesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NestedDistancesTest, ScoresAsComputedAlone) {
  const Harness h = make_harness(GetParam());
  if (!h.engine) GTEST_SKIP() << GetParam() << " not downloaded";
  const Scenario scenario = tiny_scenario();
  const tokenizer::ChatFormat format = tokenizer::ChatFormat::detect(h.engine->model().file());
  const tokenizer::Tokenizer& tok = h.engine->model().tokenizer();
  for (const std::string construction : {"ok", "noted"}) {
    const TokenizedPair near = tokenize_pair(scenario, {construction, 1}, 0, format, tok);
    const TokenizedPair far = tokenize_pair(scenario, {construction, 2}, 0, format, tok);
    ASSERT_TRUE(is_leading_part(near, far));
    EXPECT_FALSE(is_leading_part(far, near));
    const int64_t cells_before = h.arena->cells_in_use();
    const std::vector<PairScores> nested = run_conditions_nested({near, far}, h.engine, h.arena);
    EXPECT_EQ(h.arena->cells_in_use(), cells_before);
    ASSERT_EQ(nested.size(), 2u);
    const PairScores alone[] = {run_conditions(near, h.engine, h.arena),
                                run_conditions(far, h.engine, h.arena)};
    for (size_t p = 0; p < 2; ++p) {
      ASSERT_EQ(nested[p].conditions.size(), kConditions.size());
      for (size_t c = 0; c < kConditions.size(); ++c) {
        EXPECT_EQ(nested[p].conditions[c].a.log_probs, alone[p].conditions[c].a.log_probs)
            << construction << " distance " << p + 1 << " " << kConditions[c];
        EXPECT_EQ(nested[p].conditions[c].b.log_probs, alone[p].conditions[c].b.log_probs);
      }
    }
    // Distance changes what the query sees: the two pairs score differently.
    EXPECT_NE(nested[0].conditions[0].a.log_probs, nested[1].conditions[0].a.log_probs);
  }
  const TokenizedPair ok = tokenize_pair(scenario, {"ok", 1}, 0, format, tok);
  const TokenizedPair noted = tokenize_pair(scenario, {"noted", 2}, 0, format, tok);
  EXPECT_FALSE(is_leading_part(ok, noted));
  EXPECT_THROW(run_conditions_nested({ok, noted}, h.engine, h.arena), Error);
}

std::string model_test_name(const ::testing::TestParamInfo<std::string>& info) {
  return info.param.empty() ? std::string("generated") : info.param.substr(0, info.param.find('-'));
}

INSTANTIATE_TEST_SUITE_P(Models, NestedDistancesTest,
                         ::testing::Values("", "smollm2-135m-instruct-q4_1.gguf"), model_test_name);

INSTANTIATE_TEST_SUITE_P(Models, ConditionsTest,
                         ::testing::Values("", "mistral3", "gemma4", "gemma4_dense",
                                           "smollm2-135m-instruct-q4_1.gguf",
                                           "gemma-3-270m-q4_k_m.gguf"),
                         model_test_name);

}  // namespace
}  // namespace eventkv::probe
