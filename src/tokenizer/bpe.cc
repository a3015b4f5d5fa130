#include "tokenizer/bpe.h"

#include <algorithm>

#include "gguf/reader.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/unicode.h"
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
    auto& extra = model_.extra_symbols_;
    const auto [it, added] = extra.try_emplace(text, model_.n_vocab_ + extra.size());
    if (added) model_.extra_tokens_.push_back(single_byte_tokens(text));
    return it->second;
  }

 private:
  std::vector<TokenId> single_byte_tokens(const std::string& text) const {
    std::vector<TokenId> tokens;
    if (model_.raw_utf8_) {
      model_.append_byte_tokens(text, tokens);
      return tokens;
    }
    for (const char byte : text) {
      if (const auto id = vocab_.find(std::string_view(&byte, 1))) tokens.push_back(*id);
    }
    return tokens;
  }

  const Vocab& vocab_;
  BpeModel& model_;
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

BpeModel BpeModel::from_gguf(const gguf::GgufFile& file, const Vocab& vocab, bool raw_utf8) {
  BpeModel model;
  model.raw_utf8_ = raw_utf8;
  BpeBuilder builder(vocab, model);
  for (int byte = 0; byte < 256; ++byte) {
    if (raw_utf8) {
      model.byte_tokens_[byte] =
          vocab.find_byte_token(static_cast<uint8_t>(byte)).value_or(kNoToken);
    } else {
      std::string text;
      append_utf8(text, byte_to_codepoint(static_cast<uint8_t>(byte)));
      model.byte_symbols_[byte] = builder.symbol_id(text);
    }
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

int32_t BpeModel::character_symbol(const Vocab& vocab, std::string_view character) const {
  if (const auto id = vocab.find(character)) return *id;
  const auto it = extra_symbols_.find(std::string(character));
  return it == extra_symbols_.end() ? kUnknownCharacter : it->second;
}

// Symbols of one piece, linked in order, with no candidates yet.
void BpeModel::split_symbols(const Vocab& vocab, std::string_view piece,
                             BpeScratch& scratch) const {
  auto& symbols = scratch.symbols;
  symbols.clear();
  scratch.offsets.clear();
  for (size_t pos = 0; pos < piece.size();) {
    const auto index = static_cast<int32_t>(symbols.size());
    int32_t id = 0;
    if (raw_utf8_) {
      // Input is valid UTF-8 by now (encode replaced the rest).
      const auto length = static_cast<size_t>(std::max(utf8_sequence_length(piece, pos), 1));
      id = character_symbol(vocab, piece.substr(pos, length));
      scratch.offsets.push_back(static_cast<uint32_t>(pos));
      pos += length;
    } else {
      id = byte_symbols_[static_cast<uint8_t>(piece[pos])];
      ++pos;
    }
    symbols.push_back({id, index - 1, pos < piece.size() ? index + 1 : -1});
  }
  if (raw_utf8_) scratch.offsets.push_back(static_cast<uint32_t>(piece.size()));
}

void BpeModel::append_byte_tokens(std::string_view bytes, std::vector<TokenId>& out) const {
  for (const char byte : bytes) {
    const TokenId id = byte_tokens_[static_cast<uint8_t>(byte)];
    if (id != kNoToken) out.push_back(id);
  }
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
  // A run of newlines that is a token stays whole (llama.cpp's gemma4 rule).
  if (raw_utf8_ && piece.find_first_not_of('\n') == std::string_view::npos) {
    if (const auto id = vocab.find(piece)) {
      out.push_back(*id);
      return;
    }
  }
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
  split_symbols(vocab, piece, scratch);
  auto& symbols = scratch.symbols;
  scratch.heap.clear();
  const auto n = static_cast<int32_t>(symbols.size());
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
  for (int32_t i = 0; i >= 0 && i < n; i = symbols[i].next) {
    if (symbols[i].id == kUnknownCharacter) {
      // Never merged, so it is still the one character at symbol i.
      const uint32_t begin = scratch.offsets[i];
      append_byte_tokens(piece.substr(begin, scratch.offsets[i + 1] - begin), out);
    } else {
      emit(symbols[i].id, out);
    }
  }
}

}  // namespace eventkv::tokenizer
