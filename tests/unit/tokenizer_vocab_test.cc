// llama.cpp's own tokenizer test vectors: vocab-only GGUF files with input
// strings and the ids llama.cpp produces (no BOS, specials not parsed).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "test_support.h"
#include "tokenizer/tokenizer.h"

namespace eventkv::tokenizer {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The .inp format: strings separated by "\n__ggml_vocab_test__\n".
std::vector<std::string> read_inputs(const std::filesystem::path& path) {
  const std::string raw = read_file(path);
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<std::string> inputs;
  for (size_t pos = 0; pos < raw.size();) {
    const size_t next = raw.find(separator, pos);
    if (next == std::string::npos) {
      inputs.push_back(raw.substr(pos));
      break;
    }
    inputs.push_back(raw.substr(pos, next - pos));
    pos = next + separator.size();
  }
  return inputs;
}

std::vector<std::vector<TokenId>> read_outputs(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::vector<TokenId>> outputs;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ids(line);
    outputs.emplace_back();
    for (TokenId id = 0; ids >> id;) outputs.back().push_back(id);
  }
  return outputs;
}

class VocabFileTest : public ::testing::TestWithParam<std::string> {};

TEST_P(VocabFileTest, MatchesLlamaCppIds) {
  const auto path =
      testing::shared_dir() / "testdata" / "vocab" / ("ggml-vocab-" + GetParam() + ".gguf");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  const Tokenizer tok = Tokenizer::from_gguf(gguf::GgufFile::open(path.string()));
  const auto inputs = read_inputs(path.string() + ".inp");
  const auto outputs = read_outputs(path.string() + ".out");
  ASSERT_EQ(inputs.size(), outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(tok.encode(inputs[i]), outputs[i]) << "input " << i << ": '" << inputs[i] << "'";
  }
}

INSTANTIATE_TEST_SUITE_P(LlamaCpp, VocabFileTest,
                         ::testing::Values("gpt-2", "llama-spm", "phi-3", "refact", "starcoder"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace eventkv::tokenizer
