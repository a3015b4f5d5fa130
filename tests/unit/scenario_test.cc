#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "probe/pairs.h"
#include "probe/scenario.h"
#include "test_support.h"
#include "util/error.h"

namespace eventkv::probe {
namespace {

std::string tiny_text() {
  std::ifstream in(testing::fixture_path("scenarios/tiny.json"));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string error_of(const std::string& text) {
  try {
    (void)parse_scenario(text, "s.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The tiny scenario with `from` replaced by `to` (which must occur).
std::string edited(const std::string& from, const std::string& to) {
  std::string text = tiny_text();
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(Scenario, ParsesTheTinyScenario) {
  const Scenario s = parse_scenario(tiny_text(), "tiny.json");
  EXPECT_EQ(s.name, "tiny-binary");
  EXPECT_EQ(s.payload.type, PayloadType::kBinary);
  EXPECT_EQ(s.payload.label(), "binary");
  EXPECT_EQ(s.constructions.size(), 2u);
  EXPECT_EQ(s.carrier_roles, std::vector<std::string>{"assistant"});
  EXPECT_EQ(s.distances, (std::vector<int>{1, 2}));
  EXPECT_EQ(s.answer_format, " {value}");
  EXPECT_EQ(s.pairs, 6);
  EXPECT_EQ(s.seed, 3u);
  EXPECT_EQ(scenario_cells(s).size(), 4u);
  EXPECT_EQ(parse_scenario(tiny_text(), "again").hash, s.hash);
  EXPECT_NE(parse_scenario(edited("\"seed\": 3", "\"seed\": 4"), "x").hash, s.hash);
}

// The wording family is a label, not part of the experiment: labelling a
// scenario keeps its hash, so runs stored before still match it.
TEST(Scenario, FamilyIsParsedButNotHashed) {
  const Scenario plain = parse_scenario(tiny_text(), "tiny.json");
  EXPECT_EQ(plain.family, "");
  const Scenario labelled =
      parse_scenario(edited("\"suite\": \"carrier-table\",",
                            "\"suite\": \"carrier-table\", \"family\": \"house\","),
                     "tiny.json");
  EXPECT_EQ(labelled.family, "house");
  EXPECT_EQ(labelled.hash, plain.hash);
  EXPECT_NE(error_of(edited("\"suite\": \"carrier-table\",",
                            "\"suite\": \"carrier-table\", \"family\": 3,"))
                .find("s.json: /family: must be a string"),
            std::string::npos);
}

// The bundled scenarios hash as the runs of the results archives
// (docs/data/results-*.db.xz, runs.scenario_hash) record them: an edit that
// changes one would orphan those runs from their scenario file.
TEST(Scenario, BundledHashesMatchTheArchivedRuns) {
  const std::vector<std::pair<std::string, std::string>> archived = {
      {"carrier_table", "402b7c695d5a29cf"},
      {"construction_sweep", "298aba898967a1ef"},
      {"distance", "3946f62e24c07122"},
      {"payload_binary", "6163ad91db2b759f"},
      {"payload_categorical", "5800a7c477afe59f"},
      {"payload_integer_1", "18513debde3de747"},
      {"payload_integer_2", "e4f9b22f9ae40dac"},
      {"payload_integer_3", "d75b9f7d8d1acfd9"},
      {"payload_name", "d5e04c2d911345d0"},
  };
  for (const auto& [stem, hash] : archived) {
    const Scenario s =
        load_scenario((testing::source_dir() / "scenarios" / "paper" / (stem + ".json")).string());
    EXPECT_EQ(s.hash, hash) << stem;
    EXPECT_EQ(s.family, "smart-home") << stem;
  }
}

// The second wording families (scenarios/families) line up with the paper
// suite: the same construction ids, another family name for each payload.
TEST(Scenario, FamiliesUseThePaperConstructionIds) {
  std::set<std::string> paper_ids;
  for (const std::string& file :
       scenario_files((testing::source_dir() / "scenarios" / "paper").string())) {
    for (const Construction& c : load_scenario(file).constructions) paper_ids.insert(c.id);
  }
  std::set<std::string> payloads;
  for (const std::string& file :
       scenario_files((testing::source_dir() / "scenarios" / "families").string())) {
    const Scenario s = load_scenario(file);
    EXPECT_FALSE(s.family.empty()) << file;
    EXPECT_NE(s.family, "smart-home") << file;
    payloads.insert(s.payload.label());
    for (const Construction& c : s.constructions) EXPECT_EQ(paper_ids.count(c.id), 1u) << c.id;
  }
  EXPECT_EQ(payloads, (std::set<std::string>{"binary", "categorical", "integer-1", "integer-2",
                                             "integer-3", "name"}));
}

TEST(Scenario, ErrorsNameTheFieldOrLine) {
  EXPECT_NE(error_of("{\n  \"name\": \"x\",\n  oops\n}").find("s.json:3:3: invalid JSON"),
            std::string::npos)
      << error_of("{\n  \"name\": \"x\",\n  oops\n}");
  EXPECT_NE(error_of(edited("\"name\": \"tiny-binary\",", "")).find("s.json: /name: is required"),
            std::string::npos);
  EXPECT_NE(
      error_of(edited("\"pairs\": 6", "\"pairs\": \"six\"")).find("/pairs: must be an integer"),
      std::string::npos);
  EXPECT_NE(error_of(edited("\"pairs\": 6", "\"pairs\": 0")).find("/pairs: must be between 1"),
            std::string::npos);
  EXPECT_NE(error_of(edited("Noted the {room} {device}.", "It is {value}."))
                .find("must not state the value"),
            std::string::npos);
  EXPECT_NE(error_of(edited("Leave the {room}", "Leave the {colour}"))
                .find("{colour}, which is not a variable"),
            std::string::npos);
  EXPECT_NE(error_of(edited("Leave the {room} {device} {value}.", "Switch it."))
                .find("must contain {value}"),
            std::string::npos);
  EXPECT_NE(error_of(edited("\"values\": [\"open\", \"shut\"]", "\"values\": [\"open\"]"))
                .find("binary needs exactly 2"),
            std::string::npos);
  EXPECT_NE(error_of(edited("\"type\": \"binary\"", "\"type\": \"colour\""))
                .find("/payload/type: must be binary"),
            std::string::npos);
  EXPECT_NE(error_of(edited("\"distances\": [1, 2]", "\"distances\": [1, 9]"))
                .find("exceeds the number of filler"),
            std::string::npos);
  EXPECT_NE(error_of(edited("\"seed\": 3", "\"seed\": 3, \"colour\": 1"))
                .find("/colour: is not a known field"),
            std::string::npos);
  EXPECT_NE(
      error_of(edited("{\"id\": \"ok\"", "{\"id\": \"noted\"")).find("duplicate construction id"),
      std::string::npos);
}

// A role no chat format renders fails when the scenario is read, naming the
// file and the field, not after a model has loaded.
TEST(Scenario, UnknownChatRolesNameTheField) {
  EXPECT_NE(error_of(edited("\"role\": \"user\"", "\"role\": \"robot\""))
                .find("s.json: /source/role: unknown chat role 'robot'"),
            std::string::npos);
  EXPECT_NE(error_of(edited("\"seed\": 3", "\"seed\": 3, \"carriers\": [\"assistant\", \"bot\"]"))
                .find("s.json: /carriers/1: unknown chat role 'bot'"),
            std::string::npos);
}

TEST(Scenario, FillsTemplates) {
  EXPECT_EQ(fill_template("the {room} {device} is {value}",
                          {{"room", "hall"}, {"device", "fan"}, {"value", "on"}}),
            "the hall fan is on");
  EXPECT_EQ(fill_template("braces { and {} stay", {}), "braces { and {} stay");
  EXPECT_THROW(fill_template("{missing}", {}), Error);
}

TEST(Pairs, DrawsAreDeterministicBalancedAndSharedAcrossCells) {
  const Scenario s = parse_scenario(tiny_text(), "tiny.json");
  const std::vector<Cell> cells = scenario_cells(s);
  for (int64_t index = 0; index < 6; ++index) {
    const DonorPair first = draw_pair(s, cells[0], index, 0);
    const DonorPair again = draw_pair(s, cells[0], index, 0);
    EXPECT_EQ(first.events_a.back().content, again.events_a.back().content);
    EXPECT_EQ(first.value_a, static_cast<int>(index % 2));  // binary pairs alternate A's value
    EXPECT_NE(first.value_a, first.value_b);
    const DonorPair other_cell = draw_pair(s, cells[3], index, 0);
    EXPECT_EQ(first.events_a[0].content, other_cell.events_a[0].content);  // same system text
    EXPECT_EQ(first.events_a[1].content, other_cell.events_a[1].content);  // same source text
    EXPECT_EQ(first.question, other_cell.question);
    EXPECT_EQ(first.events_a[1].content.find("{"), std::string::npos);
  }
}

TEST(Pairs, IntegerPayloadsDrawDistinctValuesAndDistractors) {
  const Scenario s =
      parse_scenario(edited("{\"type\": \"binary\", \"values\": [\"open\", \"shut\"]}",
                            "{\"type\": \"integer\", \"digits\": 3}"),
                     "int.json");
  EXPECT_EQ(s.payload.label(), "integer-3");
  const DonorPair pair = draw_pair(s, scenario_cells(s)[0], 5, 0);
  ASSERT_EQ(pair.candidates.size(), 4u);
  for (const std::string& c : pair.candidates) {
    EXPECT_EQ(c.size(), 3u);
    EXPECT_NE(c[0], '0');
  }
  EXPECT_NE(pair.candidates[static_cast<size_t>(pair.value_a)],
            pair.candidates[static_cast<size_t>(pair.value_b)]);
  EXPECT_NE(draw_pair(s, scenario_cells(s)[0], 5, 1).candidates,
            pair.candidates);  // a redraw changes values
}

}  // namespace
}  // namespace eventkv::probe
