#include "probe/pairs.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "util/error.h"
#include "util/hash.h"
#include "util/rng.h"

namespace eventkv::probe {
namespace {

constexpr int kMaxAttempts = 20;

uint64_t mix(uint64_t seed, int64_t index, int64_t salt) {
  const uint64_t words[3] = {seed, static_cast<uint64_t>(index), static_cast<uint64_t>(salt)};
  return fnv1a64({reinterpret_cast<const uint8_t*>(words), sizeof(words)});
}

const std::string& pick(const std::vector<std::string>& options, Rng& rng) {
  return options[rng.below(options.size())];
}

std::string random_integer(int digits, Rng& rng) {
  std::string text(1, static_cast<char>('0' + (digits > 1 ? 1 + rng.below(9) : rng.below(10))));
  for (int i = 1; i < digits; ++i) text += static_cast<char>('0' + rng.below(10));
  return text;
}

// Two distinct values for A and B, and the candidate list (sorted so its
// order tells nothing).
void draw_values(const Payload& payload, int64_t index, Rng& rng, DonorPair& pair) {
  std::string a;
  std::string b;
  std::vector<std::string> candidates;
  if (payload.type == PayloadType::kBinary) {
    a = payload.values[static_cast<size_t>(index % 2)];  // balanced: half the pairs each way
    b = payload.values[static_cast<size_t>(1 - index % 2)];
    candidates = payload.values;
  } else if (payload.type == PayloadType::kCategorical) {
    a = pick(payload.values, rng);
    do b = pick(payload.values, rng);
    while (b == a);
    candidates = payload.values;
  } else {
    std::set<std::string> chosen;
    const auto draw = [&] {
      std::string value;
      do {
        value = payload.type == PayloadType::kInteger ? random_integer(payload.digits, rng)
                                                      : pick(payload.values, rng);
      } while (chosen.count(value) > 0);
      chosen.insert(value);
      return value;
    };
    a = draw();
    b = draw();
    for (int i = 0; i < payload.distractors; ++i) draw();
    candidates.assign(chosen.begin(), chosen.end());
  }
  pair.candidates = candidates;
  pair.value_a =
      static_cast<int>(std::find(candidates.begin(), candidates.end(), a) - candidates.begin());
  pair.value_b =
      static_cast<int>(std::find(candidates.begin(), candidates.end(), b) - candidates.begin());
}

}  // namespace

int64_t event_differing_outside_source(const TokenizedPair& pair) {
  const auto& a = pair.events_a;
  const auto& b = pair.events_b;
  for (size_t e = 0; e < std::min(a.size(), b.size()); ++e) {
    if (static_cast<int64_t>(e) == pair.source_event) continue;
    if (a[e].id != b[e].id || a[e].tokens != b[e].tokens) return static_cast<int64_t>(e);
  }
  return a.size() == b.size() ? -1 : static_cast<int64_t>(std::min(a.size(), b.size()));
}

namespace {

// Why the two sides of a draw cannot be a donor pair ("" when they can):
// they must be the same tokens outside the source, and the same length.
std::string side_mismatch(const TokenizedPair& pair) {
  const auto& a = pair.events_a;
  const auto& b = pair.events_b;
  const auto source = static_cast<size_t>(pair.source_event);
  const std::string& value_a = pair.texts.candidates[static_cast<size_t>(pair.texts.value_a)];
  const std::string& value_b = pair.texts.candidates[static_cast<size_t>(pair.texts.value_b)];
  const auto lengths = [&](const char* what, size_t na, size_t nb) {
    return str_cat(what, " takes ", na, " tokens with '", value_a, "' but ", nb, " with '", value_b,
                   "'");
  };
  if (a[source].tokens.size() != b[source].tokens.size())
    return lengths("the source event", a[source].tokens.size(), b[source].tokens.size());
  if (a[source].tokens == b[source].tokens)
    return str_cat("'", value_a, "' and '", value_b, "' give the source event the same tokens");
  if (const int64_t e = event_differing_outside_source(pair); e >= 0) {
    return str_cat("event '", a[static_cast<size_t>(e)].id, "' differs between '", value_a,
                   "' and '", value_b, "'");
  }
  if (pair.record_a.tokens.size() != pair.record_b.tokens.size())
    return lengths("the record", pair.record_a.tokens.size(), pair.record_b.tokens.size());
  return "";
}

}  // namespace

std::vector<Cell> scenario_cells(const Scenario& scenario) {
  std::vector<Cell> cells;
  const std::vector<std::string> constructions = [&] {
    std::vector<std::string> ids;
    for (const Construction& c : scenario.constructions) ids.push_back(c.id);
    if (ids.empty()) ids.emplace_back();
    return ids;
  }();
  for (const std::string& construction : constructions) {
    for (const int distance : scenario.distances) cells.push_back({construction, distance});
  }
  return cells;
}

DonorPair draw_pair(const Scenario& scenario, const Cell& cell, int64_t index, int attempt) {
  Rng rng(mix(scenario.seed, index, 0));
  std::map<std::string, std::string> vars;
  for (const auto& [name, values] : scenario.variables) vars[name] = pick(values, rng);
  DonorPair pair;
  pair.index = index;
  const std::string system = scenario.system.empty() ? "" : pick(scenario.system, rng);
  const std::string& source = pick(scenario.source, rng);
  const uint64_t carrier_draw = rng.next_u64();
  std::vector<size_t> filler_order(scenario.fillers.size());
  for (size_t i = 0; i < filler_order.size(); ++i) filler_order[i] = i;
  for (size_t i = filler_order.size(); i > 1; --i)
    std::swap(filler_order[i - 1], filler_order[rng.below(i)]);
  const std::string& record = pick(scenario.record, rng);
  pair.question = fill_template(pick(scenario.question, rng), vars);
  pair.answer_prefix = fill_template(pick(scenario.answer_prefix, rng), vars);
  Rng value_rng(mix(scenario.seed, index, attempt + 1));
  draw_values(scenario.payload, index, value_rng, pair);
  for (const bool side_a : {true, false}) {
    std::map<std::string, std::string> side_vars = vars;
    side_vars["value"] = pair.candidates[static_cast<size_t>(side_a ? pair.value_a : pair.value_b)];
    std::vector<events::Event>& events = side_a ? pair.events_a : pair.events_b;
    if (!system.empty()) events.push_back({"system", "system", fill_template(system, vars)});
    events.push_back({kSourceId, scenario.source_role, fill_template(source, side_vars)});
    for (const Construction& c : scenario.constructions) {
      if (c.id != cell.construction) continue;
      for (size_t r = 0; r < scenario.carrier_roles.size(); ++r) {
        const std::string id = r == 0 ? "carrier" : "carrier" + std::to_string(r + 1);
        events.push_back({id, scenario.carrier_roles[r],
                          fill_template(c.templates[carrier_draw % c.templates.size()], vars)});
      }
    }
    for (int f = 0; f < cell.distance; ++f) {
      const FillerTurn& turn = scenario.fillers[filler_order[static_cast<size_t>(f)]];
      events.push_back(
          {"filler" + std::to_string(f + 1) + "-user", "user", fill_template(turn.user, vars)});
      events.push_back({"filler" + std::to_string(f + 1) + "-assistant", "assistant",
                        fill_template(turn.assistant, vars)});
    }
    (side_a ? pair.record_a : pair.record_b) = fill_template(record, side_vars);
  }
  return pair;
}

TokenizedPair tokenize_texts(DonorPair texts, const std::string& answer_format,
                             const tokenizer::ChatFormat& format, const tokenizer::Tokenizer& tok) {
  TokenizedPair pair;
  pair.texts = std::move(texts);
  pair.events_a = events::render_events(format, tok, pair.texts.events_a);
  pair.events_b = events::render_events(format, tok, pair.texts.events_b);
  const auto source = std::find_if(pair.events_a.begin(), pair.events_a.end(),
                                   [](const kv::EventTokens& e) { return e.id == kSourceId; });
  pair.source_event = source - pair.events_a.begin();
  pair.record_a = {"record", "system", format.render_message(tok, {"system", pair.texts.record_a})};
  pair.record_b = {"record", "system", format.render_message(tok, {"system", pair.texts.record_b})};
  std::vector<std::string> answers;
  for (const std::string& value : pair.texts.candidates)
    answers.push_back(fill_template(answer_format, {{"value", value}}));
  pair.query =
      events::render_query(format, tok, pair.texts.question, pair.texts.answer_prefix, answers);
  for (const auto& e : pair.events_a) {
    if (e.id.rfind("carrier", 0) == 0) pair.carriers.push_back(e.id);
  }
  return pair;
}

TokenizedPair tokenize_pair(const Scenario& scenario, const Cell& cell, int64_t index,
                            const tokenizer::ChatFormat& format, const tokenizer::Tokenizer& tok) {
  std::string mismatch;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    TokenizedPair pair = tokenize_texts(draw_pair(scenario, cell, index, attempt),
                                        scenario.answer_format, format, tok);
    pair.rejected = attempt;
    mismatch = side_mismatch(pair);
    if (mismatch.empty()) return pair;
  }
  fail("scenario '", scenario.name, "': pair ", index, ": no payload draw in ", kMaxAttempts,
       " keeps the two histories the same length outside the source (the last: ", mismatch, ")");
}

}  // namespace eventkv::probe
