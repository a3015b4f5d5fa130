#include "report/document.h"

#include "analysis/experiments.h"
#include "probe/condition_names.h"
#include "report/landing_charts.h"
#include "report/report_charts.h"
#include "report/sections.h"

namespace eventkv::report {

namespace {

using analysis::CellGroup;
using analysis::find_condition;
using analysis::kConstructionSweep;
using analysis::kDistance;
using analysis::kPayloadTypes;
using analysis::single_cell_groups;
using analysis::sweep_groups;

void add(std::vector<Block>& blocks, BlockKind kind, std::string text) {
  Block& block = blocks.emplace_back();
  block.kind = kind;
  block.text = std::move(text);
}

void add_section(std::vector<Block>& blocks, std::string id, std::string heading) {
  add(blocks, BlockKind::kSection, std::move(heading));
  blocks.back().id = std::move(id);
}

void add_table(std::vector<Block>& blocks, Table table, BlockKind kind = BlockKind::kTable,
               std::string summary = "") {
  add(blocks, kind, std::move(summary));
  blocks.back().table = std::move(table);
}

// A chart function returns "" when it has nothing to draw: no empty charts.
void add_chart(std::vector<Block>& blocks, std::string svg) {
  if (svg.empty()) return;
  add(blocks, BlockKind::kChart, "");
  blocks.back().svg = std::move(svg);
}

void add_alert(std::vector<Block>& blocks, std::vector<std::string> items) {
  if (items.empty()) return;
  add(blocks, BlockKind::kAlert, "Invalid results: a bug in the harness, not findings.");
  blocks.back().items = std::move(items);
}

std::vector<std::string> invalid_sentences(const std::vector<const CellResult*>& cells) {
  std::vector<std::string> sentences;
  for (const CellResult* cell : cells) {
    if (!cell->valid) sentences.push_back(invalid_sentence(*cell));
  }
  return sentences;
}

void add_group_heading(std::vector<Block>& blocks, const CellGroup& group) {
  add(blocks, BlockKind::kHeading, group.model + " · " + group.scenario);
  if (!group.finding.empty()) add(blocks, BlockKind::kFinding, group.finding);
}

void add_findings(std::vector<Block>& blocks, const ReportData& data) {
  const std::vector<CellGroup> groups = analysis::experiments(data);
  if (groups.empty()) return;
  add_section(blocks, "findings", "What reproduced");
  add(blocks, BlockKind::kParagraph, std::string(kHowToReadFindings));
  add_table(blocks, findings_table(groups));
}

void add_recovery(std::vector<Block>& blocks, const ReportData& data) {
  const std::vector<CellGroup> groups = single_cell_groups(data);
  if (groups.empty()) return;
  add_section(blocks, "recovery", "Recovery per condition");
  add(blocks, BlockKind::kParagraph,
      "Every condition of every cell that is not part of a sweep. The table is the paper's "
      "aligned:anti "
      "table; below it, each cell's recovery per condition with its counts, sign test and margin.");
  add_table(blocks, aligned_anti_table(groups));
  for (const CellGroup& group : groups) {
    add_group_heading(blocks, group);
    for (const CellResult* cell : group.cells) {
      add_alert(blocks, invalid_sentences({cell}));
      add_chart(blocks, condition_chart(*cell));
      if (const ConditionResult* result = find_condition(*cell, probe::kSparseGlobal)) {
        add(blocks, BlockKind::kParagraph,
            cell_label(*cell) + ": " + recovery_sentence(*result) + ".");
      }
      add_table(blocks, condition_table(*cell));
    }
  }
}

void add_sweep_text(std::vector<Block>& blocks, const CellGroup& group) {
  add_group_heading(blocks, group);
  add_alert(blocks, invalid_sentences(group.cells));
  const std::string spread = sweep_sentence(group);
  if (!spread.empty()) add(blocks, BlockKind::kParagraph, spread);
}

void add_constructions(std::vector<Block>& blocks, const ReportData& data) {
  const std::vector<CellGroup> groups = sweep_groups(data, kConstructionSweep);
  if (groups.empty()) return;
  add_section(blocks, "constructions", "Construction ranking");
  add(blocks, BlockKind::kParagraph,
      "Carrier constructions (phrasings that never state the value) ranked by sparse-global "
      "recovery. The "
      "dashed line is the no-carrier recovery of all constructions pooled: a construction above it "
      "carries "
      "the value.");
  for (const CellGroup& group : groups) {
    add_sweep_text(blocks, group);
    add_chart(blocks, ranking_chart(group));
    add_table(blocks, ranking_table(group));
    add_table(blocks, curve_table(group), BlockKind::kCollapsedTable,
              "Every condition per construction");
  }
}

void add_curves(std::vector<Block>& blocks, const ReportData& data, std::string_view suite) {
  const std::vector<CellGroup> groups = sweep_groups(data, suite);
  if (groups.empty()) return;
  if (suite == kPayloadTypes) {
    add_section(blocks, "payload", "Payload types");
    add(blocks, BlockKind::kParagraph,
        "Recovery by what the source carries, from binary states to 3-digit numbers and names.");
  } else {
    add_section(blocks, "distance", "Distance");
    add(blocks, BlockKind::kParagraph,
        "Recovery by the number of filler events between the carrier and the query.");
  }
  for (const CellGroup& group : groups) {
    add_sweep_text(blocks, group);
    add_chart(blocks, curve_chart(group));
    add_table(blocks, curve_table(group));
  }
}

void add_comparisons(std::vector<Block>& blocks, const ReportData& data) {
  const std::vector<ModelComparison> comparisons = model_comparisons(data);
  if (comparisons.empty()) return;
  add_section(blocks, "models", "Models compared");
  add(blocks, BlockKind::kParagraph,
      "Each scenario that ran on more than one model, side by side: whether an effect is universal "
      "or "
      "model-specific. Sweeps are compared on sparse-global recovery.");
  for (const ModelComparison& comparison : comparisons) {
    add(blocks, BlockKind::kHeading, comparison.scenario);
    if (!comparison.finding.empty()) add(blocks, BlockKind::kFinding, comparison.finding);
    add_chart(blocks, comparison_chart(comparison));
    add_table(blocks, comparison_table(comparison));
  }
}

void add_landing(std::vector<Block>& blocks, const ReportData& data) {
  if (data.landing.empty()) return;
  add_section(blocks, "landing", "Landing maps");
  add(blocks, BlockKind::kParagraph, std::string(kHowToReadLanding));
  for (const LandingMap& map : data.landing) {
    add(blocks, BlockKind::kHeading, map.model + " · " + map.scenario);
    add(blocks, BlockKind::kParagraph, landing_sentence(map));
    add_chart(blocks, landing_map_chart(map));
    add_chart(blocks, layer_chart(map));
    add_chart(blocks, token_heat_chart(map));
    if (!map.tokens.empty()) add(blocks, BlockKind::kParagraph, token_sentence(map));
    if (!map.events.empty())
      add_table(blocks, landing_events_table(map), BlockKind::kCollapsedTable, "Events");
    if (!map.edges.empty())
      add_table(blocks, landing_edges_table(map), BlockKind::kCollapsedTable, "Edges");
    if (!map.layers.empty())
      add_table(blocks, layer_table(map), BlockKind::kCollapsedTable, "Layers");
  }
}

void add_runs(std::vector<Block>& blocks, const ReportData& data) {
  if (data.runs.empty()) return;
  add_section(blocks, "runs", "Runs");
  add(blocks, BlockKind::kParagraph,
      "The runs whose results this report shows; a run that is not complete is marked. Wall "
      "time is the time spent computing, summed over resumes; a run marked resumed was stopped "
      "and continued later, so its started-to-finished span includes the pause.");
  add_table(blocks, runs_table(data.runs));
}

}  // namespace

std::vector<Block> build_document(const ReportData& data) {
  std::vector<Block> blocks;
  add_alert(blocks, invalid_sentences(invalid_cells(data)));
  add_section(blocks, "how-to-read", "How to read this");
  add(blocks, BlockKind::kParagraph, std::string(kHowToRead));
  const size_t before_results = blocks.size();
  add_findings(blocks, data);
  add_recovery(blocks, data);
  add_constructions(blocks, data);
  add_curves(blocks, data, kPayloadTypes);
  add_curves(blocks, data, kDistance);
  add_comparisons(blocks, data);
  add_landing(blocks, data);
  if (blocks.size() == before_results)
    add(blocks, BlockKind::kParagraph, "This report has no results yet.");
  add_runs(blocks, data);
  return blocks;
}

std::string generated_sentence(const ReportData& data) {
  return "Generated at " + data.generated_at + " by eventkv " + data.eventkv_version + ".";
}

}  // namespace eventkv::report
