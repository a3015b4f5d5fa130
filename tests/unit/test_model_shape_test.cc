// Generated models of a real model's shape (make-test-model --embd ...
// --type q4_k_m --vocab-from FILE), the files the 8B-shaped measurements
// run on: llama.cpp's Q4_K_M mix, the copied vocabulary, an untied output.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "model/config.h"
#include "model/test_model.h"
#include "util/error.h"

namespace eventkv::model {
namespace {

TEST(TestModelShape, Q4KMMixCopiedVocabularyAndUntiedOutput) {
  // The vocabulary source: a generated BPE model with merges, pre qwen2.
  TestModelSpec source_spec;
  source_spec.tokenizer = TestTokenizer::kBpe;
  source_spec.pre = "qwen2";
  const std::string vocab =
      (std::filesystem::temp_directory_path() / str_cat("eventkv-vocab-", ::getpid(), ".gguf"))
          .string();
  build_test_model(source_spec).write(vocab);
  TestModelSpec spec;
  spec.arch = Arch::kQwen3;
  spec.n_layer = 16;
  spec.n_ff = 768;
  spec.q4_k_m = true;
  spec.untied_output = true;
  spec.vocab_from = vocab;
  const std::vector<uint8_t> bytes = build_test_model(spec).to_bytes();
  const gguf::GgufFile file = gguf::GgufFile::parse(bytes, "shape.gguf");
  const gguf::GgufFile source = gguf::GgufFile::open(vocab);
  std::filesystem::remove(vocab);

  const ModelConfig config = config_from_gguf(file);
  EXPECT_EQ(config.n_vocab, source.get_array("tokenizer.ggml.tokens")->count);
  EXPECT_EQ(config.n_ff, 768);
  EXPECT_FALSE(config.tied_output);
  EXPECT_EQ(file.get_string("tokenizer.ggml.pre"), source.get_string("tokenizer.ggml.pre"));
  EXPECT_EQ(file.get_uint("general.file_type"), 15u);

  // llama.cpp's use_more_bits over 16 layers: 0, 1, 4, 7, 10, 13, 14, 15.
  const std::vector<int> more_bits = {0, 1, 4, 7, 10, 13, 14, 15};
  for (int il = 0; il < 16; ++il) {
    const bool more = std::find(more_bits.begin(), more_bits.end(), il) != more_bits.end();
    const std::string prefix = "blk." + std::to_string(il) + ".";
    const gguf::GgmlType wide = more ? gguf::GgmlType::kQ6_K : gguf::GgmlType::kQ4_K;
    EXPECT_EQ(file.tensor(prefix + "attn_v.weight").type, wide) << il;
    EXPECT_EQ(file.tensor(prefix + "ffn_down.weight").type, wide) << il;
    EXPECT_EQ(file.tensor(prefix + "attn_q.weight").type, gguf::GgmlType::kQ4_K) << il;
  }
  EXPECT_EQ(file.tensor("output.weight").type, gguf::GgmlType::kQ6_K);
  EXPECT_EQ(file.tensor("token_embd.weight").type, gguf::GgmlType::kQ4_K);
}

// Gemma 4's dense layout in Q4_K_M: a tied token_embd in the output's Q6_K,
// and use_more_bits counted over the attn_v tensors there are (full layers
// have none), as llama.cpp counts them.
TEST(TestModelShape, Gemma4DenseQ4KMCountsOnlyTheAttnVTensorsThereAre) {
  TestModelSpec spec;
  spec.arch = Arch::kGemma4;
  spec.gemma4_dense = true;
  spec.n_layer = 12;
  spec.q4_k_m = true;
  const std::vector<uint8_t> bytes = build_test_model(spec).to_bytes();
  const gguf::GgufFile file = gguf::GgufFile::parse(bytes, "dense.gguf");
  EXPECT_EQ(file.tensor("token_embd.weight").type, gguf::GgmlType::kQ6_K);
  EXPECT_FALSE(file.find_tensor("output.weight"));
  EXPECT_FALSE(file.find_tensor("per_layer_token_embd.weight"));
  // Layers 5 and 11 are full. Of the 10 attn_v tensors, use_more_bits picks
  // numbers 0, 3, 6, 8 and 9: layers 0, 3, 7, 9 and 10 (counting every layer
  // would pick 6 instead of 7). Of the 12 ffn_down: 0, 3, 6, 9, 10 and 11.
  const std::vector<int> v_more = {0, 3, 7, 9, 10};
  const std::vector<int> down_more = {0, 3, 6, 9, 10, 11};
  for (int il = 0; il < 12; ++il) {
    SCOPED_TRACE("layer " + std::to_string(il));
    const std::string prefix = "blk." + std::to_string(il) + ".";
    const auto type = [](const std::vector<int>& more, int i) {
      return std::find(more.begin(), more.end(), i) != more.end() ? gguf::GgmlType::kQ6_K
                                                                  : gguf::GgmlType::kQ4_K;
    };
    EXPECT_EQ(file.find_tensor(prefix + "attn_v.weight") != nullptr, il != 5 && il != 11);
    if (il != 5 && il != 11) {
      EXPECT_EQ(file.tensor(prefix + "attn_v.weight").type, type(v_more, il));
    }
    EXPECT_EQ(file.tensor(prefix + "ffn_down.weight").type, type(down_more, il));
    EXPECT_EQ(file.tensor(prefix + "ffn_gate.weight").type, gguf::GgmlType::kQ4_K);
  }
}

}  // namespace
}  // namespace eventkv::model
