// Vocabularies for generated test models, one per tokenizer kind, so each
// tokenizer path has a model that needs no download. Deterministic.
#pragma once

#include <cstdint>
#include <string>

#include "gguf/writer.h"

namespace eventkv::model {

enum class TestTokenizer {
  kByteLevel,  // byte-level BPE, 256 byte tokens, no merges (the default)
  kBpe,        // byte-level BPE with merges of common words and a user-defined token
  kSpm,        // SentencePiece-style with scores, byte fallback and a space prefix
  kGemma4,     // Gemma 4's kind: BPE over raw UTF-8, U+2581 for spaces, byte fallback,
               // newline-run tokens and Gemma 4's turn and channel tokens
};

// Parses "byte-level", "bpe", "spm" or "gemma4"; throws Error otherwise.
TestTokenizer parse_test_tokenizer(const std::string& name);

// Writes the tokenizer.* keys; returns the vocabulary size. `pre` is the
// tokenizer.ggml.pre value of the BPE kinds.
int64_t add_test_vocab(gguf::GgufWriter& writer, TestTokenizer kind, const std::string& pre);

// Copies the tokenizer.* keys of the GGUF file at `path`; returns its
// vocabulary size. Throws Error when the file has no tokenizer.ggml.tokens.
int64_t copy_vocab(gguf::GgufWriter& writer, const std::string& path);

}  // namespace eventkv::model
