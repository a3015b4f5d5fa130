// An agent's history as the memory contract takes it (JSON, version 1): its
// events (id, role, content) with the facts each states and the policy that
// eviction must honour, the events that carry a fact without stating it,
// and the questions that check each fact. See examples/README.md.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "events/render.h"

namespace eventkv::contract {

// What eviction must keep of an event's facts.
//   recall  the facts stay answerable (a textual record, or a carrier the
//           calibration profile certifies)
//   forget  nothing of the event may remain in the served rows (verified
//           forgetting: every row that saw it is recomputed without it)
//   none    plain eviction
enum class Policy { kNone, kRecall, kForget };

std::string_view policy_name(Policy policy);

struct Fact {
  std::string key;
  std::string value;      // occurs verbatim in its event's content
  std::string type;       // a payload type (binary, categorical, integer-N, name) or text
  std::string statement;  // how a record states it, with {value}
};

// A later event that acknowledges a fact without stating it, phrased as one
// of the calibrated constructions (scenarios' construction ids).
struct CarrierClaim {
  std::string fact;
  std::string construction;
};

struct AgentEvent {
  events::Event event;
  Policy policy = Policy::kNone;
  bool pin = false;  // never evicted by a budget
  std::vector<Fact> facts;
  std::vector<CarrierClaim> carries;
};

// A question whose answer is a fact's value: candidates are values, each
// scored as answer_format with {value} after the answer prefix.
struct FactQuery {
  std::string fact;
  std::string question;
  std::string answer_prefix;
  std::vector<std::string> candidates;
  std::string answer_format = " {value}";
};

struct AgentHistory {
  std::vector<AgentEvent> events;
  std::vector<FactQuery> queries;

  // The event stating fact `key` and the fact; throws Error when unknown.
  std::pair<const AgentEvent*, const Fact*> fact(std::string_view key) const;
  const AgentEvent& event(std::string_view id) const;  // throws Error when unknown
};

// Parses and validates (unique ids and fact keys, known roles, policies and
// types, every value in its event's content, carriers after their fact,
// queries of known facts with the value among their candidates); throws
// Error "FILE: /pointer: problem".
AgentHistory parse_agent_history(const std::string& text, const std::string& name_for_errors);
AgentHistory load_agent_history(const std::string& path);

}  // namespace eventkv::contract

namespace eventkv {
class JsonFields;
}

namespace eventkv::contract {

// One event of a history (the same fields and checks; a fact's value in
// its content; references to other events are not checked), and back.
AgentEvent parse_agent_event(const JsonFields& fields);
nlohmann::json agent_event_json(const AgentEvent& event);

}  // namespace eventkv::contract
