// The report as an ordered list of blocks (headings, sentences, tables,
// charts), built once from ReportData. The HTML and markdown renderers only
// decide how each block is written, so both always say the same thing.
// Sections without data are left out.
#pragma once

#include <string>
#include <vector>

#include "report/content.h"
#include "report/report_data.h"

namespace eventkv::report {

enum class BlockKind {
  kSection,         // a top-level section: id, text = heading
  kHeading,         // a heading inside a section: text
  kParagraph,       // text
  kFinding,         // the paper finding a scenario tests: text
  kAlert,           // invalid results, shown loudly: text = headline, items = one line each
  kTable,           // table
  kCollapsedTable,  // table, shown folded in HTML; text = what it holds
  kChart,           // svg (markdown has no charts and skips it)
};

struct Block {
  BlockKind kind = BlockKind::kParagraph;
  std::string id;
  std::string text;
  std::vector<std::string> items;
  Table table;
  std::string svg;
};

std::vector<Block> build_document(const ReportData& data);

// "Generated at 2026-05-01T12:00:00Z by eventkv 0.3.0-12-gabc."
std::string generated_sentence(const ReportData& data);

}  // namespace eventkv::report
