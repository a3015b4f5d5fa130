// The report as a markdown document (docs/results.md): the same sections,
// sentences and tables as the HTML page, without the charts.
#pragma once

#include <string>

#include "report/report_data.h"

namespace eventkv::report {

// Pure: the same data always gives the same bytes.
std::string render_markdown(const ReportData& data);

}  // namespace eventkv::report
