// eventkv contract HISTORY.json -m MODEL [--profile P] (--evict IDS | --budget N|P%):
// computes an agent history, evicts events under the memory contract and
// shows, per evicted event, how each fact is kept (record, certified
// carrier, forgotten, lost) with its evidence; then asks the history's
// queries against the served rows: every recall fact must be answered, and
// no forget fact may be recoverable (donor pairs over its value: the served
// rows must be bit-identical, so 0 aligned, where plain eviction of the same
// events is measured beside it).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_options.h"
#include "contract/agent_history.h"
#include "contract/contract_cache.h"
#include "contract/profile.h"
#include "events/render.h"
#include "probe/outcome.h"
#include "util/error.h"
#include "util/progress.h"

namespace eventkv::cli {
namespace {

using contract::ContractCache;
using nlohmann::json;

struct ContractCommand {
  ModelOptions model;
  std::string file;
  std::string profile;
  std::vector<std::string> evict;
  std::string budget;  // rows, or a share of the history's rows ("25%")
  std::string format;
  bool as_json = false;
  bool verify = true;
  bool leak_check = true;
};

// --budget as rows: N, or P% of `full_rows`.
int64_t budget_rows(const std::string& budget, int64_t full_rows) {
  try {
    size_t used = 0;
    if (budget.ends_with('%')) {
      const double share = std::stod(budget.substr(0, budget.size() - 1), &used);
      if (used + 1 == budget.size() && share >= 0.0 && share <= 100.0)
        return static_cast<int64_t>(share / 100.0 * static_cast<double>(full_rows));
    } else {
      const int64_t rows = std::stoll(budget, &used);
      if (used == budget.size() && rows >= 0) return rows;
    }
  } catch (const std::exception&) {
  }
  usage_error("--budget", "must be a number of KV rows or a share like 25%, not '" + budget + "'");
}

json decision_json(const contract::Decision& d) {
  return {{"event", d.event},
          {"fact", d.fact},
          {"kept_as", std::string(contract::keeping_name(d.keeping))},
          {"evidence", d.evidence},
          {"rows", d.rows},
          {"ms", d.ms}};
}

json proof_json(const contract::ForgetProof& p) {
  return {{"events", p.event},
          {"recomputed_events", p.recomputed_events},
          {"recomputed_rows", p.recomputed_rows},
          {"recompute_ms", p.recompute_ms},
          {"verified", p.verified},
          {"value_independent", p.value_independent},
          {"equals_fresh", p.equals_fresh},
          {"verify_ms", p.verify_ms}};
}

json query_json(const contract::QueryResult& r, const contract::FactQuery& q,
                const std::string& state) {
  return {{"fact", r.fact},
          {"state", state},
          {"truth", q.candidates[static_cast<size_t>(r.truth)]},
          {"predicted", q.candidates[static_cast<size_t>(r.predicted)]},
          {"answered", r.answered()},
          {"log_probs", r.log_probs}};
}

// The paired logit margin of SPEC section 2 for a pair whose A side holds
// the true value and whose B side holds candidate `b`.
double paired_margin(const contract::QueryResult& side_a, const contract::QueryResult& side_b,
                     size_t b) {
  const auto a = static_cast<size_t>(side_a.truth);
  return (side_a.log_probs[a] - side_a.log_probs[b]) - (side_b.log_probs[a] - side_b.log_probs[b]);
}

// Donor pairs over a forget fact's value: the history replayed with each
// other candidate in its place, under the contract and under plain
// eviction; outcome counts per regime.
json leak_check(ContractCache& cache, const contract::AgentHistory& history,
                const contract::FactQuery& query) {
  const auto [event, fact] = history.fact(query.fact);
  const std::string& content = event->event.content;
  const size_t at = content.find(fact->value);
  const std::vector<int32_t> own = cache.kv().event(event->event.id).tokens;
  ContractCache plain_a = cache.replay({}, {.enforce = false, .verify = false});
  const contract::QueryResult plain_answer =
      contract::ask(plain_a.kv(), cache.format(), query, *fact);
  const contract::QueryResult answer = contract::ask(cache.kv(), cache.format(), query, *fact);
  std::map<std::string, int64_t> contract_counts;
  std::map<std::string, int64_t> plain_counts;
  json pairs = json::array();
  Progress progress("leak check", static_cast<int64_t>(query.candidates.size()) - 1, "pairs");
  int64_t done = 0;
  for (size_t c = 0; c < query.candidates.size(); ++c) {
    if (static_cast<int>(c) == answer.truth) continue;
    std::string other = content;
    other.replace(at, fact->value.size(), query.candidates[c]);
    const std::vector<int32_t> tokens = cache.render_content(event->event.id, other);
    if (tokens.size() != own.size()) {
      pairs.push_back(
          {{"value_b", query.candidates[c]},
           {"skipped", "the event takes " + std::to_string(tokens.size()) +
                           " tokens with this value, not " + std::to_string(own.size())}});
      progress.update(++done);
      continue;
    }
    const std::map<std::string, std::vector<int32_t>, std::less<>> swap = {
        {event->event.id, tokens}};
    ContractCache contract_b = cache.replay(swap, {.enforce = true, .verify = false});
    ContractCache plain_b = cache.replay(swap, {.enforce = false, .verify = false});
    const contract::QueryResult b = contract::ask(contract_b.kv(), cache.format(), query, *fact);
    const contract::QueryResult pb = contract::ask(plain_b.kv(), cache.format(), query, *fact);
    const auto value_b = static_cast<int>(c);
    const std::string under_contract(
        probe::outcome_name(probe::classify(answer.predicted, b.predicted, answer.truth, value_b)));
    const std::string under_plain(probe::outcome_name(
        probe::classify(plain_answer.predicted, pb.predicted, answer.truth, value_b)));
    ++contract_counts[under_contract];
    ++plain_counts[under_plain];
    pairs.push_back({{"value_b", query.candidates[c]},
                     {"contract", under_contract},
                     {"contract_margin", paired_margin(answer, b, c)},
                     {"plain", under_plain},
                     {"plain_margin", paired_margin(plain_answer, pb, c)}});
    progress.update(++done);
  }
  progress.finish();
  return {{"fact", query.fact},
          {"pairs", pairs},
          {"contract", contract_counts},
          {"plain", plain_counts}};
}

void print_text(const json& out) {
  std::printf(
      "%s: %lld tokens in %zu events; KV %lld -> %lld rows (%.1f -> %.1f MiB), %zu records\n",
      out["history"].get<std::string>().c_str(), out["rows_full"].get<long long>(),
      out["events"].get<size_t>(), out["rows_full"].get<long long>(),
      out["rows_served"].get<long long>(), out["kv_bytes_full"].get<double>() / 1048576.0,
      out["kv_bytes_served"].get<double>() / 1048576.0, out["records"].get<size_t>());
  std::printf("\n%-22s %-16s %-18s %7s %9s  %s\n", "evicted event", "fact", "kept as", "rows", "ms",
              "evidence");
  for (const json& d : out["decisions"]) {
    std::printf("%-22s %-16s %-18s %7lld %9.1f  %s\n", d["event"].get<std::string>().c_str(),
                d["fact"].get<std::string>().empty() ? "-" : d["fact"].get<std::string>().c_str(),
                d["kept_as"].get<std::string>().c_str(), d["rows"].get<long long>(),
                d["ms"].get<double>(), d["evidence"].get<std::string>().c_str());
  }
  for (const json& p : out["proofs"]) {
    std::printf(
        "\nverified forgetting of %s: recomputed %lld events (%lld rows) in %.0f ms; "
        "value-independent: %s, equals a fresh computation: %s (checks took %.0f ms)\n",
        p["events"].get<std::string>().c_str(), p["recomputed_events"].get<long long>(),
        p["recomputed_rows"].get<long long>(), p["recompute_ms"].get<double>(),
        !p["verified"].get<bool>()           ? "not checked"
        : p["value_independent"].get<bool>() ? "yes"
                                             : "NO",
        !p["verified"].get<bool>()      ? "not checked"
        : p["equals_fresh"].get<bool>() ? "yes"
                                        : "NO",
        p["verify_ms"].get<double>());
  }
  std::printf("\n%-16s %-10s %-18s %-18s %-9s %s\n", "query fact", "state", "truth", "predicted",
              "answered", "all visible: predicted");
  for (const json& q : out["queries"]) {
    std::printf("%-16s %-10s %-18s %-18s %-9s %s\n", q["fact"].get<std::string>().c_str(),
                q["state"].get<std::string>().c_str(), q["truth"].get<std::string>().c_str(),
                q["predicted"].get<std::string>().c_str(), q["answered"].get<bool>() ? "yes" : "no",
                q["visible_predicted"].get<std::string>().c_str());
  }
  for (const json& leak : out["leaks"]) {
    std::printf(
        "\ndonor pairs over forgotten '%s' (aligned/anti/unmoved/other):\n  contract: %s\n"
        "  plain eviction: %s\n",
        leak["fact"].get<std::string>().c_str(), leak["contract"].dump().c_str(),
        leak["plain"].dump().c_str());
  }
  std::printf("\n%s\n", out["verdict"].get<std::string>().c_str());
}

void run(const ContractCommand& options) {
  const contract::AgentHistory history = contract::load_agent_history(options.file);
  for (const std::string& id : options.evict) (void)history.event(id);
  if (!options.budget.empty()) (void)budget_rows(options.budget, 0);
  const auto engine = load_engine(options.model);
  const model::Model& model = engine->model();
  const std::optional<contract::Profile> profile =
      contract::load_profile_for(options.profile, model.fingerprint(), options.model.model);
  const tokenizer::ChatFormat format = options.format.empty()
                                           ? tokenizer::ChatFormat::detect(model.file())
                                           : tokenizer::ChatFormat::by_name(options.format);
  std::vector<events::Event> plain;
  for (const auto& e : history.events) plain.push_back(e.event);
  int64_t n_tokens = 0;
  for (const auto& e : events::render_events(format, model.tokenizer(), plain))
    n_tokens += static_cast<int64_t>(e.tokens.size());
  // Records and queries follow the history; the proofs and the leak check
  // replay it beside the served copy.
  const int64_t n_ctx = context_size(options.model, model, model.config().n_ctx_train);
  // Records and queries follow the history (an eighth of the context is
  // kept for them); the proofs and the leak check replay what follows the
  // forgotten events beside the served copy.
  const int64_t room = std::min<int64_t>(512, n_ctx / 8);
  if (n_tokens + room > n_ctx) {
    fail(options.file, ": the history takes ", n_tokens, " tokens; with ", room,
         " for records and queries that is more than the context of ", n_ctx);
  }
  auto arena =
      std::make_shared<kv::KvArena>(model.config(), 4 * (n_tokens + room), compute::KvType::kF32);
  ContractCache cache(engine, arena, format, profile, {.enforce = true, .verify = options.verify});
  std::fprintf(stderr, "computing %lld tokens of %s\n", static_cast<long long>(n_tokens),
               options.file.c_str());
  cache.append(history.events);
  const int64_t rows_full = cache.kv().retained_rows();
  // The ceiling: what the model answers with every event visible.
  std::vector<contract::QueryResult> visible;
  for (const contract::FactQuery& q : history.queries)
    visible.push_back(contract::ask(cache.kv(), format, q, *history.fact(q.fact).second));
  const size_t bytes_full = cache.kv().bytes_retained();
  const std::vector<contract::Decision> decisions =
      options.budget.empty() ? cache.evict(options.evict)
                             : cache.fit_budget(budget_rows(options.budget, rows_full));
  json out = {{"history", options.file},
              {"model", options.model.model},
              {"events", history.events.size()},
              {"rows_full", rows_full},
              {"rows_served", cache.kv().retained_rows()},
              {"kv_bytes_full", bytes_full},
              {"kv_bytes_served", cache.kv().bytes_retained()},
              {"profile", options.profile}};
  size_t records = 0;
  for (const auto& e : cache.kv().events()) records += e.id.starts_with("record:") ? 1 : 0;
  out["records"] = records;
  out["decisions"] = json::array();
  for (const auto& d : decisions) out["decisions"].push_back(decision_json(d));
  out["proofs"] = json::array();
  bool proofs_hold = true;
  for (const auto& p : cache.proofs()) {
    out["proofs"].push_back(proof_json(p));
    proofs_hold = proofs_hold && (!p.verified || (p.value_independent && p.equals_fresh));
  }
  out["queries"] = json::array();
  out["leaks"] = json::array();
  int recall = 0;
  int answered = 0;
  int answered_visible = 0;
  int64_t leaked = 0;
  for (const contract::FactQuery& q : history.queries) {
    const auto [event, fact] = history.fact(q.fact);
    const contract::QueryResult r = contract::ask(cache.kv(), format, q, *fact);
    const contract::QueryResult& ceiling = visible[out["queries"].size()];
    json row = query_json(r, q, cache.fact_state(q.fact));
    row["visible_predicted"] = q.candidates[static_cast<size_t>(ceiling.predicted)];
    row["visible_answered"] = ceiling.answered();
    out["queries"].push_back(std::move(row));
    if (event->policy == contract::Policy::kRecall) {
      ++recall;
      answered += r.answered() ? 1 : 0;
      answered_visible += ceiling.answered() ? 1 : 0;
    }
    if (event->policy == contract::Policy::kForget && options.leak_check &&
        !cache.kv().event(event->event.id).retained) {
      json leak = leak_check(cache, history, q);
      leaked += leak["contract"].value("aligned", int64_t{0});
      out["leaks"].push_back(std::move(leak));
    }
  }
  out["verdict"] =
      str_cat("recall facts answered: ", answered, "/", recall,
              " (with every event visible: ", answered_visible, "/", recall, ")",
              "; forget facts leaked (aligned donor pairs under the contract): ", leaked,
              "; forgetting proofs: ", proofs_hold ? "hold" : "FAILED");
  if (options.as_json) {
    std::cout << out.dump(2) << "\n";
  } else {
    print_text(out);
  }
  if (!proofs_hold) fail(options.file, ": a verified forgetting failed its proof");
}

}  // namespace

void add_contract_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "contract", "Evict an agent history's events under the memory contract and check it");
  auto options = std::make_shared<ContractCommand>();
  add_model_options(cmd, options->model);
  cmd->add_option("file", options->file, "agent history (JSON; see examples/README.md)")
      ->required();
  cmd->add_option("--profile", options->profile, "calibration profile of the model (JSON)");
  auto* evict = cmd->add_option("--evict", options->evict, "event ids to evict")->delimiter(',');
  auto* budget = cmd->add_option("--budget", options->budget,
                                 "KV budget: rows, or a share of the history's rows (25%)");
  evict->excludes(budget);
  budget->excludes(evict);
  cmd->add_option("--format", options->format, "chat format (default: from the model's template)");
  cmd->add_flag("--json", options->as_json, "print one JSON object");
  cmd->add_flag("!--no-verify", options->verify, "skip the proofs of verified forgetting");
  cmd->add_flag("!--no-leak-check", options->leak_check,
                "skip the donor pairs over forgotten values");
  cmd->callback([options] {
    if (options->evict.empty() && options->budget.empty())
      usage_error("--evict/--budget", "say what to evict: --evict IDS or --budget N");
    run(*options);
  });
}

}  // namespace eventkv::cli
