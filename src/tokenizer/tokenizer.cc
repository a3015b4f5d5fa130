#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <array>

#include "gguf/reader.h"
#include "tokenizer/bpe.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/pretokenize.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/spm.h"
#include "tokenizer/unicode.h"
#include "util/error.h"

namespace eventkv::tokenizer {

struct TokenizerData {
  Vocab vocab;
  PreTokenizer pre;
  std::optional<BpeModel> bpe;
  std::optional<SpmModel> spm;
  SpecialTokenMatcher specials;
};

namespace {

// Per-call buffers: encode keeps no state between calls.
struct EncodeScratch {
  std::vector<Fragment> fragments;
  std::vector<std::string_view> pieces;
  std::string marked;  // raw UTF-8 BPE: the fragment with spaces as U+2581
  PreTokenizeScratch pre;
  BpeScratch bpe;
  SpmScratch spm;
};

// GPT-2 character -> byte, for the 324 code points the byte map uses.
std::array<int16_t, 324> build_codepoint_bytes() {
  std::array<int16_t, 324> table{};
  table.fill(-1);
  for (int byte = 0; byte < 256; ++byte)
    table[byte_to_codepoint(static_cast<uint8_t>(byte))] = byte;
  return table;
}

// A byte-level BPE token's text back to bytes. A character outside the byte
// map (no encode produces one) is kept as UTF-8.
std::string decode_byte_level(std::string_view text) {
  static const std::array<int16_t, 324> kBytes = build_codepoint_bytes();
  DecodedText decoded;
  decode_utf8(text, decoded);
  std::string out;
  for (size_t i = 0; i < decoded.codepoints.size(); ++i) {
    const uint32_t cpt = decoded.codepoints[i];
    if (cpt < kBytes.size() && kBytes[cpt] >= 0) {
      out.push_back(static_cast<char>(kBytes[cpt]));
    } else {
      out.append(text.substr(decoded.offsets[i], decoded.offsets[i + 1] - decoded.offsets[i]));
    }
  }
  return out;
}

std::string unescape_spaces(std::string_view text) {
  std::string out;
  for (size_t pos = 0; pos < text.size();) {
    if (text.substr(pos, kSpaceMark.size()) == kSpaceMark) {
      out.push_back(' ');
      pos += kSpaceMark.size();
    } else {
      out.push_back(text[pos++]);
    }
  }
  return out;
}

// "<0xAB>" -> 0xAB, or -1.
int parse_byte_token(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
  int value = 0;
  for (const char c : text.substr(3, 2)) {
    const int digit = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                             : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

void encode_text(const TokenizerData& data, std::string_view text, EncodeScratch& scratch,
                 std::vector<TokenId>& out) {
  if (data.spm) {
    // Every raw fragment follows the start or a special token, where SPM puts
    // its space prefix.
    data.spm->encode(data.vocab, text, data.vocab.add_space_prefix, scratch.spm, out);
    return;
  }
  if (data.pre.raw_utf8) {
    scratch.marked.clear();
    append_space_marked(text, scratch.marked);
    text = scratch.marked;
  }
  pre_tokenize(data.pre.kind, text, scratch.pre, scratch.pieces);
  for (const std::string_view piece : scratch.pieces) {
    data.bpe->encode_piece(data.vocab, piece, data.pre.ignore_merges, scratch.bpe, out);
  }
}

}  // namespace

Tokenizer Tokenizer::from_gguf(const gguf::GgufFile& file) {
  auto data = std::make_shared<TokenizerData>();
  load_vocab(file, data->vocab);
  if (data->vocab.kind == TokenizerKind::kBpe) {
    data->pre = pre_tokenizer_for(data->vocab.pre, file.name());
    data->bpe = BpeModel::from_gguf(file, data->vocab, data->pre.raw_utf8);
  } else {
    data->spm.emplace(data->vocab);
  }
  data->specials = SpecialTokenMatcher(data->vocab);
  return Tokenizer(std::move(data));
}

std::vector<TokenId> Tokenizer::encode(std::string_view text, bool parse_special) const {
  if (text.size() >= UINT32_MAX) fail(data_->vocab.file_name, ": text too long to tokenize");
  std::string replaced;
  if (!is_valid_utf8(text)) {
    replaced = replace_invalid_utf8(text);
    text = replaced;
  }
  EncodeScratch scratch;
  std::vector<TokenId> out;
  out.reserve(text.size() / 3 + 1);
  data_->specials.split(data_->vocab, text, parse_special, scratch.fragments);
  for (const Fragment& fragment : scratch.fragments) {
    if (fragment.token != kNoToken) {
      out.push_back(fragment.token);
    } else {
      encode_text(*data_, fragment.text, scratch, out);
    }
  }
  return out;
}

void Tokenizer::check_id(TokenId id) const {
  if (id < 0 || id >= data_->vocab.size()) {
    fail(data_->vocab.file_name, ": token id ", id, " out of range [0, ", data_->vocab.size(), ")");
  }
}

std::string Tokenizer::token_text(TokenId id) const {
  check_id(id);
  const Vocab& vocab = data_->vocab;
  const std::string& text = vocab.texts[id];
  if (vocab.has_attr(id, kAttrByte)) {
    const int byte = parse_byte_token(text);
    if (byte >= 0) return std::string(1, static_cast<char>(byte));
  }
  if (vocab.attrs[id] != kAttrNormal) return text;
  const bool byte_level = vocab.kind == TokenizerKind::kBpe && !data_->pre.raw_utf8;
  return byte_level ? decode_byte_level(text) : unescape_spaces(text);
}

std::string Tokenizer::decode(std::span<const TokenId> ids) const {
  const Vocab& vocab = data_->vocab;
  const bool prefixed = vocab.kind == TokenizerKind::kSpm && vocab.add_space_prefix;
  std::string out;
  bool fragment_start = true;  // at the start or after a special token
  for (const TokenId id : ids) {
    const std::string piece = token_text(id);
    const bool special = is_special(id);
    // Undo the space prefix SPM puts before every raw fragment.
    const bool strip = prefixed && fragment_start && !special && !piece.empty() && piece[0] == ' ';
    out.append(piece, strip ? 1 : 0);
    fragment_start = special;
  }
  return out;
}

int32_t Tokenizer::n_vocab() const {
  return data_->vocab.size();
}

TokenizerKind Tokenizer::kind() const {
  return data_->vocab.kind;
}

TokenId Tokenizer::bos() const {
  return data_->vocab.bos;
}

TokenId Tokenizer::eos() const {
  return data_->vocab.eos;
}

bool Tokenizer::add_bos() const {
  return data_->vocab.add_bos && data_->vocab.bos != kNoToken;
}

bool Tokenizer::is_end_of_generation(TokenId id) const {
  const std::vector<TokenId>& eog = data_->vocab.end_of_generation;
  return std::binary_search(eog.begin(), eog.end(), id);
}

bool Tokenizer::is_special(TokenId id) const {
  return id >= 0 && id < data_->vocab.size() &&
         data_->vocab.has_attr(
             id, static_cast<TokenAttr>(kAttrControl | kAttrUserDefined | kAttrUnknown));
}

std::optional<TokenId> Tokenizer::find_token(std::string_view piece) const {
  return data_->vocab.find(piece);
}

}  // namespace eventkv::tokenizer
