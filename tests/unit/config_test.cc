#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "model/config.h"
#include "model/test_model.h"
#include "test_support.h"
#include "util/error.h"

namespace eventkv::model {
namespace {

using eventkv::testing::load_fixture;
using eventkv::testing::real_model_path;

ModelConfig config_of(const gguf::GgufWriter& writer) {
  const std::vector<uint8_t> bytes = writer.to_bytes();
  return config_from_gguf(gguf::GgufFile::parse(bytes, "test.gguf"));
}

std::string config_error(const gguf::GgufWriter& writer) {
  try {
    (void)config_of(writer);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The generated llama with YaRN scaling by 4 over 128 positions.
TestModelSpec yarn_spec() {
  TestModelSpec spec;
  spec.yarn_factor = 4.0f;
  return spec;
}

TEST(Config, TestModelsOfEveryArchitecture) {
  for (const Arch arch : {Arch::kLlama, Arch::kQwen2, Arch::kQwen3, Arch::kGemma3}) {
    TestModelSpec spec;
    spec.arch = arch;
    spec.swa_pattern = 2;
    const ModelConfig c = config_of(build_test_model(spec));
    SCOPED_TRACE(std::string(arch_name(arch)));
    EXPECT_EQ(c.arch, arch);
    EXPECT_EQ(c.n_embd, 256);
    EXPECT_EQ(c.n_layer, 2);
    EXPECT_EQ(c.n_head, 4);
    EXPECT_EQ(c.n_head_kv, 2);
    EXPECT_EQ(c.head_dim, 64);
    EXPECT_EQ(c.n_vocab, 259);
    EXPECT_EQ(c.rope_type, arch == Arch::kLlama ? RopeType::kNorm : RopeType::kNeox);
    EXPECT_EQ(c.qkv_bias, arch == Arch::kQwen2);
    EXPECT_EQ(c.qk_norm, arch == Arch::kQwen3 || arch == Arch::kGemma3);
    EXPECT_EQ(c.tied_output, arch != Arch::kQwen2);
    EXPECT_FLOAT_EQ(c.attention_scale, 0.125f);
    if (arch == Arch::kGemma3) {
      EXPECT_EQ(c.sliding_window, 8);
      EXPECT_TRUE(c.is_local_layer(0));
      EXPECT_FALSE(c.is_local_layer(1));
      EXPECT_EQ(c.ffn_activation, FfnActivation::kGeluTanh);
      EXPECT_TRUE(c.scale_embeddings && c.post_norms);
    } else {
      EXPECT_FALSE(c.is_local_layer(0));
    }
  }
}

TEST(Config, RefusesUnsupportedOrInconsistentFiles) {
  gguf::GgufWriter writer = build_test_model({});
  writer.set_string("general.architecture", "mamba");
  EXPECT_NE(config_error(writer).find("unsupported architecture 'mamba'"), std::string::npos);

  writer = build_test_model({});
  writer.set_uint32("llama.attention.head_count_kv", 3);
  EXPECT_NE(config_error(writer).find("not a multiple of head_count_kv"), std::string::npos);

  writer = build_test_model({});
  writer.set_uint32("llama.embedding_length", 512);
  EXPECT_NE(config_error(writer).find("token_embd.weight has ne[0]=256"), std::string::npos);

  writer = build_test_model({});
  writer.set_string("llama.block_count", "two");
  EXPECT_NE(config_error(writer).find("'llama.block_count' should be a non-negative integer"),
            std::string::npos);

  writer = build_test_model({});
  writer.set_string("llama.rope.scaling.type", "longrope");
  EXPECT_NE(config_error(writer).find("rope scaling type 'longrope'"), std::string::npos);

  writer = build_test_model(yarn_spec());
  writer.set_float32("llama.rope.scaling.factor", 0.5f);
  EXPECT_NE(config_error(writer).find("YaRN needs"), std::string::npos);
  writer = build_test_model(yarn_spec());
  writer.set_float32("llama.rope.scaling.attn_factor", NAN);
  EXPECT_NE(config_error(writer).find("YaRN's attention scale"), std::string::npos);

  gguf::GgufWriter no_embd;
  no_embd.set_string("general.architecture", "qwen3");
  for (const char* key : {"context_length", "embedding_length", "block_count",
                          "feed_forward_length", "attention.head_count"}) {
    no_embd.set_uint32(std::string("qwen3.") + key, 64);
  }
  no_embd.set_float32("qwen3.attention.layer_norm_rms_epsilon", 1e-6f);
  EXPECT_NE(config_error(no_embd).find("missing tensor 'token_embd.weight'"), std::string::npos);
}

// YaRN's keys as llama.cpp names them; its magnitude scale as transformers
// computes it (0.1 ln(factor) + 1, over the same with yarn_log_multiplier).
TEST(Config, ReadsYarnScaling) {
  gguf::GgufWriter writer = build_test_model(yarn_spec());
  ModelConfig c = config_of(writer);
  EXPECT_TRUE(c.rope_yarn);
  EXPECT_EQ(c.n_ctx_train, 512);
  EXPECT_EQ(c.rope_n_ctx_orig, 128);
  EXPECT_FLOAT_EQ(c.rope_freq_scale, 0.25f);
  EXPECT_FLOAT_EQ(c.rope_yarn_beta_fast, 32.0f);
  EXPECT_FLOAT_EQ(c.rope_yarn_beta_slow, 1.0f);
  EXPECT_NEAR(c.rope_mscale, 1.0 + 0.1 * std::log(4.0), 1e-6);
  writer.set_float32("llama.rope.scaling.yarn_log_multiplier", 0.5f);
  writer.set_float32("llama.rope.scaling.attn_factor", 2.0f);
  writer.set_float32("llama.rope.scaling.yarn_beta_fast", 16.0f);
  c = config_of(writer);
  EXPECT_NEAR(c.rope_mscale, 2.0 * (1.0 + 0.1 * std::log(4.0)) / (1.0 + 0.05 * std::log(4.0)),
              1e-6);
  EXPECT_FLOAT_EQ(c.rope_yarn_beta_fast, 16.0f);
  EXPECT_FALSE(config_of(build_test_model({})).rope_yarn);
}

TEST(Config, Gemma4LayersHeadsAndSharedKv) {
  TestModelSpec spec;
  spec.arch = Arch::kGemma4;
  spec.n_layer = 6;
  const ModelConfig c = config_of(build_test_model(spec));
  // Layers 3 and 5 are full (1 kv head of 128), the rest sliding (2 of 64);
  // layers 4 and 5 reuse the K and V of the last sliding and full layer before them.
  const std::vector<int64_t> kv_layers = {0, 1, 2, 3, 2, 3};
  for (int64_t il = 0; il < c.n_layer; ++il) {
    SCOPED_TRACE("layer " + std::to_string(il));
    const bool full = il == 3 || il == 5;
    EXPECT_EQ(c.is_local_layer(il), !full);
    EXPECT_EQ(c.layer(il).head_dim, full ? 128 : 64);
    EXPECT_EQ(c.layer(il).n_head_kv, full ? 1 : 2);
    EXPECT_EQ(c.layer(il).n_ff, il >= 4 ? 1024 : 512);
    EXPECT_EQ(c.layer(il).kv_layer, kv_layers[static_cast<size_t>(il)]);
  }
  EXPECT_EQ(c.n_rot, 128);
  EXPECT_EQ(c.n_rot_local, 64);
  ASSERT_EQ(c.rope_freq_factors.size(), 64u);
  EXPECT_EQ(c.rope_freq_factors[15], 1.0f);
  EXPECT_EQ(c.rope_freq_factors[16], 1e30f);
  EXPECT_FLOAT_EQ(c.attention_scale, 1.0f);
  EXPECT_TRUE(c.v_norm);
  EXPECT_EQ(c.n_embd_per_layer, 256);
  EXPECT_FLOAT_EQ(c.final_logit_softcap, 30.0f);
  EXPECT_EQ(c.kv_values_per_token(), 3 * 2 * 128 + 2 * 128);
}

TEST(Config, Gemma4DenseLayoutHasNoSharedKvOrPerLayerEmbeddings) {
  TestModelSpec spec;
  spec.arch = Arch::kGemma4;
  spec.gemma4_dense = true;
  spec.n_layer = 7;
  spec.swa_pattern = 3;
  spec.sliding_window = 1024;
  const ModelConfig c = config_of(build_test_model(spec));
  // Layers 2, 5 and 6 (the last) are full; every layer keeps its own K and V.
  for (int64_t il = 0; il < c.n_layer; ++il) {
    SCOPED_TRACE("layer " + std::to_string(il));
    const bool full = il == 2 || il == 5 || il == 6;
    EXPECT_EQ(c.is_local_layer(il), !full);
    EXPECT_EQ(c.layer(il).head_dim, full ? 128 : 64);
    EXPECT_EQ(c.layer(il).n_head_kv, full ? 1 : 2);
    EXPECT_EQ(c.layer(il).n_ff, 512);
    EXPECT_EQ(c.layer(il).kv_layer, il);
  }
  EXPECT_EQ(c.sliding_window, 1024);
  EXPECT_EQ(c.n_embd_per_layer, 0);
  EXPECT_EQ(c.kv_values_per_token(), 4 * 2 * 2 * 64 + 3 * 2 * 128);
}

TEST(Config, Gemma4RefusesMixtureOfExpertsAndSharingEveryLayer) {
  TestModelSpec spec;
  spec.arch = Arch::kGemma4;
  spec.n_layer = 4;
  gguf::GgufWriter writer = build_test_model(spec);
  writer.set_uint32("gemma4.expert_count", 128);
  EXPECT_NE(config_error(writer).find("mixture-of-experts"), std::string::npos);
  writer = build_test_model(spec);
  writer.set_uint32("gemma4.attention.shared_kv_layers", 4);
  EXPECT_NE(config_error(writer).find("leaves no layer"), std::string::npos);
}

TEST(Config, PerLayerArraysMustBeUniform) {
  gguf::GgufWriter writer = build_test_model({});
  writer.set_int32s("llama.attention.head_count_kv", {2, 2});
  EXPECT_EQ(config_of(writer).n_head_kv, 2);
  writer.set_int32s("llama.attention.head_count_kv", {2, 1});
  EXPECT_NE(config_error(writer).find("varies per layer"), std::string::npos);
}

// Hyperparameters of the real models against gguf-py's reading of the same
// metadata (tests/fixtures/gguf_reference.json).
TEST(Config, RealModelsMatchReference) {
  const auto models = load_fixture("gguf_reference.json")["real_models"];
  int checked = 0;
  for (const auto& model : models) {
    const std::string path = real_model_path(model["file"].get<std::string>());
    if (path.empty()) continue;
    SCOPED_TRACE(path);
    const ModelConfig c = config_from_gguf(gguf::GgufFile::open(path));
    const auto& want = model["hyperparameters"];
    EXPECT_EQ(arch_name(c.arch), want["architecture"].get<std::string>());
    EXPECT_EQ(c.n_vocab, want["n_vocab"].get<int64_t>());
    EXPECT_EQ(c.n_ctx_train, want["n_ctx_train"].get<int64_t>());
    EXPECT_EQ(c.n_embd, want["n_embd"].get<int64_t>());
    EXPECT_EQ(c.n_layer, want["n_layer"].get<int64_t>());
    EXPECT_EQ(c.n_head, want["n_head"].get<int64_t>());
    EXPECT_EQ(c.n_head_kv, want["n_head_kv"].get<int64_t>());
    EXPECT_EQ(c.head_dim, want["head_dim"].get<int64_t>());
    EXPECT_EQ(c.n_ff, want["n_ff"].get<int64_t>());
    EXPECT_FLOAT_EQ(c.rms_eps, want["rms_eps"].get<float>());
    EXPECT_FLOAT_EQ(c.rope_freq_base, want["rope_freq_base"].get<float>());
    EXPECT_EQ(c.sliding_window, want["sliding_window"].get<int64_t>());
    EXPECT_EQ(c.tied_output, want["tied_output"].get<bool>());
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no real models in models/ (run scripts/get-models --all)";
}

}  // namespace
}  // namespace eventkv::model
