// What each experiment found against the paper's shape: the report's "What
// reproduced" table and the suite's verdict lines. A cell carries the value
// when sparse-global has more aligned than anti-aligned pairs at sign-test
// p < 0.05 in a valid cell; the verdict follows the paper's shape: the carrier
// table and the distance curve reproduce when some cell carries the value,
// the construction sweep when some construction carries it and the best
// construction's recovery interval lies above the worst one's, the payload
// types when binary payloads carry it and 3-digit numbers do not. One that
// does not reproduce is not testable when visible, the ceiling, moves no cell
// it rests on (binary payloads for the payload types) by the same test.
#pragma once

#include <cstddef>
#include <string>

#include "analysis/experiments.h"
#include "report/report_data.h"

namespace eventkv::analysis {

// One experiment's result; the cells point into its group's.
struct Finding {
  size_t carrying = 0;                       // cells where sparse-global carries the value
  const report::CellResult* best = nullptr;  // ranked first (see best_cell)
  // reproduced | not reproduced | not tested (needs binary and integer-3) |
  // not testable (visible does not move answers)
  std::string verdict;
  // The cell furthest from its planned pairs while its run is unfinished, or
  // nullptr when every cell has them: the verdict rests on the pairs stored so far.
  const report::CellResult* incomplete = nullptr;
};

Finding assess(const CellGroup& group);

// The cell ranked first by sparse-global recovery, then margin (a cell
// without a sparse-global result ranks last); of equals, the one shown first.
const report::CellResult* best_cell(const CellGroup& group);

// The worst cell that has a sparse-global result.
const report::CellResult* worst_cell(const CellGroup& group);

}  // namespace eventkv::analysis
