// The report renderers on hand-built data (tests/report/sample_report.h):
// structure, escaping, omitted sections, invalid cells, number formats and
// determinism. The page in a real browser is checked by
// tests/report/chromium_check.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "analysis/experiments.h"
#include "probe/condition_names.h"
#include "report/charts.h"
#include "report/content.h"
#include "report/format.h"
#include "report/html.h"
#include "report/markdown.h"
#include "report/sections.h"
#include "report/svg.h"
#include "sample_report.h"

namespace eventkv::report {
namespace {

using analysis::CellGroup;
using analysis::find_condition;
using analysis::kConstructionSweep;
using analysis::kDistance;
using analysis::kPayloadTypes;
using analysis::kSweepSuites;
using analysis::single_cell_groups;
using analysis::sweep_groups;
using testing::sample_condition;
using testing::sample_report;

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The first problem with the page's element structure, or "" when every
// element is closed in order and every attribute quote is closed.
std::string structure_problem(const std::string& page) {
  static const std::set<std::string> kVoidElements = {"meta", "br", "img", "hr", "link"};
  std::vector<std::string> open;
  for (size_t at = page.find('<'); at != std::string::npos; at = page.find('<', at + 1)) {
    const size_t end = page.find('>', at);
    if (end == std::string::npos) return "unterminated tag at " + std::to_string(at);
    const std::string tag = page.substr(at + 1, end - at - 1);
    if (tag.rfind("!DOCTYPE", 0) == 0) continue;
    if (std::count(tag.begin(), tag.end(), '"') % 2 != 0)
      return "unbalanced quotes in <" + tag + ">";
    const bool closing = !tag.empty() && tag[0] == '/';
    const std::string rest = closing ? tag.substr(1) : tag;
    const std::string name = rest.substr(0, rest.find_first_of(" /\n"));
    if (name.empty() ||
        !std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(c) != 0; })) {
      return "stray '<' at " + std::to_string(at) + ": " + page.substr(at, 40);
    }
    if (closing) {
      if (open.empty() || open.back() != name)
        return "</" + name + "> closes " + (open.empty() ? "nothing" : open.back());
      open.pop_back();
    } else if (tag.back() != '/' && kVoidElements.count(name) == 0) {
      open.push_back(name);
    }
  }
  return open.empty() ? "" : "<" + open.back() + "> is never closed";
}

std::string section(const std::string& page, const std::string& id) {
  const size_t start = page.find("<section id=\"" + id + "\">");
  if (start == std::string::npos) return "";
  return page.substr(start, page.find("</section>", start) - start);
}

// Names with every character that must be escaped.
ReportData hostile_report() {
  ReportData data = sample_report();
  data.title = "Results <script>alert('x')</script> & \"more\"";
  data.cells[0].model = "<b>\"Q&A\" it's</b>";
  data.cells[0].construction = "a<b & c>d";
  data.cells[0].finding = "x < y & 'z'";
  data.landing[0].events[1].id = "<carrier>";
  data.landing[0].edges[0].from = "<carrier>";
  data.landing[0].tokens[0].piece = "<&>";
  data.runs[0].scenario = "run|with|pipes";
  return data;
}

TEST(ReportFormat, FormatsNumbers) {
  EXPECT_EQ(format_percent(0.514), "51%");
  EXPECT_EQ(format_percent(0.0), "0%");
  EXPECT_EQ(format_percent(-0.004), "0%");
  EXPECT_EQ(format_percent(-0.12), "-12%");
  EXPECT_EQ(format_estimate({0.51, 0.4134801193, 0.6057800107}), "51% [41%, 61%]");
  EXPECT_EQ(format_p_value(1.0), "1");
  EXPECT_EQ(format_p_value(0.05688793364098079), "0.057");
  EXPECT_EQ(format_p_value(0.0039), "0.0039");
  EXPECT_EQ(format_p_value(3.1554436208840472e-30), "3.2e-30");
  EXPECT_EQ(format_p_value(0.0), "< 1e-300");
  EXPECT_EQ(format_margin({1.234, 0.8, 1.7}), "1.23 [0.80, 1.70]");
  EXPECT_EQ(format_fixed(-0.01, 1), "0.0");
  EXPECT_EQ(format_counts(99, 0), "99:0");
}

TEST(ReportFormat, EscapesText) {
  EXPECT_EQ(escape_xml("<a href=\"x\">Q&A 'n'</a>"),
            "&lt;a href=&quot;x&quot;&gt;Q&amp;A &#39;n&#39;&lt;/a&gt;");
  EXPECT_EQ(escape_markdown("a|b *c* <d> [e](f) _g_\nh"),
            "a\\|b \\*c\\* \\<d\\> [e]\\(f) \\_g\\_ h");
  EXPECT_EQ(escape_markdown("#1 [41%, 61%]"), "\\#1 [41%, 61%]");
  EXPECT_EQ(visible_whitespace(" a\nb\t"), "·a↵b→");
}

TEST(ReportFormat, FitsTextWithoutSplittingCharacters) {
  EXPECT_EQ(fit_text("short", 12.0, 200.0), "short");
  const std::string cut = fit_text("ééééééééééééééééééé", 10.0, 40.0);
  EXPECT_EQ(cut, "ééééé…");
  EXPECT_LE(text_width(cut, 10.0), 40.0);
  EXPECT_EQ(text_width("你好", 10.0), 20.0);
}

TEST(ReportSvg, DivergingColourEnds) {
  EXPECT_EQ(diverging_colour(0.0), "#FFFFFF");
  EXPECT_EQ(diverging_colour(1.0), "#D55E00");
  EXPECT_EQ(diverging_colour(-3.0), "#0072B2");
}

TEST(ReportSvg, LineChartBreaksAtMissingPoints) {
  SeriesChart chart;
  chart.heading.title = "t";
  chart.categories = {"a", "b", "c", "d"};
  chart.series.push_back(
      {"s",
       "#000000",
       {Estimate{0.5, 0.4, 0.6}, Estimate{0.6, 0.5, 0.7}, std::nullopt, Estimate{0.2, 0.1, 0.3}}});
  const std::string svg = line_chart(chart);
  EXPECT_EQ(count(svg, "<path d=\"M "), 1u);
  EXPECT_EQ(count(svg, " M "), 1u);  // the second run of points starts a new subpath
  EXPECT_EQ(count(svg, "<circle"), 3u);
  EXPECT_EQ(structure_problem(svg), "");
}

TEST(ReportSvg, FittedAxisShowsNegativeEffects) {
  SeriesChart chart;
  chart.heading.title = "layers";
  chart.fit_range = true;
  chart.categories = {"L0", "L1"};
  chart.series.push_back(
      {"", "#000000", {Estimate{-0.08, -0.12, -0.03}, Estimate{0.3, 0.25, 0.35}}});
  const std::string svg = grouped_bar_chart(chart);
  EXPECT_NE(svg.find(">-20%<"), std::string::npos);
  EXPECT_NE(svg.find(">40%<"), std::string::npos);
  EXPECT_EQ(svg.find(">100%<"), std::string::npos);
  EXPECT_EQ(count(svg, "<rect"), 2u);  // no legend for one unnamed series
}

TEST(ReportSvg, BarChartDrawsReferenceAndFlags) {
  BarChart chart;
  chart.heading = {"t", {}, "INVALID: x"};
  chart.bars.push_back({"ok", {0.5, 0.4, 0.6}, "#000000", "5:0", false});
  chart.bars.push_back({"bad", {0.1, 0.0, 0.2}, "#000000", "1:1", true});
  chart.reference = ReferenceLine{0.06, "baseline"};
  const std::string svg = horizontal_bar_chart(chart);
  EXPECT_NE(svg.find(">baseline 6%<"), std::string::npos);
  EXPECT_NE(svg.find(">10% [0%, 20%]  1:1  INVALID<"), std::string::npos);
  EXPECT_NE(svg.find(">INVALID: x<"), std::string::npos);
  EXPECT_EQ(structure_problem(svg), "");
}

TEST(ReportSections, OrdersSweeps) {
  const ReportData data = sample_report();
  const std::vector<CellGroup> payloads = sweep_groups(data, kPayloadTypes);
  ASSERT_EQ(payloads.size(), 1u);
  std::vector<std::string> order;
  for (const CellResult* cell : payloads[0].cells) order.push_back(cell->payload_type);
  EXPECT_EQ(order, (std::vector<std::string>{"binary", "categorical", "integer-1", "integer-2",
                                             "integer-3", "name"}));
  const std::vector<CellGroup> distances = sweep_groups(data, kDistance);
  ASSERT_EQ(distances.size(), 1u);
  EXPECT_EQ(distances[0].cells.front()->distance, 0);
  EXPECT_EQ(distances[0].cells.back()->distance, 32);
  const std::vector<CellGroup> constructions = sweep_groups(data, kConstructionSweep);
  ASSERT_EQ(constructions.size(), 2u);
  for (const CellGroup& group : constructions) {
    for (size_t i = 1; i < group.cells.size(); ++i) {
      EXPECT_GE(find_condition(*group.cells[i - 1], probe::kSparseGlobal)->recovery.value,
                find_condition(*group.cells[i], probe::kSparseGlobal)->recovery.value);
    }
  }
  // Four carrier kinds and the construction sweep ran on both models; payloads and distances on
  // one.
  EXPECT_EQ(model_comparisons(data).size(), 5u);
}

TEST(ReportContent, FindingsFollowThePapersShape) {
  ReportData data = sample_report();
  std::vector<CellGroup> groups = single_cell_groups(data);
  for (const std::string_view suite : kSweepSuites) {
    const std::vector<CellGroup> sweeps = sweep_groups(data, suite);
    groups.insert(groups.end(), sweeps.begin(), sweeps.end());
  }
  const Table table = findings_table(groups);
  ASSERT_EQ(table.rows.size(), 6u);  // carrier table and sweep on 2 models, payloads, distance
  for (const auto& row : table.rows) EXPECT_EQ(row.back(), "reproduced") << row[0] << " " << row[1];
  // The invalid cell of the second model's carrier table does not count as carrying.
  EXPECT_EQ(table.rows[1][3], "3 of 4");
  EXPECT_EQ(table.rows[0][4].rfind("confirmation", 0), 0u);
  // Payloads: when 3-digit numbers carry the value too, the paper's shape is gone.
  for (CellResult& cell : data.cells) {
    if (cell.payload_type == "integer-3")
      cell.conditions[1] = sample_condition("sparse-global", 200, 90, 2, 100, 1.0);
  }
  const Table changed = findings_table(sweep_groups(data, kPayloadTypes));
  ASSERT_EQ(changed.rows.size(), 1u);
  EXPECT_EQ(changed.rows[0].back(), "not reproduced");
  // A sweep whose constructions all recover about the same does not reproduce the spread.
  for (CellResult& cell : data.cells) {
    if (cell.suite == kConstructionSweep)
      cell.conditions[1] = sample_condition("sparse-global", 200, 60, 1, 139, 1.0);
  }
  for (const auto& row : findings_table(sweep_groups(data, kConstructionSweep)).rows)
    EXPECT_EQ(row.back(), "not reproduced");
}

TEST(ReportContent, FindingsWithoutACeilingAreNotTestable) {
  ReportData data = sample_report();
  // The model ignores even the visible source in every construction but one.
  for (CellResult& cell : data.cells) {
    if (cell.suite != kConstructionSweep) continue;
    cell.conditions[0] = sample_condition("visible", 200, 3, 6, 191, 0.0);
    cell.conditions[1] = sample_condition("sparse-global", 200, 1, 1, 198, 0.0);
  }
  for (const auto& row : findings_table(sweep_groups(data, kConstructionSweep)).rows)
    EXPECT_EQ(row.back(), "not testable (visible does not move answers)");
  // One construction with a ceiling makes that model's sweep testable.
  CellResult& one = *std::find_if(data.cells.begin(), data.cells.end(), [](const CellResult& c) {
    return c.suite == kConstructionSweep;
  });
  one.conditions[0] = sample_condition("visible", 200, 40, 2, 158, 0.5);
  for (const auto& row : findings_table(sweep_groups(data, kConstructionSweep)).rows) {
    EXPECT_EQ(row.back(), row[0] == one.model ? "not reproduced"
                                              : "not testable (visible does not move answers)");
  }
  // Payload types rest on binary payloads: without their ceiling the shape cannot be tested,
  // even when other payload types have one.
  for (CellResult& cell : data.cells) {
    if (cell.payload_type == "binary") {
      cell.conditions[0] = sample_condition("visible", 200, 2, 1, 197, 0.0);
      cell.conditions[1] = sample_condition("sparse-global", 200, 0, 0, 200, 0.0);
    }
  }
  EXPECT_EQ(findings_table(sweep_groups(data, kPayloadTypes)).rows[0].back(),
            "not testable (visible does not move answers)");
}

TEST(ReportContent, FindingsOfAnUnfinishedRunSayHowFarItGot) {
  ReportData data = sample_report();
  for (const auto& row : findings_table(sweep_groups(data, kDistance)).rows)
    EXPECT_EQ(row.back(), "reproduced");
  // The distance run was stopped after 57 of its 200 pairs at one distance, 58 at the others.
  for (CellResult& cell : data.cells) {
    if (cell.suite != kDistance) continue;
    const int64_t pairs = cell.distance == 0 ? 57 : 58;
    for (ConditionResult& c : cell.conditions) {
      const int64_t aligned = c.aligned * pairs / 200;
      c = sample_condition(c.condition, pairs, aligned, 0, pairs - aligned, 1.0);
    }
  }
  const Table table = findings_table(sweep_groups(data, kDistance));
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0].back(), "reproduced (incomplete: distance 0 has 57 of 200 pairs)");
  EXPECT_TRUE(table.flagged[0]);
  // Cells without a planned count are never marked.
  for (CellResult& cell : data.cells) cell.planned_pairs = 0;
  EXPECT_FALSE(findings_table(sweep_groups(data, kDistance)).flagged[0]);
}

TEST(ReportHtml, IsWellFormed) {
  EXPECT_EQ(structure_problem(render_html(sample_report())), "");
  EXPECT_EQ(structure_problem(render_html(hostile_report())), "");
  EXPECT_EQ(structure_problem(render_html(ReportData{})), "");
}

TEST(ReportHtml, DrawsOneSvgPerChart) {
  const std::string page = render_html(sample_report());
  // 8 carrier-table cells, 2 construction rankings, 1 payload and 1 distance
  // curve, 5 model comparisons, and a landing map with its layer profile and
  // token strip.
  EXPECT_EQ(count(page, "<svg"), 20u);
  EXPECT_EQ(count(page, "</svg>"), 20u);
  EXPECT_EQ(count(section(page, "recovery"), "<svg"), 8u);
  EXPECT_EQ(count(section(page, "constructions"), "<svg"), 2u);
  EXPECT_EQ(count(section(page, "payload"), "<svg"), 1u);
  EXPECT_EQ(count(section(page, "distance"), "<svg"), 1u);
  EXPECT_EQ(count(section(page, "models"), "<svg"), 5u);
  EXPECT_EQ(count(section(page, "landing"), "<svg"), 3u);
  EXPECT_NE(section(page, "runs").find("interrupted"), std::string::npos);
}

TEST(ReportHtml, IsSelfContained) {
  const std::string page = render_html(sample_report());
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("url("), std::string::npos);
  EXPECT_EQ(count(page, "https:"), 0u);
  EXPECT_EQ(count(page, "http:"), count(page, "xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_NE(page.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
}

TEST(ReportHtml, EscapesNames) {
  const std::string page = render_html(hostile_report());
  EXPECT_EQ(page.find("<script>"), std::string::npos);
  EXPECT_EQ(page.find("<b>"), std::string::npos);
  EXPECT_EQ(page.find("<carrier>"), std::string::npos);
  EXPECT_NE(page.find("<title>Results &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; "
                      "&quot;more&quot;</title>"),
            std::string::npos);
  EXPECT_NE(page.find("&lt;b&gt;&quot;Q&amp;A&quot; it&#39;s&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(page.find("a&lt;b &amp; c&gt;d"), std::string::npos);
  EXPECT_NE(page.find("&lt;carrier&gt;"), std::string::npos);
  EXPECT_NE(page.find(">&lt;&amp;&gt;<"), std::string::npos);  // the token in the heat strip
}

TEST(ReportHtml, OmitsEmptySections) {
  ReportData data;
  data.title = "empty";
  EXPECT_EQ(count(render_html(data), "<svg"), 0u);
  EXPECT_NE(render_html(data).find("no results yet"), std::string::npos);
  EXPECT_EQ(render_html(data).find("<section id=\"runs\">"), std::string::npos);

  data.landing.push_back(sample_report().landing[0]);
  data.landing[0].layers.clear();
  data.landing[0].tokens.clear();
  const std::string page = render_html(data);
  EXPECT_EQ(count(page, "<svg"), 1u);
  EXPECT_EQ(page.find("no results yet"), std::string::npos);
  for (const std::string id :
       {"recovery", "constructions", "payload", "distance", "models", "runs"}) {
    EXPECT_EQ(page.find("id=\"" + id + "\""), std::string::npos) << id;
    EXPECT_EQ(page.find("href=\"#" + id + "\""), std::string::npos) << id;
  }
  EXPECT_NE(page.find("<section id=\"landing\">"), std::string::npos);
  EXPECT_EQ(page.find("Layer profile"), std::string::npos);
  EXPECT_EQ(page.find("Token heat"), std::string::npos);
}

TEST(ReportHtml, DrawsNoEmptyCharts) {
  ReportData data;
  CellResult cell;
  cell.model = "m";
  cell.scenario = "no conditions yet";
  cell.suite = "carrier-table";
  data.cells.push_back(cell);
  cell.suite = "construction-sweep";
  data.cells.push_back(cell);
  cell.suite = "distance";
  data.cells.push_back(cell);
  const std::string page = render_html(data);
  EXPECT_EQ(count(page, "<svg"), 0u);
  EXPECT_EQ(structure_problem(page), "");
}

TEST(ReportHtml, FlagsInvalidCells) {
  const std::string page = render_html(sample_report());
  EXPECT_EQ(count(page, "<div class=\"alert\""), 2u);  // at the top and at the cell
  EXPECT_NE(page.find("Qwen2.5-0.5B-Instruct · hallway-light (summary): INVALID — sparse-local "
                      "moved 2 of 200 pairs"),
            std::string::npos);
  EXPECT_NE(page.find("<tr class=\"flagged\"><td>sparse-local — INVALID</td>"), std::string::npos);
  EXPECT_NE(page.find(">INVALID: sparse-local moved pairs — a bug in the harness, not a finding<"),
            std::string::npos);

  ReportData valid = sample_report();
  for (CellResult& cell : valid.cells) cell.valid = true;
  for (RunInfo& run : valid.runs) run.status = "complete";
  const std::string valid_page = render_html(valid);
  EXPECT_EQ(valid_page.find("class=\"alert\""), std::string::npos);
  EXPECT_EQ(valid_page.find("class=\"flagged\""), std::string::npos);
  EXPECT_EQ(valid_page.find("INVALID:"), std::string::npos);
  EXPECT_EQ(valid_page.find("— INVALID"), std::string::npos);
}

TEST(ReportHtml, IsDeterministic) {
  const ReportData data = sample_report();
  const std::string first = render_html(data);
  EXPECT_EQ(first, render_html(data));
  EXPECT_EQ(first, render_html(sample_report()));
  EXPECT_EQ(render_markdown(data), render_markdown(sample_report()));
}

TEST(ReportMarkdown, WritesConditionRowsAndSentences) {
  ReportData data;
  data.title = "one cell";
  CellResult cell;
  cell.model = "m";
  cell.scenario = "s";
  cell.suite = "carrier-table";
  cell.conditions.push_back(sample_condition("sparse-global", 100, 51, 3, 40, 0.5));
  cell.conditions.back().other = 4;
  cell.conditions.back().ties = 2;
  cell.conditions.back().near_tie_floor = 5;
  cell.conditions.push_back(sample_condition("sparse-local", 100, 0, 0, 100, 0.0));
  data.cells.push_back(cell);
  const std::string markdown = render_markdown(data);
  EXPECT_NE(markdown.find("| condition | pairs | aligned:anti | unmoved | other | ties (near) | "
                          "recovery [95% CI] | sign test p | "
                          "margin [95% CI] | accuracy |\n| --- |"),
            std::string::npos);
  EXPECT_NE(markdown.find("| sparse-global | 100 | 51:3 | 40 | 4 | 2 (5) | 51% [41%, 61%] | "
                          "2.9e-12 | 0.50 [0.20, 0.80] | — |"),
            std::string::npos);
  EXPECT_NE(markdown.find("| sparse-local | 100 | 0:0 | 100 | 0 | 0 (0) | 0% [0%, 4%] | 1 | 0.00 "
                          "[-0.30, 0.30] | — |"),
            std::string::npos);
  EXPECT_NE(markdown.find("s: sparse-global recovered 51% [41%, 61%] of 100 pairs, 51:3 "
                          "aligned:anti, p = 2.9e-12."),
            std::string::npos);
  EXPECT_NE(markdown.find("| m | s | 51:3 | 0:0 | 51% [41%, 61%] |"),
            std::string::npos);  // the aligned:anti table
  EXPECT_EQ(markdown.find("INVALID —"), std::string::npos);
  EXPECT_EQ(markdown.find("— INVALID"), std::string::npos);
  EXPECT_EQ(markdown.find("<svg"), std::string::npos);
}

TEST(ReportContent, SweepSentenceNamesTheRankingsEnds) {
  // Three distances with the same recovery: the margin decides, as in the ranking table.
  std::vector<CellResult> cells(3);
  const std::vector<double> margins = {0.02, 0.07, 0.01};
  for (size_t i = 0; i < cells.size(); ++i) {
    cells[i].suite = std::string(kDistance);
    cells[i].distance = static_cast<int>(i);
    cells[i].conditions.push_back(sample_condition("sparse-global", 200, 2, 1, 197, margins[i]));
  }
  CellGroup group;
  for (const CellResult& cell : cells) group.cells.push_back(&cell);
  EXPECT_EQ(sweep_sentence(group),
            "sparse-global recovery ranged from 1% [0%, 4%] (distance 2) to 1% [0%, 4%] "
            "(distance 1) across 3 distances.");
}

TEST(ReportMarkdown, RanksConstructionsAndSweeps) {
  const std::string markdown = render_markdown(sample_report());
  const size_t best = markdown.find("| 1 | Noted the new state. | 51% [44%, 58%] | 102:2 |");
  const size_t worst = markdown.find("| 12 | OK. | 6% [3%, 10%] | 12:0 |");
  ASSERT_NE(best, std::string::npos);
  ASSERT_NE(worst, std::string::npos);
  EXPECT_LT(best, worst);
  EXPECT_NE(
      markdown.find(
          "sparse-global recovery ranged from 6% [3%, 10%] (OK.) to 51% [44%, 58%] (Noted the new "
          "state.) across 12 constructions."),
      std::string::npos);
  EXPECT_NE(markdown.find("| binary | 95% [91%, 97%] (190:3) | 55% [48%, 62%] (110:2) |"),
            std::string::npos);
  EXPECT_NE(markdown.find("| 32 | 96% [92%, 98%] (192:3) | 15% [11%, 21%] (30:0) |"),
            std::string::npos);
  EXPECT_NE(markdown.find(
                "Roots: carrier, f2. Reference edges: carrier → src (41% [33%, 49%]), f2 → carrier "
                "(11% [6%, 17%])."),
            std::string::npos);
  EXPECT_NE(markdown.find("## Runs"), std::string::npos);
}

TEST(ReportMarkdown, RunsNameTheirShard) {
  ReportData data = sample_report();
  data.runs[0].shard_index = 1;
  data.runs[0].shard_count = 2;
  const std::string markdown = render_markdown(data);
  EXPECT_NE(markdown.find("| hallway-light | complete | 200 | 1 of 2 | 7 |"), std::string::npos);
  EXPECT_NE(markdown.find("| hallway-light-distance | complete | 200 | — | 7 |"),
            std::string::npos);
}

TEST(ReportMarkdown, MarksResumedRuns) {
  ReportData data = sample_report();
  data.runs[0].resumed = true;
  const std::string markdown = render_markdown(data);
  EXPECT_NE(markdown.find("| hallway-light | complete, resumed | 200 |"), std::string::npos);
  EXPECT_NE(markdown.find("| hallway-light-distance | complete | 200 |"), std::string::npos);
}

TEST(ReportMarkdown, FlagsInvalidCells) {
  const std::string markdown = render_markdown(sample_report());
  EXPECT_NE(markdown.find("> **⚠ Invalid results: a bug in the harness, not findings.**"),
            std::string::npos);
  EXPECT_NE(markdown.find("> - **Qwen2.5-0.5B-Instruct · hallway-light (summary): INVALID — "
                          "sparse-local moved 2 of "
                          "200 pairs (1:1 aligned:anti)"),
            std::string::npos);
  EXPECT_NE(markdown.find("| **sparse-local — INVALID** | **200** | **1:1** |"), std::string::npos);
}

TEST(ReportMarkdown, EscapesNames) {
  const std::string markdown = render_markdown(hostile_report());
  EXPECT_EQ(markdown.find("<script>"), std::string::npos);
  EXPECT_EQ(markdown.find("<b>"), std::string::npos);
  EXPECT_NE(markdown.find("# Results \\<script\\>alert('x')\\</script\\> \\& \"more\""),
            std::string::npos);
  EXPECT_NE(markdown.find("run\\|with\\|pipes"), std::string::npos);
}

}  // namespace
}  // namespace eventkv::report
