#include "report/html.h"

#include "report/document.h"
#include "report/format.h"

namespace eventkv::report {

namespace {

constexpr std::string_view kStyle = R"(
body { font-family: system-ui, "Segoe UI", "DejaVu Sans", sans-serif; color: #222; background: #fff;
       margin: 0; line-height: 1.45; }
header, main { max-width: 1040px; margin: 0 auto; padding: 0 24px; }
h1 { font-size: 1.8em; margin: 28px 0 4px; }
h2 { border-bottom: 2px solid #ddd; padding-bottom: 4px; margin-top: 44px; }
h3 { margin: 30px 0 4px; }
.meta { color: #666; margin: 0 0 12px; }
.finding { color: #444; font-style: italic; margin: 2px 0 10px; }
nav { margin: 12px 0; padding: 8px 0; border-top: 1px solid #eee; border-bottom: 1px solid #eee; }
nav a { margin-right: 16px; color: #0072B2; }
.chart { overflow-x: auto; margin: 10px 0; }
.chart svg { display: block; }
.table { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0 18px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
td { white-space: nowrap; }
td:nth-child(-n+2) { white-space: normal; }  /* names wrap, numbers do not */
table.prose td { white-space: normal; min-width: 6em; }  /* sentences wrap: the verdict stays in view */
th { background: #f3f3f3; }
tbody tr:nth-child(even) { background: #fafafa; }
tr.flagged td { background: #fde2e2; color: #8b0000; font-weight: bold; }
.alert { border: 3px solid #B00020; background: #fde2e2; color: #8b0000; padding: 8px 14px; margin: 16px 0;
         font-weight: bold; }
.alert ul { margin: 4px 0; padding-left: 20px; }
details { margin: 4px 0 16px; }
summary { cursor: pointer; color: #0072B2; }
@media (max-width: 700px) {  /* phones: narrower margins and cells */
  header, main { padding: 0 10px; }
  h1 { font-size: 1.4em; }
  nav a { display: inline-block; margin: 2px 12px 2px 0; }
  table { font-size: 12px; }
  th, td { padding: 2px 4px; }
  table.prose td, table.prose th { min-width: 0; overflow-wrap: anywhere; }
  table.prose td:last-child { min-width: 6.5em; overflow-wrap: normal; }  /* the verdict, whole */
}
)";

void write_html_table(std::string& out, const Table& table) {
  out += table.prose ? "<div class=\"table\"><table class=\"prose\">\n<thead><tr>"
                     : "<div class=\"table\"><table>\n<thead><tr>";
  for (const std::string& cell : table.header) out += "<th>" + escape_xml(cell) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (size_t r = 0; r < table.rows.size(); ++r) {
    out += table.flagged[r] ? "<tr class=\"flagged\">" : "<tr>";
    for (const std::string& cell : table.rows[r]) out += "<td>" + escape_xml(cell) + "</td>";
    out += "</tr>\n";
  }
  out += "</tbody>\n</table></div>\n";
}

void write_alert(std::string& out, const Block& block) {
  out += "<div class=\"alert\" role=\"alert\">&#9888; " + escape_xml(block.text) + "\n<ul>\n";
  for (const std::string& item : block.items) out += "<li>" + escape_xml(item) + "</li>\n";
  out += "</ul></div>\n";
}

void write_nav(std::string& out, const std::vector<Block>& blocks) {
  out += "<nav>";
  for (const Block& block : blocks) {
    if (block.kind == BlockKind::kSection) {
      out += "<a href=\"#" + escape_xml(block.id) + "\">" + escape_xml(block.text) + "</a>";
    }
  }
  out += "</nav>\n";
}

void write_block(std::string& out, const Block& block, bool* section_open) {
  switch (block.kind) {
    case BlockKind::kSection:
      if (*section_open) out += "</section>\n";
      out += "<section id=\"" + escape_xml(block.id) + "\">\n<h2>" + escape_xml(block.text) +
             "</h2>\n";
      *section_open = true;
      break;
    case BlockKind::kHeading:
      out += "<h3>" + escape_xml(block.text) + "</h3>\n";
      break;
    case BlockKind::kParagraph:
      out += "<p>" + escape_xml(block.text) + "</p>\n";
      break;
    case BlockKind::kFinding:
      out += "<p class=\"finding\">Tests: " + escape_xml(block.text) + "</p>\n";
      break;
    case BlockKind::kAlert:
      write_alert(out, block);
      break;
    case BlockKind::kTable:
      write_html_table(out, block.table);
      break;
    case BlockKind::kCollapsedTable:
      out += "<details><summary>" + escape_xml(block.text) + "</summary>\n";
      write_html_table(out, block.table);
      out += "</details>\n";
      break;
    case BlockKind::kChart:
      out += "<div class=\"chart\">\n" + block.svg + "</div>\n";
      break;
  }
}

}  // namespace

std::string render_html(const ReportData& data) {
  const std::vector<Block> blocks = build_document(data);
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'\">\n"
      "<title>" +
      escape_xml(data.title) + "</title>\n<style>" + std::string(kStyle) +
      "</style>\n</head>\n<body>\n<header>\n<h1>" + escape_xml(data.title) +
      "</h1>\n<p class=\"meta\">" + escape_xml(generated_sentence(data)) + "</p>\n";
  write_nav(out, blocks);
  out += "</header>\n<main>\n";
  bool section_open = false;
  for (const Block& block : blocks) write_block(out, block, &section_open);
  if (section_open) out += "</section>\n";
  out += "</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace eventkv::report
