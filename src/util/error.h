// One error regime: exceptions inside the library, each message carrying its
// context (file, tensor, offset). The CLI turns an Error into one line and a
// non-zero exit.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace eventkv {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Concatenates any streamable values into one string.
template <typename... Parts>
std::string str_cat(Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  return out.str();
}

template <typename... Parts>
[[noreturn]] void fail(Parts&&... parts) {
  throw Error(str_cat(std::forward<Parts>(parts)...));
}

}  // namespace eventkv
