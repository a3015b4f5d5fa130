// Writes the report files of a results database (used by report and suite).
#pragma once

#include <string>

#include "report/report_data.h"

namespace eventkv::cli {

// Empty paths are skipped; each written path is printed. The database is
// opened read-only; throws Error when it does not exist or is none. Returns
// what the reports show.
report::ReportData write_reports(const std::string& db_path, const std::string& html_path,
                                 const std::string& markdown_path);

}  // namespace eventkv::cli
