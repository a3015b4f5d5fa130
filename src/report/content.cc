#include "report/content.h"

#include <algorithm>
#include <utility>

#include "analysis/experiments.h"
#include "analysis/findings.h"
#include "probe/condition_names.h"
#include "report/format.h"
#include "util/error.h"

namespace eventkv::report {

const std::string_view kHowToRead =
    "Each experiment asks the same question of donor pairs: two histories identical token for "
    "token except "
    "for the value in a source event (A or B). A pair is donor-aligned when the A-served history "
    "answers A "
    "and the B-served history answers B, anti-aligned when it is the other way round, unmoved when "
    "both "
    "give the same answer. A side whose top two candidates lie within 1e-4 nats of each other "
    "gives no answer (a tie: two correct computations of the same pair, eventkv's kernel "
    "variants, were measured to move that gap by up to 5.8e-5); a tie counts among the pairs but "
    "is neither aligned nor anti, and "
    "the ties column shows in brackets how many labelled pairs lie within 1e-3 nats. "
    "Recovery is the share of pairs that are donor-aligned, with its 95% "
    "Wilson "
    "interval (the whiskers); aligned:anti counts are the paper's \"99:0\" figures, tested with a "
    "two-sided "
    "sign test; the margin is the mean paired logit margin with a bootstrap interval. The five "
    "conditions "
    "serve the same pairs: visible keeps the source (the ceiling); sparse-global evicts it and "
    "serves rows "
    "computed while it was visible (the test); record keeps a short textual record instead (the "
    "fallback); "
    "sparse-local recomputes the retained rows without the source, so it must move no pair (a cell "
    "where it "
    "does is marked invalid: a bug, never a finding); no-carrier evicts the source and the carrier "
    "(the "
    "floor).";

const std::string_view kHowToReadLanding =
    "A landing map shows where an evicted source's value lands, for one scenario on one model. "
    "Events run left to right in history order; the source (dashed outline) is evicted. A root "
    "(blue outline) is a retained event whose own rows carry the value: transplanting only its "
    "rows from the A run into the B run moves answers toward A (the shift: its share of the "
    "pairs' margin, with its 95% interval; a root needs an interval above 0 and a share of at "
    "least 25%). An arc joins an event to an earlier event it attended to when its rows were "
    "computed, with the arrow showing where the information flows; its width is the share of the "
    "margin lost when that edge is masked. Reference edges, through which the value reached a "
    "root, are drawn in vermillion with their effect. The layer profile repeats the transplant "
    "for single layers and layer ranges; the token strip for single rows of one root. Shares are "
    "of the whole margin and need not add up: the margin is not a sum over rows, so one event, "
    "layer range or edge can account for more than 100% of it, or several for a part each.";

namespace {

using analysis::CellGroup;
using analysis::find_condition;
using analysis::kConstructionSweep;
using analysis::kDistance;
using analysis::kPayloadTypes;

constexpr std::string_view kNone = "—";

// "51% [41%, 61%] (51:3)", or "—" without a result.
std::string recovery_cell(const ConditionResult* result) {
  if (result == nullptr) return std::string(kNone);
  return format_estimate(result->recovery) + " (" + format_counts(result->aligned, result->anti) +
         ")";
}

std::string sweep_noun(std::string_view suite, size_t count) {
  const std::string plural = count == 1 ? "" : "s";
  if (suite == kConstructionSweep) return "construction" + plural;
  if (suite == kPayloadTypes) return "payload type" + plural;
  if (suite == kDistance) return "distance" + plural;
  return "setting" + plural;
}

std::string invalid_marker(const CellResult& cell) {
  return cell.valid ? "" : " — INVALID";
}

// " (incomplete: distance 0 has 57 of 200 pairs)" for the cell furthest from its planned
// pairs, or "" when every cell has them: the verdict rests on the pairs stored so far. The
// cell is named because the verdict may rest on other, finished cells.
std::string incomplete_note(const analysis::Finding& finding) {
  const CellResult* least = finding.incomplete;
  if (least == nullptr) return "";
  const std::string setting = setting_label(*least);
  return " (incomplete: " + (setting.empty() ? "" : setting + " has ") +
         std::to_string(least->conditions.front().pairs) + " of " +
         std::to_string(least->planned_pairs) + " pairs)";
}

}  // namespace

const std::string_view kHowToReadFindings =
    "One row per experiment and model. A cell carries the value when sparse-global has more "
    "aligned than anti-aligned pairs with a sign test p < 0.05 (and its sparse-local control is "
    "exact); ties, whose answers lie within the noise floor, count for neither side and stay in "
    "the recovery's pairs, so they can only weaken a cell. The verdict follows the paper's shape: "
    "the carrier table and the distance curve "
    "reproduce when some cell carries the value; the construction sweep when some construction "
    "carries it and the best construction's recovery interval lies above the worst one's; the "
    "payload types when binary payloads carry it and 3-digit "
    "numbers do not. An experiment that does not reproduce is not testable on a model when "
    "visible, the ceiling, moves no cell it rests on (binary payloads for the payload types) "
    "toward the donor by the same test: the model does not answer from the source even when it "
    "can read it, so its absence after eviction says nothing. A verdict marked incomplete rests on "
    "the pairs stored so far by a run that was stopped before its planned pairs (probe "
    "--resume continues it).";

Table findings_table(const std::vector<CellGroup>& groups) {
  Table table;
  table.prose = true;
  table.header = {
      "model",  "experiment", "the paper", "cells carrying the value", "best cell (sparse-global)",
      "verdict"};
  for (const CellGroup& group : groups) {
    const analysis::Finding finding = analysis::assess(group);
    const ConditionResult* result = find_condition(*finding.best, probe::kSparseGlobal);
    const std::string setting = setting_label(*finding.best);
    const std::string incomplete = incomplete_note(finding);
    table.rows.push_back(
        {group.model, group.scenario, group.finding,
         std::to_string(finding.carrying) + " of " + std::to_string(group.cells.size()),
         result == nullptr ? std::string(kNone)
                           : (setting.empty() ? "" : setting + ": ") + recovery_cell(result) +
                                 ", p = " + format_p_value(result->sign_test_p),
         finding.verdict + incomplete});
    table.flagged.push_back(!incomplete.empty());
  }
  return table;
}

std::string recovery_sentence(const ConditionResult& result) {
  if (result.pairs == 0) return result.condition + " has no pairs";
  return result.condition + " recovered " + format_estimate(result.recovery) + " of " +
         std::to_string(result.pairs) + " pairs, " + format_counts(result.aligned, result.anti) +
         " aligned:anti, p = " + format_p_value(result.sign_test_p);
}

std::string invalid_sentence(const CellResult& cell) {
  const std::string where = cell.model + " · " + cell_label(cell) + ": INVALID — ";
  const ConditionResult* control = find_condition(cell, probe::kSparseLocal);
  if (control == nullptr) {
    return where +
           "the results store marked this cell invalid; a bug in the harness, not a finding.";
  }
  const int64_t moved = control->aligned + control->anti + control->other;
  return where + "sparse-local moved " + std::to_string(moved) + " of " +
         std::to_string(control->pairs) + " pairs (" +
         format_counts(control->aligned, control->anti) +
         " aligned:anti) although its served caches are identical; a bug in the harness, not a "
         "finding.";
}

// Names the best and worst cells by the ranking the tables use (recovery,
// then margin).
std::string sweep_sentence(const CellGroup& group) {
  const auto measured = static_cast<size_t>(std::count_if(
      group.cells.begin(), group.cells.end(),
      [](const CellResult* c) { return find_condition(*c, probe::kSparseGlobal) != nullptr; }));
  if (measured < 2) return "";
  const CellResult& worst = *analysis::worst_cell(group);
  const CellResult& best = *analysis::best_cell(group);
  return "sparse-global recovery ranged from " +
         format_estimate(find_condition(worst, probe::kSparseGlobal)->recovery) + " (" +
         setting_label(worst) + ") to " +
         format_estimate(find_condition(best, probe::kSparseGlobal)->recovery) + " (" +
         setting_label(best) + ") across " + std::to_string(measured) + " " +
         sweep_noun(group.cells.front()->suite, measured) + ".";
}

std::string landing_sentence(const LandingMap& map) {
  std::string roots;
  for (const LandingEvent& event : map.events) {
    if (event.is_root) roots += (roots.empty() ? "" : ", ") + event.id;
  }
  std::string edges;
  for (const LandingEdge& edge : map.edges) {
    if (!edge.is_reference) continue;
    edges += (edges.empty() ? "" : ", ") + edge.from + " → " + edge.to + " (" +
             format_estimate(edge.effect) + ")";
  }
  const std::string margin =
      "Over " + std::to_string(map.pairs) + " pairs the sparse-global margin was " +
      format_margin(map.full_margin) +
      (map.full_margin.low > 0.0 ? "" : ", not reliably above zero: shares of it are noise") + ". ";
  return margin + "Roots: " + (roots.empty() ? "none" : roots) +
         ". Reference edges: " + (edges.empty() ? "none" : edges) + ".";
}

std::string token_sentence(const LandingMap& map) {
  if (map.tokens.empty()) return "";
  std::string text = "Token effects in " + map.heat_event + ": ";
  for (size_t i = 0; i < map.tokens.size(); ++i) {
    text += (i == 0 ? "“" : ", “") + visible_whitespace(map.tokens[i].piece) + "” " +
            format_percent(map.tokens[i].effect);
  }
  return text + ".";
}

Table condition_table(const CellResult& cell) {
  Table table;
  table.header = {"condition",       "pairs",       "aligned:anti",      "unmoved",
                  "other",           "ties (near)", "recovery [95% CI]", "sign test p",
                  "margin [95% CI]", "accuracy"};
  for (const ConditionResult& result : cell.conditions) {
    const bool flagged = !cell.valid && result.condition == probe::kSparseLocal;
    table.rows.push_back(
        {result.condition + (flagged ? " — INVALID" : ""), std::to_string(result.pairs),
         format_counts(result.aligned, result.anti), std::to_string(result.unmoved),
         std::to_string(result.other), str_cat(result.ties, " (", result.near_tie_floor, ")"),
         format_estimate(result.recovery), format_p_value(result.sign_test_p),
         format_margin(result.margin),
         result.accuracy ? format_estimate(*result.accuracy) : std::string(kNone)});
    table.flagged.push_back(flagged);
  }
  return table;
}

Table aligned_anti_table(const std::vector<CellGroup>& groups) {
  std::vector<const CellResult*> cells;
  for (const CellGroup& group : groups)
    cells.insert(cells.end(), group.cells.begin(), group.cells.end());
  const std::vector<std::string> conditions = condition_names(cells);
  Table table;
  table.header = {"model", "scenario"};
  for (const std::string& condition : conditions)
    table.header.push_back(condition + " aligned:anti");
  table.header.emplace_back("sparse-global recovery");
  for (const CellResult* cell : cells) {
    std::vector<std::string> row = {cell->model, cell_label(*cell) + invalid_marker(*cell)};
    for (const std::string& condition : conditions) {
      const ConditionResult* result = find_condition(*cell, condition);
      row.push_back(result != nullptr ? format_counts(result->aligned, result->anti)
                                      : std::string(kNone));
    }
    const ConditionResult* sparse_global = find_condition(*cell, probe::kSparseGlobal);
    row.push_back(sparse_global != nullptr ? format_estimate(sparse_global->recovery)
                                           : std::string(kNone));
    table.rows.push_back(std::move(row));
    table.flagged.push_back(!cell->valid);
  }
  return table;
}

Table ranking_table(const CellGroup& group) {
  Table table;
  table.header = {"rank",        "construction", "sparse-global recovery", "aligned:anti",
                  "sign test p", "margin",       "no-carrier recovery",    "visible recovery"};
  for (size_t i = 0; i < group.cells.size(); ++i) {
    const CellResult& cell = *group.cells[i];
    const ConditionResult* sparse_global = find_condition(cell, probe::kSparseGlobal);
    const ConditionResult* no_carrier = find_condition(cell, probe::kNoCarrier);
    const ConditionResult* visible = find_condition(cell, probe::kVisible);
    const std::string none(kNone);
    table.rows.push_back(
        {std::to_string(i + 1), cell.construction + invalid_marker(cell),
         sparse_global != nullptr ? format_estimate(sparse_global->recovery) : none,
         sparse_global != nullptr ? format_counts(sparse_global->aligned, sparse_global->anti)
                                  : none,
         sparse_global != nullptr ? format_p_value(sparse_global->sign_test_p) : none,
         sparse_global != nullptr ? format_margin(sparse_global->margin) : none,
         no_carrier != nullptr ? format_estimate(no_carrier->recovery) : none,
         visible != nullptr ? format_estimate(visible->recovery) : none});
    table.flagged.push_back(!cell.valid);
  }
  return table;
}

Table curve_table(const CellGroup& group) {
  const std::vector<std::string> conditions = condition_names(group.cells);
  Table table;
  table.header = {sweep_noun(group.cells.front()->suite, 1)};
  for (const std::string& condition : conditions)
    table.header.push_back(condition + " recovery (aligned:anti)");
  for (const CellResult* cell : group.cells) {
    std::vector<std::string> row = {setting_value(*cell) + invalid_marker(*cell)};
    for (const std::string& condition : conditions)
      row.push_back(recovery_cell(find_condition(*cell, condition)));
    table.rows.push_back(std::move(row));
    table.flagged.push_back(!cell->valid);
  }
  return table;
}

Table comparison_table(const ModelComparison& comparison) {
  Table table;
  const bool sweep = comparison.category_kind != "condition";
  table.header = {comparison.category_kind + (sweep ? " (sparse-global recovery)" : "")};
  table.header.insert(table.header.end(), comparison.models.begin(), comparison.models.end());
  for (size_t c = 0; c < comparison.categories.size(); ++c) {
    std::vector<std::string> row = {comparison.categories[c]};
    bool flagged = false;
    for (const ComparedResult& compared : comparison.results[c]) {
      const bool invalid = compared.cell != nullptr && !compared.cell->valid;
      row.push_back(recovery_cell(compared.result) + (invalid ? " INVALID" : ""));
      flagged = flagged || invalid;
    }
    table.rows.push_back(std::move(row));
    table.flagged.push_back(flagged);
  }
  return table;
}

Table landing_events_table(const LandingMap& map) {
  Table table;
  table.header = {"event", "role", "landing", "transplant shift toward A [95% CI]", "aligned:anti"};
  for (const LandingEvent& event : map.events) {
    const std::string landing = event.is_source ? "source (evicted)" : event.is_root ? "root" : "";
    table.rows.push_back({event.id, event.role, landing, format_estimate(event.shift),
                          format_counts(event.aligned, event.anti)});
    table.flagged.push_back(false);
  }
  return table;
}

Table landing_edges_table(const LandingMap& map) {
  Table table;
  table.header = {"edge (attends to)", "reference edge", "drop in recovery when masked [95% CI]"};
  for (const LandingEdge& edge : map.edges) {
    table.rows.push_back({edge.from + " → " + edge.to, edge.is_reference ? "yes" : "no",
                          format_estimate(edge.effect)});
    table.flagged.push_back(false);
  }
  return table;
}

Table layer_table(const LandingMap& map) {
  Table table;
  table.header = {"layers", "transplant shift toward A [95% CI]"};
  for (const LayerEffect& layer : map.layers) {
    table.rows.push_back({layer.label, format_estimate(layer.effect)});
    table.flagged.push_back(false);
  }
  return table;
}

Table runs_table(const std::vector<RunInfo>& runs) {
  Table table;
  table.header = {"model",   "scenario",          "status",       "pairs",    "shard",
                  "seed",    "threads",           "started",      "finished", "wall time",
                  "eventkv", "model fingerprint", "scenario hash"};
  for (const RunInfo& run : runs) {
    const std::string shard = run.shard_count > 1 ? std::to_string(run.shard_index) + " of " +
                                                        std::to_string(run.shard_count)
                                                  : std::string(kNone);
    const std::string status = run.resumed ? run.status + ", resumed" : run.status;
    table.rows.push_back({run.model, run.scenario, status, std::to_string(run.pairs), shard,
                          std::to_string(run.seed), std::to_string(run.threads), run.started_at,
                          run.finished_at.empty() ? std::string(kNone) : run.finished_at,
                          format_fixed(run.wall_seconds, 1) + " s",
                          // A fast run says so; exact, the default, goes unsaid.
                          run.precision == "exact"
                              ? run.git_version
                              : run.git_version + " --precision " + run.precision,
                          run.model_fingerprint, run.scenario_hash});
    table.flagged.push_back(run.status != "complete");
  }
  return table;
}

}  // namespace eventkv::report
