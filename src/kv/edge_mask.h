// The event attention graph at compute time: by default every event sees
// every earlier event; an edge removed here means no token of `from` may
// attend to any token of `to`, in any layer.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace eventkv::kv {

class EdgeMask {
 public:
  void remove(std::string from, std::string to) {
    removed_.emplace(std::move(from), std::move(to));
  }
  bool allows(std::string_view from, std::string_view to) const {
    return removed_.find(std::pair<std::string, std::string>(from, to)) == removed_.end();
  }
  bool empty() const { return removed_.empty(); }
  const std::set<std::pair<std::string, std::string>>& removed() const { return removed_; }

 private:
  std::set<std::pair<std::string, std::string>> removed_;
};

}  // namespace eventkv::kv
