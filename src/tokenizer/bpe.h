// BPE by merge ranks. Each pre-tokenized piece becomes symbols, either its
// bytes as GPT-2's printable characters (tokenizer.ggml.model "gpt2") or its
// UTF-8 characters (raw UTF-8, gemma4), then the adjacent pair with the lowest
// merge rank (leftmost on ties) is merged until none applies.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab.h"

namespace eventkv::gguf {
class GgufFile;
}

namespace eventkv::tokenizer {

// Buffers reused across pieces by one encode call.
struct BpeScratch {
  struct Symbol {
    int32_t id;    // symbol id (a token id, or an extra string's id)
    int32_t prev;  // -1 at the start
    int32_t next;  // -1 at the end
  };
  struct Candidate {
    int32_t rank;
    int32_t left;  // symbol index
    int32_t left_id;
    int32_t right_id;
    int32_t result;  // symbol id of the merged pair
  };
  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;
  std::string encoded;            // the piece in GPT-2 characters (ignore_merges lookups)
  std::vector<uint32_t> offsets;  // raw UTF-8: each symbol's first byte, then the piece size
};

class BpeModel {
 public:
  // Reads tokenizer.ggml.merges ("A B" strings, rank = position).
  static BpeModel from_gguf(const gguf::GgufFile& file, const Vocab& vocab, bool raw_utf8);

  // Appends the tokens of one pre-tokenized piece (UTF-8 bytes).
  void encode_piece(const Vocab& vocab, std::string_view piece, bool ignore_merges,
                    BpeScratch& scratch, std::vector<TokenId>& out) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t result;  // symbol id of the merged string
  };

  friend class BpeBuilder;

  // A raw UTF-8 character no merge or token names: it never merges and
  // emits its bytes' <0xXX> tokens.
  static constexpr int32_t kUnknownCharacter = -2;

  const Merge* find_merge(int32_t left_id, int32_t right_id) const;
  void split_symbols(const Vocab& vocab, std::string_view piece, BpeScratch& scratch) const;
  int32_t character_symbol(const Vocab& vocab, std::string_view character) const;
  void push_candidate(BpeScratch& scratch, int32_t left) const;
  void emit(int32_t symbol, std::vector<TokenId>& out) const;
  void append_byte_tokens(std::string_view bytes, std::vector<TokenId>& out) const;

  // Symbol ids: [0, n_vocab) are tokens; the rest name strings that merges
  // mention but the vocabulary lacks. Such a string, if it ends a piece,
  // becomes tokens of its single bytes (llama.cpp's fallback): the tokens of
  // the byte characters, or in raw UTF-8 the <0xXX> tokens, that exist.
  int32_t n_vocab_ = 0;
  bool raw_utf8_ = false;
  std::array<int32_t, 256> byte_symbols_{};     // symbol of each byte's GPT-2 character
  std::array<TokenId, 256> byte_tokens_{};      // raw UTF-8: each byte's <0xXX> token or kNoToken
  std::unordered_map<uint64_t, Merge> merges_;  // key: left_id << 32 | right_id
  std::unordered_map<std::string, int32_t> extra_symbols_;  // string -> extra symbol id
  std::vector<std::vector<TokenId>> extra_tokens_;          // per extra symbol, what it emits
};

}  // namespace eventkv::tokenizer
