#include "tokenizer/byte_unicode.h"

#include <array>

namespace eventkv::tokenizer {
namespace {

bool maps_to_itself(uint32_t byte) {
  return (byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) ||
         (byte >= 174 && byte <= 255);
}

std::array<uint32_t, 256> build_byte_table() {
  std::array<uint32_t, 256> table{};
  uint32_t next = 256;
  for (uint32_t byte = 0; byte < 256; ++byte) table[byte] = maps_to_itself(byte) ? byte : next++;
  return table;
}

}  // namespace

uint32_t byte_to_codepoint(uint8_t byte) {
  static const std::array<uint32_t, 256> kTable = build_byte_table();
  return kTable[byte];
}

void append_utf8(std::string& out, uint32_t codepoint) {
  if (codepoint < 0x80) {
    out.push_back(static_cast<char>(codepoint));
  } else if (codepoint < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (codepoint >> 6)));
    out.push_back(static_cast<char>(0x80 | (codepoint & 0x3F)));
  } else if (codepoint < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (codepoint >> 12)));
    out.push_back(static_cast<char>(0x80 | ((codepoint >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (codepoint & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (codepoint >> 18)));
    out.push_back(static_cast<char>(0x80 | ((codepoint >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((codepoint >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (codepoint & 0x3F)));
  }
}

}  // namespace eventkv::tokenizer
