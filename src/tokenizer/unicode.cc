#include "tokenizer/unicode.h"

#include <algorithm>

namespace eventkv::tokenizer {
namespace {

constexpr uint32_t kCodepointLimit = 0x110000;

std::vector<uint8_t> build_class_table() {
  std::vector<uint8_t> table(kCodepointLimit, 0);
  const auto ranges = codepoint_ranges();
  for (size_t i = 0; i < ranges.size(); ++i) {
    const uint32_t end = i + 1 < ranges.size() ? ranges[i + 1].start : kCodepointLimit;
    std::fill(table.begin() + ranges[i].start, table.begin() + end, ranges[i].classes);
  }
  return table;
}

bool is_continuation(uint8_t byte) {
  return (byte & 0xC0) == 0x80;
}

}  // namespace

uint8_t codepoint_classes(uint32_t cpt) {
  static const std::vector<uint8_t> kTable = build_class_table();
  return cpt < kCodepointLimit ? kTable[cpt] : 0;
}

int utf8_sequence_length(std::string_view text, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[pos + i]); };
  const uint8_t lead = byte(0);
  if (lead < 0x80) return 1;
  int length = 0;
  uint8_t second_min = 0x80, second_max = 0xBF;  // excludes overlong forms and surrogates
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;
    if (lead == 0xED) second_max = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;
    if (lead == 0xF4) second_max = 0x8F;
  } else {
    return 0;
  }
  if (pos + length > text.size()) return 0;
  if (byte(1) < second_min || byte(1) > second_max) return 0;
  for (int i = 2; i < length; ++i) {
    if (!is_continuation(byte(i))) return 0;
  }
  return length;
}

bool is_valid_utf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    const int length = utf8_sequence_length(text, pos);
    if (length == 0) return false;
    pos += length;
  }
  return true;
}

std::string replace_invalid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t pos = 0; pos < text.size();) {
    const int length = utf8_sequence_length(text, pos);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      pos += 1;
    } else {
      out.append(text.substr(pos, length));
      pos += length;
    }
  }
  return out;
}

void decode_utf8(std::string_view text, DecodedText& out) {
  out.codepoints.clear();
  out.offsets.clear();
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  for (size_t pos = 0; pos < text.size();) {
    const uint8_t lead = bytes[pos];
    uint32_t cpt = lead;
    size_t length = 1;
    if (lead >= 0xF0) {
      length = 4;
      cpt = lead & 0x07;
    } else if (lead >= 0xE0) {
      length = 3;
      cpt = lead & 0x0F;
    } else if (lead >= 0xC0) {
      length = 2;
      cpt = lead & 0x1F;
    }
    length = std::min(length, text.size() - pos);  // only for invalid input
    for (size_t i = 1; i < length; ++i) cpt = (cpt << 6) | (bytes[pos + i] & 0x3F);
    out.codepoints.push_back(cpt);
    out.offsets.push_back(static_cast<uint32_t>(pos));
    pos += length;
  }
  out.offsets.push_back(static_cast<uint32_t>(text.size()));
}

}  // namespace eventkv::tokenizer
