#include "tokenizer/special_tokens.h"

#include <algorithm>
#include <map>

namespace eventkv::tokenizer {
namespace {

bool cut_without_parse_special(const Vocab& vocab, TokenId id) {
  return !vocab.has_attr(id, static_cast<TokenAttr>(kAttrControl | kAttrUnknown));
}

// A cut special token; with kAttrRstrip it also consumes the white space after it.
struct Cut {
  uint32_t end;
  uint32_t consumed_end;
  TokenId token;
};

bool is_ascii_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

}  // namespace

SpecialTokenMatcher::SpecialTokenMatcher(const Vocab& vocab) {
  root_children_.fill(-1);
  nodes_.emplace_back();
  for (size_t rank = 0; rank < vocab.special_tokens.size(); ++rank) {
    const std::string& text = vocab.texts[vocab.special_tokens[rank]];
    int32_t node = 0;
    for (const char c : text) {
      const auto byte = static_cast<uint8_t>(c);
      int32_t next = child(node, byte);
      if (next < 0) {
        next = static_cast<int32_t>(nodes_.size());
        if (node == 0) {
          root_children_[byte] = next;
        } else {
          nodes_[node].children.emplace_back(byte, next);
        }
        nodes_.emplace_back();
      }
      node = next;
    }
    // Two tokens with one text: the first in cut order wins.
    if (nodes_[node].rank < 0) nodes_[node].rank = static_cast<int32_t>(rank);
  }
}

int32_t SpecialTokenMatcher::child(int32_t node, uint8_t byte) const {
  if (node == 0) return root_children_[byte];
  for (const auto& [b, next] : nodes_[node].children) {
    if (b == byte) return next;
  }
  return -1;
}

void SpecialTokenMatcher::find_occurrences(const Vocab& vocab, std::string_view text,
                                           bool parse_special,
                                           std::vector<Occurrence>& found) const {
  for (size_t begin = 0; begin < text.size(); ++begin) {
    int32_t node = root_children_[static_cast<uint8_t>(text[begin])];
    for (size_t pos = begin + 1; node >= 0; ++pos) {
      const int32_t rank = nodes_[node].rank;
      if (rank >= 0 &&
          (parse_special || cut_without_parse_special(vocab, vocab.special_tokens[rank]))) {
        found.push_back({rank, static_cast<uint32_t>(begin)});
      }
      if (pos >= text.size()) break;
      node = child(node, static_cast<uint8_t>(text[pos]));
    }
  }
}

void SpecialTokenMatcher::split(const Vocab& vocab, std::string_view text, bool parse_special,
                                std::vector<Fragment>& out) const {
  out.clear();
  if (text.empty()) return;
  std::vector<Occurrence> found;
  if (!nodes_.empty()) find_occurrences(vocab, text, parse_special, found);
  if (found.empty()) {
    out.push_back({text, kNoToken});
    return;
  }
  // Tokens in cut order, each at its occurrences left to right: an occurrence
  // is cut unless it overlaps a piece already cut.
  std::sort(found.begin(), found.end(), [](const Occurrence& a, const Occurrence& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.begin < b.begin;
  });
  std::map<uint32_t, Cut> cuts;  // by begin
  for (const Occurrence& occurrence : found) {
    const TokenId token = vocab.special_tokens[occurrence.rank];
    const uint32_t begin = occurrence.begin;
    const auto end = static_cast<uint32_t>(begin + vocab.texts[token].size());
    const auto next = cuts.lower_bound(begin);
    const uint32_t fragment_end = next == cuts.end() ? text.size() : next->first;
    if (fragment_end < end) continue;
    if (next != cuts.begin() && std::prev(next)->second.consumed_end > begin) continue;
    uint32_t consumed_end = end;
    if (vocab.has_attr(token, kAttrRstrip)) {
      while (consumed_end < fragment_end && is_ascii_space(text[consumed_end])) ++consumed_end;
    }
    cuts.emplace_hint(next, begin, Cut{end, consumed_end, token});
  }
  uint32_t pos = 0;
  for (const auto& [begin, cut] : cuts) {
    if (begin > pos) out.push_back({text.substr(pos, begin - pos), kNoToken});
    out.push_back({text.substr(begin, cut.end - begin), cut.token});
    pos = cut.consumed_end;
  }
  if (pos < text.size()) out.push_back({text.substr(pos), kNoToken});
}

}  // namespace eventkv::tokenizer
