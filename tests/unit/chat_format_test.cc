// Chat rendering: ids and spans against llama.cpp's tokenization of the
// rendered text (tests/fixtures/tokenizer/chats.json), the event-boundary
// property on the real models, and the documented differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "model/test_model.h"
#include "test_support.h"
#include "tokenizer/chat_format.h"
#include "util/error.h"

namespace eventkv::tokenizer {
namespace {

using nlohmann::json;

std::optional<Tokenizer> real_tokenizer(const std::string& file_name) {
  const std::string path = testing::real_model_path(file_name);
  if (path.empty()) return std::nullopt;
  return Tokenizer::from_gguf(gguf::GgufFile::open(path));
}

Tokenizer generated_tokenizer(model::TestTokenizer kind, const std::string& pre = "default") {
  model::TestModelSpec spec;
  spec.tokenizer = kind;
  spec.pre = pre;
  const std::vector<uint8_t> bytes = model::build_test_model(spec).to_bytes();
  return Tokenizer::from_gguf(gguf::GgufFile::parse(bytes, "generated"));
}

// The tokenizer a chats.json family was made with, or nullopt when absent.
std::optional<Tokenizer> family_tokenizer(const std::string& family) {
  if (family == "smollm2") return real_tokenizer("smollm2-135m-instruct-q4_1.gguf");
  if (family == "gemma3") return real_tokenizer("gemma-3-270m-q4_k_m.gguf");
  if (family == "qwen2.5") return real_tokenizer("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
  if (family == "generated-spm") return generated_tokenizer(model::TestTokenizer::kSpm);
  if (family == "generated-gemma4") return generated_tokenizer(model::TestTokenizer::kGemma4);
  return generated_tokenizer(model::TestTokenizer::kBpe, "qwen2");
}

std::vector<ChatMessage> messages_of(const json& entry) {
  std::vector<ChatMessage> messages;
  for (const json& m : entry.at("messages")) messages.push_back({m.at("role"), m.at("content")});
  return messages;
}

TEST(ChatFormat, MatchesReferenceIdsAndSpans) {
  const json chats = testing::load_fixture("tokenizer/chats.json");
  int checked = 0;
  for (const auto& [family, entries] : chats.items()) {
    const std::optional<Tokenizer> tok = family_tokenizer(family);
    if (!tok) continue;
    for (const json& entry : entries) {
      const ChatFormat format = ChatFormat::by_name(entry.at("format").get<std::string>());
      const std::vector<ChatMessage> messages = messages_of(entry);
      const RenderedChat chat = format.render(*tok, messages, entry.at("add_generation_prompt"));
      const std::string label = family + "/" + std::string(format.name());
      EXPECT_EQ(chat.ids, entry.at("ids").get<std::vector<TokenId>>()) << label;
      EXPECT_EQ(tok->decode(chat.ids), entry.at("text").get<std::string>()) << label;
      const auto ends = entry.at("message_ends").get<std::vector<int32_t>>();
      ASSERT_EQ(chat.messages.size(), ends.size()) << label;
      int32_t position = chat.preamble.end;
      EXPECT_EQ(chat.preamble.begin, 0);
      for (size_t i = 0; i < ends.size(); ++i) {
        EXPECT_EQ(chat.messages[i].begin, position) << label << " message " << i;
        EXPECT_EQ(chat.messages[i].end, ends[i]) << label << " message " << i;
        const std::vector<TokenId> alone = format.render_message(*tok, messages[i]);
        EXPECT_EQ(std::vector<TokenId>(chat.ids.begin() + chat.messages[i].begin,
                                       chat.ids.begin() + chat.messages[i].end),
                  alone)
            << label << " message " << i;
        position = chat.messages[i].end;
      }
      EXPECT_EQ(chat.generation_prompt.begin, position);
      EXPECT_EQ(chat.generation_prompt.end, static_cast<int32_t>(chat.ids.size()));
      ++checked;
    }
  }
  std::printf("[ reference] %d rendered chats checked\n", checked);
}

TEST(ChatFormat, DetectsRealModels) {
  const std::pair<const char*, const char*> expected[] = {
      {"smollm2-135m-instruct-q4_1.gguf", "smollm2"},
      {"gemma-3-270m-q4_k_m.gguf", "gemma"},
      {"qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "qwen2.5"},
      {"qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "qwen2.5"},
  };
  for (const auto& [file, name] : expected) {
    const std::string path = testing::real_model_path(file);
    if (path.empty()) continue;
    EXPECT_EQ(ChatFormat::detect(gguf::GgufFile::open(path)).name(), name) << file;
  }
}

TEST(ChatFormat, DetectsFromVocabularyWithoutTemplate) {
  model::TestModelSpec spec;
  spec.tokenizer = model::TestTokenizer::kSpm;
  const std::vector<uint8_t> spm = model::build_test_model(spec).to_bytes();
  EXPECT_EQ(ChatFormat::detect(gguf::GgufFile::parse(spm, "spm")).name(), "gemma");
  const std::vector<uint8_t> bpe = model::build_test_model({}).to_bytes();
  EXPECT_EQ(ChatFormat::detect(gguf::GgufFile::parse(bpe, "bpe")).name(), "chatml");
  spec.tokenizer = model::TestTokenizer::kGemma4;
  const std::vector<uint8_t> gemma4 = model::build_test_model(spec).to_bytes();
  EXPECT_EQ(ChatFormat::detect(gguf::GgufFile::parse(gemma4, "gemma4")).name(), "gemma4");
}

// Conversations of six messages, all roles, whose contents are the corpus
// strings that hold no special-token text for `tok` (content is never parsed
// for specials, so with such text the whole string would tokenize
// differently: intended, see ContentIsNeverParsedForSpecials).
std::vector<std::vector<ChatMessage>> corpus_conversations(const Tokenizer& tok) {
  const auto corpus =
      testing::load_fixture("tokenizer/corpus.json").get<std::vector<std::string>>();
  std::vector<std::string> contents;
  for (const std::string& s : corpus) {
    if (tok.encode(s, true) == tok.encode(s)) contents.push_back(s);
  }
  const char* roles[] = {"system", "user", "assistant", "tool", "user", "assistant"};
  std::vector<std::vector<ChatMessage>> conversations;
  for (size_t start = 0; start + 6 <= contents.size(); start += 6) {
    std::vector<ChatMessage> messages;
    for (size_t i = 0; i < 6; ++i) {
      messages.push_back({roles[(start / 6 + i) % 6], contents[start + i]});
    }
    conversations.push_back(std::move(messages));
  }
  return conversations;
}

// Event by event equals the whole rendered string tokenized with specials
// parsed (BOS aside), for every conversation.
void check_event_boundaries(const Tokenizer& tok, const ChatFormat& format) {
  int checked = 0;
  for (const auto& messages : corpus_conversations(tok)) {
    const RenderedChat chat = format.render(tok, messages, true);
    const size_t skip = tok.add_bos() ? 1 : 0;
    const std::vector<TokenId> rest(chat.ids.begin() + skip, chat.ids.end());
    EXPECT_EQ(tok.encode(tok.decode(rest), true), rest)
        << format.name() << ": conversation starting " << json(messages[0].content).dump();
    ++checked;
  }
  EXPECT_GT(checked, 250);
  std::printf("[ property ] %s: %d conversations of 6 events, event by event == whole string\n",
              std::string(format.name()).c_str(), checked);
}

TEST(ChatFormat, EventByEventEqualsWholeStringOnRealModels) {
  const std::pair<const char*, const char*> models[] = {
      {"smollm2-135m-instruct-q4_1.gguf", "smollm2"},
      {"gemma-3-270m-q4_k_m.gguf", "gemma"},
      {"qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "qwen2.5"},
  };
  int checked = 0;
  for (const auto& [file, name] : models) {
    const std::optional<Tokenizer> tok = real_tokenizer(file);
    if (!tok) continue;
    check_event_boundaries(*tok, ChatFormat::by_name(name));
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no real model present";
}

TEST(ChatFormat, EventByEventEqualsWholeStringOnGeneratedModels) {
  const Tokenizer bpe = generated_tokenizer(model::TestTokenizer::kBpe, "qwen2");
  for (const char* name : {"chatml", "llama3", "mistral", "mistral-tekken"}) {
    check_event_boundaries(bpe, ChatFormat::by_name(name));
  }
  check_event_boundaries(generated_tokenizer(model::TestTokenizer::kSpm),
                         ChatFormat::by_name("gemma"));
  check_event_boundaries(generated_tokenizer(model::TestTokenizer::kGemma4),
                         ChatFormat::by_name("gemma4"));
}

// A reply is generated after the prompt's empty thought channel, so the model
// turn that records it keeps that channel: the reply's rows are its rendering.
TEST(ChatFormat, Gemma4ModelTurnStartsWithTheGenerationPrompt) {
  const Tokenizer tok = generated_tokenizer(model::TestTokenizer::kGemma4);
  const ChatFormat format = ChatFormat::by_name("gemma4");
  const std::vector<TokenId> prompt = format.generation_prompt(tok);
  const std::vector<TokenId> reply = format.render_message(tok, {"assistant", " hi "});
  ASSERT_GT(reply.size(), prompt.size());
  EXPECT_TRUE(std::equal(prompt.begin(), prompt.end(), reply.begin()));
  EXPECT_EQ(tok.decode(reply), "<|turn>model\n<|channel>thought\n<channel|>hi<turn|>\n");
  const std::vector<ChatMessage> messages = {{"system", "s"}, {"tool", "t"}};
  EXPECT_EQ(tok.decode(format.render(tok, messages, false).ids),
            "<bos><|turn>system\ns<turn|>\n<|turn>user\nt<turn|>\n");
}

TEST(ChatFormat, GemmaSystemMessageIsItsOwnTurn) {
  const Tokenizer tok = generated_tokenizer(model::TestTokenizer::kSpm);
  const std::vector<ChatMessage> messages = {{"system", " Be brief. "}, {"user", "hello"}};
  const RenderedChat chat = ChatFormat::by_name("gemma").render(tok, messages, true);
  // Gemma's own template would give "<start_of_turn>user\nBe brief.\n\nhello<end_of_turn>\n".
  EXPECT_EQ(
      tok.decode(chat.ids),
      "<s><start_of_turn>user\nBe brief.<end_of_turn>\n<start_of_turn>user\nhello<end_of_turn>\n"
      "<start_of_turn>model\n");
  EXPECT_EQ(chat.preamble.size(), 1);
}

TEST(ChatFormat, QwenToolMessagesAreSeparateTurns) {
  const Tokenizer tok = generated_tokenizer(model::TestTokenizer::kBpe, "qwen2");
  const std::vector<ChatMessage> messages = {{"tool", "a"}, {"tool", "b"}};
  const RenderedChat chat = ChatFormat::by_name("qwen2.5").render(tok, messages, false);
  EXPECT_EQ(
      tok.decode(std::vector<TokenId>(chat.ids.begin() + chat.messages[0].begin, chat.ids.end())),
      "<|im_start|>user\n<tool_response>\na\n</tool_response><|im_end|>\n"
      "<|im_start|>user\n<tool_response>\nb\n</tool_response><|im_end|>\n");
  EXPECT_FALSE(chat.preamble.empty());  // the default system prompt
}

// As llama.cpp's v7 and v7-tekken templates render them; Ministral 3's own
// template (llama.cpp's models/templates) also writes a reply right after
// [/INST], with no space.
TEST(ChatFormat, MistralTekkenHasNoSpaceAfterTagsOrBeforeAReply) {
  const Tokenizer tok = generated_tokenizer(model::TestTokenizer::kBpe, "qwen2");
  const std::vector<ChatMessage> messages = {
      {"system", "be"}, {"user", "hi"}, {"assistant", "yo"}, {"tool", "t"}};
  EXPECT_EQ(tok.decode(ChatFormat::by_name("mistral-tekken").render(tok, messages, true).ids),
            "[SYSTEM_PROMPT]be[/SYSTEM_PROMPT][INST]hi[/INST]yo</s>[TOOL_RESULTS]t[/TOOL_RESULTS]");
  EXPECT_EQ(tok.decode(ChatFormat::by_name("mistral").render(tok, messages, true).ids),
            "[SYSTEM_PROMPT] be[/SYSTEM_PROMPT][INST] hi[/INST] yo</s>[TOOL_RESULTS] "
            "t[/TOOL_RESULTS]");
}

TEST(ChatFormat, ContentIsNeverParsedForSpecials) {
  const Tokenizer tok = generated_tokenizer(model::TestTokenizer::kBpe, "qwen2");
  const std::vector<TokenId> ids =
      ChatFormat::by_name("chatml").render_message(tok, {"user", "<|im_end|>"});
  int im_end = 0;
  for (const TokenId id : ids) im_end += id == *tok.find_token("<|im_end|>") ? 1 : 0;
  EXPECT_EQ(im_end, 1);  // only the turn's own end
}

TEST(ChatFormat, Errors) {
  const Tokenizer spm = generated_tokenizer(model::TestTokenizer::kSpm);
  EXPECT_THROW(ChatFormat::by_name("vicuna"), Error);
  EXPECT_THROW(ChatFormat::by_name("chatml").render_message(spm, {"robot", "x"}), Error);
  try {
    ChatFormat::by_name("chatml").render_message(spm, {"user", "x"});
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("<|im_start|>"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace eventkv::tokenizer
