// The memory contract on generated models of every architecture: verified
// forgetting serves the same rows whatever the forgotten event said, recall
// facts survive any budget as a record or a certified carrier, and bad
// histories or evictions change nothing.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "contract/agent_history.h"
#include "contract/contract_cache.h"
#include "model/model.h"
#include "model/test_model.h"
#include "served_rows.h"
#include "util/error.h"

namespace eventkv::contract {
namespace {

using testing::bit_identical;
using testing::served_rows;

struct Harness {
  std::vector<uint8_t> bytes;
  std::shared_ptr<kv::Engine> engine;
  std::shared_ptr<kv::KvArena> arena;
  std::optional<tokenizer::ChatFormat> format;

  ContractCache cache(std::optional<Profile> profile = {}, ContractOptions options = {}) const {
    return {engine, arena, *format, std::move(profile), options};
  }
};

Harness make_setup(model::Arch arch) {
  Harness s;
  model::TestModelSpec spec;
  spec.arch = arch;
  s.bytes = model::build_test_model(spec).to_bytes();
  const auto model = model::Model::from_bytes(s.bytes, "generated");
  s.engine = std::make_shared<kv::Engine>(model, 2);
  s.arena = std::make_shared<kv::KvArena>(model->config(), 4096, compute::KvType::kF32);
  s.format = tokenizer::ChatFormat::detect(model->file());
  return s;
}

// A short agent history: preferences to recall (one acknowledged by a
// carrier), a secret to forget in the middle, filler turns after it.
std::string history_json(const std::string& secret) {
  return R"({"version": 1, "events": [
    {"id": "system", "role": "system", "content": "You help.", "pin": true},
    {"id": "u1", "role": "user", "content": "I use vim.", "policy": "recall",
     "facts": [{"key": "editor", "value": "vim", "type": "name", "statement": "the editor is {value}"}]},
    {"id": "u2", "role": "user", "content": "Door code )" +
         secret + R"(.", "policy": "forget",
     "facts": [{"key": "code", "value": ")" +
         secret + R"(", "type": "text"}]},
    {"id": "a1", "role": "assistant", "content": "Noted.",
     "carries": [{"fact": "editor", "construction": "acknowledgement"}]},
    {"id": "u3", "role": "user", "content": "Port 8080.", "policy": "recall",
     "facts": [{"key": "port", "value": "8080", "type": "integer-4"}]},
    {"id": "a2", "role": "assistant", "content": "OK."},
    {"id": "u4", "role": "user", "content": "Weather?"},
    {"id": "a3", "role": "assistant", "content": "Sunny."}],
   "queries": [{"fact": "editor", "question": "Editor?", "candidates": ["vim", "emacs"]}]})";
}

AgentHistory sample_history(const std::string& secret = "4821") {
  return parse_agent_history(history_json(secret), "history.json");
}

std::vector<float> rows_after_evicting(const Harness& s, const std::string& secret, bool enforce,
                                       const std::vector<std::string>& ids) {
  ContractCache cache = s.cache({}, {.enforce = enforce, .verify = false});
  cache.append(sample_history(secret).events);
  cache.evict(ids);
  return served_rows(cache.kv());
}

class ContractTest : public ::testing::TestWithParam<model::Arch> {};

TEST_P(ContractTest, VerifiedForgettingIsProvedAndRecomputesOnlyDescendants) {
  const Harness s = make_setup(GetParam());
  ContractCache cache = s.cache();
  cache.append(sample_history().events);
  // A recall event evicted with it: its record is appended after the
  // forgetting and the proofs must cover it too.
  const std::vector<std::string> ids = {"u1", "u2"};
  const std::vector<Decision> decisions = cache.evict(ids);
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_EQ(decisions[0].keeping, Keeping::kRecord);
  EXPECT_EQ(decisions[1].keeping, Keeping::kForgotten);
  ASSERT_EQ(cache.proofs().size(), 1u);
  const ForgetProof& proof = cache.proofs()[0];
  EXPECT_TRUE(proof.verified);
  EXPECT_TRUE(proof.value_independent);
  EXPECT_TRUE(proof.equals_fresh);
  EXPECT_EQ(proof.recomputed_events, 5);  // a1, u3, a2, u4, a3
  EXPECT_EQ(cache.fact_state("code"), "forgotten");
}

TEST_P(ContractTest, ForgottenRowsAreBitIdenticalForAnySecretAndPlainEvictionIsNot) {
  const Harness s = make_setup(GetParam());
  const std::vector<std::string> ids = {"u2", "u4"};
  const std::vector<float> reference = rows_after_evicting(s, "4821", true, ids);
  for (const std::string secret : {"0000", "9376", "1234"}) {
    EXPECT_TRUE(bit_identical(rows_after_evicting(s, secret, true, ids), reference)) << secret;
  }
  // The control that lets the property fail: plain eviction keeps rows that
  // were computed with the secret visible.
  EXPECT_FALSE(bit_identical(rows_after_evicting(s, "9376", false, ids),
                             rows_after_evicting(s, "4821", false, ids)));
}

TEST_P(ContractTest, RecallFactsSurviveEveryBudgetAsRetainedOrRecords) {
  const Harness s = make_setup(GetParam());
  int64_t full = 0;
  {
    ContractCache cache = s.cache({}, {.enforce = true, .verify = false});
    cache.append(sample_history().events);
    full = cache.kv().retained_rows();
  }
  for (int64_t budget = full; budget >= 0; budget -= std::max<int64_t>(1, full / 8)) {
    ContractCache cache = s.cache({}, {.enforce = true, .verify = false});
    cache.append(sample_history().events);
    cache.fit_budget(budget);
    for (const std::string key : {"editor", "port"}) {
      const std::string state = cache.fact_state(key);
      EXPECT_TRUE(state == "retained" || state == "record") << key << " at " << budget;
    }
    const std::string code = cache.fact_state("code");
    EXPECT_TRUE(code == "retained" || code == "forgotten") << code << " at " << budget;
    if (budget < full / 4) {
      EXPECT_EQ(code, "forgotten");
    }
    EXPECT_TRUE(cache.kv().event("system").retained);
  }
}

Profile certifying(const std::string& construction, const std::string& type) {
  Profile profile;
  ProfileEntry entry;
  entry.construction = construction;
  entry.payload_type = type;
  entry.certified = true;
  entry.reason = "test";
  profile.entries.push_back(entry);
  return profile;
}

TEST_P(ContractTest, ACertifiedCarrierServesUntilItIsEvictedOrRecomputed) {
  const Harness s = make_setup(GetParam());
  ContractCache cache = s.cache(certifying("acknowledgement", "name"), {.verify = false});
  cache.append(sample_history().events);
  const int64_t rows = cache.kv().retained_rows();
  cache.evict(std::vector<std::string>{"u1"});
  EXPECT_EQ(cache.fact_state("editor"), "carrier");
  EXPECT_EQ(cache.kv().retained_rows(),
            rows - cache.kv().event("u1").end() + cache.kv().event("u1").begin);  // no record
  // Forgetting u2 recomputes the carrier a1 without u1: it no longer holds
  // the value, so a record replaces it.
  cache.evict(std::vector<std::string>{"u2"});
  EXPECT_EQ(cache.fact_state("editor"), "record");
  EXPECT_EQ(cache.kv().events().back().id.rfind("record:u1", 0), 0u);
}

TEST_P(ContractTest, WithoutACertificateARecordIsKept) {
  const Harness s = make_setup(GetParam());
  ContractCache cache = s.cache(certifying("confirmation", "name"), {.verify = false});
  cache.append(sample_history().events);
  const std::vector<Decision> decisions = cache.evict(std::vector<std::string>{"u1"});
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].keeping, Keeping::kRecord);
  EXPECT_NE(decisions[0].evidence.find("the editor is vim"), std::string::npos);
  EXPECT_NE(decisions[0].evidence.find("not calibrated for name"), std::string::npos);
  EXPECT_EQ(cache.fact_state("editor"), "record");
}

INSTANTIATE_TEST_SUITE_P(Archs, ContractTest,
                         ::testing::Values(model::Arch::kLlama, model::Arch::kQwen2,
                                           model::Arch::kQwen3, model::Arch::kGemma3),
                         [](const auto& info) {
                           return std::string(model::arch_name(info.param));
                         });

TEST(Contract, RefusedEvictionsChangeNothing) {
  const Harness s = make_setup(model::Arch::kLlama);
  ContractCache cache = s.cache({}, {.verify = false});
  cache.append(sample_history().events);
  const std::vector<float> before = served_rows(cache.kv());
  const auto refused = [&](std::vector<std::string> ids, const std::string& message) {
    try {
      cache.evict(ids);
      ADD_FAILURE() << "accepted " << ids.front();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
    EXPECT_TRUE(bit_identical(served_rows(cache.kv()), before));
    EXPECT_TRUE(cache.log().empty());
  };
  refused({"u1", "nope"}, "unknown event 'nope'");
  refused({"system"}, "event 'system' is pinned");
  refused({"u1", "u1"}, "listed twice");
}

TEST(Contract, MalformedHistoriesGetOneLineErrors) {
  const std::string good = history_json("4821");
  const auto error_of = [](const std::string& text) {
    try {
      parse_agent_history(text, "h.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    return error_of(text);
  };
  EXPECT_EQ(error_of(good), "accepted");
  EXPECT_EQ(replaced(R"("policy": "forget")", R"("policy": "erase")"),
            "h.json: /events/2/policy: unknown policy 'erase' (recall, forget, none)");
  EXPECT_EQ(replaced(R"("value": "vim")", R"("value": "emacs")"),
            "h.json: /events/1/facts/0/value: 'emacs' does not occur in the event's content");
  EXPECT_EQ(replaced(R"("type": "name")", R"("type": "colour")"),
            "h.json: /events/1/facts/0/type: unknown type 'colour' (binary, categorical, "
            "integer-1 .. integer-9, name, text)");
  EXPECT_EQ(replaced(R"({"fact": "editor", "construction")", R"({"fact": "mood", "construction")"),
            "h.json: /events/3/carries: fact 'mood' is not stated by an earlier event");
  EXPECT_EQ(replaced(R"("id": "a2")", R"("id": "a1")"), "h.json: /events/5/id: duplicate id 'a1'");
  EXPECT_EQ(replaced(R"(["vim", "emacs"])", R"(["nano", "emacs"])"),
            "h.json: /queries/0/candidates: must include the fact's value 'vim'");
  EXPECT_EQ(error_of("{").rfind("h.json: not valid JSON", 0), 0u);
}

}  // namespace
}  // namespace eventkv::contract
