// Pre-tokenizers of byte-level BPE vocabularies: the regex splits HF tokenizers
// declare for each `tokenizer.ggml.pre`, with llama.cpp's exact semantics
// (Unicode 15.1 classes, the end of a piece counting as the end of the text).
// Written as scanners rather than regexes: they are the reference's behaviour
// by construction and several times faster.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/unicode.h"

namespace eventkv::tokenizer {

enum class PreTokenizerKind {
  kDefault,         // punctuation runs, then GPT-2, then digit runs, then 3-digit groups
  kGpt2,            // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kDigitsThenGpt2,  // every \p{N} alone, then GPT-2 (smollm, starcoder, refact)
  kQwen2,           // (?i:'s|..)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|
                    // ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  kLlama3,          // as qwen2 with \p{N}{1,3}
  kTekken,          // [^\r\n\p{L}\p{N}]?((?=\p{L})[^a-z])*((?=\p{L})[^A-Z])+|
                    // [^\r\n\p{L}\p{N}]?((?=\p{L})[^a-z])+((?=\p{L})[^A-Z])*|\p{N}|
                    // ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+ (Mistral)
  kNewlineRuns,     // [^\n]+|[\n]+ (gemma4: its merges span whole lines)
};

struct PreTokenizer {
  PreTokenizerKind kind = PreTokenizerKind::kDefault;
  bool ignore_merges = false;  // a piece that is a whole token is emitted as is (llama3)
  // BPE over raw UTF-8 characters, spaces written U+2581, <0xXX> byte tokens
  // for what the vocabulary lacks (gemma4); else GPT-2's byte characters.
  bool raw_utf8 = false;
};

// The pre-tokenizer for a `tokenizer.ggml.pre` value; throws Error naming the
// file for values it does not know, as llama.cpp refuses to load them.
PreTokenizer pre_tokenizer_for(std::string_view pre, const std::string& file_name);

// Buffers reused across calls by one thread.
struct PreTokenizeScratch {
  DecodedText decoded;
  std::vector<uint8_t> classes;
  std::vector<uint32_t> lengths;  // piece lengths in code points
  std::vector<uint32_t> next_lengths;
};

// Splits valid UTF-8 `text` into the pieces BPE merges within; every byte of
// `text` lands in exactly one piece, in order.
void pre_tokenize(PreTokenizerKind kind, std::string_view text, PreTokenizeScratch& scratch,
                  std::vector<std::string_view>& pieces);

}  // namespace eventkv::tokenizer
