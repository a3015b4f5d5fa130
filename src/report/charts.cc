#include "report/charts.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "report/format.h"
#include "report/svg.h"

namespace eventkv::report {

namespace {

constexpr double kLabelSize = 12.0;
constexpr double kTickSize = 11.0;
constexpr double kCapHalf = 4.0;  // half height of a whisker's end cap

// Horizontal bars.
constexpr double kRowHeight = 24.0;
constexpr double kBarThickness = 14.0;
constexpr double kMaxLabelWidth = 240.0;
constexpr double kMaxValueWidth = 230.0;

// Vertical charts.
constexpr double kPlotHeight = 220.0;
constexpr double kYAxisWidth = 62.0;
constexpr double kMaxCategoryLabelWidth = 130.0;
constexpr double kCategoryLabelAngle = -35.0;

// A share axis: the domain [low, high] cut into `intervals` steps.
struct Axis {
  double low = 0.0;
  double high = 1.0;
  double step = 0.2;
  int intervals = 5;
};

Axis share_axis(bool fit_range, double data_low, double data_high) {
  double low = 0.0;
  double high = 1.0;
  if (fit_range) {
    low = std::min(0.0, data_low);
    high = std::max(0.0, data_high);
    if (high - low < 0.1) high = low + 0.1;  // an all-zero profile still gets a readable axis
  }
  constexpr double kSteps[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0};
  constexpr double kSlack = 1e-9;  // keeps 1.0 / 0.2 from rounding up to 6 intervals
  Axis axis;
  for (const double step : kSteps) {
    const double first = std::floor(low / step + kSlack);
    const double last = std::ceil(high / step - kSlack);
    axis = {first * step, last * step, step, static_cast<int>(last - first)};
    if (axis.intervals <= 6) break;
  }
  return axis;
}

double tick_value(const Axis& axis, int index) {
  return axis.low + axis.step * index;
}

// A whisker from low to high across a bar or point; vertical when `vertical`.
void draw_whisker(Svg& svg, double at, double from, double to, bool vertical,
                  std::string_view colour) {
  const LineStyle style{colour, 1.4, ""};
  if (vertical) {
    svg.line(at, from, at, to, style);
    svg.line(at - kCapHalf, from, at + kCapHalf, from, style);
    svg.line(at - kCapHalf, to, at + kCapHalf, to, style);
  } else {
    svg.line(from, at, to, at, style);
    svg.line(from, at - kCapHalf, from, at + kCapHalf, style);
    svg.line(to, at - kCapHalf, to, at + kCapHalf, style);
  }
}

std::string bar_value_text(const Bar& bar) {
  std::string text = format_estimate(bar.estimate);
  if (!bar.note.empty()) text += "  " + bar.note;
  if (bar.flagged) text += "  INVALID";
  return text;
}

// Where the parts of a vertical chart go.
struct VerticalLayout {
  double width = kChartWidth;
  double height = 0.0;
  double legend_top = 0.0;
  double plot_left = 0.0;
  double plot_right = 0.0;
  double plot_top = 0.0;
  double plot_bottom = 0.0;
  double slot = 0.0;  // width of one category
  bool rotate_labels = false;
  Axis axis;

  double y(double share) const {
    return plot_bottom - (share - axis.low) / (axis.high - axis.low) * (plot_bottom - plot_top);
  }
  double x_center(size_t category) const {
    return plot_left + slot * (static_cast<double>(category) + 0.5);
  }
};

std::vector<LegendItem> series_legend(const SeriesChart& chart, bool line_samples) {
  std::vector<LegendItem> items;
  if (chart.series.size() == 1 && chart.series[0].name.empty()) return items;
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const Series& series = chart.series[i];
    items.push_back({series.name, series.colour, line_samples,
                     std::string(line_samples ? series_dash(i) : "")});
  }
  return items;
}

Axis data_axis(const SeriesChart& chart) {
  double low = 0.0;
  double high = 0.0;
  for (const Series& series : chart.series) {
    for (const auto& point : series.points) {
      if (!point) continue;
      low = std::min({low, point->low, point->value});
      high = std::max({high, point->high, point->value});
    }
  }
  return share_axis(chart.fit_range, low, high);
}

VerticalLayout lay_out_vertical(const SeriesChart& chart, const std::vector<LegendItem>& legend,
                                double min_slot) {
  VerticalLayout layout;
  const double categories = static_cast<double>(std::max<size_t>(1, chart.categories.size()));
  layout.width = std::max(kChartWidth, kYAxisWidth + categories * min_slot + kChartMargin);
  layout.plot_left = kYAxisWidth;
  layout.plot_right = layout.width - kChartMargin;
  layout.slot = (layout.plot_right - layout.plot_left) / categories;
  layout.legend_top = heading_height(chart.heading);
  layout.plot_top =
      layout.legend_top + legend_height(legend, kChartMargin, layout.width - kChartMargin) + 14.0;
  layout.plot_bottom = layout.plot_top + kPlotHeight;
  double widest = 0.0;
  for (const std::string& label : chart.categories) {
    widest =
        std::max(widest, text_width(fit_text(label, kTickSize, kMaxCategoryLabelWidth), kTickSize));
  }
  layout.rotate_labels = widest > layout.slot - 6.0;
  const double label_depth =
      layout.rotate_labels
          ? widest * std::sin(-kCategoryLabelAngle * std::numbers::pi / 180.0) + 12.0
          : 4.0;
  layout.height = layout.plot_bottom + 18.0 + label_depth + 26.0;
  layout.axis = data_axis(chart);
  return layout;
}

void draw_vertical_frame(Svg& svg, const SeriesChart& chart, const VerticalLayout& layout,
                         const std::vector<LegendItem>& legend) {
  draw_heading(svg, chart.heading, layout.width);
  draw_legend(svg, legend, kChartMargin, layout.legend_top, layout.width - kChartMargin);
  for (int i = 0; i <= layout.axis.intervals; ++i) {
    const double value = tick_value(layout.axis, i);
    const double y = layout.y(value);
    svg.line(layout.plot_left, y, layout.plot_right, y, {kGrid, 1.0, ""});
    svg.text(layout.plot_left - 6.0, y + 4.0, format_percent(value),
             {.size = kTickSize, .anchor = Anchor::kEnd, .colour = kFaint});
  }
  const double zero = layout.y(0.0);
  svg.line(layout.plot_left, zero, layout.plot_right, zero, {kFaint, 1.0, ""});
  const double middle = (layout.plot_top + layout.plot_bottom) / 2.0;
  svg.text(16.0, middle, chart.axis_label, {.anchor = Anchor::kMiddle, .rotate = -90.0});
  for (size_t c = 0; c < chart.categories.size(); ++c) {
    const std::string label = fit_text(chart.categories[c], kTickSize, kMaxCategoryLabelWidth);
    const double x = layout.x_center(c);
    const double y = layout.plot_bottom + 16.0;
    if (layout.rotate_labels) {
      svg.text(x + 4.0, y, label,
               {.size = kTickSize, .anchor = Anchor::kEnd, .rotate = kCategoryLabelAngle});
    } else {
      svg.text(x, y, label, {.size = kTickSize, .anchor = Anchor::kMiddle});
    }
  }
  svg.text((layout.plot_left + layout.plot_right) / 2.0, layout.height - 10.0, chart.x_label,
           {.anchor = Anchor::kMiddle});
}

std::string point_tooltip(const Series& series, const std::string& category,
                          const Estimate& estimate) {
  const std::string name = series.name.empty() ? "" : series.name + " · ";
  return name + category + ": " + format_estimate(estimate);
}

}  // namespace

std::string horizontal_bar_chart(const BarChart& chart) {
  double label_width = 0.0;
  double value_width = 0.0;
  for (const Bar& bar : chart.bars) {
    label_width = std::max(label_width, text_width(bar.label, kLabelSize));
    value_width = std::max(value_width, text_width(bar_value_text(bar), kLabelSize));
  }
  label_width = std::min(label_width, kMaxLabelWidth);
  value_width = std::min(value_width, kMaxValueWidth);
  const double plot_left = kChartMargin + label_width + 10.0;
  const double plot_right = kChartWidth - kChartMargin - value_width - 10.0;
  const double plot_top = heading_height(chart.heading) + (chart.reference ? 18.0 : 4.0);
  const double plot_bottom = plot_top + kRowHeight * static_cast<double>(chart.bars.size());
  const double height = plot_bottom + 46.0;
  const Axis axis = share_axis(false, 0.0, 1.0);
  const auto x = [&](double share) {
    return plot_left + std::clamp(share, 0.0, 1.0) * (plot_right - plot_left);
  };

  Svg svg(kChartWidth, height, chart.heading.title);
  draw_heading(svg, chart.heading, kChartWidth);
  for (int i = 0; i <= axis.intervals; ++i) {
    const double value = tick_value(axis, i);
    svg.line(x(value), plot_top, x(value), plot_bottom, {kGrid, 1.0, ""});
    svg.text(x(value), plot_bottom + 16.0, format_percent(value),
             {.size = kTickSize, .anchor = Anchor::kMiddle, .colour = kFaint});
  }
  svg.line(x(0.0), plot_top, x(0.0), plot_bottom, {kFaint, 1.0, ""});
  svg.text((plot_left + plot_right) / 2.0, plot_bottom + 36.0, chart.axis_label,
           {.anchor = Anchor::kMiddle});
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& bar = chart.bars[i];
    const double middle = plot_top + kRowHeight * (static_cast<double>(i) + 0.5);
    const std::string_view text_colour = bar.flagged ? kAlert : kInk;
    svg.begin_tooltip(bar.label + ": " + bar_value_text(bar));
    svg.text(plot_left - 8.0, middle + 4.0, fit_text(bar.label, kLabelSize, label_width),
             {.anchor = Anchor::kEnd, .bold = bar.flagged, .colour = text_colour});
    svg.rect(x(0.0), middle - kBarThickness / 2.0, x(bar.estimate.value) - x(0.0), kBarThickness,
             bar.colour);
    draw_whisker(svg, middle, x(bar.estimate.low), x(bar.estimate.high), false, kInk);
    svg.text(plot_right + 10.0, middle + 4.0,
             fit_text(bar_value_text(bar), kLabelSize, value_width),
             {.bold = bar.flagged, .colour = text_colour});
    svg.end_tooltip();
  }
  if (chart.reference) {
    const double at = x(chart.reference->value);
    svg.line(at, plot_top - 6.0, at, plot_bottom, {kInk, 1.2, "5 3"});
    const std::string label = chart.reference->label + " " + format_percent(chart.reference->value);
    const double half = text_width(label, kTickSize) / 2.0;
    const double label_x = std::clamp(at, plot_left + half, plot_right - half);
    svg.text(label_x, plot_top - 9.0, label, {.size = kTickSize, .anchor = Anchor::kMiddle});
  }
  return svg.finish();
}

std::string grouped_bar_chart(const SeriesChart& chart) {
  const std::vector<LegendItem> legend = series_legend(chart, false);
  const double series_count = static_cast<double>(std::max<size_t>(1, chart.series.size()));
  const VerticalLayout layout = lay_out_vertical(chart, legend, 10.0 * series_count + 12.0);
  Svg svg(layout.width, layout.height, chart.heading.title);
  draw_vertical_frame(svg, chart, layout, legend);
  const double bar_width = std::min(34.0, layout.slot * 0.8 / series_count);
  for (size_t c = 0; c < chart.categories.size(); ++c) {
    const double group_left = layout.x_center(c) - bar_width * series_count / 2.0;
    for (size_t s = 0; s < chart.series.size(); ++s) {
      const Series& series = chart.series[s];
      const double left = group_left + bar_width * static_cast<double>(s);
      const double middle = left + bar_width / 2.0;
      if (c >= series.points.size() || !series.points[c]) {
        svg.text(middle, layout.y(0.0) - 3.0, "–",
                 {.size = kTickSize, .anchor = Anchor::kMiddle, .colour = kFaint});
        continue;
      }
      const Estimate& estimate = *series.points[c];
      const double top = layout.y(std::max(0.0, estimate.value));
      const double bottom = layout.y(std::min(0.0, estimate.value));
      svg.begin_tooltip(point_tooltip(series, chart.categories[c], estimate));
      svg.rect(left + 1.0, top, bar_width - 2.0, bottom - top, series.colour);
      draw_whisker(svg, middle, layout.y(estimate.low), layout.y(estimate.high), true, kInk);
      svg.end_tooltip();
    }
  }
  return svg.finish();
}

std::string line_chart(const SeriesChart& chart) {
  const std::vector<LegendItem> legend = series_legend(chart, true);
  const VerticalLayout layout = lay_out_vertical(chart, legend, 40.0);
  Svg svg(layout.width, layout.height, chart.heading.title);
  draw_vertical_frame(svg, chart, layout, legend);
  const double series_count = static_cast<double>(chart.series.size());
  // Series sit side by side around each category so their whiskers do not overlap.
  const double dodge = std::min(6.0, layout.slot * 0.5 / std::max(1.0, series_count));
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const Series& series = chart.series[s];
    const double offset = (static_cast<double>(s) - (series_count - 1.0) / 2.0) * dodge;
    std::string d;
    bool connected = false;
    for (size_t c = 0; c < chart.categories.size() && c < series.points.size(); ++c) {
      if (!series.points[c]) {
        connected = false;
        continue;
      }
      d += (connected ? " L " : " M ") + coordinate(layout.x_center(c) + offset) + " " +
           coordinate(layout.y(series.points[c]->value));
      connected = true;
    }
    if (!d.empty()) svg.path(d.substr(1), {series.colour, 2.2, series_dash(s)});
    for (size_t c = 0; c < chart.categories.size() && c < series.points.size(); ++c) {
      if (!series.points[c]) continue;
      const Estimate& estimate = *series.points[c];
      const double x = layout.x_center(c) + offset;
      svg.begin_tooltip(point_tooltip(series, chart.categories[c], estimate));
      draw_whisker(svg, x, layout.y(estimate.low), layout.y(estimate.high), true, series.colour);
      svg.circle(x, layout.y(estimate.value), 4.0, series.colour);
      svg.end_tooltip();
    }
  }
  return svg.finish();
}

}  // namespace eventkv::report
