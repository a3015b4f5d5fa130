#include "serve/service.h"

#include <chrono>
#include <filesystem>
#include <iostream>

#include "events/render.h"
#include "probe/conditions.h"
#include "probe/scenario.h"
#include "util/json_fields.h"

namespace eventkv::serve {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kRequest = "request";

contract::Policy parse_policy(const JsonFields& fields, contract::Policy fallback) {
  const std::string name = fields.text("policy", std::string(contract::policy_name(fallback)));
  if (name == "recall") return contract::Policy::kRecall;
  if (name == "forget") return contract::Policy::kForget;
  if (name != "none")
    fields.problem("policy", "unknown policy '" + name + "' (recall, forget, none)");
  return contract::Policy::kNone;
}

JsonFields request_fields(const json& body) {
  if (!body.is_object()) api_fail(400, "the request body must be a JSON object");
  return {body, "", kRequest};
}

std::vector<std::string> id_list(const JsonFields& fields) {
  std::vector<std::string> ids = fields.texts("ids", true);
  if (ids.size() > 4096) fields.problem("ids", "lists more than 4096 events");
  return ids;
}

json decisions_json(const std::vector<contract::Decision>& decisions) {
  json list = json::array();
  for (const contract::Decision& d : decisions) list.push_back(decision_json(d));
  return list;
}

// An OpenAI message's content: a string, or a list of text parts.
std::string message_text(const JsonFields& message) {
  const json& content = message.at("content");
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) message.problem("content", "must be a string or a list of text parts");
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const JsonFields part(content[i], message.pointer("content") + "/" + std::to_string(i),
                          kRequest);
    if (part.text("type", "", true) != "text")
      part.problem("type", "only text parts are supported");
    text += part.text("text", "", true);
  }
  return text;
}

// OpenAI clients send null for an absent value.
json without_nulls(const json& body) {
  if (!body.is_object()) return body;
  json out = json::object();
  for (const auto& item : body.items()) {
    if (!item.value().is_null()) out[item.key()] = item.value();
  }
  return out;
}

}  // namespace

bool valid_id(const std::string& id, size_t max_length) {
  if (id.empty() || id.size() > max_length) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '-';
  });
}

Service::Service(SessionContext context, ServiceOptions options)
    : context_(std::move(context)),
      options_(std::move(options)),
      scheduler_(options_.max_queue, metrics_) {
  context_.metrics = &metrics_;
  if (!options_.state_dir.empty()) {
    fs::create_directories(fs::path(options_.state_dir) / "sessions");
    fs::create_directories(fs::path(options_.state_dir) / "snapshots");
  }
}

Service::~Service() {
  scheduler_.stop();
}

template <typename Work>
auto Service::on_engine(Work work) -> decltype(work()) {
  using Result = decltype(work());
  std::optional<Result> result;
  scheduler_.run([&] {
    result.emplace(work());
    refresh_gauges();
  });
  return std::move(*result);
}

void Service::refresh_gauges() {
  int64_t retained = 0;
  int64_t full = 0;
  for (const auto& entry : sessions_) {
    retained += static_cast<int64_t>(entry.second->cache().kv().bytes_retained());
    full += static_cast<int64_t>(entry.second->cache().kv().bytes_full());
  }
  metrics_.sessions = static_cast<int64_t>(sessions_.size());
  metrics_.kv_bytes_retained = retained;
  metrics_.kv_bytes_full = full;
  metrics_.kv_bytes_held = static_cast<int64_t>(context_.arena->bytes_held());
}

std::string Service::journal_path(const std::string& sid) const {
  return (fs::path(options_.state_dir) / "sessions" / (sid + ".log")).string();
}

std::string Service::snapshot_dir(const std::string& sid) const {
  return (fs::path(options_.state_dir) / "snapshots" / sid).string();
}

size_t Service::restore_all() {
  if (options_.state_dir.empty()) return 0;
  return on_engine([&] {
    std::vector<fs::path> logs;
    for (const auto& entry : fs::directory_iterator(fs::path(options_.state_dir) / "sessions")) {
      if (entry.path().extension() == ".log") logs.push_back(entry.path());
    }
    std::sort(logs.begin(), logs.end());
    for (const fs::path& log : logs) {
      try {
        std::string warning;
        const std::vector<json> records = read_journal(log.string(), &warning);
        if (!warning.empty()) std::cerr << "eventkv serve: " << warning << "\n";
        std::unique_ptr<Session> session =
            Session::restore(context_, records, Journal(log.string()));
        const std::string sid = session->settings().id;
        sessions_[sid] = std::move(session);
      } catch (const std::exception& e) {
        std::cerr << "eventkv serve: " << log.string() << ": not restored: " << e.what() << "\n";
      }
    }
    return sessions_.size();
  });
}

Session& Service::find(const std::string& sid) {
  const auto it = sessions_.find(sid);
  if (it == sessions_.end()) api_fail(404, "unknown session '", sid, "'");
  return *it->second;
}

Session& Service::find_idle(const std::string& sid) {
  Session& session = find(sid);
  if (session.busy()) api_fail(409, "session '", sid, "' is generating a reply");
  return session;
}

Session& Service::add_session(SessionSettings settings, bool temporary) {
  if (sessions_.count(settings.id) > 0) api_fail(409, "session '", settings.id, "' exists");
  if (static_cast<int64_t>(sessions_.size()) >= options_.max_sessions)
    api_fail(429, "the server holds ", sessions_.size(), " sessions (--max-sessions)");
  const std::string sid = settings.id;
  Journal journal;
  if (!temporary && !options_.state_dir.empty()) journal = Journal(journal_path(sid));
  auto session = std::make_unique<Session>(context_, std::move(settings), std::move(journal));
  return *(sessions_[sid] = std::move(session));
}

json Service::create_session(const json& body) {
  const JsonFields fields = request_fields(body);
  fields.allow_only({"id", "system", "kv_budget", "policy"});
  SessionSettings settings{
      fields.text("id"), fields.text("system"),
      fields.integer("kv_budget", options_.kv_budget, 0, context_.arena->storage().capacity()),
      parse_policy(fields, contract::Policy::kNone)};
  if (settings.kv_budget > 0 && settings.kv_budget < 16)
    fields.problem("kv_budget", "must be 0 (no budget) or at least 16 rows");
  if (fields.has("id") && !valid_id(settings.id))
    fields.problem("id", "must be 1 to 64 of A-Z a-z 0-9 _ . -");
  return on_engine([&] {
    if (settings.id.empty()) {
      for (int64_t n = static_cast<int64_t>(sessions_.size());; ++n) {
        settings.id = str_cat("s", n);
        if (sessions_.count(settings.id) == 0) break;
      }
    }
    return add_session(std::move(settings), false).summary();
  });
}

json Service::list_sessions() {
  return on_engine([&] {
    json list = json::array();
    for (const auto& entry : sessions_) list.push_back(entry.second->summary());
    return json{{"sessions", std::move(list)}};
  });
}

json Service::get_session(const std::string& sid) {
  return on_engine([&] { return find(sid).summary(); });
}

json Service::delete_session(const std::string& sid) {
  return on_engine([&] {
    find_idle(sid).journal().remove();
    sessions_.erase(sid);
    return json{{"id", sid}, {"deleted", true}};
  });
}

std::vector<contract::AgentEvent> Service::parse_events(const Session& session,
                                                        const json& list) const {
  std::vector<contract::AgentEvent> events;
  std::set<std::string> ids;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = "/events/" + std::to_string(i);
    if (!list[i].is_object())
      JsonFields(list, "", kRequest).problem(at.substr(1), "must be an object");
    json event = list[i];
    // Defaults: a fresh id, the session's policy.
    if (!event.contains("id")) {
      event["id"] = session.next_event_id(ids);
    }
    if (!event.contains("policy"))
      event["policy"] = contract::policy_name(session.settings().policy);
    contract::AgentEvent e = contract::parse_agent_event(JsonFields(event, at, kRequest));
    if (!valid_id(e.event.id) || e.event.id == "preamble" || e.event.id == "system") {
      JsonFields(event, at, kRequest)
          .problem("id", "must be 1 to 64 of A-Z a-z 0-9 _ . - (not preamble or system)");
    }
    if (!ids.insert(e.event.id).second || session.cache().spec(e.event.id) != nullptr) {
      api_fail(409, "event id '", e.event.id, "' is already in session '", session.settings().id,
               "'");
    }
    events.push_back(std::move(e));
  }
  return events;
}

json Service::append_events(const std::string& sid, const json& body) {
  const JsonFields fields = request_fields(body);
  fields.allow_only({"events"});
  const json& list = fields.at("events");
  if (!list.is_array() || list.empty() || list.size() > 256)
    fields.problem("events", "must be a list of 1 to 256 events");
  return on_engine([&] {
    Session& session = find_idle(sid);
    std::vector<contract::AgentEvent> events = parse_events(session, list);
    const Session::Appended appended = session.append(events);
    json added = json::array();
    for (const contract::AgentEvent& e : events) {
      added.push_back(
          {{"id", e.event.id}, {"tokens", session.cache().kv().event(e.event.id).tokens.size()}});
    }
    return json{{"events", std::move(added)},
                {"decisions", decisions_json(appended.decisions)},
                {"session", session.summary()}};
  });
}

json Service::list_events(const std::string& sid) {
  return on_engine([&] { return find(sid).events_json(); });
}

json Service::evict(const std::string& sid, const json& body, bool forget) {
  const JsonFields fields = request_fields(body);
  fields.allow_only({"ids"});
  const std::vector<std::string> ids = id_list(fields);
  return on_engine([&] {
    Session& session = find_idle(sid);
    const size_t proofs_before = session.cache().proofs().size();
    const std::vector<contract::Decision> decisions =
        forget ? session.forget(ids) : session.evict(ids);
    json out{{"decisions", decisions_json(decisions)}, {"session", session.summary()}};
    if (forget) {
      json proofs = json::array();
      const auto& all = session.cache().proofs();
      for (size_t p = proofs_before; p < all.size(); ++p) proofs.push_back(proof_json(all[p]));
      out["proofs"] = std::move(proofs);
    }
    return out;
  });
}

json Service::score(const std::string& sid, const json& body) {
  const JsonFields fields = request_fields(body);
  fields.allow_only({"question", "answer_prefix", "candidates", "answer_format"});
  const std::string question = fields.text("question", "", true);
  const std::string prefix = fields.text("answer_prefix");
  const std::vector<std::string> candidates = fields.texts("candidates", true);
  const std::string format = fields.text("answer_format", " {value}");
  if (candidates.size() < 2 || candidates.size() > 64)
    fields.problem("candidates", "needs 2 to 64 candidates");
  if (format.find("{value}") == std::string::npos)
    fields.problem("answer_format", "must contain {value}");
  return on_engine([&] {
    Session& session = find_idle(sid);
    if (session.cache().kv().events().empty()) api_fail(422, "session '", sid, "' has no events");
    std::vector<std::string> answers;
    answers.reserve(candidates.size());
    for (const std::string& value : candidates)
      answers.push_back(probe::fill_template(format, {{"value", value}}));
    kv::EventKV& kv = session.cache().kv();
    const events::QueryTokens tokens = events::render_query(
        context_.format, kv.engine().model().tokenizer(), question, prefix, answers);
    for (const auto& answer : tokens.candidates) {
      if (answer.empty()) fields.problem("candidates", "a candidate renders to no tokens");
    }
    std::vector<double> log_probs;
    for (const kv::CandidateScore& s : kv.score(tokens.prompt, tokens.candidates))
      log_probs.push_back(s.log_prob);
    return json{{"log_probs", log_probs}, {"predicted", probe::predicted({log_probs})}};
  });
}

json Service::contract(const std::string& sid) {
  return on_engine([&] { return find(sid).contract_json(); });
}

json Service::snapshot(const std::string& sid, const json& body) {
  request_fields(body).allow_only({});
  if (options_.state_dir.empty()) api_fail(422, "snapshots need the server's --state-dir");
  return on_engine([&] {
    Session& session = find_idle(sid);
    const std::vector<json>& records = session.journal().records();
    const std::string name = str_cat(sid, "-", records.size());
    fs::create_directories(snapshot_dir(sid));
    const size_t bytes =
        write_snapshot((fs::path(snapshot_dir(sid)) / (name + ".snap")).string(), records);
    return json{{"snapshot", name}, {"bytes", bytes}};
  });
}

json Service::restore(const std::string& sid, const json& body) {
  const JsonFields fields = request_fields(body);
  fields.allow_only({"snapshot"});
  const std::string name = fields.text("snapshot", "", true);
  if (!valid_id(name, 96)) fields.problem("snapshot", "is not a snapshot name");
  if (options_.state_dir.empty()) api_fail(422, "snapshots need the server's --state-dir");
  return on_engine([&] {
    find_idle(sid);
    const fs::path path = fs::path(snapshot_dir(sid)) / (name + ".snap");
    if (!fs::exists(path)) api_fail(404, "session '", sid, "' has no snapshot '", name, "'");
    const std::vector<json> records = read_snapshot(path.string());
    if (records.empty() || records[0].value("id", "") != sid)
      api_fail(422, path.string(), ": a snapshot of another session");
    // Rebuilt beside the old session, whose journal is replaced only once
    // the replay succeeded: a failure changes nothing.
    sessions_[sid] = Session::restore(context_, records, Journal(journal_path(sid)));
    return sessions_[sid]->summary();
  });
}

sampling::GenerateParams Service::sampling_params(const json& body, bool openai) const {
  const JsonFields fields(body, "", kRequest);
  sampling::GenerateParams params;
  params.max_tokens = static_cast<int32_t>(
      fields.integer("max_tokens", openai ? 256 : 128, 0, options_.max_tokens));
  if (openai) {
    params.max_tokens = static_cast<int32_t>(
        fields.integer("max_completion_tokens", params.max_tokens, 0, options_.max_tokens));
  }
  if (fields.has("temperature")) {
    params.sampling.temperature = static_cast<float>(fields.number("temperature", 0, 100));
  }
  if (fields.has("top_p")) params.sampling.top_p = static_cast<float>(fields.number("top_p", 0, 1));
  if (fields.has("min_p")) params.sampling.min_p = static_cast<float>(fields.number("min_p", 0, 1));
  params.sampling.top_k = static_cast<int32_t>(fields.integer("top_k", 0, 0, 1000000));
  params.sampling.seed = static_cast<uint64_t>(fields.integer("seed", 0, INT64_MIN, INT64_MAX));
  params.stop = fields.texts("stop", false);
  if (params.stop.size() > 16) fields.problem("stop", "lists more than 16 stop strings");
  for (const std::string& s : params.stop) {
    if (s.empty()) fields.problem("stop", "must not contain an empty string");
  }
  return params;
}

std::shared_ptr<Generation> Service::generate(const std::string& sid, const json& body) {
  const JsonFields fields = request_fields(body);
  fields.allow_only(
      {"max_tokens", "temperature", "top_k", "top_p", "min_p", "seed", "stop", "stream", "id"});
  fields.boolean("stream", false);
  const sampling::GenerateParams params = sampling_params(body, false);
  const std::string id = fields.text("id");
  if (fields.has("id") && (!valid_id(id) || id == "preamble" || id == "system"))
    fields.problem("id", "must be 1 to 64 of A-Z a-z 0-9 _ . - (not preamble or system)");
  return on_engine([&] {
    Session& session = find_idle(sid);
    if (session.cache().kv().events().empty()) api_fail(422, "session '", sid, "' has no events");
    const std::string event_id = id.empty() ? session.next_event_id() : id;
    if (session.cache().spec(event_id) != nullptr)
      api_fail(409, "event id '", event_id, "' is already in session '", sid, "'");
    auto generation = std::make_shared<Generation>(session, event_id, params);
    generation->start(generation, scheduler_, 0);
    return generation;
  });
}

json Service::generation_json(const GenerationResult& r, const std::string& sid) {
  json out{{"event", {{"id", r.event_id}, {"tokens", r.event_tokens}}},
           {"text", r.text},
           {"finish_reason", r.finish_reason},
           {"usage",
            {{"prompt_tokens", r.prompt_tokens},
             {"completion_tokens", r.completion_tokens},
             {"total_tokens", r.prompt_tokens + r.completion_tokens},
             {"cached_tokens", r.cached_tokens}}},
           {"decisions", decisions_json(r.decisions)}};
  out["session"] = get_session(sid);
  return out;
}

Service::Chat Service::start_chat(const json& request, const std::string& header_session) {
  const json body = without_nulls(request);
  const JsonFields fields = request_fields(body);
  const json& list = fields.at("messages");
  if (!list.is_array() || list.empty() || list.size() > 4096)
    fields.problem("messages", "must be a list of 1 to 4096 messages");
  if (fields.integer("n", 1, 1, 1) != 1) fields.problem("n", "must be 1");
  fields.boolean("stream", false);
  fields.text("model");
  if (fields.has("stream_options")) {
    const JsonFields options(fields.at("stream_options"), fields.pointer("stream_options"),
                             kRequest);
    if (!fields.at("stream_options").is_object())
      fields.problem("stream_options", "must be an object");
    options.boolean("include_usage", false);
  }
  std::vector<events::Event> messages;
  for (size_t i = 0; i < list.size(); ++i) {
    const JsonFields message(list[i], "/messages/" + std::to_string(i), kRequest);
    if (!list[i].is_object()) fields.problem("messages/" + std::to_string(i), "must be an object");
    std::string role = message.text("role", "", true);
    if (role == "developer") role = "system";
    if (role != "system" && role != "user" && role != "assistant" && role != "tool")
      message.problem("role", "unknown chat role '" + role + "' (system, user, assistant, tool)");
    messages.push_back({"", role, message_text(message)});
  }
  const sampling::GenerateParams params = sampling_params(body, true);
  Chat chat;
  chat.session = fields.text("user", header_session);
  if (chat.session.empty()) chat.session = header_session;
  if (!chat.session.empty() && !valid_id(chat.session))
    fields.problem("user", "a session id is 1 to 64 of A-Z a-z 0-9 _ . -");
  if (body.contains("stream_options"))
    chat.include_usage = body["stream_options"].value("include_usage", false);
  chat.generation = on_engine([&] {
    if (chat.session.empty()) {
      chat.session = str_cat("tmp-", temporary_count_++);
      chat.temporary = true;
    }
    if (sessions_.count(chat.session) == 0)
      add_session({chat.session, "", options_.kv_budget, contract::Policy::kNone}, chat.temporary);
    Session& session = find_idle(chat.session);
    // The messages extend the session's events (preamble and records
    // aside) when those are their prefix; otherwise the session restarts.
    std::vector<const contract::AgentEvent*> held;
    for (const kv::EventState& e : session.cache().kv().events()) {
      if (const contract::AgentEvent* spec = session.cache().spec(e.id)) held.push_back(spec);
    }
    size_t shared = 0;
    while (shared < held.size() && shared < messages.size() &&
           held[shared]->event.role == messages[shared].role &&
           held[shared]->event.content == messages[shared].content)
      ++shared;
    if (shared < held.size()) {
      session.reset();
      shared = 0;
    }
    std::vector<contract::AgentEvent> fresh;
    for (size_t m = shared; m < messages.size(); ++m) {
      contract::AgentEvent e;
      e.event = messages[m];
      e.event.id = str_cat("m", m);
      while (session.cache().spec(e.event.id) != nullptr) e.event.id += "_";
      fresh.push_back(std::move(e));
    }
    int64_t computed = 0;
    if (!fresh.empty()) computed = session.append(std::move(fresh)).rows;
    auto generation = std::make_shared<Generation>(session, session.next_event_id(), params);
    generation->start(generation, scheduler_, computed);
    return generation;
  });
  return chat;
}

void Service::end_chat(const Chat& chat) {
  if (!chat.temporary) return;
  on_engine([&] {
    sessions_.erase(chat.session);
    return 0;
  });
}

}  // namespace eventkv::serve
