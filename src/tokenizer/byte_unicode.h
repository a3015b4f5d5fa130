// GPT-2's reversible byte <-> unicode map used by byte-level BPE vocabularies:
// printable bytes map to themselves, the other 68 to U+0100 onwards.
#pragma once

#include <cstdint>
#include <string>

namespace eventkv::tokenizer {

// The code point that stands for `byte` in a byte-level vocabulary.
uint32_t byte_to_codepoint(uint8_t byte);

// Appends the UTF-8 encoding of `codepoint` (must be a valid scalar value).
void append_utf8(std::string& out, uint32_t codepoint);

}  // namespace eventkv::tokenizer
