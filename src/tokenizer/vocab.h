// The vocabulary a GGUF file declares: token texts, types and scores, the
// special ids and flags, with llama.cpp's defaults where keys are absent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace eventkv::gguf {
class GgufFile;
}

namespace eventkv::tokenizer {

using TokenId = int32_t;
inline constexpr TokenId kNoToken = -1;

enum class TokenizerKind { kBpe, kSpm };  // tokenizer.ggml.model "gpt2" / "llama"

// Token attributes as bits (a token may gain kControl on top of its type).
enum TokenAttr : uint8_t {
  kAttrNormal = 1,
  kAttrUnknown = 2,
  kAttrControl = 4,
  kAttrUserDefined = 8,
  kAttrUnused = 16,
  kAttrByte = 32,
  kAttrRstrip = 64,  // white space after the token is dropped when it is cut out
};

struct Vocab {
  std::string file_name;  // for error messages
  TokenizerKind kind = TokenizerKind::kBpe;
  std::string pre;  // tokenizer.ggml.pre ("default" when absent)
  std::vector<std::string> texts;
  std::vector<float> scores;
  std::vector<uint8_t> attrs;
  std::unordered_map<std::string_view, TokenId> ids;  // keys view `texts`: never copy a Vocab

  TokenId bos = kNoToken;
  TokenId eos = kNoToken;
  TokenId eot = kNoToken;
  TokenId unk = kNoToken;
  bool add_bos = false;
  bool add_space_prefix = false;
  std::vector<TokenId> end_of_generation;  // sorted
  // Control, user-defined and unknown tokens, longest text first (then by id):
  // the order in which they are cut out of raw text.
  std::vector<TokenId> special_tokens;

  Vocab() = default;
  Vocab(const Vocab&) = delete;
  Vocab& operator=(const Vocab&) = delete;

  int32_t size() const { return static_cast<int32_t>(texts.size()); }
  std::optional<TokenId> find(std::string_view text) const;
  std::optional<TokenId> find_byte_token(uint8_t byte) const;  // the token "<0xAB>"
  bool has_attr(TokenId id, TokenAttr attr) const { return (attrs[id] & attr) != 0; }
};

// Fills `vocab` from the file's tokenizer.* keys; throws Error naming the file.
void load_vocab(const gguf::GgufFile& file, Vocab& vocab);

}  // namespace eventkv::tokenizer
