// The report as one self-contained HTML page: inline CSS and inline SVG
// charts, no scripts, nothing fetched (a Content-Security-Policy forbids it).
#pragma once

#include <string>

#include "report/report_data.h"

namespace eventkv::report {

// Pure: the same data always gives the same bytes.
std::string render_html(const ReportData& data);

}  // namespace eventkv::report
