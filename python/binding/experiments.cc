// eventkv.probe / landing / results / summary / stored_pair / rerun: the
// donor-pair experiments and their results database, as the CLI runs them.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/summary.h"
#include "bindings.h"
#include "git_version.h"
#include "probe/conditions.h"
#include "probe/outcome.h"
#include "probe/pairs.h"
#include "probe/rerun.h"
#include "probe/runner.h"
#include "probe/scenario.h"
#include "probe/stored_pair.h"
#include "report/json.h"
#include "store/results_db.h"
#include "util/error.h"

namespace eventkv::python {
namespace {

// Runs a long computation on its own thread while this (Python's main)
// thread watches for Ctrl-C: a KeyboardInterrupt asks the computation to
// stop between pairs, waits for it, and is raised (the run stays resumable).
probe::RunOutcome run_interruptibly(
    const std::function<probe::RunOutcome(const std::atomic<bool>&)>& work) {
  std::atomic<bool> stop = false;
  std::future<probe::RunOutcome> result =
      std::async(std::launch::async, [&work, &stop] { return work(stop); });
  bool interrupted = false;
  for (;;) {
    std::future_status status = std::future_status::timeout;
    {
      const nb::gil_scoped_release release;
      status = result.wait_for(std::chrono::milliseconds(100));
    }
    if (status == std::future_status::ready) break;
    if (!interrupted && PyErr_CheckSignals() != 0) {
      interrupted = true;
      stop = true;
    }
  }
  probe::RunOutcome outcome = result.get();
  if (interrupted) throw nb::python_error();
  return outcome;
}

nb::dict outcome_dict(const probe::RunOutcome& outcome) {
  nb::dict out;
  out["run_id"] = outcome.run_id;
  out["pairs_computed"] = outcome.pairs_computed;
  out["cells"] = outcome.cells;
  out["seconds"] = outcome.seconds;
  out["invalid"] = outcome.invalid;
  out["already_complete"] = outcome.already_complete;
  out["summary"] = probe::outcome_summary(outcome);
  return out;
}

// A Python value from JSON (through the json module: one conversion).
nb::object python_json(const nlohmann::json& value) {
  return nb::module_::import_("json").attr("loads")(value.dump());
}

nb::dict probe_run(const std::string& scenario_path, const std::shared_ptr<LoadedModel>& model,
                   const std::string& db_path, int pairs,
                   const std::vector<std::string>& constructions, const std::vector<int>& distances,
                   bool resume, int64_t kv_cells) {
  const probe::Scenario scenario = probe::load_scenario(scenario_path);
  if (pairs < 0 || pairs > 1000000) fail("pairs must be from 0 (the scenario's) to 1000000");
  probe::RunOptions options;
  options.pairs = pairs;
  options.constructions = constructions;
  options.distances = distances;
  options.resume = resume;
  options.kv_cells = checked_kv_cells(*model, kv_cells);
  options.git_version = EVENTKV_GIT_VERSION;
  probe::selected_cells(scenario, options);  // unknown cells fail before the database is made
  store::ResultsDb db(db_path);
  const std::lock_guard lock(model->computing);
  return outcome_dict(run_interruptibly([&](const std::atomic<bool>& stop) {
    return probe::run_scenario(model->engine, model->path, scenario, db, options, stop);
  }));
}

nb::dict landing_run(const std::string& scenario_path, const std::shared_ptr<LoadedModel>& model,
                     const std::string& db_path, int pairs, const std::string& construction,
                     int distance, bool resume, int64_t kv_cells) {
  const probe::Scenario scenario = probe::load_scenario(scenario_path);
  if (pairs < 1 || pairs > 1000000) fail("pairs must be from 1 to 1000000, not ", pairs);
  probe::LandingRunOptions options;
  options.pairs = pairs;
  options.construction = construction;
  options.distance = distance;
  options.resume = resume;
  options.kv_cells = checked_kv_cells(*model, kv_cells);
  options.git_version = EVENTKV_GIT_VERSION;
  probe::landing_cell(scenario, options);
  store::ResultsDb db(db_path);
  const std::lock_guard lock(model->computing);
  return outcome_dict(run_interruptibly([&](const std::atomic<bool>& stop) {
    return probe::run_landing(model->engine, scenario, db, options, stop);
  }));
}

// Every stored score as columns (the rows of `eventkv export --format csv`).
nb::dict score_columns(const std::string& db_path) {
  store::ResultsDb db(db_path, store::Access::kReadOnly);
  std::vector<int64_t> run_id, pair_index, distance, candidate;
  std::vector<std::string> model, scenario, payload_type, construction, condition, side, text;
  std::vector<bool> is_value_a, is_value_b;
  std::vector<double> log_prob;
  for (const store::RunRecord& run : db.runs()) {
    for (const store::PairRecord& pair : db.pairs(run.id)) {
      for (const auto& [name, sides] : pair.conditions) {
        for (const auto& [label, record] :
             {std::pair{"A", &sides.first}, std::pair{"B", &sides.second}}) {
          for (size_t c = 0; c < record->log_probs.size(); ++c) {
            run_id.push_back(run.id);
            model.push_back(run.model_name);
            scenario.push_back(run.scenario_name);
            payload_type.push_back(run.payload_type);
            pair_index.push_back(pair.pair_index);
            construction.push_back(pair.construction);
            distance.push_back(pair.distance);
            condition.push_back(name);
            side.emplace_back(label);
            candidate.emplace_back(static_cast<int64_t>(c));
            text.push_back(pair.candidates[c]);
            is_value_a.push_back(static_cast<int>(c) == pair.value_a);
            is_value_b.push_back(static_cast<int>(c) == pair.value_b);
            log_prob.push_back(record->log_probs[c]);
          }
        }
      }
    }
  }
  nb::dict out;
  out["run_id"] = run_id;
  out["model"] = model;
  out["scenario"] = scenario;
  out["payload_type"] = payload_type;
  out["pair_index"] = pair_index;
  out["construction"] = construction;
  out["distance"] = distance;
  out["condition"] = condition;
  out["side"] = side;
  out["candidate"] = candidate;
  out["candidate_text"] = text;
  out["is_value_a"] = is_value_a;
  out["is_value_b"] = is_value_b;
  out["log_prob"] = log_prob;
  return out;
}

nb::object summary(const std::string& db_path) {
  store::ResultsDb db(db_path, store::Access::kReadOnly);
  const report::ReportData data = analysis::collect_report(db);
  return python_json({{"generated_at", data.generated_at},
                      {"runs", report::runs_json(data.runs)},
                      {"cells", report::cells_json(data.cells)}});
}

nb::dict stored_pair(const std::string& db_path, const std::string& pair_id) {
  store::ResultsDb db(db_path, store::Access::kReadOnly);
  const probe::StoredPair stored = probe::find_stored_pair(db, probe::parse_pair_id(pair_id));
  const probe::DonorPair texts = probe::stored_texts(stored.pair, pair_id);
  nb::dict out;
  out["id"] = pair_id;
  out["model"] = stored.run.model_name;
  out["model_fingerprint"] = stored.run.model_fingerprint;
  out["chat_format"] = stored.run.chat_format;
  out["answer_format"] = stored.scenario.answer_format;
  out["texts"] = python_json(nlohmann::json::parse(probe::texts_json(texts)));
  out["spans"] = stored.pair.spans_json.empty()
                     ? nb::none()
                     : python_json(nlohmann::json::parse(stored.pair.spans_json));
  out["candidates"] = stored.pair.candidates;
  out["value_a"] = stored.pair.value_a;
  out["value_b"] = stored.pair.value_b;
  nb::dict scores;
  for (const auto& [condition, sides] : stored.pair.conditions) {
    nb::dict both;
    both["A"] = sides.first.log_probs;
    both["B"] = sides.second.log_probs;
    scores[condition.c_str()] = both;
  }
  out["scores"] = scores;
  return out;
}

nb::dict rerun(const std::shared_ptr<LoadedModel>& model, const std::string& db_path,
               const std::string& pair_id, int64_t kv_cells) {
  store::ResultsDb db(db_path, store::Access::kReadOnly);
  const probe::StoredPair stored = probe::find_stored_pair(db, probe::parse_pair_id(pair_id));
  const auto arena = new_arena(*model, kv_cells);
  const probe::Recomputed recomputed =
      computing(*model, [&] { return probe::recompute_pair(stored, model->engine, arena); });
  nb::list scores;
  for (const probe::ScoreComparison& s : recomputed.scores) {
    nb::dict item;
    item["condition"] = s.condition;
    item["side"] = std::string(1, s.side);
    item["candidate"] = s.candidate;
    item["stored"] = s.stored;
    item["recomputed"] = s.recomputed;
    scores.append(item);
  }
  // Per condition: the label and margin of the stored and of the recomputed scores.
  std::map<std::string, std::array<std::vector<double>, 4>> sides;  // stored A, B; again A, B
  for (const probe::ScoreComparison& s : recomputed.scores) {
    auto& four = sides[s.condition];
    const size_t side = s.side == 'A' ? 0 : 1;
    four[side].push_back(s.stored);
    four[2 + side].push_back(s.recomputed);
  }
  nb::dict labels;
  const int va = stored.pair.value_a;
  const int vb = stored.pair.value_b;
  for (const auto& [condition, four] : sides) {
    nb::dict item;
    item["stored"] = std::string(probe::outcome_name(
        probe::label(probe::answer_of(four[0]), probe::answer_of(four[1]), va, vb)));
    item["recomputed"] = std::string(probe::outcome_name(
        probe::label(probe::answer_of(four[2]), probe::answer_of(four[3]), va, vb)));
    item["stored_margin"] = probe::paired_margin(four[0], four[1], va, vb);
    item["recomputed_margin"] = probe::paired_margin(four[2], four[3], va, vb);
    labels[condition.c_str()] = item;
  }
  nb::dict out;
  out["labels"] = labels;
  out["chat_format"] = recomputed.chat_format;
  out["n_tokens"] = recomputed.n_tokens;
  out["same_tokens"] = recomputed.same_tokens;
  out["same_texts"] = recomputed.same_texts;
  out["max_abs_diff"] = recomputed.max_abs_diff;
  out["scores"] = scores;
  return out;
}

// The five conditions of a donor pair given as stored_pair() returns it (its
// texts, candidates, values and answer format), as probe computes them.
nb::dict score_pair(const std::shared_ptr<LoadedModel>& model, const nb::dict& pair,
                    int64_t kv_cells) {
  for (const char* key : {"texts", "candidates", "value_a", "value_b", "answer_format"}) {
    if (!pair.contains(key)) fail("score_pair: the pair has no \"", key, "\"");
  }
  store::PairRecord record;
  record.texts_json =
      nb::cast<std::string>(nb::module_::import_("json").attr("dumps")(pair["texts"]));
  record.candidates = nb::cast<std::vector<std::string>>(pair["candidates"]);
  record.value_a = nb::cast<int>(pair["value_a"]);
  record.value_b = nb::cast<int>(pair["value_b"]);
  const model::Model& m = model->engine->model();
  const probe::TokenizedPair tokenized = probe::tokenize_texts(
      probe::stored_texts(record, "score_pair"), nb::cast<std::string>(pair["answer_format"]),
      model->format, m.tokenizer());
  const auto arena = new_arena(*model, kv_cells);
  const probe::PairScores scores =
      computing(*model, [&] { return probe::run_conditions(tokenized, model->engine, arena); });
  nb::dict out;
  for (const probe::ConditionScores& c : scores.conditions) {
    nb::dict both;
    both["A"] = c.a.log_probs;
    both["B"] = c.b.log_probs;
    out[std::string(c.condition).c_str()] = both;
  }
  return out;
}

}  // namespace

void bind_experiments(nb::module_& m) {
  m.def("probe", &probe_run, nb::arg("scenario"), nb::arg("model"), nb::arg("db"),
        nb::arg("pairs") = 0, nb::arg("constructions") = std::vector<std::string>(),
        nb::arg("distances") = std::vector<int>(), nb::arg("resume") = false,
        nb::arg("kv_cells") = 0,
        "Runs a scenario file's donor pairs under the five conditions into the results "
        "database `db`, as `eventkv probe` does (pairs: per cell, 0 for the scenario's count). "
        "Ctrl-C stops between pairs (resume=True goes on). Returns the run's outcome.");
  m.def("landing", &landing_run, nb::arg("scenario"), nb::arg("model"), nb::arg("db"),
        nb::arg("pairs") = 30, nb::arg("construction") = "", nb::arg("distance") = -1,
        nb::arg("resume") = false, nb::arg("kv_cells") = 0,
        "The landing analysis of one cell into `db`, as `eventkv landing` does.");
  m.def("score_columns", &score_columns, nb::arg("db"),
        "Every stored score as columns (eventkv.results makes them a DataFrame).");
  m.def("summary", &summary, nb::arg("db"),
        "The runs and each cell's statistics, as `eventkv export --format json` writes them.");
  m.def("stored_pair", &stored_pair, nb::arg("db"), nb::arg("pair"),
        "A stored donor pair (RUN:INDEX:CONSTRUCTION:DISTANCE, as `eventkv export` names it): "
        "its texts, candidates and stored scores.");
  m.def(
      "score_pair", &score_pair, nb::arg("model"), nb::arg("pair"), nb::arg("kv_cells") = 0,
      "The five conditions' scores of a donor pair (a dict as stored_pair returns, texts "
      "changed at will), computed as probe computes them: {condition: {'A': [...], 'B': [...]}}.");
  m.def("rerun", &rerun, nb::arg("model"), nb::arg("db"), nb::arg("pair"), nb::arg("kv_cells") = 0,
        "Recomputes a stored pair from the database alone, as `eventkv rerun` does, and compares "
        "every score with the stored one.");
}

}  // namespace eventkv::python
