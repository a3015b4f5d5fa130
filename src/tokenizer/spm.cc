#include "tokenizer/spm.h"

#include <algorithm>

namespace eventkv::tokenizer {
namespace {

// Heap order: highest score first, then leftmost. Named apart from bpe.cc's
// comparator: the unity build can put both in one translation unit.
bool spm_comes_after(const SpmScratch::Candidate& a, const SpmScratch::Candidate& b) {
  return a.score < b.score || (a.score == b.score && a.left > b.left);
}

uint32_t utf8_length(uint8_t lead) {
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  return lead >= 0xC0 ? 2 : 1;
}

}  // namespace

void append_space_marked(std::string_view text, std::string& out) {
  for (const char c : text) {
    if (c == ' ') {
      out += kSpaceMark;
    } else {
      out += c;
    }
  }
}

SpmModel::SpmModel(const Vocab& vocab) {
  for (int byte = 0; byte < 256; ++byte) {
    const char raw = static_cast<char>(byte);
    TokenId id = vocab.unk;
    if (const auto token = vocab.find_byte_token(static_cast<uint8_t>(byte))) {
      id = *token;
    } else if (const auto single = vocab.find(std::string_view(&raw, 1))) {
      id = *single;
    }
    byte_tokens_[byte] = id;
  }
}

void SpmModel::push_candidate(const Vocab& vocab, SpmScratch& scratch, int32_t left,
                              int32_t right) const {
  if (left < 0 || right < 0) return;
  const SpmScratch::Symbol& a = scratch.symbols[left];
  const uint32_t length = a.length + scratch.symbols[right].length;
  const auto token = vocab.find(std::string_view(scratch.escaped).substr(a.begin, length));
  if (!token) return;
  scratch.heap.push_back({vocab.scores[*token], left, right, length});
  std::push_heap(scratch.heap.begin(), scratch.heap.end(), spm_comes_after);
}

void SpmModel::emit(const Vocab& vocab, std::string_view piece, std::vector<TokenId>& out) const {
  if (const auto token = vocab.find(piece)) {
    out.push_back(*token);
    return;
  }
  for (const char byte : piece) {
    const TokenId id = byte_tokens_[static_cast<uint8_t>(byte)];
    if (id != kNoToken) out.push_back(id);
  }
}

void SpmModel::encode(const Vocab& vocab, std::string_view text, bool add_space_prefix,
                      SpmScratch& scratch, std::vector<TokenId>& out) const {
  std::string& escaped = scratch.escaped;
  escaped.clear();
  if (add_space_prefix) escaped += kSpaceMark;
  append_space_marked(text, escaped);
  auto& symbols = scratch.symbols;
  symbols.clear();
  scratch.heap.clear();
  for (uint32_t pos = 0; pos < escaped.size();) {
    const uint32_t length =
        std::min<uint32_t>(utf8_length(static_cast<uint8_t>(escaped[pos])), escaped.size() - pos);
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({pos, length, index - 1, -1});
    if (index > 0) symbols[index - 1].next = index;
    pos += length;
  }
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) {
    push_candidate(vocab, scratch, i - 1, i);
  }
  while (!scratch.heap.empty()) {
    std::pop_heap(scratch.heap.begin(), scratch.heap.end(), spm_comes_after);
    const SpmScratch::Candidate candidate = scratch.heap.back();
    scratch.heap.pop_back();
    SpmScratch::Symbol& left = symbols[candidate.left];
    SpmScratch::Symbol& right = symbols[candidate.right];
    // Skip pairs that an earlier merge changed.
    if (left.length == 0 || right.length == 0 || left.length + right.length != candidate.length) {
      continue;
    }
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = candidate.left;
    push_candidate(vocab, scratch, left.prev, candidate.left);
    push_candidate(vocab, scratch, candidate.left, left.next);
  }
  for (int32_t i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
    emit(vocab, std::string_view(escaped).substr(symbols[i].begin, symbols[i].length), out);
  }
}

}  // namespace eventkv::tokenizer
