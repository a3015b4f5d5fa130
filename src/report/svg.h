// A writer for one inline <svg> element, and the colours, legends and scales
// the report's charts share. Numbers are written with one decimal and text is
// XML-escaped, so the same calls always produce the same bytes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace eventkv::report {

// Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
inline constexpr std::string_view kBlue = "#0072B2";
inline constexpr std::string_view kOrange = "#E69F00";
inline constexpr std::string_view kGreen = "#009E73";
inline constexpr std::string_view kVermillion = "#D55E00";
inline constexpr std::string_view kPurple = "#CC79A7";
inline constexpr std::string_view kSkyBlue = "#56B4E9";
inline constexpr std::string_view kGrey = "#999999";
inline constexpr std::string_view kInk = "#222222";
inline constexpr std::string_view kFaint = "#666666";
inline constexpr std::string_view kGrid = "#E4E4E4";
inline constexpr std::string_view kAlert = "#B00020";

// The fixed colour of each of the five conditions, so every chart agrees.
std::string_view condition_colour(std::string_view condition);

// The colour and line dash pattern of the index-th series of a chart.
std::string_view series_colour(size_t index);
std::string_view series_dash(size_t index);

// A diverging scale: white at 0, vermillion toward +1, blue toward -1
// (clamped), as "#rrggbb".
std::string diverging_colour(double value);

// Every chart is this wide unless its content needs more, with this margin.
inline constexpr double kChartWidth = 760.0;
inline constexpr double kChartMargin = 12.0;

enum class Anchor { kStart, kMiddle, kEnd };

struct TextStyle {
  double size = 12.0;
  Anchor anchor = Anchor::kStart;
  bool bold = false;
  std::string_view colour = kInk;
  double rotate = 0.0;  // degrees, about the text's anchor point
};

struct LineStyle {
  std::string_view colour = kInk;
  double width = 1.0;
  std::string_view dash;  // stroke-dasharray; empty for a solid line
};

struct LegendItem {
  std::string name;
  std::string colour;
  bool line_sample = false;  // a line (for line charts) instead of a square swatch
  std::string dash;          // the line sample's stroke-dasharray
};

// The lines above a chart.
struct ChartHeading {
  std::string title;
  std::vector<std::string> notes;  // grey lines under the title
  std::string alert;  // drawn loudly in the alert colour (an invalid result); empty for none
};

class Svg {
 public:
  // `title` becomes the element's accessible name and hover text.
  Svg(double width, double height, std::string_view title);

  void rect(double x, double y, double width, double height, std::string_view fill);
  void outlined_rect(double x, double y, double width, double height, std::string_view fill,
                     const LineStyle& outline, double corner_radius);
  void line(double x1, double y1, double x2, double y2, const LineStyle& style);
  // An unfilled SVG path with `d` built by the caller (numbers via coordinate()).
  void path(std::string_view d, const LineStyle& style);
  void circle(double cx, double cy, double radius, std::string_view fill);
  void text(double x, double y, std::string_view text, const TextStyle& style);

  // Elements between these two share a hover text (an SVG <title>).
  void begin_tooltip(std::string_view tooltip);
  void end_tooltip();

  std::string finish();

 private:
  std::string out_;
};

// Draws the heading at the top of a chart `width` wide; returns the y below it.
double draw_heading(Svg& svg, const ChartHeading& heading, double width);

// The y below the heading, for laying out a chart before drawing it.
double heading_height(const ChartHeading& heading);

// A coordinate as the writer prints it: one decimal.
std::string coordinate(double value);

// Draws the items in rows from (x, y) and wraps at max_x; returns the height used.
double draw_legend(Svg& svg, const std::vector<LegendItem>& items, double x, double y,
                   double max_x);

// The height draw_legend will use, for laying out a chart before drawing it.
double legend_height(const std::vector<LegendItem>& items, double x, double max_x);

}  // namespace eventkv::report
