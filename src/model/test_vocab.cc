#include "model/test_vocab.h"

#include <array>
#include <cstdio>
#include <set>
#include <string_view>
#include <vector>

#include "gguf/reader.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/spm.h"
#include "util/error.h"

namespace eventkv::model {
namespace {

// Token types as GGUF stores them.
constexpr int32_t kNormal = 1;
constexpr int32_t kUnknown = 2;
constexpr int32_t kControl = 3;
constexpr int32_t kUserDefined = 4;
constexpr int32_t kByte = 6;

// Words the generated vocabularies learn, so that merges apply to ordinary
// text, code, numbers and a little non-ASCII.
constexpr std::array<std::string_view, 40> kWords = {
    "the", " the", "and",  " and", "ing",    "tion",   " of",   " to",   " is",  " a",
    "he",  "in",   "er",   "on",   " Hello", " world", "Hello", "world", " you", "'s",
    "12",  "123",  "2024", "  ",   "    ",   "\n\n",   "\n",    "()",    "();",  " {",
    "=>",  " =",   "def",  " def", "été",    "über",   "你好",  "世界",  "😀",    " light",
};

struct VocabBuilder {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  std::vector<float> scores;
  std::set<std::string> known;

  bool add(const std::string& text, int32_t type, float score = 0.0f) {
    if (!known.insert(text).second) return false;
    tokens.push_back(text);
    types.push_back(type);
    scores.push_back(score);
    return true;
  }
};

std::string byte_level(std::string_view text) {
  std::string out;
  for (const char c : text) {
    tokenizer::append_utf8(out, tokenizer::byte_to_codepoint(static_cast<uint8_t>(c)));
  }
  return out;
}

// Each word is learnt left to right, one byte character at a time: merge
// "prefix next" makes the longer prefix a token.
int64_t add_bpe(gguf::GgufWriter& writer, const std::string& pre, bool with_merges) {
  VocabBuilder vocab;
  for (int byte = 0; byte < 256; ++byte) {
    vocab.add(byte_level(std::string(1, static_cast<char>(byte))), kNormal);
  }
  std::vector<std::string> merges;
  if (with_merges) {
    for (const std::string_view word : kWords) {
      std::string prefix = byte_level(word.substr(0, 1));
      for (size_t i = 1; i < word.size(); ++i) {
        const std::string next = byte_level(word.substr(i, 1));
        if (vocab.add(prefix + next, kNormal))
          merges.push_back(std::string(prefix).append(" ").append(next));
        prefix += next;
      }
    }
  }
  const auto first_special = static_cast<uint32_t>(vocab.tokens.size());
  for (const char* special : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}) {
    vocab.add(special, kControl);
  }
  if (with_merges) {
    // The special tokens of the Llama 3 and Mistral chat formats, so those
    // formats can be rendered too.
    for (const char* special : {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
                                "<|eot_id|>", "[INST]", "[/INST]", "[SYSTEM_PROMPT]",
                                "[/SYSTEM_PROMPT]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "</s>"}) {
      vocab.add(special, kControl);
    }
    vocab.add("<tool_call>", kUserDefined);
  }
  writer.set_string("tokenizer.ggml.model", "gpt2");
  writer.set_string("tokenizer.ggml.pre", pre);
  writer.set_strings("tokenizer.ggml.tokens", vocab.tokens);
  writer.set_int32s("tokenizer.ggml.token_type", vocab.types);
  writer.set_strings("tokenizer.ggml.merges", merges);
  writer.set_uint32("tokenizer.ggml.bos_token_id", first_special + 1);  // <|im_start|>
  writer.set_uint32("tokenizer.ggml.eos_token_id", first_special + 2);  // <|im_end|>
  writer.set_bool("tokenizer.ggml.add_bos_token", false);
  return static_cast<int64_t>(vocab.tokens.size());
}

// <0x00> ... <0xFF>, the byte fallback of SentencePiece-style vocabularies.
void add_byte_tokens(VocabBuilder& vocab) {
  for (int byte = 0; byte < 256; ++byte) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "<0x%02X>", byte);
    vocab.add(hex, kByte);
  }
}

std::string space_marked(std::string_view text) {
  std::string out;
  tokenizer::append_space_marked(text, out);
  return out;
}

// Every prefix of every word (spaces as U+2581) is a piece; later words score
// lower, longer prefixes higher, so merge order is not plain left to right.
int64_t add_spm(gguf::GgufWriter& writer) {
  VocabBuilder vocab;
  vocab.add("<unk>", kUnknown);
  vocab.add("<s>", kControl);
  vocab.add("</s>", kControl);
  add_byte_tokens(vocab);
  vocab.add("<start_of_turn>", kControl);
  vocab.add("<end_of_turn>", kControl);
  vocab.add("\n", kUserDefined);
  float score = -1.0f;
  for (const std::string_view word : kWords) {
    const std::string marked = space_marked(word);
    for (size_t length = 1; length <= marked.size(); ++length) {
      const bool ends_character =
          length == marked.size() || (static_cast<uint8_t>(marked[length]) & 0xC0) != 0x80;
      if (!ends_character) continue;
      vocab.add(marked.substr(0, length), kNormal, score + static_cast<float>(length) * 0.25f);
    }
    score -= 1.0f;
  }
  for (char c = 'a'; c <= 'z'; ++c) vocab.add(std::string(1, c), kNormal, score--);
  vocab.add("\xE2\x96\x81", kNormal, score--);
  writer.set_string("tokenizer.ggml.model", "llama");
  writer.set_string("tokenizer.ggml.pre", "default");
  writer.set_strings("tokenizer.ggml.tokens", vocab.tokens);
  writer.set_int32s("tokenizer.ggml.token_type", vocab.types);
  writer.set_float32s("tokenizer.ggml.scores", vocab.scores);
  writer.set_uint32("tokenizer.ggml.bos_token_id", 1);
  writer.set_uint32("tokenizer.ggml.eos_token_id", 2);
  writer.set_uint32("tokenizer.ggml.unknown_token_id", 0);
  writer.set_bool("tokenizer.ggml.add_bos_token", true);
  writer.set_bool("tokenizer.ggml.add_space_prefix", true);
  return static_cast<int64_t>(vocab.tokens.size());
}

// The characters of UTF-8 `text`, each as its own string.
std::vector<std::string> characters(std::string_view text) {
  std::vector<std::string> out;
  for (const char byte : text) {
    if ((static_cast<uint8_t>(byte) & 0xC0) == 0x80) {
      out.back() += byte;
    } else {
      out.emplace_back(1, byte);
    }
  }
  return out;
}

// Printable ASCII, tab, U+2581, U+2581 before each ASCII letter and the
// words' characters are tokens; other characters fall back to <0xXX>. Words
// (spaces as U+2581) are learnt left to right one character at a time. "\n"
// and "\n\n" merge; "\n\n\n\n" is a token no merge makes, which only
// llama.cpp's whole-newline-run rule finds.
int64_t add_gemma4(gguf::GgufWriter& writer) {
  VocabBuilder vocab;
  vocab.add("<pad>", kControl);
  vocab.add("<eos>", kControl);
  vocab.add("<bos>", kControl);
  vocab.add("<unk>", kUnknown);
  for (const char* special : {"<|turn>", "<turn|>", "<|channel>", "<channel|>", "<|think|>",
                              "<|tool>", "<tool|>", "<|tool_call>", "<tool_call|>",
                              "<|tool_response>", "<tool_response|>", "<|\"|>", "<|image|>"}) {
    vocab.add(special, kControl);
  }
  add_byte_tokens(vocab);
  vocab.add("\t", kNormal);
  vocab.add("\n", kNormal);
  vocab.add(std::string(tokenizer::kSpaceMark), kNormal);
  for (char c = '!'; c <= '~'; ++c) vocab.add(std::string(1, c), kNormal);
  std::vector<std::string> merges = {"\n \n"};
  vocab.add("\n\n", kNormal);
  vocab.add("\n\n\n\n", kNormal);
  // A letter after a space is one token, as in real vocabularies (so words of
  // equal length mostly tokenize to equal lengths).
  for (const char* letters : {"abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}) {
    for (const char* c = letters; *c != '\0'; ++c) {
      vocab.add(std::string(tokenizer::kSpaceMark) + *c, kNormal);
      merges.push_back(std::string(tokenizer::kSpaceMark) + " " + *c);
    }
  }
  for (const std::string_view word : kWords) {
    const std::vector<std::string> chars = characters(space_marked(word));
    std::string prefix = chars[0];
    vocab.add(prefix, kNormal);
    for (size_t i = 1; i < chars.size(); ++i) {
      vocab.add(chars[i], kNormal);
      if (vocab.add(prefix + chars[i], kNormal)) merges.push_back(prefix + " " + chars[i]);
      prefix += chars[i];
    }
  }
  writer.set_string("tokenizer.ggml.model", "gemma4");
  writer.set_strings("tokenizer.ggml.tokens", vocab.tokens);
  writer.set_int32s("tokenizer.ggml.token_type", vocab.types);
  writer.set_float32s("tokenizer.ggml.scores", vocab.scores);
  writer.set_strings("tokenizer.ggml.merges", merges);
  writer.set_uint32("tokenizer.ggml.bos_token_id", 2);
  writer.set_uint32("tokenizer.ggml.eos_token_id", 1);
  writer.set_uint32("tokenizer.ggml.unknown_token_id", 3);
  writer.set_uint32("tokenizer.ggml.padding_token_id", 0);
  writer.set_bool("tokenizer.ggml.add_bos_token", true);
  return static_cast<int64_t>(vocab.tokens.size());
}

}  // namespace

TestTokenizer parse_test_tokenizer(const std::string& name) {
  if (name == "byte-level") return TestTokenizer::kByteLevel;
  if (name == "bpe") return TestTokenizer::kBpe;
  if (name == "spm") return TestTokenizer::kSpm;
  if (name == "gemma4") return TestTokenizer::kGemma4;
  fail("--tokenizer: unknown test tokenizer '", name, "' (byte-level, bpe, spm, gemma4)");
}

int64_t add_test_vocab(gguf::GgufWriter& writer, TestTokenizer kind, const std::string& pre) {
  switch (kind) {
    case TestTokenizer::kByteLevel:
      return add_bpe(writer, pre, false);
    case TestTokenizer::kBpe:
      return add_bpe(writer, pre, true);
    case TestTokenizer::kSpm:
      return add_spm(writer);
    case TestTokenizer::kGemma4:
      return add_gemma4(writer);
  }
  fail("unknown test tokenizer");
}

int64_t copy_vocab(gguf::GgufWriter& writer, const std::string& path) {
  const gguf::GgufFile file = gguf::GgufFile::open(path);
  const gguf::MetaArray* tokens = file.get_array("tokenizer.ggml.tokens");
  if (tokens == nullptr) fail(path, ": no tokenizer.ggml.tokens to copy a vocabulary from");
  for (const gguf::MetaEntry& entry : file.metadata()) {
    if (entry.key.starts_with("tokenizer.")) writer.set(entry.key, entry.value);
  }
  return static_cast<int64_t>(tokens->count);
}

}  // namespace eventkv::model
