#include "probe/scenario.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "util/error.h"
#include "util/hash.h"
#include "util/json_fields.h"

namespace eventkv::probe {
namespace {

using nlohmann::json;

// The roles a chat format renders (tokenizer/chat_format.cc), checked here
// so that a bad role fails before a model is loaded.
void check_role(const JsonFields& fields, const std::string& key, const std::string& role) {
  if (role != "system" && role != "user" && role != "assistant" && role != "tool")
    fields.problem(key, "unknown chat role '" + role + "' (system, user, assistant, tool)");
}

// Placeholders ({name}) used by a template.
std::set<std::string> placeholders(const std::string& text) {
  std::set<std::string> names;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') continue;
    size_t j = i + 1;
    while (j < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[j])) != 0 || text[j] == '_'))
      ++j;
    if (j < text.size() && text[j] == '}' && j > i + 1) names.insert(text.substr(i + 1, j - i - 1));
  }
  return names;
}

// Every placeholder must be a variable, or {value} where `value_rule` allows
// it ("required", "allowed", "forbidden").
void check_templates(const JsonFields& fields, const char* key,
                     const std::vector<std::string>& templates,
                     const std::map<std::string, std::vector<std::string>>& variables,
                     const std::string& value_rule) {
  for (size_t i = 0; i < templates.size(); ++i) {
    const std::set<std::string> used = placeholders(templates[i]);
    // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive)
    // on "/" + std::to_string(i).
    std::string at = key;
    if (templates.size() > 1) at.append("/").append(std::to_string(i));
    for (const std::string& name : used) {
      if (name == "value") continue;
      if (variables.count(name) == 0)
        fields.problem(at, "uses {" + name + "}, which is not a variable");
    }
    const bool has_value = used.count("value") > 0;
    if (value_rule == "required" && !has_value) fields.problem(at, "must contain {value}");
    if (value_rule == "forbidden" && has_value)
      fields.problem(at, "must not state the value ({value})");
  }
}

Payload parse_payload(const JsonFields& f) {
  const JsonFields p(f.at("payload"), f.pointer("payload"), f.file());
  p.allow_only({"type", "values", "digits", "distractors"});
  Payload payload;
  const std::string type = p.text("type", "", true);
  if (type == "integer") {
    payload.type = PayloadType::kInteger;
    payload.digits = static_cast<int>(p.integer("digits", 0, 1, 6));
    if (payload.digits == 0) p.problem("digits", "is required for integer payloads");
  } else {
    if (type == "binary") {
      payload.type = PayloadType::kBinary;
    } else if (type == "categorical") {
      payload.type = PayloadType::kCategorical;
    } else if (type == "name") {
      payload.type = PayloadType::kName;
    } else {
      p.problem("type", "must be binary, categorical, integer or name, not '" + type + "'");
    }
    payload.values = p.texts("values", true);
    const std::set<std::string> distinct(payload.values.begin(), payload.values.end());
    if (distinct.size() != payload.values.size()) p.problem("values", "must be distinct");
    if (payload.type == PayloadType::kBinary && payload.values.size() != 2)
      p.problem("values", "binary needs exactly 2");
    if (payload.values.size() < 2) p.problem("values", "needs at least 2");
  }
  payload.distractors = static_cast<int>(p.integer("distractors", 2, 0, 8));
  if (payload.type == PayloadType::kName &&
      payload.values.size() < 2 + static_cast<size_t>(payload.distractors)) {
    p.problem("values", "needs at least 2 + distractors names");
  }
  return payload;
}

std::vector<Construction> parse_constructions(const JsonFields& f) {
  std::vector<Construction> out;
  if (!f.has("constructions")) return out;
  const json& list = f.at("constructions");
  if (!list.is_array() || list.empty()) f.problem("constructions", "must be a non-empty list");
  std::set<std::string> ids;
  for (size_t i = 0; i < list.size(); ++i) {
    const JsonFields c(list[i], f.pointer("constructions") + "/" + std::to_string(i), f.file());
    c.allow_only({"id", "templates", "text"});
    Construction construction{c.text("id", "", true), c.has("templates")
                                                          ? c.texts("templates", true)
                                                          : c.texts("text", true)};
    if (!ids.insert(construction.id).second)
      c.problem("id", "duplicate construction id '" + construction.id + "'");
    out.push_back(construction);
  }
  return out;
}

std::vector<FillerTurn> parse_fillers(const JsonFields& f) {
  std::vector<FillerTurn> out;
  if (!f.has("fillers")) return out;
  const json& list = f.at("fillers");
  if (!list.is_array()) f.problem("fillers", "must be a list of {user, assistant} turns");
  for (size_t i = 0; i < list.size(); ++i) {
    const JsonFields t(list[i], f.pointer("fillers") + "/" + std::to_string(i), f.file());
    t.allow_only({"user", "assistant"});
    out.push_back({t.text("user", "", true), t.text("assistant", "", true)});
  }
  return out;
}

std::map<std::string, std::vector<std::string>> parse_variables(const JsonFields& f) {
  std::map<std::string, std::vector<std::string>> variables;
  if (!f.has("variables")) return variables;
  const JsonFields v(f.at("variables"), f.pointer("variables"), f.file());
  for (const auto& [name, values] : f.at("variables").items()) {
    if (name == "value") v.problem(name, "'value' is reserved for the payload");
    variables[name] = v.texts(name.c_str(), true);
  }
  return variables;
}

Scenario parse_fields(const json& doc, const std::string& file) {
  const JsonFields f(doc, "", file);
  f.allow_only({"name", "finding", "suite", "family", "system", "variables", "payload", "source",
                "carriers", "constructions", "fillers", "distances", "record", "query", "pairs",
                "seed"});
  Scenario s;
  s.name = f.text("name", "", true);
  s.finding = f.text("finding");
  s.suite = f.text("suite", "other");
  s.family = f.text("family");
  s.variables = parse_variables(f);
  s.system = f.texts("system", false);
  s.payload = parse_payload(f);
  const JsonFields source(f.at("source"), f.pointer("source"), file);
  source.allow_only({"role", "templates"});
  s.source_role = source.text("role", "user");
  check_role(source, "role", s.source_role);
  s.source = source.texts("templates", true);
  s.constructions = parse_constructions(f);
  s.carrier_roles = f.texts("carriers", false);
  for (size_t i = 0; i < s.carrier_roles.size(); ++i)
    check_role(f, "carriers/" + std::to_string(i), s.carrier_roles[i]);
  if (s.carrier_roles.empty() && !s.constructions.empty()) s.carrier_roles = {"assistant"};
  if (!s.carrier_roles.empty() && s.constructions.empty())
    f.problem("constructions", "carriers need constructions");
  s.fillers = parse_fillers(f);
  if (f.has("distances")) {
    const json& list = f.at("distances");
    if (!list.is_array() || list.empty())
      f.problem("distances", "must be a non-empty list of integers");
    for (const json& d : list) {
      if (!d.is_number_integer() || d.get<int>() < 0 || d.get<int>() > 64)
        f.problem("distances", "entries must be integers in [0, 64]");
      s.distances.push_back(d.get<int>());
    }
  } else {
    s.distances = {static_cast<int>(std::min<size_t>(s.fillers.size(), 2))};
  }
  for (const int d : s.distances) {
    if (static_cast<size_t>(d) > s.fillers.size())
      f.problem("distances", "a distance exceeds the number of filler turns");
  }
  s.record = f.texts("record", true);
  const JsonFields q(f.at("query"), f.pointer("query"), file);
  q.allow_only({"question", "answer_prefix", "answer_format"});
  s.question = q.texts("question", true);
  s.answer_prefix = q.texts("answer_prefix", false);
  if (s.answer_prefix.empty()) s.answer_prefix = {""};
  s.answer_format = q.text("answer_format", " {value}");
  s.pairs = static_cast<int>(f.integer("pairs", 200, 1, kMaxPairs));
  s.seed = static_cast<uint64_t>(f.integer("seed", 1, 0, INT64_MAX));
  check_templates(f, "system", s.system, s.variables, "forbidden");
  check_templates(source, "templates", s.source, s.variables, "required");
  for (const Construction& c : s.constructions)
    check_templates(f, "constructions", c.templates, s.variables, "forbidden");
  for (const FillerTurn& t : s.fillers)
    check_templates(f, "fillers", {t.user, t.assistant}, s.variables, "forbidden");
  check_templates(f, "record", s.record, s.variables, "required");
  check_templates(q, "question", s.question, s.variables, "forbidden");
  check_templates(q, "answer_prefix", s.answer_prefix, s.variables, "forbidden");
  if (placeholders(s.answer_format) != std::set<std::string>{"value"}) {
    q.problem("answer_format", "must contain {value} and nothing else in braces");
  }
  return s;
}

}  // namespace

std::string Payload::label() const {
  switch (type) {
    case PayloadType::kBinary:
      return "binary";
    case PayloadType::kCategorical:
      return "categorical";
    case PayloadType::kInteger:
      return "integer-" + std::to_string(digits);
    case PayloadType::kName:
      return "name";
  }
  return "?";
}

std::string fill_template(const std::string& text,
                          const std::map<std::string, std::string>& values) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = i + 1;
    while (text[i] == '{' && j < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[j])) != 0 || text[j] == '_'))
      ++j;
    if (text[i] != '{' || j == i + 1 || j >= text.size() || text[j] != '}') {
      out += text[i++];
      continue;
    }
    const std::string name = text.substr(i + 1, j - i - 1);
    const auto it = values.find(name);
    if (it == values.end()) fail("template '", text, "': no value for {", name, "}");
    out += it->second;
    i = j + 1;
  }
  return out;
}

Scenario parse_scenario(const std::string& text, const std::string& name_for_errors) {
  json doc = parse_json_text(text, name_for_errors);
  Scenario scenario = parse_fields(doc, name_for_errors);
  // The family is a label for calibration, not part of the experiment: runs
  // stored before a scenario was labelled keep matching it.
  doc.erase("family");
  scenario.json = doc.dump();
  scenario.hash = str_cat(std::hex, fnv1a64({reinterpret_cast<const uint8_t*>(scenario.json.data()),
                                             scenario.json.size()}));
  return scenario;
}

std::vector<std::string> scenario_files(const std::string& folder) {
  if (!std::filesystem::is_directory(folder)) fail(folder, ": no such scenario folder");
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  }
  if (files.empty()) fail(folder, ": holds no scenario (*.json)");
  std::sort(files.begin(), files.end());
  return files;
}

Scenario load_scenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(path, ": cannot open scenario");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return parse_scenario(text, path);
}

}  // namespace eventkv::probe
