// Charts of shares (0..1, printed as percents) with their 95% intervals, as
// inline SVG: horizontal bars, grouped vertical bars and lines over ordered
// categories. The charts take plain descriptions and know nothing of
// experiments; report_charts.h turns report data into these descriptions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/report_data.h"
#include "report/svg.h"

namespace eventkv::report {

struct Bar {
  std::string label;
  Estimate estimate;
  std::string colour;
  std::string note;      // printed after the value, e.g. "51:3"
  bool flagged = false;  // an invalid result: label and value in the alert colour
};

struct ReferenceLine {
  double value = 0.0;
  std::string label;  // the value is appended as a percent
};

struct BarChart {
  ChartHeading heading;
  std::string axis_label;
  std::vector<Bar> bars;  // drawn top to bottom
  std::optional<ReferenceLine> reference;
};

// One bar per row on a 0..100% axis, whiskers for the interval, labels left,
// values right.
std::string horizontal_bar_chart(const BarChart& chart);

struct Series {
  std::string name;  // legend text; a chart of one unnamed series has no legend
  std::string colour;
  std::vector<std::optional<Estimate>> points;  // one per category; empty where there is no result
};

struct SeriesChart {
  ChartHeading heading;
  std::string x_label;
  std::string axis_label;
  std::vector<std::string> categories;  // the x axis, in order
  std::vector<Series> series;
  bool fit_range =
      false;  // false: 0..100%; true: fitted to the data and zero (effects can be negative)
};

// Categories along x, one bar per series in each, with whiskers.
std::string grouped_bar_chart(const SeriesChart& chart);

// Categories along x, one line per series through its points, with whiskers;
// a missing point breaks the line.
std::string line_chart(const SeriesChart& chart);

}  // namespace eventkv::report
