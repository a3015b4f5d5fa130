#include "probe/rerun.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <string_view>

#include "probe/conditions.h"
#include "probe/pairs.h"
#include "probe/runner.h"
#include "probe/stored_pair.h"
#include "tokenizer/chat_format.h"
#include "util/error.h"

namespace eventkv::probe {
namespace {

// A non-negative decimal integer, the whole of `text`.
template <typename Integer>
bool read_count(std::string_view text, Integer& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && value >= 0;
}

// A cell as pair ids name it: "ok:2", ":0" without a carrier.
std::string cell_text(const std::string& construction, int distance) {
  return str_cat(construction, ":", distance);
}

// What a run holds, for the error that names a pair it lacks: "cells ok:1,
// ok:2; pair indices 0 to 5".
std::string run_contents(const std::vector<store::PairRecord>& pairs) {
  if (pairs.empty()) return "no pairs";
  std::set<std::pair<std::string, int>> cells;
  int64_t low = pairs.front().pair_index;
  int64_t high = low;
  for (const store::PairRecord& p : pairs) {
    cells.emplace(p.construction, p.distance);
    low = std::min(low, p.pair_index);
    high = std::max(high, p.pair_index);
  }
  std::string out = "cells";
  for (const auto& [construction, distance] : cells)
    out += str_cat(out == "cells" ? " " : ", ", cell_text(construction, distance));
  return str_cat(out, "; pair indices ", low, " to ", high);
}

void compare_side(std::string_view condition, char side, const store::SideRecord& stored,
                  const SideScores& recomputed, Recomputed& out) {
  if (stored.log_probs.size() != recomputed.log_probs.size()) {
    fail(condition, " ", side, ": ", stored.log_probs.size(), " candidates stored, ",
         recomputed.log_probs.size(), " recomputed");
  }
  for (size_t c = 0; c < stored.log_probs.size(); ++c) {
    out.scores.push_back(
        {std::string(condition), side, c, stored.log_probs[c], recomputed.log_probs[c]});
    out.max_abs_diff =
        std::max(out.max_abs_diff, std::abs(stored.log_probs[c] - recomputed.log_probs[c]));
  }
}

}  // namespace

PairId parse_pair_id(const std::string& text) {
  const size_t first = text.find(':');
  const size_t second = first == std::string::npos ? first : text.find(':', first + 1);
  const size_t last = text.rfind(':');
  PairId id;
  const std::string_view view(text);
  if (second == std::string::npos || last <= second ||
      !read_count(view.substr(0, first), id.run_id) ||
      !read_count(view.substr(first + 1, second - first - 1), id.pair_index) ||
      !read_count(view.substr(last + 1), id.distance)) {
    fail("'", text,
         "' is not RUN:INDEX:CONSTRUCTION:DISTANCE (the run_id, pair_index, construction and "
         "distance columns of eventkv export; e.g. 1:0:ok:2)");
  }
  id.construction = text.substr(second + 1, last - second - 1);
  return id;
}

std::string pair_id_text(const PairId& id) {
  return str_cat(id.run_id, ":", id.pair_index, ":", id.construction, ":", id.distance);
}

StoredPair find_stored_pair(store::ResultsDb& db, const PairId& id) {
  const std::string& path = db.database().path();
  StoredPair stored;
  const std::vector<store::RunRecord> runs = db.runs();
  const auto run = std::find_if(runs.begin(), runs.end(),
                                [&](const store::RunRecord& r) { return r.id == id.run_id; });
  if (run == runs.end()) {
    fail(path, ": no run ", id.run_id,
         runs.empty() ? std::string(" (it holds none)")
                      : str_cat(" (runs ", runs.front().id, " to ", runs.back().id, ")"));
  }
  stored.run = *run;
  const std::string what = str_cat(path, ": run ", run->id, " (", run->scenario_name, ")");
  if (run->scenario_json.empty()) {
    fail(what, " predates stored scenarios (eventkv before results schema 3): the database ",
         "alone cannot say what was run; fill it from its scenario file with ",
         "tools/results/fill_scenario_json.py, or run the scenario again with probe");
  }
  stored.scenario = parse_scenario(run->scenario_json, what + ": stored scenario");
  if (stored.scenario.hash != run->scenario_hash) {
    fail(what, ": the stored scenario's hash is ", stored.scenario.hash, ", not the run's ",
         run->scenario_hash);
  }
  const std::vector<store::PairRecord> pairs = db.pairs(run->id);
  const auto pair = std::find_if(pairs.begin(), pairs.end(), [&](const store::PairRecord& p) {
    return p.pair_index == id.pair_index && p.construction == id.construction &&
           p.distance == id.distance;
  });
  if (pair == pairs.end()) {
    fail(what, ": no pair ", id.pair_index, " of cell ", cell_text(id.construction, id.distance),
         " (", run_contents(pairs), ")");
  }
  stored.pair = *pair;
  return stored;
}

Recomputed recompute_pair(const StoredPair& stored, const std::shared_ptr<kv::Engine>& engine,
                          const std::shared_ptr<kv::KvArena>& arena) {
  const store::RunRecord& run = stored.run;
  const model::Model& model = engine->model();
  if (model_fingerprint(model) != run.model_fingerprint) {
    fail(model.file().name(), ": fingerprint ", model_fingerprint(model), ", not ",
         run.model_fingerprint, " of run ", run.id, "'s model ", run.model_name,
         ": not the model that computed it");
  }
  Recomputed out;
  out.chat_format_stored = !run.chat_format.empty();
  const tokenizer::ChatFormat format = out.chat_format_stored
                                           ? tokenizer::ChatFormat::by_name(run.chat_format)
                                           : tokenizer::ChatFormat::detect(model.file());
  out.chat_format = format.name();
  const Cell cell{stored.pair.construction, stored.pair.distance};
  const TokenizedPair pair =
      tokenize_texts(stored_texts(stored.pair, str_cat("run ", run.id)),
                     stored.scenario.answer_format, format, model.tokenizer());
  const TokenizedPair redrawn =
      tokenize_pair(stored.scenario, cell, stored.pair.pair_index, format, model.tokenizer());
  out.same_texts = texts_json(redrawn.texts) == stored.pair.texts_json &&
                   redrawn.rejected == stored.pair.rejected;
  for (const kv::EventTokens& e : pair.events_a)
    out.n_tokens += static_cast<int64_t>(e.tokens.size());
  out.same_tokens = out.n_tokens == stored.pair.n_tokens &&
                    (stored.pair.spans_json.empty() || spans_json(pair) == stored.pair.spans_json);
  // In the order run_conditions computes them; every stored one must be among them.
  size_t compared = 0;
  for (const ConditionScores& c : run_conditions(pair, engine, arena).conditions) {
    const auto found = stored.pair.conditions.find(std::string(c.condition));
    if (found == stored.pair.conditions.end()) continue;
    ++compared;
    compare_side(c.condition, 'A', found->second.first, c.a, out);
    compare_side(c.condition, 'B', found->second.second, c.b, out);
  }
  if (compared != stored.pair.conditions.size())
    fail("run ", run.id, ": a stored condition is no longer computed");
  return out;
}

}  // namespace eventkv::probe
