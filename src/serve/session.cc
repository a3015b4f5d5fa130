#include "serve/session.h"

#include <chrono>
#include <set>

#include "serve/api_error.h"
#include "util/json_fields.h"

namespace eventkv::serve {
namespace {

using contract::AgentEvent;
using contract::Decision;
using nlohmann::json;

constexpr const char* kSystemId = "system";

int64_t micros_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

std::vector<std::string> ids_of(const json& list) {
  return list.get<std::vector<std::string>>();
}

}  // namespace

json decision_json(const Decision& d) {
  return {{"event", d.event},
          {"fact", d.fact},
          {"keeping", contract::keeping_name(d.keeping)},
          {"evidence", d.evidence},
          {"rows", d.rows}};
}

json proof_json(const contract::ForgetProof& p) {
  return {{"event", p.event},
          {"recomputed_events", p.recomputed_events},
          {"recomputed_rows", p.recomputed_rows},
          {"verified", p.verified},
          {"value_independent", p.value_independent},
          {"equals_fresh", p.equals_fresh}};
}

Session::Session(const SessionContext& context, SessionSettings settings)
    : context_(context),
      settings_(std::move(settings)),
      cache_(std::make_unique<contract::ContractCache>(
          context_.engine, context_.arena, context_.format, context_.profile, context_.contract)) {}

Session::Session(const SessionContext& context, SessionSettings settings, Journal journal)
    : Session(context, std::move(settings)) {
  journal_ = std::move(journal);
  write({{"op", "create"},
         {"id", settings_.id},
         {"system", settings_.system},
         {"kv_budget", settings_.kv_budget},
         {"policy", contract::policy_name(settings_.policy)}});
  if (!settings_.system.empty()) {
    AgentEvent system;
    system.event = {kSystemId, "system", settings_.system};
    system.pin = true;
    append({system});
  }
}

std::unique_ptr<Session> Session::restore(const SessionContext& context,
                                          const std::vector<json>& records, Journal journal) {
  if (records.empty() || records[0].value("op", "") != "create")
    fail(journal.path(), ": does not start with the session's settings");
  const json& create = records[0];
  SessionSettings settings{create.at("id").get<std::string>(),
                           create.at("system").get<std::string>(),
                           create.at("kv_budget").get<int64_t>(), contract::Policy::kNone};
  const std::string policy = create.at("policy").get<std::string>();
  settings.policy = policy == "recall"   ? contract::Policy::kRecall
                    : policy == "forget" ? contract::Policy::kForget
                                         : contract::Policy::kNone;
  std::unique_ptr<Session> session(new Session(context, std::move(settings)));
  session->replaying_ = true;
  for (size_t r = 1; r < records.size(); ++r) session->apply(records[r]);
  session->replaying_ = false;
  // Rewritten whole: drops a torn last line that appends would extend.
  journal.reset(records);
  session->journal_ = std::move(journal);
  return session;
}

void Session::apply(const json& record) {
  const std::string op = record.at("op").get<std::string>();
  const std::string where = journal_.path().empty() ? "journal" : journal_.path();
  if (op == "append") {
    std::vector<AgentEvent> events;
    const json& list = record.at("events");
    for (size_t i = 0; i < list.size(); ++i) {
      events.push_back(
          contract::parse_agent_event(JsonFields(list[i], "/events/" + std::to_string(i), where)));
    }
    append(std::move(events));
  } else if (op == "reply") {
    const AgentEvent event =
        contract::parse_agent_event(JsonFields(record.at("event"), "/event", where));
    std::vector<contract::TokenRange> panels;
    for (const json& range : record.value("panel_tokens", json::array()))
      panels.push_back({range.at(0).get<int64_t>(), range.at(1).get<int64_t>()});
    cache_->append_rendered(event, record.at("tokens").get<std::vector<int32_t>>(),
                            std::move(panels));
    const auto before = static_cast<int64_t>(cache_->kv().events().size());
    count(fit_budget(), before);
  } else if (op == "evict") {
    evict(ids_of(record.at("ids")));
  } else if (op == "forget") {
    forget(ids_of(record.at("ids")));
  } else if (op == "reset") {
    reset();
  } else if (op == "reposition") {
    cache_->reposition();
  } else {
    fail(where, ": unknown operation '", op, "'");
  }
}

void Session::write(const json& record) {
  if (!replaying_) journal_.append(record);
}

std::vector<Decision> Session::fit_budget() {
  if (settings_.kv_budget <= 0) return {};
  return cache_->fit_budget(settings_.kv_budget);
}

void Session::count(const std::vector<Decision>& decisions, int64_t events_before) {
  Metrics& m = *context_.metrics;
  std::set<std::string> evicted;
  std::set<std::string> forgotten;
  for (const Decision& d : decisions) {
    evicted.insert(d.event);
    if (d.keeping == contract::Keeping::kForgotten) forgotten.insert(d.event);
  }
  m.evictions += static_cast<int64_t>(evicted.size());
  m.forgets += static_cast<int64_t>(forgotten.size());
  const auto& events = cache_->kv().events();
  for (size_t e = static_cast<size_t>(events_before); e < events.size(); ++e)
    m.records += contract::ContractCache::is_record(events[e].id) ? 1 : 0;
}

// Past the context, the retained rows move to positions 0, 1, 2, ... (a
// session under a budget goes on); refused when even they do not fit.
void Session::make_room(int64_t tokens) {
  if (positions() + tokens <= context_.context) return;
  const int64_t retained = cache_->kv().retained_rows();
  if (!context_.contract.verify && retained + tokens <= context_.context &&
      retained < positions()) {
    cache_->reposition();
    write({{"op", "reposition"}});
    return;
  }
  api_fail(413, "session '", settings_.id, "' would reach ", positions() + tokens,
           " positions, past the context of ", context_.context, " (", retained, " rows retained)");
}

// Fact keys are unique in a session; a carrier names a fact stated before it.
void Session::check_facts(const std::vector<AgentEvent>& events) const {
  std::set<std::string> stated;
  for (const kv::EventState& e : cache_->kv().events()) {
    if (const AgentEvent* spec = cache_->spec(e.id)) {
      for (const contract::Fact& f : spec->facts) stated.insert(f.key);
    }
  }
  for (const AgentEvent& e : events) {
    for (const contract::CarrierClaim& claim : e.carries) {
      if (stated.count(claim.fact) == 0) {
        fail("event '", e.event.id, "' carries fact '", claim.fact,
             "' that no earlier event states");
      }
    }
    for (const contract::Fact& f : e.facts) {
      if (!stated.insert(f.key).second)
        fail("event '", e.event.id, "': fact key '", f.key, "' is already stated");
    }
  }
}

Session::Appended Session::append(std::vector<AgentEvent> events) {
  const auto& kv_events = cache_->kv().events();
  if (static_cast<int64_t>(kv_events.size() + events.size()) > context_.max_events) {
    api_fail(413, "session '", settings_.id, "' would hold ", kv_events.size() + events.size(),
             " events, more than --max-events ", context_.max_events);
  }
  check_facts(events);
  // Rendered as the cache will render them, to refuse what does not fit
  // before computing.
  int64_t tokens = 0;
  for (const kv::EventTokens& e : cache_->render(events)) {
    const auto n = static_cast<int64_t>(e.tokens.size());
    if (n > context_.max_event_tokens) {
      api_fail(413, "event '", e.id, "' has ", n, " tokens, more than --max-event-tokens ",
               context_.max_event_tokens);
    }
    tokens += n;
  }
  make_room(tokens);
  const auto start = std::chrono::steady_clock::now();
  const int64_t slots_before = positions();
  const auto events_before = static_cast<int64_t>(kv_events.size());
  cache_->append(events);
  Appended appended;
  appended.decisions = fit_budget();
  appended.rows = positions() - slots_before;
  context_.metrics->prefill_tokens += appended.rows;
  context_.metrics->prefill_micros += micros_since(start);
  count(appended.decisions, events_before);
  json list = json::array();
  for (const AgentEvent& e : events) list.push_back(contract::agent_event_json(e));
  write({{"op", "append"}, {"events", std::move(list)}});
  return appended;
}

std::vector<Decision> Session::evict(const std::vector<std::string>& ids) {
  const auto before = static_cast<int64_t>(cache_->kv().events().size());
  std::vector<Decision> decisions = cache_->evict(ids);
  count(decisions, before);
  write({{"op", "evict"}, {"ids", ids}});
  return decisions;
}

std::vector<Decision> Session::forget(const std::vector<std::string>& ids) {
  const auto before = static_cast<int64_t>(cache_->kv().events().size());
  std::vector<Decision> decisions = cache_->forget(ids);
  count(decisions, before);
  write({{"op", "forget"}, {"ids", ids}});
  return decisions;
}

void Session::reset() {
  cache_ = std::make_unique<contract::ContractCache>(
      context_.engine, context_.arena, context_.format, context_.profile, context_.contract);
  write({{"op", "reset"}});
}

std::vector<float> Session::open_reply(const std::string& id) {
  const tokenizer::Tokenizer& tok = context_.engine->model().tokenizer();
  make_room(static_cast<int64_t>(context_.format.generation_prompt(tok).size()) + 8);
  AgentEvent reply;
  reply.event = {id, "assistant", ""};
  reply.policy = settings_.policy;
  const auto start = std::chrono::steady_clock::now();
  const int64_t before = positions();
  std::vector<float> logits = cache_->open_reply(reply);
  context_.metrics->prefill_tokens += positions() - before;
  context_.metrics->prefill_micros += micros_since(start);
  return logits;
}

std::vector<Decision> Session::close_reply(const std::string& text,
                                           std::optional<int32_t> pending) {
  const std::string id = cache_->kv().events().back().id;
  cache_->close_reply(text, pending);
  const auto before = static_cast<int64_t>(cache_->kv().events().size());
  std::vector<Decision> decisions = fit_budget();
  count(decisions, before);
  json record = {{"op", "reply"},
                 {"event", contract::agent_event_json(*cache_->spec(id))},
                 {"tokens", cache_->kv().event(id).tokens}};
  // Which tokens a step of several sessions computed on the int8 panels: a
  // restore computes them alike, for the same rows.
  const std::vector<contract::TokenRange>& panels = cache_->panel_tokens(id);
  if (!panels.empty()) {
    json ranges = json::array();
    for (const contract::TokenRange& r : panels) ranges.push_back({r.begin, r.end});
    record["panel_tokens"] = std::move(ranges);
  }
  write(record);
  return decisions;
}

std::string Session::next_event_id(const std::set<std::string>& taken) const {
  size_t n = cache_->kv().events().size();
  while (true) {
    std::string id = str_cat("e", n++);
    if (cache_->spec(id) == nullptr && taken.count(id) == 0) return id;
  }
}

std::string Session::event_state(const kv::EventState& event) const {
  if (contract::ContractCache::is_record(event.id)) return "record";
  if (event.retained) return "retained";
  const AgentEvent* spec = cache_->spec(event.id);
  if (spec != nullptr && spec->policy == contract::Policy::kForget && context_.contract.enforce)
    return "forgotten";
  return "evicted";
}

json Session::summary() const {
  const kv::EventKV& kv = cache_->kv();
  return {{"id", settings_.id},
          {"kv_budget", settings_.kv_budget},
          {"policy", contract::policy_name(settings_.policy)},
          {"events", kv.events().size()},
          {"retained_rows", kv.retained_rows()},
          {"full_rows", kv.n_slots()},
          {"kv_bytes_held", kv.bytes_retained()},
          {"kv_bytes_full", kv.bytes_full()},
          {"positions", positions()},
          {"context", context_.context},
          {"busy", busy_}};
}

json Session::events_json() const {
  const tokenizer::Tokenizer& tok = context_.engine->model().tokenizer();
  json list = json::array();
  for (const kv::EventState& e : cache_->kv().events()) {
    const AgentEvent* spec = cache_->spec(e.id);
    list.push_back(
        {{"id", e.id},
         {"role", e.role},
         {"content", spec != nullptr ? spec->event.content : tok.decode(e.tokens)},
         {"policy", contract::policy_name(spec ? spec->policy : contract::Policy::kNone)},
         {"pin", spec != nullptr && spec->pin},
         {"state", event_state(e)},
         {"tokens", e.tokens.size()},
         {"begin", e.begin}});
  }
  return {{"events", std::move(list)}};
}

json Session::contract_json() const {
  json facts = json::array();
  for (const kv::EventState& e : cache_->kv().events()) {
    const AgentEvent* spec = cache_->spec(e.id);
    if (spec == nullptr) continue;
    for (const contract::Fact& f : spec->facts) {
      facts.push_back({{"key", f.key},
                       {"event", e.id},
                       {"policy", contract::policy_name(spec->policy)},
                       {"state", cache_->fact_state(f.key)}});
    }
  }
  json decisions = json::array();
  for (const Decision& d : cache_->log()) decisions.push_back(decision_json(d));
  json proofs = json::array();
  for (const contract::ForgetProof& p : cache_->proofs()) proofs.push_back(proof_json(p));
  return {{"facts", std::move(facts)},
          {"decisions", std::move(decisions)},
          {"proofs", std::move(proofs)},
          {"session", summary()}};
}

}  // namespace eventkv::serve
