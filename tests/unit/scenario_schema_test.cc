// scenarios/scenario.schema.json against the bundled scenarios and the
// parser: every bundled scenario validates, and edits the parser refuses
// are refused by the schema too. The validator below knows only the JSON
// Schema keywords the schema uses, and fails on any other.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "probe/scenario.h"
#include "test_support.h"

namespace eventkv::probe {
namespace {

using nlohmann::json;

bool has_type(const json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  ADD_FAILURE() << "unknown type " << type;
  return false;
}

// Appends a problem for every way `value` breaks `schema`.
void validate(const json& root, const json& schema, const json& value, const std::string& at,
              std::vector<std::string>& problems) {
  const auto problem = [&](const std::string& what) { problems.push_back(at + ": " + what); };
  for (const auto& [keyword, rule] : schema.items()) {
    if (keyword == "$schema" || keyword == "$id" || keyword == "title" ||
        keyword == "description" || keyword == "$defs") {
      continue;
    } else if (keyword == "$ref") {
      const std::string ref = rule.get<std::string>();
      validate(root, root.at(json::json_pointer(ref.substr(1))), value, at, problems);
    } else if (keyword == "type") {
      if (!has_type(value, rule.get<std::string>())) problem("not " + rule.get<std::string>());
    } else if (keyword == "enum") {
      if (std::find(rule.begin(), rule.end(), value) == rule.end()) problem("not in the enum");
    } else if (keyword == "minimum") {
      if (value.is_number() && value < rule) problem("below the minimum");
    } else if (keyword == "maximum") {
      if (value.is_number() && value > rule) problem("above the maximum");
    } else if (keyword == "minItems") {
      if (value.is_array() && value.size() < rule.get<size_t>()) problem("too few items");
    } else if (keyword == "items") {
      if (!value.is_array()) continue;
      for (size_t i = 0; i < value.size(); ++i)
        validate(root, rule, value[i], at + "/" + std::to_string(i), problems);
    } else if (keyword == "required") {
      for (const json& key : rule) {
        if (value.is_object() && !value.contains(key.get<std::string>()))
          problem("needs " + key.get<std::string>());
      }
    } else if (keyword == "properties") {
      for (const auto& [key, property] : rule.items()) {
        if (value.is_object() && value.contains(key))
          validate(root, property, value[key], at + "/" + key, problems);
      }
    } else if (keyword == "additionalProperties") {
      if (!value.is_object()) continue;
      const json known = schema.value("properties", json::object());
      for (const auto& [key, item] : value.items()) {
        if (known.contains(key)) continue;
        if (rule.is_boolean() && !rule.get<bool>()) problem(key + " is not allowed");
        if (rule.is_object()) validate(root, rule, item, at + "/" + key, problems);
      }
    } else if (keyword == "anyOf") {
      bool any = false;
      for (const json& option : rule) {
        std::vector<std::string> option_problems;
        validate(root, option, value, at, option_problems);
        any = any || option_problems.empty();
      }
      if (!any) problem("matches none of anyOf");
    } else {
      ADD_FAILURE() << "the test's validator does not know the keyword " << keyword;
    }
  }
}

json load_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::vector<std::string> schema_problems(const json& doc) {
  const json schema = load_json(testing::source_dir() / "scenarios" / "scenario.schema.json");
  std::vector<std::string> problems;
  validate(schema, schema, doc, "", problems);
  return problems;
}

std::vector<std::filesystem::path> bundled_scenarios() {
  std::vector<std::filesystem::path> files = {testing::fixture_path("scenarios/tiny.json")};
  for (const char* folder : {"paper", "families"}) {
    for (const auto& entry :
         std::filesystem::directory_iterator(testing::source_dir() / "scenarios" / folder))
      files.push_back(entry.path());
  }
  return files;
}

TEST(ScenarioSchema, EveryBundledScenarioValidates) {
  const std::vector<std::filesystem::path> files = bundled_scenarios();
  EXPECT_GE(files.size(), 16u);
  for (const std::filesystem::path& file : files) {
    EXPECT_EQ(std::vector<std::string>{}, schema_problems(load_json(file))) << file;
    EXPECT_NO_THROW(load_scenario(file.string())) << file;
  }
}

// Edits of the tiny scenario that the parser refuses: the schema refuses
// them too, so it says no less than the parser about these fields.
TEST(ScenarioSchema, RefusesWhatTheParserRefuses) {
  const json tiny = load_json(testing::fixture_path("scenarios/tiny.json"));
  const std::vector<std::pair<std::string, json>> edits = {
      {"/colour", 1},
      {"/pairs", 0},
      {"/pairs", 2000000},
      {"/payload/type", "colour"},
      {"/payload/values", json::array()},
      {"/source/role", "robot"},
      {"/carriers", json::array({"assistant", "bot"})},
      {"/distances", json::array({65})},
      {"/constructions/0", json{{"id", "x"}}},
      {"/query/question", 3},
  };
  for (const auto& [pointer, value] : edits) {
    json doc = tiny;
    doc[json::json_pointer(pointer)] = value;
    EXPECT_FALSE(schema_problems(doc).empty()) << pointer << " = " << value;
    EXPECT_THROW(parse_scenario(doc.dump(), "edited.json"), std::exception)
        << pointer << " = " << value;
  }
}

// The page a scenario author reads links only to files of this repository,
// and each link resolves.
TEST(ScenariosReadme, LinksStayInTheRepository) {
  const std::filesystem::path folder = testing::source_dir() / "scenarios";
  std::ifstream in(folder / "README.md");
  const std::string page{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(page.find("../../"), std::string::npos);
  const std::filesystem::path repository = std::filesystem::canonical(testing::source_dir());
  for (size_t at = page.find("]("); at != std::string::npos; at = page.find("](", at + 2)) {
    const std::string target = page.substr(at + 2, page.find_first_of(")#", at + 2) - at - 2);
    const std::filesystem::path file = std::filesystem::weakly_canonical(folder / target);
    EXPECT_TRUE(std::filesystem::exists(file)) << target;
    EXPECT_EQ(file.string().rfind(repository.string(), 0), 0u) << target;
  }
}

}  // namespace
}  // namespace eventkv::probe
