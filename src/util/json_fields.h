// Reading a JSON document whose every error names the file and the place:
// "FILE:LINE:COLUMN: invalid JSON: ..." for bad syntax, "FILE: /pointer:
// problem" for a field that is missing, of the wrong type or out of range
// ("FILE: /events/3/id: must be a string"). Scenario files, agent histories
// and calibration profiles are read this way.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace eventkv {

// Parses `text`; throws Error "NAME:LINE:COLUMN: invalid JSON: ...".
nlohmann::json parse_json_text(const std::string& text, const std::string& name_for_errors);

// The fields of one JSON object at `pointer` in `file`. Holds a reference to
// the object: it must outlive the JsonFields.
class JsonFields {
 public:
  using json = nlohmann::json;

  JsonFields(const json& object, std::string pointer, std::string file);

  [[noreturn]] void problem(const std::string& key, const std::string& what) const;

  bool has(const char* key) const { return object_.contains(key); }
  const json& at(const char* key) const;  // required
  std::string pointer(const char* key) const { return pointer_ + "/" + key; }
  const std::string& file() const { return file_; }

  std::string text(const char* key, const std::string& fallback = "", bool required = false) const;
  // A string or a non-empty list of strings.
  std::vector<std::string> texts(const char* key, bool required) const;
  // An integer in [low, high]; `fallback` when absent.
  int64_t integer(const char* key, int64_t fallback, int64_t low, int64_t high) const;
  // A required number in [low, high].
  double number(const char* key, double low, double high) const;
  bool boolean(const char* key, bool fallback) const;
  // The list at `key` (empty when absent); its items are read with item().
  const json& list(const char* key) const;
  // Item `index` of the list `key`, which must be an object.
  JsonFields item(const char* key, size_t index) const;

  void allow_only(const std::set<std::string>& keys) const;

 private:
  const json& object_;
  std::string pointer_;
  std::string file_;
};

}  // namespace eventkv
