#include "contract/agent_history.h"

#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "util/error.h"
#include "util/json_fields.h"

namespace eventkv::contract {
namespace {

using nlohmann::json;

const std::map<std::string, Policy> kPolicies = {
    {"none", Policy::kNone}, {"recall", Policy::kRecall}, {"forget", Policy::kForget}};

bool known_type(const std::string& type) {
  static const std::set<std::string> kTypes = {"binary", "categorical", "name", "text"};
  if (kTypes.count(type) > 0) return true;
  return type.size() == 9 && type.starts_with("integer-") && type[8] >= '1' && type[8] <= '9';
}

Fact parse_fact(const JsonFields& fields, const std::string& content) {
  fields.allow_only({"key", "value", "type", "statement"});
  Fact fact{fields.text("key", "", true), fields.text("value", "", true),
            fields.text("type", "", true), fields.text("statement", "{key} is {value}")};
  if (fact.key.empty()) fields.problem("key", "must not be empty");
  if (fact.value.empty()) fields.problem("value", "must not be empty");
  if (content.find(fact.value) == std::string::npos)
    fields.problem("value", "'" + fact.value + "' does not occur in the event's content");
  if (!known_type(fact.type)) {
    fields.problem("type", "unknown type '" + fact.type +
                               "' (binary, categorical, integer-1 .. integer-9, name, text)");
  }
  if (fact.statement.find("{value}") == std::string::npos)
    fields.problem("statement", "must contain {value}");
  return fact;
}

}  // namespace

AgentEvent parse_agent_event(const JsonFields& fields) {
  fields.allow_only({"id", "role", "content", "policy", "pin", "facts", "carries"});
  AgentEvent e;
  e.event = {fields.text("id", "", true), fields.text("role", "", true),
             fields.text("content", "", true)};
  if (e.event.id.empty()) fields.problem("id", "must not be empty");
  if (e.event.id == events::kPreambleId)
    fields.problem("id", "'preamble' is the chat format's own event");
  const std::string& role = e.event.role;
  if (role != "system" && role != "user" && role != "assistant" && role != "tool")
    fields.problem("role", "unknown chat role '" + role + "' (system, user, assistant, tool)");
  const std::string policy = fields.text("policy", "none");
  if (kPolicies.count(policy) == 0)
    fields.problem("policy", "unknown policy '" + policy + "' (recall, forget, none)");
  e.policy = kPolicies.at(policy);
  e.pin = fields.boolean("pin", false);
  if (e.pin && e.policy == Policy::kForget)
    fields.problem("pin", "a pinned event cannot have the forget policy");
  const json& facts = fields.list("facts");
  for (size_t i = 0; i < facts.size(); ++i) {
    e.facts.push_back(parse_fact(
        JsonFields(facts[i], fields.pointer("facts") + "/" + std::to_string(i), fields.file()),
        e.event.content));
  }
  const json& carries = fields.list("carries");
  for (size_t i = 0; i < carries.size(); ++i) {
    const JsonFields claim(carries[i], fields.pointer("carries") + "/" + std::to_string(i),
                           fields.file());
    claim.allow_only({"fact", "construction"});
    e.carries.push_back({claim.text("fact", "", true), claim.text("construction", "", true)});
  }
  return e;
}

nlohmann::json agent_event_json(const AgentEvent& e) {
  json out = {{"id", e.event.id},
              {"role", e.event.role},
              {"content", e.event.content},
              {"policy", policy_name(e.policy)},
              {"pin", e.pin},
              {"facts", json::array()},
              {"carries", json::array()}};
  for (const Fact& f : e.facts) {
    out["facts"].push_back(
        {{"key", f.key}, {"value", f.value}, {"type", f.type}, {"statement", f.statement}});
  }
  for (const CarrierClaim& c : e.carries)
    out["carries"].push_back({{"fact", c.fact}, {"construction", c.construction}});
  return out;
}

namespace {

FactQuery parse_query(const JsonFields& fields) {
  fields.allow_only({"fact", "question", "answer_prefix", "candidates", "answer_format"});
  FactQuery q{fields.text("fact", "", true), fields.text("question", "", true),
              fields.text("answer_prefix"), fields.texts("candidates", true),
              fields.text("answer_format", " {value}")};
  if (q.candidates.size() < 2) fields.problem("candidates", "needs at least two candidates");
  if (q.answer_format.find("{value}") == std::string::npos)
    fields.problem("answer_format", "must contain {value}");
  return q;
}

// Cross-field rules: unique ids and keys, carriers after the event stating
// their fact, queries of known facts listing the true value.
void check_references(const AgentHistory& history, const JsonFields& root) {
  std::set<std::string> ids;
  std::map<std::string, size_t> fact_event;
  for (size_t i = 0; i < history.events.size(); ++i) {
    const AgentEvent& e = history.events[i];
    const std::string at = "events/" + std::to_string(i);
    if (!ids.insert(e.event.id).second) {
      root.problem(at + "/id", "duplicate id '" + e.event.id + "'");
    }
    for (const CarrierClaim& claim : e.carries) {
      if (fact_event.count(claim.fact) == 0) {
        root.problem(at + "/carries",
                     "fact '" + claim.fact + "' is not stated by an earlier event");
      }
    }
    for (const Fact& fact : e.facts) {
      if (!fact_event.emplace(fact.key, i).second)
        root.problem(at + "/facts", "duplicate fact key '" + fact.key + "'");
    }
  }
  for (size_t i = 0; i < history.queries.size(); ++i) {
    const FactQuery& q = history.queries[i];
    const std::string at = "queries/" + std::to_string(i);
    if (fact_event.count(q.fact) == 0) root.problem(at + "/fact", "unknown fact '" + q.fact + "'");
    const Fact& fact = *history.fact(q.fact).second;
    if (std::find(q.candidates.begin(), q.candidates.end(), fact.value) == q.candidates.end())
      root.problem(at + "/candidates", "must include the fact's value '" + fact.value + "'");
    if (std::set<std::string>(q.candidates.begin(), q.candidates.end()).size() !=
        q.candidates.size())
      root.problem(at + "/candidates", "must be distinct");
  }
}

}  // namespace

std::string_view policy_name(Policy policy) {
  switch (policy) {
    case Policy::kRecall:
      return "recall";
    case Policy::kForget:
      return "forget";
    case Policy::kNone:
      break;
  }
  return "none";
}

std::pair<const AgentEvent*, const Fact*> AgentHistory::fact(std::string_view key) const {
  for (const AgentEvent& e : events) {
    for (const Fact& f : e.facts) {
      if (f.key == key) return {&e, &f};
    }
  }
  fail("unknown fact '", key, "'");
}

const AgentEvent& AgentHistory::event(std::string_view id) const {
  for (const AgentEvent& e : events) {
    if (e.event.id == id) return e;
  }
  fail("unknown event '", id, "'");
}

AgentHistory parse_agent_history(const std::string& text, const std::string& name_for_errors) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    fail(name_for_errors, ": not valid JSON (", e.what(), ")");
  }
  const JsonFields root(doc, "", name_for_errors);
  root.allow_only({"version", "events", "queries"});
  if (root.integer("version", 1, 1, 1) != 1) root.problem("version", "must be 1");
  AgentHistory history;
  const json& events = root.at("events");
  if (!events.is_array() || events.empty()) root.problem("events", "must be a non-empty list");
  for (size_t i = 0; i < events.size(); ++i) {
    history.events.push_back(
        parse_agent_event(JsonFields(events[i], "/events/" + std::to_string(i), name_for_errors)));
  }
  const json& queries = root.list("queries");
  for (size_t i = 0; i < queries.size(); ++i) {
    history.queries.push_back(
        parse_query(JsonFields(queries[i], "/queries/" + std::to_string(i), name_for_errors)));
  }
  check_references(history, root);
  return history;
}

AgentHistory load_agent_history(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, ": cannot open");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_agent_history(text, path);
}

}  // namespace eventkv::contract
