#include "tokenizer/vocab.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

#include "gguf/reader.h"
#include "util/error.h"

namespace eventkv::tokenizer {
namespace {

// Texts llama.cpp treats as ends of generation whatever their stored type
// (they become control tokens too): turn and text ends, and the fill-in-the-
// middle pad, repository and file separators.
constexpr std::array<std::string_view, 32> kEndOfGenerationTexts = {
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<|flush|>",
    "<|calls|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "</s>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "[EOS]",
    "<|end_of_text|>",
    "<end_of_utterance>",
    "<eos>",
    "<turn|>",
    "<|tool_response>",
    "[e~[",
    "<|fim_pad|>",
    "<fim-pad>",
    "<fim_pad>",
    "<PAD>",
    "[PAD]",
    "<|fim_repo|>",
    "<|repo_name|>",
    "<fim-repo>",
    "<REPO>",
    "<reponame>",
    "<|file_sep|>",
};

// Texts that identify the end-of-turn token when the file does not name one.
constexpr std::array<std::string_view, 9> kEndOfTurnTexts = {
    "<|eot_id|>",      "<|im_end|>",         "<|end|>", "<end_of_turn>", "<|endoftext|>",
    "<|end_of_text|>", "<end_of_utterance>", "<EOT>",   "[EOT]",
};

uint8_t attr_from_type(int64_t type) {
  switch (type) {
    case 1:
      return kAttrNormal;
    case 2:
      return kAttrUnknown;
    case 3:
      return kAttrControl;
    case 4:
      return kAttrUserDefined;
    case 5:
      return kAttrUnused;
    case 6:
      return kAttrByte;
    default:
      return 0;  // undefined: never matched, decoded as its text
  }
}

// Runs `read`, adding the file name to an Error it throws.
template <typename Read>
auto with_file_name(const gguf::GgufFile& file, Read read) {
  try {
    return read();
  } catch (const Error& e) {
    fail(file.name(), ": ", e.what());
  }
}

void load_texts(const gguf::GgufFile& file, Vocab& vocab) {
  const gguf::MetaArray* tokens = file.get_array("tokenizer.ggml.tokens");
  if (tokens == nullptr) fail(file.name(), ": no tokenizer.ggml.tokens");
  if (tokens->element_type != gguf::ValueType::kString) {
    fail(file.name(), ": tokenizer.ggml.tokens is not an array of strings");
  }
  if (tokens->strings.empty()) fail(file.name(), ": tokenizer.ggml.tokens is empty");
  if (tokens->strings.size() > static_cast<size_t>(INT32_MAX)) {
    fail(file.name(), ": too many tokens (", tokens->strings.size(), ")");
  }
  vocab.texts = tokens->strings;
  for (size_t id = 0; id < vocab.texts.size(); ++id) {
    // An empty text could never be matched; llama.cpp names it like this.
    if (vocab.texts[id].empty()) vocab.texts[id] = "[EMPTY_" + std::to_string(id) + "]";
  }
  const size_t n = vocab.texts.size();
  vocab.scores.assign(n, 0.0f);
  if (const gguf::MetaArray* scores = file.get_array("tokenizer.ggml.scores")) {
    if (scores->count < n)
      fail(file.name(), ": tokenizer.ggml.scores has fewer entries than tokens");
    const std::vector<float> values = with_file_name(file, [&] { return scores->to_floats(); });
    std::copy_n(values.begin(), n, vocab.scores.begin());
  }
  vocab.attrs.assign(n, kAttrNormal);
  if (const gguf::MetaArray* types = file.get_array("tokenizer.ggml.token_type")) {
    if (types->count < n) {
      fail(file.name(), ": tokenizer.ggml.token_type has fewer entries than tokens");
    }
    const std::vector<int64_t> values = with_file_name(file, [&] { return types->to_ints(); });
    for (size_t id = 0; id < n; ++id) vocab.attrs[id] = attr_from_type(values[id]);
  }
  vocab.ids.reserve(n);
  for (size_t id = 0; id < n; ++id) vocab.ids.insert_or_assign(vocab.texts[id], id);
}

// Defaults by tokenizer kind, as llama.cpp sets them before reading the file
// (a "gemma4" model has none: its file names every id).
void set_defaults(Vocab& vocab, bool gemma4_model) {
  if (vocab.kind == TokenizerKind::kSpm) {
    vocab.bos = 1;
    vocab.eos = 2;
    vocab.unk = 0;
    vocab.add_bos = true;
    vocab.add_space_prefix = true;
  } else if (!gemma4_model) {
    vocab.bos = 11;
    vocab.eos = 11;
    vocab.add_bos = vocab.pre == "llama3" || vocab.pre == "llama-v3" || vocab.pre == "llama-bpe" ||
                    vocab.pre == "tekken";
  }
  for (TokenId* id : {&vocab.bos, &vocab.eos, &vocab.unk}) {
    if (*id >= vocab.size()) *id = kNoToken;
  }
}

void read_special_ids(const gguf::GgufFile& file, Vocab& vocab) {
  const auto read_id = [&](std::string_view key, TokenId& id) {
    const std::optional<uint64_t> value = file.get_uint(key);
    if (value && *value < static_cast<uint64_t>(vocab.size())) id = static_cast<TokenId>(*value);
  };
  read_id("tokenizer.ggml.bos_token_id", vocab.bos);
  read_id("tokenizer.ggml.eos_token_id", vocab.eos);
  read_id("tokenizer.ggml.eot_token_id", vocab.eot);
  read_id("tokenizer.ggml.unknown_token_id", vocab.unk);
  vocab.add_bos = file.get_bool("tokenizer.ggml.add_bos_token").value_or(vocab.add_bos);
  vocab.add_space_prefix =
      file.get_bool("tokenizer.ggml.add_space_prefix").value_or(vocab.add_space_prefix);
}

void mark_end_of_generation(Vocab& vocab) {
  if (vocab.eot == kNoToken) {
    for (const std::string_view text : kEndOfTurnTexts) {
      if (const auto id = vocab.find(text)) {
        vocab.eot = *id;
        break;
      }
    }
  }
  std::vector<TokenId>& eog = vocab.end_of_generation;
  for (const std::string_view text : kEndOfGenerationTexts) {
    if (const auto id = vocab.find(text)) {
      eog.push_back(*id);
      vocab.attrs[*id] |= kAttrControl;
    }
  }
  for (const TokenId id : {vocab.eos, vocab.eot}) {
    if (id != kNoToken) eog.push_back(id);
  }
  std::sort(eog.begin(), eog.end());
  eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
}

void collect_special_tokens(Vocab& vocab) {
  for (TokenId id = 0; id < vocab.size(); ++id) {
    if (vocab.has_attr(id,
                       static_cast<TokenAttr>(kAttrControl | kAttrUserDefined | kAttrUnknown))) {
      vocab.special_tokens.push_back(id);
    }
  }
  std::stable_sort(
      vocab.special_tokens.begin(), vocab.special_tokens.end(),
      [&](TokenId a, TokenId b) { return vocab.texts[a].size() > vocab.texts[b].size(); });
}

// llama.cpp's rule for Phi-3 files (recognized by name): white space after a
// special token, but <unk>, <s> and <|endoftext|>, is not text.
void mark_rstrip(const gguf::GgufFile& file, Vocab& vocab) {
  std::string name = file.get_string("general.name").value_or("");
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (name.find("phi-3") == std::string::npos && name.find("phi3") == std::string::npos) return;
  for (const TokenId id : vocab.special_tokens) vocab.attrs[id] |= kAttrRstrip;
  if (const auto id = vocab.find("</s>")) vocab.attrs[*id] |= kAttrRstrip;
  for (const std::string_view text : {"<unk>", "<s>", "<|endoftext|>"}) {
    if (const auto id = vocab.find(text)) vocab.attrs[*id] &= ~kAttrRstrip;
  }
}

}  // namespace

std::optional<TokenId> Vocab::find(std::string_view text) const {
  const auto it = ids.find(text);
  if (it == ids.end()) return std::nullopt;
  return it->second;
}

std::optional<TokenId> Vocab::find_byte_token(uint8_t byte) const {
  char name[8];
  std::snprintf(name, sizeof(name), "<0x%02X>", byte);
  return find(name);
}

void load_vocab(const gguf::GgufFile& file, Vocab& vocab) {
  vocab.file_name = file.name();
  const std::optional<std::string> model = file.get_string("tokenizer.ggml.model");
  if (!model) fail(file.name(), ": no tokenizer (tokenizer.ggml.model is missing)");
  // gemma4 is BPE too, over raw UTF-8 (its pre-tokenizer says so).
  if (*model == "gpt2" || *model == "gemma4") {
    vocab.kind = TokenizerKind::kBpe;
  } else if (*model == "llama") {
    vocab.kind = TokenizerKind::kSpm;
  } else {
    fail(file.name(), ": unsupported tokenizer model '", *model,
         "' (supported: gpt2, llama, gemma4)");
  }
  // A gemma4 model has one pre-tokenizer whatever the file says, as in llama.cpp.
  const bool gemma4_model = *model == "gemma4";
  vocab.pre = gemma4_model ? "gemma4" : file.get_string("tokenizer.ggml.pre").value_or("default");
  load_texts(file, vocab);
  set_defaults(vocab, gemma4_model);
  read_special_ids(file, vocab);
  // Gemma 4 needs its BOS; llama.cpp adds it even where a file says not to.
  if (vocab.pre == "gemma4") vocab.add_bos = true;
  mark_end_of_generation(vocab);
  collect_special_tokens(vocab);
  mark_rstrip(file, vocab);
}

}  // namespace eventkv::tokenizer
