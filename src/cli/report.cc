// eventkv report --db FILE [-o report.html] [--markdown FILE]: the results
// database as one self-contained HTML page and/or a markdown document.
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/report_writer.h"

namespace eventkv::cli {

void add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "report", "Write the results as an HTML page with charts, and/or as markdown");
  auto db = std::make_shared<std::string>();
  auto html = std::make_shared<std::string>();
  auto markdown = std::make_shared<std::string>();
  cmd->add_option("--db", *db, "results database")->required();
  cmd->add_option("-o,--output", *html, "HTML file to write");
  cmd->add_option("--markdown", *markdown, "markdown file to write");
  cmd->callback([db, html, markdown] {
    const std::string page = html->empty() && markdown->empty() ? "results/report.html" : *html;
    write_reports(*db, page, *markdown);
  });
}

}  // namespace eventkv::cli
