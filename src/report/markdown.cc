#include "report/markdown.h"

#include "report/document.h"
#include "report/format.h"

namespace eventkv::report {

namespace {

std::string table_row(const std::vector<std::string>& cells, bool bold) {
  std::string row = "|";
  for (const std::string& cell : cells) {
    const std::string text = escape_markdown(cell);
    row += " " + (bold && !text.empty() ? "**" + text + "**" : text) + " |";
  }
  return row + "\n";
}

void write_markdown_table(std::string& out, const Table& table) {
  out += table_row(table.header, false);
  out += "|";
  for (size_t i = 0; i < table.header.size(); ++i) out += " --- |";
  out += "\n";
  for (size_t r = 0; r < table.rows.size(); ++r) out += table_row(table.rows[r], table.flagged[r]);
  out += "\n";
}

void write_block(std::string& out, const Block& block) {
  switch (block.kind) {
    case BlockKind::kSection:
      out += "## " + escape_markdown(block.text) + "\n\n";
      break;
    case BlockKind::kHeading:
      out += "### " + escape_markdown(block.text) + "\n\n";
      break;
    case BlockKind::kParagraph:
      out += escape_markdown(block.text) + "\n\n";
      break;
    case BlockKind::kFinding:
      out += "*Tests: " + escape_markdown(block.text) + "*\n\n";
      break;
    case BlockKind::kAlert:
      out += "> **⚠ " + escape_markdown(block.text) + "**\n>\n";
      for (const std::string& item : block.items) out += "> - **" + escape_markdown(item) + "**\n";
      out += "\n";
      break;
    case BlockKind::kTable:
      write_markdown_table(out, block.table);
      break;
    case BlockKind::kCollapsedTable:
      out += escape_markdown(block.text) + ":\n\n";
      write_markdown_table(out, block.table);
      break;
    case BlockKind::kChart:
      break;
  }
}

}  // namespace

std::string render_markdown(const ReportData& data) {
  std::string out = "# " + escape_markdown(data.title) + "\n\n" +
                    escape_markdown(generated_sentence(data)) + "\n\n";
  for (const Block& block : build_document(data)) write_block(out, block);
  return out;
}

}  // namespace eventkv::report
