#include "report/svg.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "probe/condition_names.h"
#include "report/format.h"

namespace eventkv::report {

namespace {

constexpr std::array<std::string_view, 7> kSeriesColours = {kBlue,    kOrange,     kGreen, kPurple,
                                                            kSkyBlue, kVermillion, kInk};
constexpr std::array<std::string_view, 4> kSeriesDashes = {"", "6 3", "2 2", "8 3 2 3"};

constexpr double kTitleSize = 15.0;
constexpr double kNoteSize = 12.0;
constexpr double kNoteLineHeight = 18.0;

constexpr double kLegendFontSize = 12.0;
constexpr double kLegendRowHeight = 18.0;
constexpr double kLegendSwatch = 12.0;
constexpr double kLegendLineSample = 22.0;
constexpr double kLegendGap = 18.0;

std::string_view anchor_name(Anchor anchor) {
  switch (anchor) {
    case Anchor::kStart:
      return "start";
    case Anchor::kMiddle:
      return "middle";
    case Anchor::kEnd:
      return "end";
  }
  return "start";
}

std::string stroke_attributes(const LineStyle& style) {
  std::string out = " stroke=\"" + std::string(style.colour) + "\" stroke-width=\"" +
                    coordinate(style.width) + "\"";
  if (!style.dash.empty()) out += " stroke-dasharray=\"" + std::string(style.dash) + "\"";
  return out;
}

double legend_item_width(const LegendItem& item) {
  const double sample = item.line_sample ? kLegendLineSample : kLegendSwatch;
  return sample + 6.0 + text_width(item.name, kLegendFontSize) + kLegendGap;
}

// Calls place(item, x, y) for each item at its wrapped position; returns the height.
template <typename Place>
double lay_out_legend(const std::vector<LegendItem>& items, double x, double max_x, Place place) {
  if (items.empty()) return 0.0;
  double at_x = x;
  double at_y = 0.0;
  for (const LegendItem& item : items) {
    const double width = legend_item_width(item);
    if (at_x > x && at_x + width > max_x) {
      at_x = x;
      at_y += kLegendRowHeight;
    }
    place(item, at_x, at_y);
    at_x += width;
  }
  return at_y + kLegendRowHeight;
}

}  // namespace

std::string_view condition_colour(std::string_view condition) {
  if (condition == probe::kVisible) return kBlue;
  if (condition == probe::kSparseGlobal) return kVermillion;
  if (condition == probe::kRecord) return kGreen;
  if (condition == probe::kSparseLocal) return kGrey;
  if (condition == probe::kNoCarrier) return kOrange;
  return kPurple;
}

std::string_view series_colour(size_t index) {
  return kSeriesColours[index % kSeriesColours.size()];
}

std::string_view series_dash(size_t index) {
  return kSeriesDashes[index % kSeriesDashes.size()];
}

std::string diverging_colour(double value) {
  const double t = std::clamp(std::abs(value), 0.0, 1.0);
  // Vermillion #D55E00 for positive values, blue #0072B2 for negative ones.
  const std::array<int, 3> target =
      value >= 0.0 ? std::array<int, 3>{0xD5, 0x5E, 0x00} : std::array<int, 3>{0x00, 0x72, 0xB2};
  char buffer[8];
  std::array<long, 3> mixed{};
  for (size_t i = 0; i < 3; ++i) mixed[i] = std::lround(255.0 + (target[i] - 255.0) * t);
  std::snprintf(buffer, sizeof(buffer), "#%02lX%02lX%02lX", mixed[0], mixed[1], mixed[2]);
  return buffer;
}

std::string coordinate(double value) {
  return format_fixed(value, 1);
}

Svg::Svg(double width, double height, std::string_view title) {
  const std::string w = coordinate(width);
  const std::string h = coordinate(height);
  out_ = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h +
         "\" viewBox=\"0 0 " + w + " " + h + "\" role=\"img\" aria-label=\"" + escape_xml(title) +
         "\" font-family=\"sans-serif\">\n<title>" + escape_xml(title) + "</title>\n";
}

void Svg::rect(double x, double y, double width, double height, std::string_view fill) {
  out_ += "<rect x=\"" + coordinate(x) + "\" y=\"" + coordinate(y) + "\" width=\"" +
          coordinate(std::max(0.0, width)) + "\" height=\"" + coordinate(std::max(0.0, height)) +
          "\" fill=\"" + std::string(fill) + "\"/>\n";
}

void Svg::outlined_rect(double x, double y, double width, double height, std::string_view fill,
                        const LineStyle& outline, double corner_radius) {
  out_ += "<rect x=\"" + coordinate(x) + "\" y=\"" + coordinate(y) + "\" width=\"" +
          coordinate(std::max(0.0, width)) + "\" height=\"" + coordinate(std::max(0.0, height)) +
          "\" rx=\"" + coordinate(corner_radius) + "\" fill=\"" + std::string(fill) + "\"" +
          stroke_attributes(outline) + "/>\n";
}

void Svg::line(double x1, double y1, double x2, double y2, const LineStyle& style) {
  out_ += "<line x1=\"" + coordinate(x1) + "\" y1=\"" + coordinate(y1) + "\" x2=\"" +
          coordinate(x2) + "\" y2=\"" + coordinate(y2) + "\"" + stroke_attributes(style) + "/>\n";
}

void Svg::path(std::string_view d, const LineStyle& style) {
  out_ += "<path d=\"" + std::string(d) + "\" fill=\"none\"" + stroke_attributes(style) +
          " stroke-linecap=\"round\"/>\n";
}

void Svg::circle(double cx, double cy, double radius, std::string_view fill) {
  out_ += "<circle cx=\"" + coordinate(cx) + "\" cy=\"" + coordinate(cy) + "\" r=\"" +
          coordinate(radius) + "\" fill=\"" + std::string(fill) + "\" stroke=\"#FFFFFF\"/>\n";
}

void Svg::text(double x, double y, std::string_view text, const TextStyle& style) {
  out_ += "<text x=\"" + coordinate(x) + "\" y=\"" + coordinate(y) + "\" font-size=\"" +
          coordinate(style.size) + "\" fill=\"" + std::string(style.colour) + "\"";
  if (style.anchor != Anchor::kStart) {
    out_ += " text-anchor=\"";
    out_ += anchor_name(style.anchor);
    out_ += "\"";
  }
  if (style.bold) out_ += " font-weight=\"bold\"";
  if (style.rotate != 0.0) {
    out_ += " transform=\"rotate(" + coordinate(style.rotate) + " " + coordinate(x) + " " +
            coordinate(y) + ")\"";
  }
  out_ += '>';
  out_ += escape_xml(text);
  out_ += "</text>\n";
}

void Svg::begin_tooltip(std::string_view tooltip) {
  out_ += "<g><title>" + escape_xml(tooltip) + "</title>\n";
}

void Svg::end_tooltip() {
  out_ += "</g>\n";
}

std::string Svg::finish() {
  out_ += "</svg>\n";
  return std::move(out_);
}

double draw_heading(Svg& svg, const ChartHeading& heading, double width) {
  const double max_width = width - 2.0 * kChartMargin;
  double y = 22.0;
  svg.text(kChartMargin, y, fit_text(heading.title, kTitleSize, max_width),
           {.size = kTitleSize, .bold = true});
  for (const std::string& note : heading.notes) {
    y += kNoteLineHeight;
    svg.text(kChartMargin, y, fit_text(note, kNoteSize, max_width), {.colour = kFaint});
  }
  if (!heading.alert.empty()) {
    y += kNoteLineHeight;
    svg.text(kChartMargin, y, fit_text(heading.alert, kNoteSize, max_width),
             {.bold = true, .colour = kAlert});
  }
  return y + 10.0;
}

double heading_height(const ChartHeading& heading) {
  const double lines =
      static_cast<double>(heading.notes.size()) + (heading.alert.empty() ? 0.0 : 1.0);
  return 32.0 + kNoteLineHeight * lines;
}

double legend_height(const std::vector<LegendItem>& items, double x, double max_x) {
  return lay_out_legend(items, x, max_x, [](const LegendItem&, double, double) {});
}

double draw_legend(Svg& svg, const std::vector<LegendItem>& items, double x, double y,
                   double max_x) {
  return lay_out_legend(items, x, max_x, [&](const LegendItem& item, double at_x, double at_y) {
    const double middle = y + at_y + kLegendRowHeight / 2.0;
    double text_x = at_x + kLegendSwatch + 6.0;
    if (item.line_sample) {
      svg.line(at_x, middle, at_x + kLegendLineSample, middle, {item.colour, 2.5, item.dash});
      text_x = at_x + kLegendLineSample + 6.0;
    } else {
      svg.rect(at_x, middle - kLegendSwatch / 2.0, kLegendSwatch, kLegendSwatch, item.colour);
    }
    svg.text(text_x, middle + 4.0, item.name, {.size = kLegendFontSize});
  });
}

}  // namespace eventkv::report
