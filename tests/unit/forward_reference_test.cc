// Logits of every architecture against Hugging Face transformers in float32
// on the same GGUF file and token ids (fixtures from
// tools/reference/logits_reference.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fixture_model.h"
#include "kv/context.h"
#include "model/model.h"
#include "model/test_model.h"
#include "test_support.h"
#include "util/hash.h"

namespace eventkv {
namespace {

using testing::base64_decode;
using testing::base64_floats;

constexpr float kRelativeTolerance = 1e-3f;  // of the position's max |logit|
constexpr float kArgmaxMargin = 0.01f;       // argmax must agree above this reference top-2 gap

std::vector<int32_t> decode_ids(const std::string& text) {
  const std::vector<uint8_t> bytes = base64_decode(text);
  std::vector<int32_t> ids(bytes.size() / sizeof(int32_t));
  std::memcpy(ids.data(), bytes.data(), ids.size() * sizeof(int32_t));
  return ids;
}

// Worst |ours - reference| / max|logit| over a prompt's checked logits.
float check_prompt(const model::Model& model, const nlohmann::json& prompt) {
  const auto ids = prompt["ids"].get<std::vector<int32_t>>();
  const auto n = static_cast<int64_t>(ids.size());
  const int64_t n_vocab = model.config().n_vocab;
  static std::shared_ptr<kv::Engine> engine;
  if (!engine || &engine->model() != &model) {
    engine = std::make_shared<kv::Engine>(
        std::shared_ptr<const model::Model>(&model, [](const model::Model*) {}), 2);
  }
  kv::Context context(engine, {.n_ctx = n});
  const std::vector<float> logits = context.eval(ids, /*all_logits=*/true);
  const std::vector<int32_t> top_ids = decode_ids(prompt["top_ids"].get<std::string>());
  const std::vector<float> top_values = base64_floats(prompt["top_values"].get<std::string>());
  const auto max_abs = prompt["max_abs"].get<std::vector<float>>();
  const int64_t k = static_cast<int64_t>(top_ids.size()) / n;
  float worst = 0.0f;
  for (int64_t p = 0; p < n; ++p) {
    const float* row = logits.data() + p * n_vocab;
    for (int64_t i = 0; i < k; ++i) {
      const float error = std::abs(row[top_ids[p * k + i]] - top_values[p * k + i]) / max_abs[p];
      worst = std::max(worst, error);
    }
    const float margin = top_values[p * k] - top_values[p * k + 1];
    if (margin > kArgmaxMargin) {
      const int64_t argmax = std::max_element(row, row + n_vocab) - row;
      EXPECT_EQ(argmax, top_ids[p * k]) << "position " << p << ", reference margin " << margin;
    }
  }
  const auto stride = prompt["sample_stride"].get<int64_t>();
  for (const auto& sample : prompt["samples"]) {
    const auto p = sample["position"].get<int64_t>();
    const std::vector<float> values = base64_floats(sample["values"].get<std::string>());
    for (size_t i = 0; i < values.size(); ++i) {
      const float error = std::abs(logits[p * n_vocab + i * stride] - values[i]) / max_abs[p];
      worst = std::max(worst, error);
    }
  }
  return worst;
}

class ForwardReference : public ::testing::TestWithParam<std::string> {};

TEST_P(ForwardReference, LogitsMatchTransformersFloat32) {
  const nlohmann::json fixture = testing::load_fixture("logits/" + GetParam());
  const testing::LoadedModel loaded = testing::load_fixture_model(fixture);
  if (!loaded.model)
    GTEST_SKIP() << fixture["model"] << " not downloaded (scripts/get-models --all)";
  float worst = 0.0f;
  for (const auto& prompt : fixture["prompts"])
    worst = std::max(worst, check_prompt(*loaded.model, prompt));
  RecordProperty("max_relative_error", std::to_string(worst));
  std::printf("%s: max |dlogit| / max|logit| = %.3g\n", GetParam().c_str(), worst);
  EXPECT_LE(worst, kRelativeTolerance);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ForwardReference,
                         ::testing::ValuesIn(testing::logits_fixtures(false)),
                         [](const auto& info) { return testing::fixture_test_name(info.param); });

}  // namespace
}  // namespace eventkv
