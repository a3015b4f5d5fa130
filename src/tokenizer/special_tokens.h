// Cuts special tokens out of raw text before normal tokenization, exactly as
// llama.cpp does: special tokens are taken longest text first (ties: lower id),
// each splitting every remaining raw fragment at its leftmost non-overlapping
// occurrences. Control and unknown tokens are cut only when parsing specials;
// user-defined tokens always are.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace eventkv::tokenizer {

struct Fragment {
  std::string_view text;     // raw text when token == kNoToken
  TokenId token = kNoToken;  // a special token
};

class SpecialTokenMatcher {
 public:
  SpecialTokenMatcher() = default;
  explicit SpecialTokenMatcher(const Vocab& vocab);

  // Cost: one pass over `text` with a trie walk at each byte that can start a
  // special token, then work proportional to the matches found.
  void split(const Vocab& vocab, std::string_view text, bool parse_special,
             std::vector<Fragment>& out) const;

 private:
  struct Node {
    int32_t rank = -1;  // index in vocab.special_tokens of the token ending here
    std::vector<std::pair<uint8_t, int32_t>> children;
  };
  struct Occurrence {
    int32_t rank;
    uint32_t begin;
  };

  int32_t child(int32_t node, uint8_t byte) const;
  void find_occurrences(const Vocab& vocab, std::string_view text, bool parse_special,
                        std::vector<Occurrence>& found) const;

  std::vector<Node> nodes_;  // nodes_[0] is the root
  std::array<int32_t, 256> root_children_{};
};

}  // namespace eventkv::tokenizer
