// One agent session: its events in a ContractCache (the memory contract
// enforced at every eviction), a KV budget fitted after every append and
// reply, and the journal that makes every acknowledged operation durable.
// Used on the engine thread only (serve/scheduler.h).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "contract/contract_cache.h"
#include "serve/journal.h"
#include "serve/metrics.h"

namespace eventkv::serve {

struct SessionSettings {
  std::string id;
  std::string system;     // a pinned system event when not empty
  int64_t kv_budget = 0;  // retained rows after each append; 0: no budget
  contract::Policy policy = contract::Policy::kNone;  // for events appended without one
};

// What a session is built from: shared by every session of the server.
struct SessionContext {
  std::shared_ptr<kv::Engine> engine;
  std::shared_ptr<kv::KvArena> arena;
  tokenizer::ChatFormat format;
  std::optional<contract::Profile> profile;
  contract::ContractOptions contract;
  int64_t context = 0;           // positions a session may use
  int64_t max_events = 0;        // per session
  int64_t max_event_tokens = 0;  // per event
  Metrics* metrics = nullptr;
};

class Session {
 public:
  // A new session; its journal records the settings first.
  Session(const SessionContext& context, SessionSettings settings, Journal journal);
  // A session restored from its journal's records (replayed in order).
  static std::unique_ptr<Session> restore(const SessionContext& context,
                                          const std::vector<nlohmann::json>& records,
                                          Journal journal);

  const SessionSettings& settings() const { return settings_; }
  const contract::ContractCache& cache() const { return *cache_; }
  contract::ContractCache& cache() { return *cache_; }
  Journal& journal() { return journal_; }
  bool busy() const { return busy_; }
  void set_busy(bool busy) { busy_ = busy; }

  // Appends events (ids and policies filled in), then fits the budget.
  // Returns the rows computed (records included) and the decisions.
  struct Appended {
    int64_t rows = 0;
    std::vector<contract::Decision> decisions;
  };
  Appended append(std::vector<contract::AgentEvent> events);
  std::vector<contract::Decision> evict(const std::vector<std::string>& ids);
  std::vector<contract::Decision> forget(const std::vector<std::string>& ids);
  // Starts the history again, empty (a conversation that does not extend it).
  void reset();

  // A reply: open_reply appends its header and returns the logits after it;
  // close_reply ends it, journals it and fits the budget.
  std::vector<float> open_reply(const std::string& id);
  std::vector<contract::Decision> close_reply(const std::string& text,
                                              std::optional<int32_t> pending);

  // A fresh event id ("e<N>"), none of `taken` (ids of a request's events).
  std::string next_event_id(const std::set<std::string>& taken = {}) const;
  // The position the next token takes: every token keeps its position
  // until the retained rows are repositioned (see make_room).
  int64_t positions() const { return cache_->kv().next_position(); }
  int64_t context() const { return context_.context; }

  nlohmann::json summary() const;
  nlohmann::json events_json() const;
  nlohmann::json contract_json() const;
  // "retained", "evicted", "record" or "forgotten".
  std::string event_state(const kv::EventState& event) const;

 private:
  Session(const SessionContext& context, SessionSettings settings);
  void apply(const nlohmann::json& record);
  void write(const nlohmann::json& record);
  std::vector<contract::Decision> fit_budget();
  void count(const std::vector<contract::Decision>& decisions, int64_t events_before);
  void make_room(int64_t tokens);
  void check_facts(const std::vector<contract::AgentEvent>& events) const;

  SessionContext context_;
  SessionSettings settings_;
  std::unique_ptr<contract::ContractCache> cache_;
  Journal journal_;
  bool replaying_ = false;
  bool busy_ = false;
};

nlohmann::json decision_json(const contract::Decision& decision);
nlohmann::json proof_json(const contract::ForgetProof& proof);

}  // namespace eventkv::serve
