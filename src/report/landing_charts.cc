#include "report/landing_charts.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "report/format.h"
#include "report/svg.h"

namespace eventkv::report {

namespace {

constexpr double kSmallSize = 11.0;

// Landing map.
constexpr double kEventSlot = 112.0;
constexpr double kNodeHeight = 40.0;
constexpr double kMaxArcHeight = 150.0;
constexpr double kArcEndInset = 10.0;  // arcs end beside a node's centre so both ends stay apart
constexpr double kMinEdgeWidth = 1.5;
constexpr double kEdgeWidthRange = 7.0;

// Token heat strip.
constexpr double kTokenHeight = 24.0;
constexpr double kTokenRowHeight = 48.0;
constexpr double kMinTokenWidth = 28.0;
constexpr double kMaxTokenWidth = 180.0;
constexpr double kTokenGap = 4.0;

double arc_height(double from_x, double to_x) {
  return std::min(kMaxArcHeight, 24.0 + 0.4 * std::abs(from_x - to_x));
}

// Index of the event with this id, or events.size().
size_t event_index(const LandingMap& map, const std::string& id) {
  const auto found = std::find_if(map.events.begin(), map.events.end(),
                                  [&](const LandingEvent& e) { return e.id == id; });
  return static_cast<size_t>(found - map.events.begin());
}

struct MapLayout {
  double width = 0.0;
  double slot = 0.0;
  double node_top = 0.0;  // arcs stand on this line
  double x_center(size_t event) const {
    return kChartMargin + slot * (static_cast<double>(event) + 0.5);
  }
};

// Draws one edge: an arc standing on the node row, an arrowhead at the
// attending event (information flows from the attended event into it).
void draw_edge(Svg& svg, const MapLayout& layout, const LandingEdge& edge, size_t from, size_t to,
               double max_effect) {
  const double direction = from > to ? 1.0 : -1.0;
  const double from_x = layout.x_center(from) - direction * kArcEndInset;
  const double to_x = layout.x_center(to) + direction * kArcEndInset;
  const double y = layout.node_top;
  const double height = arc_height(from_x, to_x);
  const double control_y =
      y - height * 4.0 / 3.0;  // a cubic with both controls here peaks at `height`
  const double width = kMinEdgeWidth + kEdgeWidthRange * std::abs(edge.effect.value) / max_effect;
  const std::string_view colour = edge.is_reference ? kVermillion : kGrey;
  svg.begin_tooltip(edge.from + " attends to " + edge.to + ": masking it drops recovery by " +
                    format_estimate(edge.effect) + (edge.is_reference ? " (reference edge)" : ""));
  svg.path("M " + coordinate(to_x) + " " + coordinate(y) + " C " + coordinate(to_x) + " " +
               coordinate(control_y) + " " + coordinate(from_x) + " " + coordinate(control_y) +
               " " + coordinate(from_x) + " " + coordinate(y),
           {colour, width, ""});
  const double head = 5.0 + width / 2.0;
  svg.path("M " + coordinate(from_x - head) + " " + coordinate(y - head * 1.4) + " L " +
               coordinate(from_x) + " " + coordinate(y) + " L " + coordinate(from_x + head) + " " +
               coordinate(y - head * 1.4),
           {colour, 2.0, ""});
  if (edge.is_reference) {
    svg.text((from_x + to_x) / 2.0, y - height - width / 2.0 - 4.0, format_estimate(edge.effect),
             {.size = kSmallSize, .anchor = Anchor::kMiddle, .bold = true, .colour = kVermillion});
  }
  svg.end_tooltip();
}

void draw_event(Svg& svg, const MapLayout& layout, const LandingEvent& event, size_t index) {
  const double node_width = layout.slot - 14.0;
  const double left = layout.x_center(index) - node_width / 2.0;
  const double top = layout.node_top;
  const double center = layout.x_center(index);
  LineStyle outline{kGrey, 1.0, ""};
  std::string_view fill = "#FFFFFF";
  std::string tag;
  if (event.is_source) {
    outline = {kVermillion, 2.0, "5 3"};
    fill = "#F2F2F2";
    tag = "source, evicted";
  } else if (event.is_root) {
    outline = {kBlue, 3.0, ""};
    fill = "#DCEBF6";
    tag = "ROOT";
  }
  svg.begin_tooltip(event.id + " (" + event.role + "): transplant shift toward A " +
                    format_estimate(event.shift) + ", " + format_counts(event.aligned, event.anti) +
                    " aligned:anti");
  svg.outlined_rect(left, top, node_width, kNodeHeight, fill, outline, 6.0);
  svg.text(center, top + 17.0, fit_text(event.id, 12.0, node_width - 8.0),
           {.anchor = Anchor::kMiddle, .bold = true});
  if (!tag.empty()) {
    svg.text(center, top + 32.0, tag,
             {.size = 10.0,
              .anchor = Anchor::kMiddle,
              .bold = true,
              .colour = event.is_source ? kVermillion : kBlue});
  }
  const TextStyle below{.size = kSmallSize, .anchor = Anchor::kMiddle, .colour = kFaint};
  svg.text(center, top + kNodeHeight + 15.0, fit_text(event.role, kSmallSize, layout.slot - 4.0),
           below);
  svg.text(center, top + kNodeHeight + 29.0,
           fit_text(format_estimate(event.shift), kSmallSize, layout.slot - 4.0),
           {.size = kSmallSize, .anchor = Anchor::kMiddle});
  svg.text(center, top + kNodeHeight + 43.0, format_counts(event.aligned, event.anti), below);
  svg.end_tooltip();
}

}  // namespace

std::string landing_map_chart(const LandingMap& map) {
  if (map.events.empty()) return "";
  MapLayout layout;
  const double events = static_cast<double>(std::max<size_t>(1, map.events.size()));
  layout.width = std::max(kChartWidth, 2.0 * kChartMargin + events * kEventSlot);
  layout.slot = (layout.width - 2.0 * kChartMargin) / events;
  const std::vector<LegendItem> legend = {
      {"source (evicted)", std::string(kVermillion), true, "5 3"},
      {"root", std::string(kBlue), false, ""},
      {"reference edge", std::string(kVermillion), true, ""},
      {"other edge", std::string(kGrey), true, ""}};
  double arcs = 0.0;
  double max_effect = 0.0;
  for (const LandingEdge& edge : map.edges) {
    const size_t from = event_index(map, edge.from);
    const size_t to = event_index(map, edge.to);
    if (from == map.events.size() || to == map.events.size()) continue;
    arcs = std::max(
        arcs, arc_height(layout.x_center(from), layout.x_center(to)) + kEdgeWidthRange + 18.0);
    max_effect = std::max(max_effect, std::abs(edge.effect.value));
  }
  if (max_effect == 0.0) max_effect = 1.0;
  const ChartHeading heading = {"Landing map · " + map.model + " · " + map.scenario,
                                {"events in history order; under each: role, transplant shift "
                                 "toward A [95% CI], aligned:anti",
                                 "arcs: an event attends to an earlier one; width: drop in "
                                 "recovery when that edge is masked"},
                                ""};
  const double legend_top = heading_height(heading);
  layout.node_top =
      legend_top + legend_height(legend, kChartMargin, layout.width - kChartMargin) + 8.0 + arcs;
  const double height = layout.node_top + kNodeHeight + 54.0;

  Svg svg(layout.width, height, heading.title);
  draw_heading(svg, heading, layout.width);
  draw_legend(svg, legend, kChartMargin, legend_top, layout.width - kChartMargin);
  // Edges naming an event the map does not list cannot be placed; the edge table still lists them.
  for (const bool reference : {false, true}) {
    for (const LandingEdge& edge : map.edges) {
      const size_t from = event_index(map, edge.from);
      const size_t to = event_index(map, edge.to);
      if (edge.is_reference != reference || from == map.events.size() || to == map.events.size())
        continue;
      draw_edge(svg, layout, edge, from, to, max_effect);
    }
  }
  for (size_t i = 0; i < map.events.size(); ++i) draw_event(svg, layout, map.events[i], i);
  return svg.finish();
}

std::string token_heat_chart(const LandingMap& map) {
  if (map.tokens.empty()) return "";
  double scale = 0.0;
  bool any_negative = false;
  for (const TokenEffect& token : map.tokens) {
    scale = std::max(scale, std::abs(token.effect));
    any_negative = any_negative || token.effect < 0.0;
  }
  if (scale == 0.0) scale = 1.0;
  std::vector<LegendItem> legend;
  for (int step = any_negative ? -2 : 0; step <= 2; ++step) {
    const double value = scale * step / 2.0;
    legend.push_back({format_percent(value), diverging_colour(value / scale), false, ""});
  }
  // Lay the tokens out in rows first: the height depends on how many rows they need.
  std::vector<double> widths;
  std::vector<std::string> labels;
  double x = kChartMargin;
  int rows = 1;
  for (const TokenEffect& token : map.tokens) {
    labels.push_back(fit_text(visible_whitespace(token.piece), 12.0, kMaxTokenWidth - 8.0));
    widths.push_back(std::max(kMinTokenWidth, text_width(labels.back(), 12.0) + 10.0));
    if (x > kChartMargin && x + widths.back() > kChartWidth - kChartMargin) {
      x = kChartMargin;
      ++rows;
    }
    x += widths.back() + kTokenGap;
  }
  const ChartHeading heading = {
      "Token heat · " + map.heat_event + " · " + map.model + " · " + map.scenario,
      {"each row of " + map.heat_event +
       " swapped alone: share of the pairs' margin moved toward the donor (· is a space)"},
      ""};
  const double legend_top = heading_height(heading);
  const double strip_top =
      legend_top + legend_height(legend, kChartMargin, kChartWidth - kChartMargin) + 10.0;
  const double height = strip_top + kTokenRowHeight * rows + 4.0;

  Svg svg(kChartWidth, height, heading.title);
  draw_heading(svg, heading, kChartWidth);
  draw_legend(svg, legend, kChartMargin, legend_top, kChartWidth - kChartMargin);
  x = kChartMargin;
  double y = strip_top;
  for (size_t i = 0; i < map.tokens.size(); ++i) {
    if (x > kChartMargin && x + widths[i] > kChartWidth - kChartMargin) {
      x = kChartMargin;
      y += kTokenRowHeight;
    }
    const double effect = map.tokens[i].effect;
    const double center = x + widths[i] / 2.0;
    const std::string_view text_colour = std::abs(effect) / scale > 0.6 ? "#FFFFFF" : kInk;
    svg.begin_tooltip("“" + map.tokens[i].piece + "”: " + format_percent(effect));
    svg.outlined_rect(x, y, widths[i], kTokenHeight, diverging_colour(effect / scale),
                      {kGrid, 1.0, ""}, 3.0);
    svg.text(center, y + 16.0, labels[i], {.anchor = Anchor::kMiddle, .colour = text_colour});
    svg.text(center, y + kTokenHeight + 13.0, format_percent(effect),
             {.size = 10.0, .anchor = Anchor::kMiddle, .colour = kFaint});
    svg.end_tooltip();
    x += widths[i] + kTokenGap;
  }
  return svg.finish();
}

}  // namespace eventkv::report
