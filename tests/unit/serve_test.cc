// The server's pieces below HTTP, on generated models: a reply decoded token
// by token (batched with other sessions) holds the same rows, bit for bit,
// as the same tokens appended whole, which is what makes a restored session
// equal to the one that was killed; journals and snapshots keep every
// acknowledged record and refuse torn or corrupt ones; a session replayed
// from its journal serves the same rows.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "contract/contract_cache.h"
#include "model/model.h"
#include "model/test_model.h"
#include "sampling/sampler.h"
#include "serve/journal.h"
#include "serve/session.h"
#include "served_rows.h"
#include "util/error.h"

namespace eventkv::serve {
namespace {

using testing::bit_identical;
using testing::served_rows;

using nlohmann::json;

struct Setup {
  compute::ActivationPrecision replies = compute::ActivationPrecision::kInt8Rowwise;
  std::vector<uint8_t> bytes;
  std::shared_ptr<kv::Engine> engine;
  std::shared_ptr<kv::KvArena> arena;
  std::optional<tokenizer::ChatFormat> format;
  Metrics metrics;

  SessionContext context() {
    return {engine,
            arena,
            *format,
            std::nullopt,
            {.enforce = true, .verify = false, .replies = replies},
            1024,
            256,
            512,
            &metrics};
  }
};

// A generated model of `arch` as `eventkv serve` runs it: by default events
// prefilled with int8 products on int8 panels (Q4_K weights have them) and
// replies decoded with int8 rowwise; with --exact (`exact`), f32 throughout.
struct ServeCase {
  model::Arch arch;
  bool exact;
};

std::unique_ptr<Setup> make_setup(ServeCase c) {
  auto s = std::make_unique<Setup>();
  model::TestModelSpec spec;
  spec.arch = c.arch;
  if (!c.exact) spec.weight_type = gguf::GgmlType::kQ4_K;
  s->bytes = model::build_test_model(spec).to_bytes();
  const auto products =
      c.exact ? compute::ActivationPrecision::kF32 : compute::ActivationPrecision::kInt8;
  s->replies = c.exact ? compute::ActivationPrecision::kF32Rowwise
                       : compute::ActivationPrecision::kInt8Rowwise;
  const auto model =
      model::Model::from_bytes(s->bytes, "generated", c.exact ? 0 : 1 << 30, model::Panels::kInt8);
  EXPECT_EQ(model->panel_bytes() > 0, !c.exact);
  s->engine = std::make_shared<kv::Engine>(model, 2, products);
  s->arena = std::make_shared<kv::KvArena>(model->config(), 8192, compute::KvType::kF32);
  s->format = tokenizer::ChatFormat::detect(model->file());
  return s;
}

contract::AgentEvent user_event(const std::string& id, const std::string& content) {
  contract::AgentEvent e;
  e.event = {id, "user", content};
  return e;
}

class ServeTest : public ::testing::TestWithParam<ServeCase> {};

const char* const kQuestions[] = {"Tell me about the sea.", "Count to three.", "Name a colour.",
                                  "Say something kind."};

// Four sessions decode greedily in shared steps (int8 replies: on the int8
// panels); each reply's rows equal those of its tokens appended whole to a
// copy of the history, each token computed with the products it had.
TEST_P(ServeTest, DecodedRepliesEqualRepliesAppendedWhole) {
  const auto s = make_setup(GetParam());
  std::vector<std::unique_ptr<contract::ContractCache>> caches;
  for (const char* text : kQuestions) {
    caches.push_back(std::make_unique<contract::ContractCache>(
        s->engine, s->arena, *s->format, std::nullopt, s->context().contract));
    caches.back()->append(std::vector{user_event("u1", text)});
  }
  std::vector<contract::ContractCache*> open;
  std::vector<int32_t> next;
  for (auto& cache : caches) {
    contract::AgentEvent reply;
    reply.event = {"r1", "assistant", ""};
    next.push_back(sampling::argmax(cache->open_reply(reply)));
    open.push_back(cache.get());
  }
  constexpr int64_t kSteps = 6;
  for (int step = 0; step < kSteps; ++step) {
    const auto logits = contract::ContractCache::extend_replies(open, next);
    for (size_t c = 0; c < open.size(); ++c) next[c] = sampling::argmax(logits[c]);
  }
  const bool exact = GetParam().exact;
  for (size_t c = 0; c < caches.size(); ++c) {
    caches[c]->close_reply("reply text", next[c]);
    const std::vector<contract::TokenRange>& panels = caches[c]->panel_tokens("r1");
    const tokenizer::Tokenizer& tok = s->engine->model().tokenizer();
    const auto header = static_cast<int64_t>(s->format->generation_prompt(tok).size());
    const auto tokens = static_cast<int64_t>(caches[c]->kv().event("r1").tokens.size());
    // Runs of 3 or more tokens take the panels: the header when it is that
    // long, the steps, the closing (the last token fed and the end).
    const int64_t closing = tokens - header - kSteps;
    ASSERT_GE(closing, 1);
    std::vector<contract::TokenRange> expected;
    if (!exact) expected.push_back({header >= 3 ? 0 : header, header + kSteps});
    if (!exact && closing >= 3) expected.back().end = tokens;
    EXPECT_EQ(panels, expected) << "session " << c << ", header " << header << ", closing "
                                << closing;
    // The same history, the reply's tokens appended whole, with and (a
    // control: other bits) without its panel tokens.
    for (const bool with_panels : {true, false}) {
      contract::ContractCache whole(s->engine, s->arena, *s->format, std::nullopt,
                                    s->context().contract);
      whole.append(std::vector{user_event("u1", kQuestions[c])});
      contract::AgentEvent reply;
      reply.event = {"r1", "assistant", "reply text"};
      whole.append_rendered(reply, caches[c]->kv().event("r1").tokens,
                            with_panels ? panels : std::vector<contract::TokenRange>{});
      EXPECT_EQ(bit_identical(served_rows(caches[c]->kv()), served_rows(whole.kv())),
                with_panels || exact)
          << "session " << c << (with_panels ? "" : ", replayed without its panel tokens");
      EXPECT_EQ(caches[c]->kv().event("r1").tokens, whole.kv().event("r1").tokens);
    }
  }
}

// Sessions whose replies were decoded together, restored from their
// journals, serve the same rows.
TEST_P(ServeTest, SessionsDecodedTogetherRestoreFromTheirJournals) {
  const auto s = make_setup(GetParam());
  const SessionContext context = s->context();
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<contract::ContractCache*> open;
  std::vector<int32_t> next;
  for (size_t i = 0; i < std::size(kQuestions); ++i) {
    const std::string path = str_cat(::testing::TempDir(), "/serve_together_", i, ".log");
    std::remove(path.c_str());
    sessions.push_back(std::make_unique<Session>(
        context, SessionSettings{str_cat("s", i), "You help.", 0, contract::Policy::kNone},
        Journal(path)));
    sessions.back()->append({user_event("u1", kQuestions[i])});
    next.push_back(sampling::argmax(sessions.back()->open_reply("r1")));
    open.push_back(&sessions.back()->cache());
  }
  for (int step = 0; step < 5; ++step) {
    const auto logits = contract::ContractCache::extend_replies(open, next);
    for (size_t c = 0; c < open.size(); ++c) next[c] = sampling::argmax(logits[c]);
    // One session ends early: the rest go on in smaller steps.
    if (step == 2) {
      sessions.back()->close_reply("early", next.back());
      open.pop_back();
      next.pop_back();
    }
  }
  for (size_t c = 0; c < open.size(); ++c) sessions[c]->close_reply("later", next[c]);
  for (size_t i = 0; i < sessions.size(); ++i) {
    const std::vector<float> rows = served_rows(sessions[i]->cache().kv());
    const std::string path = sessions[i]->journal().path();
    std::string warning;
    const std::vector<json> records = read_journal(path, &warning);
    EXPECT_EQ(records.back().contains("panel_tokens"), !GetParam().exact) << "session " << i;
    const auto restored = Session::restore(context, records, Journal(path));
    EXPECT_TRUE(bit_identical(rows, served_rows(restored->cache().kv()))) << "session " << i;
  }
}

// A session with appends, a reply, a budget and a verified forgetting,
// rebuilt from its journal, serves the same events and rows.
TEST_P(ServeTest, SessionRestoredFromItsJournalServesTheSameRows) {
  const auto s = make_setup(GetParam());
  const std::string path = ::testing::TempDir() + "/serve_session.log";
  std::remove(path.c_str());
  const SessionContext context = s->context();
  std::vector<std::string> ids;
  std::vector<float> rows;
  {
    Session session(context, {"s1", "You help.", 120, contract::Policy::kNone}, Journal(path));
    contract::AgentEvent secret = user_event("secret", "The code is 4821.");
    secret.policy = contract::Policy::kForget;
    session.append({user_event("u1", "Hello there."), secret, user_event("u2", "More words.")});
    const std::vector<float> logits = session.open_reply("r1");
    session.close_reply("ok", sampling::argmax(logits));
    session.forget({"secret"});
    session.append({user_event("u3", "A later turn that pushes the budget further along.")});
    for (const kv::EventState& e : session.cache().kv().events())
      ids.push_back(e.id + ":" + session.event_state(e));
    rows = served_rows(session.cache().kv());
  }
  std::string warning;
  const std::vector<json> records = read_journal(path, &warning);
  EXPECT_TRUE(warning.empty()) << warning;
  const auto restored = Session::restore(context, records, Journal(path));
  std::vector<std::string> restored_ids;
  for (const kv::EventState& e : restored->cache().kv().events())
    restored_ids.push_back(e.id + ":" + restored->event_state(e));
  EXPECT_EQ(ids, restored_ids);
  EXPECT_TRUE(bit_identical(rows, served_rows(restored->cache().kv())));
  EXPECT_LE(restored->cache().kv().retained_rows(), 120);
}

// Verified forgetting of an event between replies: the proofs replay the
// replies with their exact tokens and products (decoded in steps with two
// other sessions: int8 replies on the panels), and hold.
TEST_P(ServeTest, ForgettingBetweenRepliesIsProved) {
  const auto s = make_setup(GetParam());
  contract::ContractCache cache(s->engine, s->arena, *s->format, std::nullopt,
                                {.enforce = true, .verify = true, .replies = s->replies});
  std::vector<std::unique_ptr<contract::ContractCache>> others;
  for (int i = 0; i < 2; ++i) {
    others.push_back(std::make_unique<contract::ContractCache>(
        s->engine, s->arena, *s->format, std::nullopt, s->context().contract));
    others.back()->append(std::vector{user_event("u1", kQuestions[i])});
  }
  const auto reply = [&](const std::string& id) {
    contract::AgentEvent event;
    event.event = {id, "assistant", ""};
    std::vector<contract::ContractCache*> open = {&cache};
    std::vector<int32_t> next = {sampling::argmax(cache.open_reply(event))};
    for (auto& other : others) {
      open.push_back(other.get());
      next.push_back(sampling::argmax(other->open_reply(event)));
    }
    for (int step = 0; step < 3; ++step) {
      const auto logits = contract::ContractCache::extend_replies(open, next);
      for (size_t c = 0; c < open.size(); ++c) next[c] = sampling::argmax(logits[c]);
    }
    for (size_t c = 0; c < open.size(); ++c) open[c]->close_reply("words", next[c]);
    EXPECT_EQ(cache.panel_tokens(id).empty(), GetParam().exact);
  };
  cache.append(std::vector{user_event("u1", "Hello.")});
  reply("r1");
  contract::AgentEvent secret = user_event("secret", "The code is 4821.");
  cache.append(std::vector{secret});
  reply("r2");
  cache.append(std::vector{user_event("u2", "Thanks.")});
  reply("r3");
  cache.forget(std::vector<std::string>{"secret"});
  ASSERT_EQ(1u, cache.proofs().size());
  EXPECT_TRUE(cache.proofs()[0].verified);
  EXPECT_TRUE(cache.proofs()[0].value_independent);
  EXPECT_TRUE(cache.proofs()[0].equals_fresh);
  EXPECT_EQ(contract::Keeping::kForgotten, cache.log().back().keeping);
}

// A session under a budget goes on past its context: the retained rows are
// repositioned (journaled), and the restored session serves the same rows.
TEST_P(ServeTest, BudgetedSessionGoesOnPastTheContext) {
  const auto s = make_setup(GetParam());
  const std::string path = ::testing::TempDir() + "/serve_long_session.log";
  std::remove(path.c_str());
  SessionContext context = s->context();
  context.context = 160;
  std::vector<float> rows;
  {
    Session session(context, {"long", "", 64, contract::Policy::kNone}, Journal(path));
    for (int turn = 0; turn < 12; ++turn) {
      session.append({user_event(str_cat("u", turn), str_cat("Turn ", turn, " says something."))});
      const std::vector<float> logits = session.open_reply(str_cat("r", turn));
      session.close_reply("ok", sampling::argmax(logits));
      EXPECT_LE(session.positions(), 160) << "turn " << turn;
    }
    EXPECT_GT(session.cache().kv().n_slots(), 160);  // more tokens than the context held
    rows = served_rows(session.cache().kv());
  }
  std::string warning;
  const std::vector<json> records = read_journal(path, &warning);
  const auto repositions = std::count_if(records.begin(), records.end(),
                                         [](const json& r) { return r.at("op") == "reposition"; });
  EXPECT_GE(repositions, 1);
  const auto restored = Session::restore(context, records, Journal(path));
  EXPECT_TRUE(bit_identical(rows, served_rows(restored->cache().kv())));
}

INSTANTIATE_TEST_SUITE_P(
    Archs, ServeTest,
    ::testing::Values(ServeCase{model::Arch::kLlama, false}, ServeCase{model::Arch::kQwen3, false},
                      ServeCase{model::Arch::kGemma3, false}, ServeCase{model::Arch::kLlama, true},
                      ServeCase{model::Arch::kGemma3, true}),
    [](const auto& info) {
      return std::string(model::arch_name(info.param.arch)) + (info.param.exact ? "_exact" : "");
    });

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(Journal, KeepsRecordsUpToATornOrCorruptLine) {
  const std::string path = ::testing::TempDir() + "/journal.log";
  std::remove(path.c_str());
  {
    Journal journal(path);
    for (int i = 0; i < 3; ++i) journal.append({{"op", "append"}, {"n", i}});
  }
  std::string warning;
  EXPECT_EQ(3u, read_journal(path, &warning).size());
  EXPECT_TRUE(warning.empty());
  const std::string text = read_all(path);
  write_all(path, text.substr(0, text.size() - 5));  // the last write cut short
  EXPECT_EQ(2u, read_journal(path, &warning).size());
  EXPECT_NE(std::string::npos, warning.find("record 3 is incomplete")) << warning;
  std::string flipped = text;
  flipped[flipped.find("\"n\":1") + 4] = '7';  // a changed byte in record 2
  write_all(path, flipped);
  warning.clear();
  EXPECT_EQ(1u, read_journal(path, &warning).size());
  EXPECT_NE(std::string::npos, warning.find("record 2 is corrupt")) << warning;
}

TEST(Journal, SnapshotsRefuseTruncationAndCorruption) {
  const std::string path = ::testing::TempDir() + "/session.snap";
  const std::vector<json> records = {{{"op", "create"}, {"id", "s"}}, {{"op", "reset"}}};
  write_snapshot(path, records);
  EXPECT_EQ(records, read_snapshot(path));
  const std::string text = read_all(path);
  write_all(path, text.substr(0, text.size() / 2));
  EXPECT_THROW(read_snapshot(path), Error);
  std::string flipped = text;
  flipped[flipped.find("reset")] = 'R';
  write_all(path, flipped);
  try {
    read_snapshot(path);
    FAIL() << "a corrupt snapshot was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string::npos, std::string(e.what()).find("checksum")) << e.what();
  }
}

}  // namespace
}  // namespace eventkv::serve
