#include "tokenizer/pretokenize.h"

#include <algorithm>
#include <array>

#include "util/error.h"

namespace eventkv::tokenizer {
namespace {

struct PreTokenizerName {
  std::string_view name;
  PreTokenizer pre;
};

constexpr PreTokenizer kGpt2Pre{PreTokenizerKind::kGpt2, false};
constexpr PreTokenizer kDigitsPre{PreTokenizerKind::kDigitsThenGpt2, false};
constexpr PreTokenizer kQwen2Pre{PreTokenizerKind::kQwen2, false};
constexpr PreTokenizer kLlama3Pre{PreTokenizerKind::kLlama3, true};
constexpr PreTokenizer kTekkenPre{PreTokenizerKind::kTekken, true};

constexpr std::array<PreTokenizerName, 33> kPreTokenizers = {{
    {"default", {PreTokenizerKind::kDefault, false}},
    {"gpt-2", kGpt2Pre},
    {"phi-2", kGpt2Pre},
    {"mpt", kGpt2Pre},
    {"olmo", kGpt2Pre},
    {"jais", kGpt2Pre},
    {"trillion", kGpt2Pre},
    {"granite-docling", kGpt2Pre},
    {"exaone4", kGpt2Pre},
    {"gigachat", kGpt2Pre},
    {"smollm", kDigitsPre},
    {"starcoder", kDigitsPre},
    {"refact", kDigitsPre},
    {"command-r", kDigitsPre},
    {"codeshell", kDigitsPre},
    {"exaone", kDigitsPre},
    {"minerva-7b", kDigitsPre},
    {"qwen2", kQwen2Pre},
    {"deepseek-r1-qwen", kQwen2Pre},
    {"stablelm2", kQwen2Pre},
    {"megrez", kQwen2Pre},
    {"hunyuan", kQwen2Pre},
    {"llama3", kLlama3Pre},
    {"llama-v3", kLlama3Pre},
    {"llama-bpe", kLlama3Pre},
    {"falcon3", kLlama3Pre},
    {"falcon-h1", kLlama3Pre},
    {"pixtral", kLlama3Pre},
    {"midm-2.0", kLlama3Pre},
    {"lfm2", kLlama3Pre},
    {"kormo", kQwen2Pre},
    {"tekken", kTekkenPre},
    {"gemma4", {PreTokenizerKind::kNewlineRuns, false, true}},
}};

constexpr uint32_t kOutOfPiece = 0xFFFFFFFF;

// One piece being split: its code points and their classes. Positions past
// the end read as "no code point, no class", like the end of the text.
struct Piece {
  const uint32_t* codepoints;
  const uint8_t* classes;
  size_t size;

  uint32_t cpt(size_t i) const { return i < size ? codepoints[i] : kOutOfPiece; }
  uint8_t cls(size_t i) const { return i < size ? classes[i] : 0; }
  bool is(size_t i, uint8_t mask) const { return (cls(i) & mask) != 0; }
};

constexpr uint8_t kLetterNumberSpace = kLetter | kNumber | kWhitespace;

uint32_t ascii_lower(uint32_t cpt) {
  return cpt >= 'A' && cpt <= 'Z' ? cpt + ('a' - 'A') : cpt;
}

// 's 't 're 've 'm 'll 'd at `pos`: their length, or 0.
size_t match_contraction(const Piece& p, size_t pos, bool ignore_case) {
  if (p.cpt(pos) != '\'' || pos + 1 >= p.size) return 0;
  const auto at = [&](size_t i) { return ignore_case ? ascii_lower(p.cpt(i)) : p.cpt(i); };
  const uint32_t a = at(pos + 1);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (pos + 2 >= p.size) return 0;
  const uint32_t b = at(pos + 2);
  const bool two = (a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l');
  return two ? 3 : 0;
}

size_t run_end(const Piece& p, size_t pos, uint8_t mask) {
  while (p.is(pos, mask)) ++pos;
  return pos;
}

// End of a run of code points that are in the piece and not letter, number or
// white space.
size_t symbol_run_end(const Piece& p, size_t pos) {
  while (pos < p.size && !p.is(pos, kLetterNumberSpace)) ++pos;
  return pos;
}

// \s+(?!\S)|\s+ at `pos` (a white-space run keeps its last character for the
// next word when one follows); 1 when there is no white space.
size_t whitespace_end(const Piece& p, size_t pos) {
  const size_t end = run_end(p, pos, kWhitespace);
  const size_t n = end - pos;
  if (n > 1 && end < p.size) return end - 1;
  return n > 0 ? end : pos + 1;
}

// One GPT-2 match starting at `pos`; returns its end.
size_t match_gpt2(const Piece& p, size_t pos) {
  if (const size_t n = match_contraction(p, pos, false)) return pos + n;
  const size_t start = p.cpt(pos) == ' ' ? pos + 1 : pos;  // optional leading space
  if (p.is(start, kLetter)) return run_end(p, start, kLetter);
  if (p.is(start, kNumber)) return run_end(p, start, kNumber);
  if (start < p.size && !p.is(start, kLetterNumberSpace)) return symbol_run_end(p, start);
  return whitespace_end(p, pos);
}

bool is_line_break(uint32_t cpt) {
  return cpt == '\r' || cpt == '\n';
}

// \s*[\r\n]+|\s+(?!\S)|\s+ at `pos`: the white-space run up to its last
// line break, or else as whitespace_end.
size_t whitespace_or_line_end(const Piece& p, size_t pos) {
  const size_t end = run_end(p, pos, kWhitespace);
  for (size_t i = end; i > pos; --i) {
    if (is_line_break(p.cpt(i - 1))) return i;
  }
  return whitespace_end(p, pos);
}

// One qwen2/llama3 match starting at `pos`; numbers are cut every `max_digits`.
size_t match_llama3(const Piece& p, size_t pos, size_t max_digits) {
  if (const size_t n = match_contraction(p, pos, true)) return pos + n;
  const uint32_t cpt = p.cpt(pos);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (!is_line_break(cpt) && !p.is(pos, kNumber) &&
      (p.is(pos, kLetter) || p.is(pos + 1, kLetter))) {
    return run_end(p, pos + 1, kLetter);
  }
  if (p.is(pos, kNumber)) return std::min(run_end(p, pos, kNumber), pos + max_digits);
  // ' '?[^\s\p{L}\p{N}]+[\r\n]*
  const size_t start = cpt == ' ' ? pos + 1 : pos;
  if (!p.is(start, kLetterNumberSpace)) {
    size_t end = symbol_run_end(p, start);
    while (is_line_break(p.cpt(end))) ++end;
    return end;
  }
  return whitespace_or_line_end(p, pos);
}

// End of a run of tekken's capitals (letters but a-z) or small letters
// (letters but A-Z) from `pos`; a letter outside ASCII is both, as in
// llama.cpp, whose regex sees every such letter as one collapsed character.
size_t tekken_run_end(const Piece& p, size_t pos, bool capitals) {
  const auto excluded = [capitals](uint32_t c) {
    return capitals ? c >= 'a' && c <= 'z' : c >= 'A' && c <= 'Z';
  };
  while (p.is(pos, kLetter) && !excluded(p.cpt(pos))) ++pos;
  return pos;
}

// One tekken match starting at `pos` (the regex in PreTokenizerKind).
size_t match_tekken(const Piece& p, size_t pos) {
  const uint32_t cpt = p.cpt(pos);
  const bool prefixed = pos < p.size && !is_line_break(cpt) && !p.is(pos, kLetter | kNumber);
  const size_t word = prefixed ? pos + 1 : pos;
  if (p.is(word, kLetter)) {
    // Capitals then small letters: the capital run backs off until a small
    // letter follows; failing that, the capital run alone.
    const size_t capitals_end = tekken_run_end(p, word, true);
    for (size_t j = capitals_end + 1; j-- > word;) {
      const size_t small_end = tekken_run_end(p, j, false);
      if (small_end > j) return small_end;
    }
    return capitals_end;
  }
  if (p.is(pos, kNumber)) return pos + 1;
  // ' '?[^\s\p{L}\p{N}]+[\r\n/]*
  const size_t start = cpt == ' ' ? pos + 1 : pos;
  if (start < p.size && !p.is(start, kLetterNumberSpace)) {
    size_t end = symbol_run_end(p, start);
    while (is_line_break(p.cpt(end)) || p.cpt(end) == '/') ++end;
    return end;
  }
  return whitespace_or_line_end(p, pos);
}

// A split that covers the piece with consecutive matches.
template <typename Match>
void split_by_matches(const Piece& p, Match match, std::vector<uint32_t>& out) {
  for (size_t pos = 0; pos < p.size;) {
    const size_t end = match(p, pos);
    out.push_back(static_cast<uint32_t>(end - pos));
    pos = end;
  }
}

// A split by a simple pattern found anywhere (leftmost, non-overlapping):
// matches and the gaps between them both become pieces. `match` returns the
// length matched at a position, 0 for none.
template <typename Match>
void split_by_pattern(const Piece& p, Match match, std::vector<uint32_t>& out) {
  size_t gap_start = 0;
  for (size_t pos = 0; pos < p.size;) {
    const size_t n = match(p, pos);
    if (n == 0) {
      ++pos;
      continue;
    }
    if (pos > gap_start) out.push_back(static_cast<uint32_t>(pos - gap_start));
    out.push_back(static_cast<uint32_t>(n));
    pos += n;
    gap_start = pos;
  }
  if (p.size > gap_start) out.push_back(static_cast<uint32_t>(p.size - gap_start));
}

bool is_default_punctuation(const Piece& p, size_t i) {
  const uint32_t cpt = p.cpt(i);
  const bool extra = cpt == '$' || cpt == '+' || cpt == '<' || cpt == '=' || cpt == '>' ||
                     cpt == '^' || cpt == '~' || cpt == '|';
  return i < p.size && (extra || p.is(i, kPunctuation));
}

bool is_ascii_digit(uint32_t cpt) {
  return cpt >= '0' && cpt <= '9';
}

// Applies one split to every current piece (scratch.lengths), in place.
template <typename Split>
void apply_pass(PreTokenizeScratch& s, Split split) {
  s.next_lengths.clear();
  size_t start = 0;
  for (const uint32_t length : s.lengths) {
    const Piece piece{s.decoded.codepoints.data() + start, s.classes.data() + start, length};
    split(piece, s.next_lengths);
    start += length;
  }
  std::swap(s.lengths, s.next_lengths);
}

void split_gpt2(const Piece& p, std::vector<uint32_t>& out) {
  split_by_matches(p, match_gpt2, out);
}

void split_qwen2(const Piece& p, std::vector<uint32_t>& out) {
  split_by_matches(
      p, [](const Piece& q, size_t pos) { return match_llama3(q, pos, 1); }, out);
}

void split_llama3(const Piece& p, std::vector<uint32_t>& out) {
  split_by_matches(
      p, [](const Piece& q, size_t pos) { return match_llama3(q, pos, 3); }, out);
}

void split_tekken(const Piece& p, std::vector<uint32_t>& out) {
  split_by_matches(p, match_tekken, out);
}

void split_newline_runs(const Piece& p, std::vector<uint32_t>& out) {
  split_by_matches(
      p,
      [](const Piece& q, size_t pos) {
        const bool newline = q.cpt(pos) == '\n';
        while (pos < q.size && (q.cpt(pos) == '\n') == newline) ++pos;
        return pos;
      },
      out);
}

void split_each_number(const Piece& p, std::vector<uint32_t>& out) {
  split_by_pattern(
      p, [](const Piece& q, size_t i) -> size_t { return q.is(i, kNumber) ? 1 : 0; }, out);
}

void split_number_runs(const Piece& p, std::vector<uint32_t>& out) {
  split_by_pattern(
      p, [](const Piece& q, size_t i) { return run_end(q, i, kNumber) - i; }, out);
}

void split_digit_triples(const Piece& p, std::vector<uint32_t>& out) {
  split_by_pattern(
      p,
      [](const Piece& q, size_t i) -> size_t {
        const bool triple = is_ascii_digit(q.cpt(i)) && is_ascii_digit(q.cpt(i + 1)) &&
                            is_ascii_digit(q.cpt(i + 2));
        return triple ? 3 : 0;
      },
      out);
}

void split_punctuation_runs(const Piece& p, std::vector<uint32_t>& out) {
  split_by_pattern(
      p,
      [](const Piece& q, size_t i) {
        size_t end = i;
        while (is_default_punctuation(q, end)) ++end;
        return end - i;
      },
      out);
}

}  // namespace

PreTokenizer pre_tokenizer_for(std::string_view pre, const std::string& file_name) {
  for (const PreTokenizerName& entry : kPreTokenizers) {
    if (entry.name == pre) return entry.pre;
  }
  fail(file_name, ": unsupported pre-tokenizer '", pre, "' (tokenizer.ggml.pre)");
}

void pre_tokenize(PreTokenizerKind kind, std::string_view text, PreTokenizeScratch& scratch,
                  std::vector<std::string_view>& pieces) {
  pieces.clear();
  if (text.empty()) return;
  decode_utf8(text, scratch.decoded);
  const std::vector<uint32_t>& cpts = scratch.decoded.codepoints;
  scratch.classes.resize(cpts.size());
  for (size_t i = 0; i < cpts.size(); ++i) scratch.classes[i] = codepoint_classes(cpts[i]);
  scratch.lengths.assign(1, static_cast<uint32_t>(cpts.size()));
  switch (kind) {
    case PreTokenizerKind::kDefault:
      apply_pass(scratch, split_punctuation_runs);
      apply_pass(scratch, split_gpt2);
      apply_pass(scratch, split_number_runs);
      apply_pass(scratch, split_digit_triples);
      break;
    case PreTokenizerKind::kGpt2:
      apply_pass(scratch, split_gpt2);
      break;
    case PreTokenizerKind::kDigitsThenGpt2:
      apply_pass(scratch, split_each_number);
      apply_pass(scratch, split_gpt2);
      break;
    case PreTokenizerKind::kQwen2:
      apply_pass(scratch, split_qwen2);
      break;
    case PreTokenizerKind::kLlama3:
      apply_pass(scratch, split_llama3);
      break;
    case PreTokenizerKind::kTekken:
      apply_pass(scratch, split_tekken);
      break;
    case PreTokenizerKind::kNewlineRuns:
      apply_pass(scratch, split_newline_runs);
      break;
  }
  const std::vector<uint32_t>& offsets = scratch.decoded.offsets;
  size_t start = 0;
  for (const uint32_t length : scratch.lengths) {
    const size_t begin = offsets[start];
    const size_t end = offsets[start + length];
    pieces.push_back(text.substr(begin, end - begin));
    start += length;
  }
}

}  // namespace eventkv::tokenizer
