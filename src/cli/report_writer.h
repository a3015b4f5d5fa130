// Writes the report files of a results database (used by report and suite).
#pragma once

#include <string>

namespace eventkv::cli {

// Empty paths are skipped; each written path is printed. Throws Error when
// the database does not exist.
void write_reports(const std::string& db_path, const std::string& html_path,
                   const std::string& markdown_path);

}  // namespace eventkv::cli
