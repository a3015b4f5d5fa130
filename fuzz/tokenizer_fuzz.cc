// libFuzzer target: any byte string, valid UTF-8 or not, must tokenize
// without crashing, decode back to itself (invalid bytes as U+FFFD; for SPM
// and gemma4, U+2581 as a space, which they cannot tell apart) and render as
// chat content, on a tokenizer of each kind. The first byte picks the
// tokenizer and whether specials are parsed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/reader.h"
#include "model/test_model.h"
#include "tokenizer/chat_format.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace {

using eventkv::model::TestTokenizer;
using eventkv::tokenizer::Tokenizer;

struct Subject {
  Tokenizer tok;
  eventkv::tokenizer::ChatFormat format;
  bool spaces_marked;  // pieces write spaces as U+2581
};

Subject make_subject(TestTokenizer kind, const std::string& pre, std::string_view format) {
  eventkv::model::TestModelSpec spec;
  spec.tokenizer = kind;
  spec.pre = pre;
  const std::vector<uint8_t> bytes = eventkv::model::build_test_model(spec).to_bytes();
  return {Tokenizer::from_gguf(eventkv::gguf::GgufFile::parse(bytes, "fuzz")),
          eventkv::tokenizer::ChatFormat::by_name(format),
          kind == TestTokenizer::kSpm || kind == TestTokenizer::kGemma4};
}

const std::vector<Subject>& subjects() {
  static const std::vector<Subject> kSubjects = {
      make_subject(TestTokenizer::kBpe, "default", "chatml"),
      make_subject(TestTokenizer::kBpe, "smollm", "llama3"),
      make_subject(TestTokenizer::kBpe, "qwen2", "qwen2.5"),
      make_subject(TestTokenizer::kBpe, "llama-bpe", "mistral"),
      make_subject(TestTokenizer::kBpe, "tekken", "mistral-tekken"),
      make_subject(TestTokenizer::kSpm, "default", "gemma"),
      make_subject(TestTokenizer::kGemma4, "default", "gemma4"),
  };
  return kSubjects;
}

std::string expected_decode(const Subject& subject, std::string_view text) {
  std::string expected = eventkv::tokenizer::replace_invalid_utf8(text);
  if (!subject.spaces_marked) return expected;
  const std::string_view space_mark = "\xE2\x96\x81";
  for (size_t pos = expected.find(space_mark); pos != std::string::npos;
       pos = expected.find(space_mark, pos + 1)) {
    expected.replace(pos, space_mark.size(), " ");
  }
  return expected;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Subject& subject = subjects()[data[0] % subjects().size()];
  const bool parse_special = (data[0] & 0x80) != 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::vector<eventkv::tokenizer::TokenId> ids = subject.tok.encode(text, parse_special);
  if (subject.tok.decode(ids) != expected_decode(subject, text)) std::abort();
  const std::vector<eventkv::tokenizer::ChatMessage> chat = {{"user", std::string(text)}};
  const auto rendered = subject.format.render(subject.tok, chat, true);
  if (rendered.messages.size() != 1 ||
      rendered.generation_prompt.end != static_cast<int32_t>(rendered.ids.size())) {
    std::abort();
  }
  return 0;
}
