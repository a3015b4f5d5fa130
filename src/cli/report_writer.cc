#include "cli/report_writer.h"

#include <filesystem>
#include <iostream>

#include "analysis/summary.h"
#include "git_version.h"
#include "report/html.h"
#include "report/markdown.h"
#include "store/results_db.h"
#include "util/atomic_file.h"

namespace eventkv::cli {
namespace {

void write_text(const std::string& path, const std::string& text) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  write_file_atomic(path, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  std::cout << "wrote " << path << "\n";
}

}  // namespace

report::ReportData write_reports(const std::string& db_path, const std::string& html_path,
                                 const std::string& markdown_path) {
  store::ResultsDb db(db_path, store::Access::kReadOnly);
  report::ReportData data = analysis::collect_report(db);
  data.eventkv_version = EVENTKV_GIT_VERSION;
  if (!html_path.empty()) write_text(html_path, report::render_html(data));
  if (!markdown_path.empty()) write_text(markdown_path, report::render_markdown(data));
  return data;
}

}  // namespace eventkv::cli
