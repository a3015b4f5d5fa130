// SentencePiece-style tokenization (tokenizer.ggml.model "llama": Gemma,
// Llama 2): spaces become U+2581, the text is split into characters, and the
// adjacent pair whose concatenation is the highest-scoring token is merged
// until no pair forms a token. Characters left outside the vocabulary fall
// back to byte tokens <0xXX>.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace eventkv::tokenizer {

// SentencePiece's visible space, U+2581, which stands for " " in pieces.
inline constexpr std::string_view kSpaceMark = "\xE2\x96\x81";

// Appends `text` with every " " written as kSpaceMark.
void append_space_marked(std::string_view text, std::string& out);

// Buffers reused across fragments by one encode call.
struct SpmScratch {
  struct Symbol {
    uint32_t begin;   // byte offset in `escaped`
    uint32_t length;  // 0 once merged into its left neighbour
    int32_t prev;
    int32_t next;
  };
  struct Candidate {
    float score;
    int32_t left;
    int32_t right;
    uint32_t length;  // bytes of the pair when it was found
  };
  std::string escaped;
  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;
};

class SpmModel {
 public:
  explicit SpmModel(const Vocab& vocab);

  // Appends the tokens of one raw fragment (valid UTF-8).
  void encode(const Vocab& vocab, std::string_view text, bool add_space_prefix, SpmScratch& scratch,
              std::vector<TokenId>& out) const;

 private:
  void push_candidate(const Vocab& vocab, SpmScratch& scratch, int32_t left, int32_t right) const;
  void emit(const Vocab& vocab, std::string_view piece, std::vector<TokenId>& out) const;

  std::array<TokenId, 256> byte_tokens_{};  // kNoToken when the byte has no token and no unk
};

}  // namespace eventkv::tokenizer
