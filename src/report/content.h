// What the report says in words and tables, as plain text: the HTML page and
// the markdown document render the same tables and sentences, each in its own
// markup. Every number here is formatted from ReportData; none is written by
// hand.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/experiments.h"
#include "report/report_data.h"
#include "report/sections.h"

namespace eventkv::report {

// Rows of plain-text cells; the renderers escape them.
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> flagged;  // per row: an invalid result or an incomplete run, shown loudly
  bool prose = false;         // cells are sentences: they wrap, so the table fits the page
};

// The short guides at the top of the report and of the landing section.
extern const std::string_view kHowToRead;
extern const std::string_view kHowToReadLanding;
extern const std::string_view kHowToReadFindings;

// "sparse-global recovered 51% [41%, 61%] of 100 pairs, 51:3 aligned:anti, p = 1.2e-12".
std::string recovery_sentence(const ConditionResult& result);

// Why a cell is invalid: "model · scenario: INVALID, sparse-local moved 2 of 100 pairs ...".
std::string invalid_sentence(const CellResult& cell);

// The spread of a sweep: "sparse-global recovery ranged from 6% (ok) to 51% (noted) across 12
// constructions." Empty when fewer than two of its cells have a sparse-global result.
std::string sweep_sentence(const analysis::CellGroup& group);

// "Roots: carrier. Reference edges: carrier → src (45% [30%, 60%])."
std::string landing_sentence(const LandingMap& map);

// Tokens of the heat strip in order with their effects: "“Done” 3%, “·—” 1%, ...".
std::string token_sentence(const LandingMap& map);

// Every condition of one cell: counts, recovery, sign test, margin, accuracy.
Table condition_table(const CellResult& cell);

// What reproduced: per experiment and model, the cells where sparse-global
// carried the value, the best cell, and the verdict against the paper's shape
// (analysis/findings.h).
Table findings_table(const std::vector<analysis::CellGroup>& groups);

// The paper's aligned:anti table: one row per cell, one column per condition.
Table aligned_anti_table(const std::vector<analysis::CellGroup>& groups);

// A construction sweep's cells ranked by sparse-global recovery.
Table ranking_table(const analysis::CellGroup& group);

// A payload or distance sweep: one row per setting, recovery per condition.
Table curve_table(const analysis::CellGroup& group);

Table comparison_table(const ModelComparison& comparison);

Table landing_events_table(const LandingMap& map);
Table landing_edges_table(const LandingMap& map);
Table layer_table(const LandingMap& map);

Table runs_table(const std::vector<RunInfo>& runs);

}  // namespace eventkv::report
