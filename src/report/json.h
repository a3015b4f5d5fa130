// ReportData's cells and runs as JSON (eventkv probe --json, eventkv export).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "report/report_data.h"

namespace eventkv::report {

nlohmann::json cells_json(const std::vector<CellResult>& cells);
nlohmann::json runs_json(const std::vector<RunInfo>& runs);

}  // namespace eventkv::report
