// What the server does, apart from HTTP: sessions by id, each operation run
// as a job on the engine thread (serve/scheduler.h), the OpenAI chat
// mapping (messages to events, reusing a session's rows when the messages
// extend its events), snapshots and the restore of every session at start.
// Requests and answers are JSON; errors are ApiError (a status) or Error
// (422).
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "serve/generation.h"
#include "serve/scheduler.h"
#include "serve/session.h"

namespace eventkv::serve {

struct ServiceOptions {
  std::string model_name;
  std::string state_dir;  // "": sessions live in memory only
  int64_t kv_budget = 0;  // default budget of new sessions; 0: none
  int64_t max_sessions = 64;
  size_t max_queue = 64;      // jobs and replies waiting for the engine
  int32_t max_tokens = 4096;  // per reply
};

class Service {
 public:
  Service(SessionContext context, ServiceOptions options);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Restores every session journaled in the state dir; returns how many.
  // A journal that cannot be restored is reported on stderr and left alone.
  size_t restore_all();

  Metrics& metrics() { return metrics_; }
  const std::string& model_name() const { return options_.model_name; }

  nlohmann::json create_session(const nlohmann::json& body);
  nlohmann::json list_sessions();
  nlohmann::json get_session(const std::string& sid);
  nlohmann::json delete_session(const std::string& sid);
  nlohmann::json append_events(const std::string& sid, const nlohmann::json& body);
  nlohmann::json list_events(const std::string& sid);
  nlohmann::json evict(const std::string& sid, const nlohmann::json& body, bool forget);
  nlohmann::json score(const std::string& sid, const nlohmann::json& body);
  nlohmann::json contract(const std::string& sid);
  nlohmann::json snapshot(const std::string& sid, const nlohmann::json& body);
  nlohmann::json restore(const std::string& sid, const nlohmann::json& body);

  // A reply started in session `sid` (body: sampling parameters).
  std::shared_ptr<Generation> generate(const std::string& sid, const nlohmann::json& body);
  nlohmann::json generation_json(const GenerationResult& result, const std::string& sid);

  // OpenAI chat: the messages appended to the session named by `user` or the
  // header (a temporary one when neither), then a reply started.
  struct Chat {
    std::shared_ptr<Generation> generation;
    std::string session;
    bool temporary = false;
    bool include_usage = false;  // stream_options.include_usage
  };
  Chat start_chat(const nlohmann::json& request, const std::string& header_session);
  void end_chat(const Chat& chat);  // drops a temporary session

  // Stops the engine thread (replies in flight are finished first).
  void stop() { scheduler_.stop(); }

 private:
  // Runs `work` as a job on the engine thread; returns what it returns.
  template <typename Work>
  auto on_engine(Work work) -> decltype(work());

  Session& find(const std::string& sid);       // 404 when unknown
  Session& find_idle(const std::string& sid);  // 409 while it generates
  Session& add_session(SessionSettings settings, bool temporary);
  std::string journal_path(const std::string& sid) const;
  std::string snapshot_dir(const std::string& sid) const;
  std::vector<contract::AgentEvent> parse_events(const Session& session,
                                                 const nlohmann::json& list) const;
  sampling::GenerateParams sampling_params(const nlohmann::json& body, bool openai) const;
  void refresh_gauges();

  SessionContext context_;
  ServiceOptions options_;
  Metrics metrics_;
  std::map<std::string, std::unique_ptr<Session>> sessions_;  // engine thread only
  int64_t temporary_count_ = 0;
  Scheduler scheduler_;
};

// Session and event ids: 1 to `max_length` of [A-Za-z0-9_.-] (snapshot
// names, a session id and a number, up to 96).
bool valid_id(const std::string& id, size_t max_length = 64);

}  // namespace eventkv::serve
