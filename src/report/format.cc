#include "report/format.h"

#include <cmath>
#include <cstdio>

namespace eventkv::report {

namespace {

// Average advance of a character of a sans-serif font, in em.
constexpr double kNarrowAdvance = 0.6;
constexpr double kWideAdvance = 1.0;  // CJK and other full-width code points
constexpr uint32_t kFirstWideCodePoint = 0x2E80;

bool is_continuation_byte(unsigned char byte) {
  return (byte & 0xC0) == 0x80;
}

// Decodes the code point that starts at text[*at] and advances *at past it.
// Malformed bytes count as one narrow character each.
uint32_t next_code_point(std::string_view text, size_t* at) {
  const auto lead = static_cast<unsigned char>(text[*at]);
  size_t length = 1;
  uint32_t code = lead;
  if (lead >= 0xF0) {
    length = 4;
    code = lead & 0x07U;
  } else if (lead >= 0xE0) {
    length = 3;
    code = lead & 0x0FU;
  } else if (lead >= 0xC0) {
    length = 2;
    code = lead & 0x1FU;
  }
  if (*at + length > text.size()) length = 1;
  for (size_t i = 1; i < length; ++i) {
    const auto byte = static_cast<unsigned char>(text[*at + i]);
    if (!is_continuation_byte(byte)) {
      *at += 1;
      return lead;
    }
    code = (code << 6) | (byte & 0x3FU);
  }
  *at += length;
  return length == 1 ? lead : code;
}

double advance(uint32_t code_point) {
  return code_point >= kFirstWideCodePoint ? kWideAdvance : kNarrowAdvance;
}

}  // namespace

std::string escape_xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string escape_markdown(std::string_view text) {
  // Only what could turn text into markup: emphasis, code, HTML, table cells,
  // entities, strikethrough, a link's "](", a heading's leading "#".
  constexpr std::string_view kAlwaysEscaped = "\\`*_<>|&~";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n' || c == '\r') {
      out += ' ';
      continue;
    }
    const bool link_target = c == '(' && i > 0 && text[i - 1] == ']';
    const bool heading = c == '#' && i == 0;
    if (kAlwaysEscaped.find(c) != std::string_view::npos || link_target || heading) out += '\\';
    out += c;
  }
  return out;
}

std::string format_percent(double share) {
  return std::to_string(std::lround(share * 100.0)) + "%";
}

std::string format_estimate(const Estimate& estimate) {
  return format_percent(estimate.value) + " [" + format_percent(estimate.low) + ", " +
         format_percent(estimate.high) + "]";
}

std::string format_margin(const Estimate& margin) {
  return format_fixed(margin.value, 2) + " [" + format_fixed(margin.low, 2) + ", " +
         format_fixed(margin.high, 2) + "]";
}

std::string format_p_value(double p) {
  if (p < 1e-300) return "< 1e-300";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), p < 0.001 ? "%.1e" : "%.2g", p);
  return buffer;
}

std::string format_counts(int64_t aligned, int64_t anti) {
  return std::to_string(aligned) + ":" + std::to_string(anti);
}

std::string format_fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  // "-0.0" and "0.0" are the same number; print it one way.
  if (std::string_view(buffer).find_first_of("123456789") == std::string_view::npos &&
      buffer[0] == '-') {
    return buffer + 1;
  }
  return buffer;
}

std::string visible_whitespace(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == ' ') {
      out += "·";
    } else if (c == '\n') {
      out += "↵";
    } else if (c == '\t') {
      out += "→";
    } else {
      out += c;
    }
  }
  return out;
}

double text_width(std::string_view text, double font_size) {
  double ems = 0.0;
  for (size_t at = 0; at < text.size();) ems += advance(next_code_point(text, &at));
  return ems * font_size;
}

std::string fit_text(std::string_view text, double font_size, double max_width) {
  if (text_width(text, font_size) <= max_width) return std::string(text);
  const double ellipsis_width = kNarrowAdvance * font_size;
  double width = 0.0;
  size_t at = 0;
  while (at < text.size()) {
    size_t next = at;
    width += advance(next_code_point(text, &next)) * font_size;
    if (width + ellipsis_width > max_width) break;
    at = next;
  }
  return std::string(text.substr(0, at)) + "…";
}

}  // namespace eventkv::report
