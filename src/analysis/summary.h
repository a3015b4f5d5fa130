// Statistics of stored runs, per cell and condition (SPEC section 2):
// aligned:anti:unmoved:other counts, recovery with its Wilson interval, the
// sign test, the mean paired logit margin with a bootstrap interval, and
// for visible and record the accuracy against the true values.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "report/report_data.h"
#include "store/results_db.h"

namespace eventkv::analysis {

// One condition's statistics over `pairs` (those lacking the condition are
// skipped); `seed` seeds the margin's bootstrap interval.
report::ConditionResult summarize_condition(std::string_view condition,
                                            const std::vector<const store::PairRecord*>& pairs,
                                            uint64_t seed);

// One CellResult per (construction, distance) of the run, in a stable order.
std::vector<report::CellResult> summarize_run(const store::RunRecord& run,
                                              const std::vector<store::PairRecord>& pairs);

report::RunInfo run_info(const store::RunRecord& run);

// Cells and run metadata of the database: per (model, scenario), the
// experiment of its newest run, with the pairs of all that experiment's runs
// (shards included) pooled.
report::ReportData collect_report(store::ResultsDb& db);

}  // namespace eventkv::analysis
