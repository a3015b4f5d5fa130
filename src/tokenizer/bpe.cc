#include "tokenizer/bpe.h"

#include <algorithm>

#include "gguf/reader.h"
#include "tokenizer/byte_unicode.h"
#include "util/error.h"

namespace eventkv::tokenizer {

// Gives every string a merge or a byte mentions a symbol id.
class BpeBuilder {
 public:
  BpeBuilder(const Vocab& vocab, BpeModel& model) : vocab_(vocab), model_(model) {
    model_.n_vocab_ = vocab.size();
  }

  int32_t symbol_id(const std::string& text) {
    if (const auto id = vocab_.find(text)) return *id;
    const auto [it, added] = extra_ids_.try_emplace(text, model_.n_vocab_ + extra_ids_.size());
    if (added) model_.extra_tokens_.push_back(single_byte_tokens(text));
    return it->second;
  }

 private:
  std::vector<TokenId> single_byte_tokens(const std::string& text) const {
    std::vector<TokenId> tokens;
    for (const char byte : text) {
      if (const auto id = vocab_.find(std::string_view(&byte, 1))) tokens.push_back(*id);
    }
    return tokens;
  }

  const Vocab& vocab_;
  BpeModel& model_;
  std::unordered_map<std::string, int32_t> extra_ids_;
};

namespace {

uint64_t merge_key(int32_t left_id, int32_t right_id) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left_id)) << 32) |
         static_cast<uint32_t>(right_id);
}

// Heap order: lowest rank first, then leftmost.
bool comes_after(const BpeScratch::Candidate& a, const BpeScratch::Candidate& b) {
  return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
}

}  // namespace

BpeModel BpeModel::from_gguf(const gguf::GgufFile& file, const Vocab& vocab) {
  BpeModel model;
  BpeBuilder builder(vocab, model);
  for (int byte = 0; byte < 256; ++byte) {
    std::string text;
    append_utf8(text, byte_to_codepoint(static_cast<uint8_t>(byte)));
    model.byte_symbols_[byte] = builder.symbol_id(text);
  }
  const gguf::MetaArray* merges = file.get_array("tokenizer.ggml.merges");
  if (merges == nullptr) fail(file.name(), ": BPE tokenizer without tokenizer.ggml.merges");
  if (merges->element_type != gguf::ValueType::kString) {
    fail(file.name(), ": tokenizer.ggml.merges is not an array of strings");
  }
  model.merges_.reserve(merges->strings.size());
  for (size_t rank = 0; rank < merges->strings.size(); ++rank) {
    const std::string& merge = merges->strings[rank];
    const size_t space = merge.find(' ', 1);
    if (space == std::string::npos) continue;  // names no pair: can never apply
    const std::string left = merge.substr(0, space);
    const std::string right = merge.substr(space + 1);
    const int32_t left_id = builder.symbol_id(left);
    const int32_t right_id = builder.symbol_id(right);
    const int32_t result = builder.symbol_id(left + right);
    // A repeated pair keeps its first (lowest) rank.
    model.merges_.try_emplace(merge_key(left_id, right_id),
                              Merge{static_cast<int32_t>(rank), result});
  }
  return model;
}

const BpeModel::Merge* BpeModel::find_merge(int32_t left_id, int32_t right_id) const {
  const auto it = merges_.find(merge_key(left_id, right_id));
  return it == merges_.end() ? nullptr : &it->second;
}

void BpeModel::push_candidate(BpeScratch& scratch, int32_t left) const {
  const int32_t right = scratch.symbols[left].next;
  if (right < 0) return;
  const int32_t left_id = scratch.symbols[left].id;
  const int32_t right_id = scratch.symbols[right].id;
  const Merge* merge = find_merge(left_id, right_id);
  if (merge == nullptr) return;
  scratch.heap.push_back({merge->rank, left, left_id, right_id, merge->result});
  std::push_heap(scratch.heap.begin(), scratch.heap.end(), comes_after);
}

void BpeModel::emit(int32_t symbol, std::vector<TokenId>& out) const {
  if (symbol < n_vocab_) {
    out.push_back(symbol);
  } else {
    const std::vector<TokenId>& tokens = extra_tokens_[symbol - n_vocab_];
    out.insert(out.end(), tokens.begin(), tokens.end());
  }
}

void BpeModel::encode_piece(const Vocab& vocab, std::string_view piece, bool ignore_merges,
                            BpeScratch& scratch, std::vector<TokenId>& out) const {
  if (ignore_merges) {
    scratch.encoded.clear();
    for (const char byte : piece) {
      append_utf8(scratch.encoded, byte_to_codepoint(static_cast<uint8_t>(byte)));
    }
    if (const auto id = vocab.find(scratch.encoded)) {
      out.push_back(*id);
      return;
    }
  }
  auto& symbols = scratch.symbols;
  symbols.clear();
  scratch.heap.clear();
  const auto n = static_cast<int32_t>(piece.size());
  for (int32_t i = 0; i < n; ++i) {
    symbols.push_back(
        {byte_symbols_[static_cast<uint8_t>(piece[i])], i - 1, i + 1 < n ? i + 1 : -1});
  }
  for (int32_t i = 0; i + 1 < n; ++i) push_candidate(scratch, i);
  while (!scratch.heap.empty()) {
    std::pop_heap(scratch.heap.begin(), scratch.heap.end(), comes_after);
    const BpeScratch::Candidate candidate = scratch.heap.back();
    scratch.heap.pop_back();
    BpeScratch::Symbol& left = symbols[candidate.left];
    const int32_t right = left.next;
    // Skip pairs that an earlier merge changed.
    if (left.id != candidate.left_id || right < 0 || symbols[right].id != candidate.right_id) {
      continue;
    }
    left.id = candidate.result;
    left.next = symbols[right].next;
    if (left.next >= 0) symbols[left.next].prev = candidate.left;
    symbols[right].id = -1;
    if (left.prev >= 0) push_candidate(scratch, left.prev);
    push_candidate(scratch, candidate.left);
  }
  for (int32_t i = 0; i >= 0 && i < n; i = symbols[i].next) emit(symbols[i].id, out);
}

}  // namespace eventkv::tokenizer
