// Byte-level BPE (tokenizer.ggml.model "gpt2"): each pre-tokenized piece is
// mapped byte by byte to GPT-2's printable characters, then the adjacent pair
// with the lowest merge rank (leftmost on ties) is merged until none applies.
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
  std::string encoded;  // the piece in GPT-2 characters (ignore_merges lookups)
};

class BpeModel {
 public:
  // Reads tokenizer.ggml.merges ("A B" strings, rank = position).
  static BpeModel from_gguf(const gguf::GgufFile& file, const Vocab& vocab);

  // Appends the tokens of one pre-tokenized piece (UTF-8 bytes).
  void encode_piece(const Vocab& vocab, std::string_view piece, bool ignore_merges,
                    BpeScratch& scratch, std::vector<TokenId>& out) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t result;  // symbol id of the merged string
  };

  friend class BpeBuilder;

  const Merge* find_merge(int32_t left_id, int32_t right_id) const;
  void push_candidate(BpeScratch& scratch, int32_t left) const;
  void emit(int32_t symbol, std::vector<TokenId>& out) const;

  // Symbol ids: [0, n_vocab) are tokens; the rest name strings that merges
  // mention but the vocabulary lacks. Such a string, if it ends a piece,
  // becomes the tokens of its single bytes that exist (llama.cpp's fallback).
  int32_t n_vocab_ = 0;
  std::array<int32_t, 256> byte_symbols_{};         // symbol of each byte's GPT-2 character
  std::unordered_map<uint64_t, Merge> merges_;      // key: left_id << 32 | right_id
  std::vector<std::vector<TokenId>> extra_tokens_;  // per extra symbol, what it emits
};

}  // namespace eventkv::tokenizer
