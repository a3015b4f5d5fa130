// Exact match with llama.cpp's tokenizer on the reference corpus (2,000+
// strings), for every real model, generated model of each tokenizer kind and
// llama.cpp vocab file. Fixtures: tools/reference/tokenizer_reference.py.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "model/test_model.h"
#include "test_support.h"
#include "tokenizer/tokenizer.h"

namespace eventkv::tokenizer {
namespace {

using nlohmann::json;

// 32-bit FNV-1a over the ids as little-endian int32, as the script hashes them.
std::string fnv1a32(const std::vector<TokenId>& ids) {
  uint32_t h = 0x811C9DC5;
  for (const TokenId id : ids) {
    const auto value = static_cast<uint32_t>(id);
    for (int shift = 0; shift < 32; shift += 8) {
      h = (h ^ ((value >> shift) & 0xFF)) * 0x01000193;
    }
  }
  char hex[9];
  std::snprintf(hex, sizeof(hex), "%08x", h);
  return hex;
}

std::string describe(const std::string& text, const std::vector<TokenId>& ids) {
  std::string out = json(text).dump() + " -> [";
  for (size_t i = 0; i < ids.size() && i < 40; ++i) {
    if (i > 0) out += ' ';
    out += std::to_string(ids[i]);
  }
  return out + (ids.size() > 40 ? " ...]" : "]");
}

// Strings whose ids differ from the reference's (both modes), with the first
// few reported.
int count_mismatches(const Tokenizer& tok, const json& expected, const std::string& label) {
  const auto corpus =
      testing::load_fixture("tokenizer/corpus.json").get<std::vector<std::string>>();
  const std::string plain = expected.at("plain");
  const json& special_differs = expected.at("special_differs");
  EXPECT_EQ(plain.size(), corpus.size() * 8) << "fixture and corpus disagree; regenerate both";
  int mismatches = 0;
  for (size_t i = 0; i < corpus.size() && i * 8 < plain.size(); ++i) {
    const std::vector<TokenId> ids = tok.encode(corpus[i]);
    const std::vector<TokenId> special_ids = tok.encode(corpus[i], true);
    const std::string key = std::to_string(i);
    const bool plain_ok = fnv1a32(ids) == plain.substr(i * 8, 8);
    const bool special_ok = special_differs.contains(key)
                                ? fnv1a32(special_ids) == special_differs[key].get<std::string>()
                                : special_ids == ids;
    if (plain_ok && special_ok) continue;
    if (++mismatches <= 5) {
      ADD_FAILURE() << label << ": string " << i << (plain_ok ? " (specials parsed)" : "") << ": "
                    << describe(corpus[i], plain_ok ? special_ids : ids);
    }
  }
  std::printf("[ reference] %s: %zu strings x 2 modes, %d mismatches\n", label.c_str(),
              corpus.size(), mismatches);
  return mismatches;
}

gguf::GgufWriter generated_model(const json& flags) {
  model::TestModelSpec spec;
  for (size_t i = 0; i + 1 < flags.size(); i += 2) {
    if (flags[i] == "--tokenizer") spec.tokenizer = model::parse_test_tokenizer(flags[i + 1]);
    if (flags[i] == "--pre") spec.pre = flags[i + 1];
  }
  return model::build_test_model(spec);
}

class ReferenceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceTest, ExactMatchOnCorpus) {
  const json expected = testing::load_fixture("tokenizer/" + GetParam() + ".json");
  if (expected.at("source") == "generated") {
    const std::vector<uint8_t> bytes = generated_model(expected.at("make_test_model")).to_bytes();
    const auto file = gguf::GgufFile::parse(bytes, GetParam());
    EXPECT_EQ(count_mismatches(Tokenizer::from_gguf(file), expected, GetParam()), 0);
    return;
  }
  int checked = 0;
  for (const std::string name : expected.at("files")) {
    const std::filesystem::path path = expected.at("source") == "real"
                                           ? testing::models_dir() / name
                                           : testing::shared_dir() / "testdata" / "vocab" / name;
    if (!std::filesystem::exists(path)) continue;
    const auto file = gguf::GgufFile::open(path.string());
    EXPECT_EQ(count_mismatches(Tokenizer::from_gguf(file), expected, name), 0);
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no file of " << GetParam() << " present";
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, ReferenceTest,
                         ::testing::Values("smollm2", "gemma3", "qwen2.5", "generated-byte-level",
                                           "generated-bpe-default", "generated-bpe-gpt2",
                                           "generated-bpe-smollm", "generated-bpe-qwen2",
                                           "generated-bpe-llama3", "generated-bpe-tekken",
                                           "generated-spm", "generated-gemma4", "vocab-gpt-2",
                                           "vocab-llama-spm", "vocab-phi-3", "vocab-refact",
                                           "vocab-starcoder"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '-' || c == '.') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace eventkv::tokenizer
