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

Harness make_harness(const std::string& real_file) {
  Harness h;
  std::shared_ptr<const model::Model> model;
  if (real_file.empty()) {
    h.bytes = model::build_test_model({}).to_bytes();
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
    for (int64_t index = 0; index < (GetParam().empty() ? 3 : 1); ++index) {
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

INSTANTIATE_TEST_SUITE_P(Models, ConditionsTest,
                         ::testing::Values("", "smollm2-135m-instruct-q4_1.gguf",
                                           "gemma-3-270m-q4_k_m.gguf"),
                         [](const auto& info) {
                           return info.param.empty() ? std::string("generated")
                                                     : info.param.substr(0, info.param.find('-'));
                         });

}  // namespace
}  // namespace eventkv::probe
