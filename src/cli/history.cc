// eventkv history FILE.json -m MODEL: computes a history of events globally,
// evicts some (optionally recomputing the rest locally), scores a query's
// candidate answers against the served rows and prints the KV memory held.
//
// FILE.json: {"events": [{"id", "role", "content"}, ...],
//             "evict": ["id", ...],                      (optional)
//             "local": false,                            (optional)
//             "query": {"question", "answer_prefix", "candidates": [...]},
//             "positions": "after-history" | "after-retained"}  (optional)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_options.h"
#include "events/render.h"
#include "kv/event_kv.h"
#include "util/error.h"

namespace eventkv::cli {
namespace {

using nlohmann::json;

struct HistoryOptions {
  ModelOptions model;
  std::string file;
  std::vector<std::string> evict;  // overrides the file's list when given
  bool local = false;
  bool as_json = false;
  std::string format;
};

struct HistoryFile {
  std::vector<events::Event> events;
  std::vector<std::string> evict;
  bool local = false;
  std::string question;
  std::string answer_prefix;
  std::vector<std::string> candidates;
  kv::QueryPositions positions = kv::QueryPositions::kAfterHistory;
};

// The string at `key` of `object`, or an error naming the file and the field.
std::string field(const json& object, const char* key, const std::string& where) {
  if (!object.contains(key) || !object[key].is_string())
    fail(where, ": needs a string field '", key, "'");
  return object[key].get<std::string>();
}

std::vector<std::string> string_list(const json& value, const std::string& where) {
  if (!value.is_array()) fail(where, ": must be a list of strings");
  std::vector<std::string> out;
  for (const json& item : value) {
    if (!item.is_string()) fail(where, ": must be a list of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

HistoryFile read_history(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(path, ": cannot open");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    fail(path, ": not valid JSON (", e.what(), ")");
  }
  HistoryFile history;
  if (!doc.is_object() || !doc.contains("events") || !doc["events"].is_array())
    fail(path, ": needs a list 'events'");
  for (size_t i = 0; i < doc["events"].size(); ++i) {
    const json& e = doc["events"][i];
    const std::string where = path + ": events[" + std::to_string(i) + "]";
    history.events.push_back(
        {field(e, "id", where), field(e, "role", where), field(e, "content", where)});
  }
  if (doc.contains("evict")) history.evict = string_list(doc["evict"], path + ": evict");
  if (doc.contains("local")) history.local = doc["local"].is_boolean() && doc["local"].get<bool>();
  if (!doc.contains("query") || !doc["query"].is_object()) fail(path, ": needs an object 'query'");
  const json& q = doc["query"];
  history.question = field(q, "question", path + ": query");
  history.answer_prefix =
      q.contains("answer_prefix") ? field(q, "answer_prefix", path + ": query") : "";
  if (!q.contains("candidates")) fail(path, ": query needs 'candidates'");
  history.candidates = string_list(q["candidates"], path + ": query.candidates");
  if (doc.contains("positions")) {
    const std::string mode = field(doc, "positions", path);
    if (mode == "after-retained") {
      history.positions = kv::QueryPositions::kAfterRetained;
    } else if (mode != "after-history") {
      fail(path, ": positions must be after-history or after-retained, got '", mode, "'");
    }
  }
  return history;
}

void run(const HistoryOptions& options) {
  HistoryFile file = read_history(options.file);
  if (!options.evict.empty()) file.evict = options.evict;
  file.local = file.local || options.local;
  const auto engine = load_engine(options.model);
  const int64_t n_ctx =
      context_size(options.model, engine->model(), engine->model().config().n_ctx_train);
  const tokenizer::Tokenizer& tok = engine->model().tokenizer();
  const tokenizer::ChatFormat format = options.format.empty()
                                           ? tokenizer::ChatFormat::detect(engine->model().file())
                                           : tokenizer::ChatFormat::by_name(options.format);
  const std::vector<kv::EventTokens> rendered = events::render_events(format, tok, file.events);
  const events::QueryTokens query =
      events::render_query(format, tok, file.question, file.answer_prefix, file.candidates);
  size_t n_tokens = query.prompt.size();
  for (const auto& e : rendered) n_tokens += e.tokens.size();
  size_t longest_candidate = 0;
  for (const auto& c : query.candidates) longest_candidate = std::max(longest_candidate, c.size());
  // The history's positions run to the end of the longest candidate: refused
  // beyond -c (default: the trained context) before anything is computed.
  if (static_cast<int64_t>(n_tokens + longest_candidate) > n_ctx) {
    fail(options.file, ": the history and its query take ", n_tokens + longest_candidate,
         " tokens, more than the context of ", n_ctx, " (-c; at most the model's trained context)");
  }
  auto arena = std::make_shared<kv::KvArena>(
      engine->model().config(), static_cast<int64_t>(n_tokens + 256), compute::KvType::kF32);
  kv::EventKV history(engine, arena);
  history.append(rendered);
  const size_t full_bytes = history.bytes_retained();
  history.evict(file.evict);
  if (file.local && !file.evict.empty()) {
    std::vector<std::string> retained;
    for (const auto& e : history.events()) {
      if (e.retained && e.begin > history.event(file.evict.front()).begin) retained.push_back(e.id);
    }
    if (!retained.empty()) history.recompute(retained, {}, false);
  }
  const std::vector<kv::CandidateScore> scores =
      history.score(query.prompt, query.candidates, file.positions);
  // Normalize over the candidates for a readable probability.
  double max_lp = -INFINITY;
  for (const auto& s : scores) max_lp = std::max(max_lp, s.log_prob);
  double total = 0.0;
  for (const auto& s : scores) total += std::exp(s.log_prob - max_lp);
  json out = {{"kv_bytes_full", full_bytes},
              {"kv_bytes_served", history.bytes_retained()},
              {"events", json::array()},
              {"candidates", json::array()}};
  for (const auto& e : history.events()) {
    out["events"].push_back({{"id", e.id},
                             {"role", e.role},
                             {"begin", e.begin},
                             {"end", e.end()},
                             {"retained", e.retained}});
  }
  size_t best = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (scores[i].log_prob > scores[best].log_prob) best = i;
    out["candidates"].push_back({{"text", file.candidates[i]},
                                 {"log_prob", scores[i].log_prob},
                                 {"tokens", scores[i].n_tokens},
                                 {"share", std::exp(scores[i].log_prob - max_lp) / total}});
  }
  out["predicted"] = file.candidates[best];
  if (options.as_json) {
    std::cout << out.dump(2) << std::endl;
    return;
  }
  std::printf("%-16s %-10s %12s  %s\n", "event", "role", "positions", "rows");
  for (const auto& e : history.events()) {
    std::printf("%-16s %-10s %5d..%-5d  %s\n", e.id.c_str(), e.role.c_str(), e.begin, e.end(),
                e.retained ? "served" : "evicted");
  }
  std::printf(
      "\nKV held: %.2f MiB served of %.2f MiB full (%.0f%%)\n\n",
      history.bytes_retained() / 1048576.0, full_bytes / 1048576.0,
      100.0 * static_cast<double>(history.bytes_retained()) / static_cast<double>(full_bytes));
  std::printf("%-20s %12s %7s %8s\n", "candidate", "log p", "tokens", "share");
  for (const auto& c : out["candidates"]) {
    std::printf("%-20s %12.4f %7d %7.1f%%\n", json(c["text"].get<std::string>()).dump().c_str(),
                c["log_prob"].get<double>(), c["tokens"].get<int>(),
                100.0 * c["share"].get<double>());
  }
  std::printf("\npredicted: %s\n", json(file.candidates[best]).dump().c_str());
}

}  // namespace

void add_history_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "history", "Serve a history of events from a sparse cache and score a query's answers");
  auto options = std::make_shared<HistoryOptions>();
  add_model_options(cmd, options->model);
  cmd->add_option("file", options->file, "history file (JSON: events, evict, local, query)")
      ->required();
  cmd->add_option("--evict", options->evict, "event ids to evict (replaces the file's list)")
      ->delimiter(',');
  cmd->add_flag("--local", options->local,
                "recompute the retained rows after the first evicted event locally");
  cmd->add_option("--format", options->format, "chat format (default: from the model's template)");
  cmd->add_flag("--json", options->as_json, "print one JSON object");
  cmd->callback([options] { run(*options); });
}

}  // namespace eventkv::cli
