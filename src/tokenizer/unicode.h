// UTF-8 decoding for the tokenizers: code points with their byte offsets, the
// class of each code point, and the replacement of invalid input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/unicode_table.h"

namespace eventkv::tokenizer {

inline constexpr uint32_t kReplacementCharacter = 0xFFFD;

// CodepointClass bits of `cpt`; 0 for code points past U+10FFFF. Cost: one
// table read (the table, 1.1 MB, is built on first use).
uint8_t codepoint_classes(uint32_t cpt);

// Length of the well-formed UTF-8 sequence starting at text[pos] (1 to 4), or
// 0 when it is ill-formed: a stray continuation byte, a truncated sequence, an
// overlong form, a surrogate or a value past U+10FFFF.
int utf8_sequence_length(std::string_view text, size_t pos);

// The defined behaviour for invalid UTF-8: every byte that does not begin a
// well-formed sequence becomes U+FFFD (one replacement per byte, as llama.cpp
// does for the lone and truncated bytes it meets). Valid text is returned as is.
std::string replace_invalid_utf8(std::string_view text);
bool is_valid_utf8(std::string_view text);

// Code points of valid UTF-8 text and, for each, its byte offset; offsets has
// one more entry, text.size().
struct DecodedText {
  std::vector<uint32_t> codepoints;
  std::vector<uint32_t> offsets;
};
void decode_utf8(std::string_view text, DecodedText& out);

}  // namespace eventkv::tokenizer
