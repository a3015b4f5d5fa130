// Weights dequantized once into f32 panels (Model::load with a panel
// budget) must give the same logits, bit for bit, as dequantizing per call:
// the panels hold the same values the per-call path computes. Checked on
// generated models of every architecture, on shapes that leave partial
// panels, and on the default real model when downloaded.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "kv/context.h"
#include "model/model.h"
#include "model/test_model.h"
#include "test_support.h"

namespace eventkv {
namespace {

constexpr int64_t kBudget = int64_t{1} << 30;

std::vector<float> prefill_logits(std::shared_ptr<const model::Model> model,
                                  const std::vector<int32_t>& prompt) {
  auto engine = std::make_shared<kv::Engine>(std::move(model), 2);
  return kv::Context(engine, {.n_ctx = 64}).eval(prompt);
}

void expect_bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
}

struct PanelCase {
  std::string name;
  model::TestModelSpec spec;
};

std::vector<PanelCase> panel_cases() {
  std::vector<PanelCase> cases;
  for (const model::Arch arch :
       {model::Arch::kLlama, model::Arch::kQwen2, model::Arch::kQwen3, model::Arch::kGemma3}) {
    for (const gguf::GgmlType type :
         {gguf::GgmlType::kQ4_1, gguf::GgmlType::kQ4_K, gguf::GgmlType::kQ6_K}) {
      model::TestModelSpec spec;
      spec.arch = arch;
      spec.weight_type = type;
      spec.seed = 5;
      cases.push_back(
          {std::string(model::arch_name(arch)) + "_" + std::string(gguf::type_name(type)), spec});
    }
  }
  // Rows and columns that end inside a panel (200 columns; 144 and 300 rows).
  model::TestModelSpec odd;
  odd.weight_type = gguf::GgmlType::kF32;
  odd.n_embd = 200;
  odd.n_head = 3;
  odd.n_head_kv = 1;
  odd.head_dim = 48;
  odd.n_ff = 300;
  cases.push_back({"llama_F32_partial_panels", odd});
  return cases;
}

void PrintTo(const PanelCase& c, std::ostream* os) {
  *os << c.name;
}

class Panels : public ::testing::TestWithParam<PanelCase> {};

TEST_P(Panels, SameLogitsBitForBit) {
  const std::vector<uint8_t> bytes = model::build_test_model(GetParam().spec).to_bytes();
  const auto plain = model::Model::from_bytes(bytes, "tiny");
  const auto packed = model::Model::from_bytes(bytes, "tiny", kBudget);
  EXPECT_EQ(plain->panel_bytes(), 0);
  ASSERT_GT(packed->panel_bytes(), 0);
  EXPECT_NE(packed->weights().layers[0].ffn_down.panels, nullptr);
  const std::vector<int32_t> prompt = {72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100};
  expect_bitwise_equal(prefill_logits(plain, prompt), prefill_logits(packed, prompt));
}

INSTANTIATE_TEST_SUITE_P(Models, Panels, ::testing::ValuesIn(panel_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(PanelsBudget, NotPackedWhenOverBudget) {
  model::TestModelSpec spec;
  const std::vector<uint8_t> bytes = model::build_test_model(spec).to_bytes();
  const auto model = model::Model::from_bytes(bytes, "tiny", 1024);
  EXPECT_EQ(model->panel_bytes(), 0);
  EXPECT_EQ(model->weights().layers[0].wq.panels, nullptr);
}

TEST(PanelsReal, DefaultModelSameLogitsBitForBit) {
  const std::string path = testing::real_model_path("smollm2-135m-instruct-q4_1.gguf");
  if (path.empty()) GTEST_SKIP() << "default model not downloaded (scripts/get-models)";
  const auto plain = model::Model::load(path);
  const auto packed = model::Model::load(path, kBudget);
  ASSERT_GT(packed->panel_bytes(), 0);
  const std::vector<int32_t> prompt =
      plain->tokenizer().encode("The hallway light was switched off an hour ago.", false);
  expect_bitwise_equal(prefill_logits(plain, prompt), prefill_logits(packed, prompt));
}

}  // namespace
}  // namespace eventkv
