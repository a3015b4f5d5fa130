#include "analysis/findings.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "probe/condition_names.h"

namespace eventkv::analysis {
namespace {

using report::CellResult;
using report::ConditionResult;

// A condition moves answers toward the donor: more aligned than anti pairs at
// sign-test p < 0.05, in a valid cell.
bool moves_toward_donor(const CellResult& cell, std::string_view condition) {
  const ConditionResult* result = find_condition(cell, condition);
  return cell.valid && result != nullptr && result->aligned > result->anti &&
         result->sign_test_p < 0.05;
}

bool carries(const CellResult& cell) {
  return moves_toward_donor(cell, probe::kSparseGlobal);
}

// The ceiling: with the source in view the model answers with its value. A cell
// without it cannot show what an evicted source leaves behind.
bool has_ceiling(const CellResult& cell) {
  return moves_toward_donor(cell, probe::kVisible);
}

const CellResult* find_payload(const CellGroup& group, std::string_view payload_type) {
  const auto match = std::find_if(group.cells.begin(), group.cells.end(), [&](const CellResult* c) {
    return c->payload_type == payload_type;
  });
  return match == group.cells.end() ? nullptr : *match;
}

// Sparse-global recovery, then margin: how cells rank (a cell without a
// sparse-global result ranks last).
std::pair<double, double> sparse_global_score(const CellResult* cell) {
  const ConditionResult* result = find_condition(*cell, probe::kSparseGlobal);
  return result == nullptr ? std::pair(-1.0, 0.0)
                           : std::pair(result->recovery.value, result->margin.value);
}

bool ranks_below(const CellResult* a, const CellResult* b) {
  return sparse_global_score(a) < sparse_global_score(b);
}

// The paper's shape per experiment (see findings.h).
std::string paper_shape(const CellGroup& group, size_t carrying) {
  const std::string_view suite = group.cells.front()->suite;
  if (suite == kPayloadTypes) {
    const CellResult* binary = find_payload(group, "binary");
    const CellResult* three_digits = find_payload(group, "integer-3");
    if (binary == nullptr || three_digits == nullptr)
      return "not tested (needs binary and integer-3)";
    return carries(*binary) && !carries(*three_digits) ? "reproduced" : "not reproduced";
  }
  if (suite == kConstructionSweep) {
    const ConditionResult* best = find_condition(*best_cell(group), probe::kSparseGlobal);
    const ConditionResult* worst = find_condition(*worst_cell(group), probe::kSparseGlobal);
    const bool spread =
        best != nullptr && worst != nullptr && best->recovery.low > worst->recovery.high;
    return carrying > 0 && spread ? "reproduced" : "not reproduced";
  }
  return carrying > 0 ? "reproduced" : "not reproduced";
}

// Whether the experiment can show its finding on this model: the cells the
// verdict rests on (binary payloads, or any cell elsewhere) have a ceiling.
bool testable(const CellGroup& group) {
  if (group.cells.front()->suite == kPayloadTypes) {
    const CellResult* binary = find_payload(group, "binary");
    return binary == nullptr || has_ceiling(*binary);
  }
  return std::any_of(group.cells.begin(), group.cells.end(),
                     [](const CellResult* c) { return has_ceiling(*c); });
}

std::string verdict(const CellGroup& group, size_t carrying) {
  std::string shape = paper_shape(group, carrying);
  if (shape == "not reproduced" && !testable(group))
    return "not testable (visible does not move answers)";
  return shape;
}

// Pairs a cell lacks while its run is unfinished (every condition is scored on the same pairs).
int64_t missing_pairs(const CellResult* cell) {
  return cell->conditions.empty() ? 0 : cell->planned_pairs - cell->conditions.front().pairs;
}

bool lacks_fewer_pairs(const CellResult* a, const CellResult* b) {
  return missing_pairs(a) < missing_pairs(b);
}

}  // namespace

const CellResult* best_cell(const CellGroup& group) {
  return *std::max_element(group.cells.begin(), group.cells.end(), ranks_below);
}

const CellResult* worst_cell(const CellGroup& group) {
  const CellResult* worst = best_cell(group);
  for (const CellResult* cell : group.cells) {
    if (find_condition(*cell, probe::kSparseGlobal) != nullptr && ranks_below(cell, worst))
      worst = cell;
  }
  return worst;
}

Finding assess(const CellGroup& group) {
  Finding finding;
  finding.carrying = static_cast<size_t>(std::count_if(
      group.cells.begin(), group.cells.end(), [](const CellResult* c) { return carries(*c); }));
  finding.best = best_cell(group);
  finding.verdict = verdict(group, finding.carrying);
  const CellResult* least =
      *std::max_element(group.cells.begin(), group.cells.end(), lacks_fewer_pairs);
  if (missing_pairs(least) > 0) finding.incomplete = least;
  return finding;
}

}  // namespace eventkv::analysis
