// Reads the fields of a JSON object, naming the file and the field's JSON
// pointer in every error ("FILE: /events/3/id: must be a string").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "util/error.h"

namespace eventkv {

class JsonFields {
 public:
  using json = nlohmann::json;

  JsonFields(const json& object, std::string pointer, const std::string& file)
      : object_(object), pointer_(std::move(pointer)), file_(file) {
    if (!object.is_object()) problem("", "must be an object");
  }

  [[noreturn]] void problem(const std::string& key, const std::string& what) const {
    fail(file_, ": ", pointer_, key.empty() ? "" : "/" + key, ": ", what);
  }

  bool has(const char* key) const { return object_.contains(key); }
  const json& at(const char* key) const {
    if (!has(key)) problem(key, "is required");
    return object_[key];
  }
  std::string pointer(const char* key) const { return pointer_ + "/" + key; }
  const std::string& file() const { return file_; }

  std::string text(const char* key, const std::string& fallback = "", bool required = false) const {
    if (!has(key)) {
      if (required) problem(key, "is required");
      return fallback;
    }
    if (!object_[key].is_string()) problem(key, "must be a string");
    return object_[key].get<std::string>();
  }

  // A string or a non-empty list of strings.
  std::vector<std::string> texts(const char* key, bool required) const {
    if (!has(key)) {
      if (required) problem(key, "is required");
      return {};
    }
    const json& value = object_[key];
    if (value.is_string()) return {value.get<std::string>()};
    if (!value.is_array() || value.empty())
      problem(key, "must be a string or a non-empty list of strings");
    std::vector<std::string> out;
    for (size_t i = 0; i < value.size(); ++i) {
      if (!value[i].is_string())
        problem(std::string(key) + "/" + std::to_string(i), "must be a string");
      out.push_back(value[i].get<std::string>());
    }
    return out;
  }

  int64_t integer(const char* key, int64_t fallback, int64_t low, int64_t high) const {
    if (!has(key)) return fallback;
    if (!object_[key].is_number_integer()) problem(key, "must be an integer");
    const auto value = object_[key].get<int64_t>();
    if (value < low || value > high) {
      problem(key, "must be between " + std::to_string(low) + " and " + std::to_string(high));
    }
    return value;
  }

  bool boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!object_[key].is_boolean()) problem(key, "must be true or false");
    return object_[key].get<bool>();
  }

  // The list at `key` (empty when absent), each item an object.
  const json& list(const char* key) const {
    static const json kEmpty = json::array();
    if (!has(key)) return kEmpty;
    if (!object_[key].is_array()) problem(key, "must be a list");
    return object_[key];
  }

  void allow_only(const std::set<std::string>& keys) const {
    for (const auto& [key, value] : object_.items()) {
      if (keys.count(key) == 0) problem(key, "is not a known field");
    }
  }

 private:
  const json& object_;
  std::string pointer_;
  const std::string& file_;
};

}  // namespace eventkv
