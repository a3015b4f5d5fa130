// Text formatting shared by the HTML, SVG and markdown renderers: escaping,
// and the fixed ways the report writes shares, intervals, p-values and
// margins. Every function is pure and locale-free, so the same data always
// renders to the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "report/report_data.h"

namespace eventkv::report {

// Escapes & < > " ' for XML and HTML text and attribute values.
std::string escape_xml(std::string_view text);

// Escapes what would turn text into markdown markup; newlines become spaces.
std::string escape_markdown(std::string_view text);

// A share as a whole percent: 0.514 -> "51%".
std::string format_percent(double share);

// "51% [41%, 61%]".
std::string format_estimate(const Estimate& estimate);

// A logit margin with its interval: "1.23 [0.80, 1.70]".
std::string format_margin(const Estimate& margin);

// Two significant digits, scientific below 0.001: "0.057", "3.2e-30".
std::string format_p_value(double p);

// "51:3".
std::string format_counts(int64_t aligned, int64_t anti);

// A number with a fixed count of decimals: format_fixed(1.25, 1) -> "1.2".
std::string format_fixed(double value, int decimals);

// A token's text with its whitespace made visible: space "·", newline "↵", tab "→".
std::string visible_whitespace(std::string_view text);

// Width of text in px at a font size, estimated from its code points (the
// page uses the reader's sans-serif font, so only an estimate is possible).
double text_width(std::string_view text, double font_size);

// The text cut to at most max_width px, ending in "…" when cut; never splits
// a UTF-8 sequence.
std::string fit_text(std::string_view text, double font_size, double max_width);

}  // namespace eventkv::report
