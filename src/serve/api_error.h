// An error the HTTP API answers with its own status (404 unknown session,
// 409 busy, 413 too large, 429 too many sessions, 503 queue full). Any other
// Error from the library is a request it cannot honour: 422.
#pragma once

#include <string>
#include <utility>

#include "util/error.h"

namespace eventkv::serve {

class ApiError : public Error {
 public:
  ApiError(int status, const std::string& message) : Error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

template <typename... Parts>
[[noreturn]] void api_fail(int status, Parts&&... parts) {
  throw ApiError(status, str_cat(std::forward<Parts>(parts)...));
}

}  // namespace eventkv::serve
