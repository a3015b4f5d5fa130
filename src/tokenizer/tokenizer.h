// A model's tokenizer, built from GGUF metadata alone: byte-level BPE
// ("gpt2") with its family's pre-tokenizer, SentencePiece-style merges by
// score with byte fallback ("llama"), or BPE over raw UTF-8 with spaces as
// U+2581 and byte fallback ("gemma4"). Token ids match llama.cpp's exactly.
//
// Invalid UTF-8 input is not an error: each byte that does not begin a
// well-formed sequence is tokenized as U+FFFD (see unicode.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace eventkv::gguf {
class GgufFile;
}

namespace eventkv::tokenizer {

struct TokenizerData;

// Immutable after construction; copies share the tables; const methods are
// safe to call from many threads at once.
class Tokenizer {
 public:
  // Throws Error naming the file when the tokenizer is missing, malformed or of
  // an unsupported kind. Cost: one pass over the vocabulary and merges.
  static Tokenizer from_gguf(const gguf::GgufFile& file);

  // Token ids of `text`, without BOS. Special-token texts become their tokens
  // only when `parse_special` (user-defined tokens always do, as in llama.cpp).
  std::vector<TokenId> encode(std::string_view text, bool parse_special = false) const;

  // The text of `ids`: the concatenation of token_text, less the space an
  // SPM tokenizer with add_space_prefix puts at the start and after each
  // special token (llama.cpp only removes the first). Round-trips encode() for
  // valid UTF-8 the vocabulary can represent, except that SPM reads U+2581 in
  // the input as a space and Phi-3's files drop white space after special
  // tokens (both as llama.cpp). Throws Error for an id out of range.
  std::string decode(std::span<const TokenId> ids) const;

  // Decoded bytes of one token (special tokens give their text). Throws Error
  // for an id out of range.
  std::string token_text(TokenId id) const;

  int32_t n_vocab() const;
  TokenizerKind kind() const;
  TokenId bos() const;  // kNoToken (-1) when the vocabulary has none
  TokenId eos() const;
  bool add_bos() const;                         // whether prompts start with BOS
  bool is_end_of_generation(TokenId id) const;  // eos, eot, <|im_end|>, <end_of_turn>, ...
  bool is_special(TokenId id) const;            // control, user-defined or unknown
  std::optional<TokenId> find_token(std::string_view piece) const;  // by stored text

 private:
  explicit Tokenizer(std::shared_ptr<const TokenizerData> data) : data_(std::move(data)) {}

  void check_id(TokenId id) const;

  std::shared_ptr<const TokenizerData> data_;
};

}  // namespace eventkv::tokenizer
