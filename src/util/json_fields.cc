#include "util/json_fields.h"

#include "util/error.h"

namespace eventkv {

nlohmann::json parse_json_text(const std::string& text, const std::string& name_for_errors) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    size_t line = 1;
    size_t column = 1;
    for (size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      column = text[i] == '\n' ? 1 : column + 1;
      line += text[i] == '\n' ? 1 : 0;
    }
    const std::string message = e.what();
    fail(name_for_errors, ":", line, ":", column,
         ": invalid JSON: ", message.substr(message.find(']') + 2));
  }
}

JsonFields::JsonFields(const nlohmann::json& object, std::string pointer, std::string file)
    : object_(object), pointer_(std::move(pointer)), file_(std::move(file)) {
  if (!object.is_object()) problem("", "must be an object");
}

void JsonFields::problem(const std::string& key, const std::string& what) const {
  fail(file_, ": ", pointer_, key.empty() ? "" : "/" + key, ": ", what);
}

const nlohmann::json& JsonFields::at(const char* key) const {
  if (!has(key)) problem(key, "is required");
  return object_[key];
}

std::string JsonFields::text(const char* key, const std::string& fallback, bool required) const {
  if (!has(key)) {
    if (required) problem(key, "is required");
    return fallback;
  }
  if (!object_[key].is_string()) problem(key, "must be a string");
  return object_[key].get<std::string>();
}

std::vector<std::string> JsonFields::texts(const char* key, bool required) const {
  if (!has(key)) {
    if (required) problem(key, "is required");
    return {};
  }
  const nlohmann::json& value = object_[key];
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

int64_t JsonFields::integer(const char* key, int64_t fallback, int64_t low, int64_t high) const {
  if (!has(key)) return fallback;
  if (!object_[key].is_number_integer()) problem(key, "must be an integer");
  // An unsigned value past int64 would wrap into range.
  const bool huge = object_[key].is_number_unsigned() &&
                    object_[key].get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
  const auto value = object_[key].get<int64_t>();
  if (huge || value < low || value > high) {
    problem(key, "must be between " + std::to_string(low) + " and " + std::to_string(high));
  }
  return value;
}

double JsonFields::number(const char* key, double low, double high) const {
  const nlohmann::json& value = at(key);
  if (!value.is_number()) problem(key, "must be a number");
  const auto number = value.get<double>();
  if (!(number >= low && number <= high))
    problem(key, str_cat("must be between ", low, " and ", high));
  return number;
}

bool JsonFields::boolean(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  if (!object_[key].is_boolean()) problem(key, "must be true or false");
  return object_[key].get<bool>();
}

const nlohmann::json& JsonFields::list(const char* key) const {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  if (!has(key)) return kEmpty;
  if (!object_[key].is_array()) problem(key, "must be a list");
  return object_[key];
}

JsonFields JsonFields::item(const char* key, size_t index) const {
  return {list(key)[index], pointer(key) + "/" + std::to_string(index), file_};
}

void JsonFields::allow_only(const std::set<std::string>& keys) const {
  for (const auto& [key, value] : object_.items()) {
    if (keys.count(key) == 0) problem(key, "is not a known field");
  }
}

}  // namespace eventkv
